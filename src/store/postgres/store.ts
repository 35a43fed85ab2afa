import type { Store } from '../types'
import { pgArtifactStore, pgPaymentStore } from './artifacts'
import { pgHostStore, pgLinkStore } from './catalogue'
import { pgCrawlStore } from './crawl'
import { pgCrawlLogStore, pgRunGraphStore } from './crawl-logs'
import { pgDataMapStore } from './data-maps'
import { pgJobStore, pgRunStore, pgTriggerStore } from './jobs'
import { pgPatternStore } from './patterns'
import type { Pg } from './pg'
import { pgWebhookStore } from './webhooks'

/**
 * The Store on PostgreSQL (decision 111): every method is a few statements over the pool, and a
 * write that must be atomic is one transaction. Many processes may share the database; nothing
 * here keeps state a second process could not see, but the fetch journal, which is a file of
 * this process's data dir (`journalDir`).
 */
export function postgresStore(sql: Pg, opts: { journalDir: string | null }): Store {
  return {
    hosts: pgHostStore(sql),
    links: pgLinkStore(sql),
    jobs: pgJobStore(sql),
    runs: pgRunStore(sql),
    triggers: pgTriggerStore(sql),
    patterns: pgPatternStore(sql),
    dataMaps: pgDataMapStore(sql),
    artifacts: pgArtifactStore(sql),
    crawlLogs: pgCrawlLogStore(sql),
    runGraph: pgRunGraphStore(sql),
    payments: pgPaymentStore(sql),
    webhooks: pgWebhookStore(sql),
    crawl: pgCrawlStore(sql, opts.journalDir),
  }
}
