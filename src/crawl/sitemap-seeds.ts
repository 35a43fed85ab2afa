import type { Fetcher } from '../fetch/fetcher'
import type { FetchRequest } from '../fetch/types'
import type { FrontierEntry, RunJournal } from '../store/crawl-store'
import { PAGE } from '../store/frontier'
import { reasonOf } from './fetch-reasons'
import { interruptedEntry } from './interrupted'
import type { EngineLog, PageBatch } from './page-batch'
import type { RunExecution } from './execution'
import type { Scope } from './scope'
import { parseSitemap } from './sitemaps'
import { linkHash, normalizeUrl } from '../core/url'

const MAX_SITEMAPS = 50

export type SitemapDeps = {
  fetcher: Fetcher
  journal: RunJournal
  batch: PageBatch
  tenant: string
  fetchBase: Omit<FetchRequest, 'url'>
  scope: Scope
  maxUrls: number
  signal: AbortSignal
  leaving: () => boolean
  /** The sitemaps robots.txt names for an origin (after loading it). */
  robotsSitemaps: (origin: string) => Promise<string[]>
  /** Queues URLs a sitemap lists, at depth 0. */
  enqueue: (entries: FrontierEntry[]) => void
  entry: (url: string, depth: number, parent: string | null, kind: number) => FrontierEntry
}

/**
 * Sitemaps of the seeds' origins (robots.txt `Sitemap:` lines and /sitemap.xml) seed the frontier
 * too, at most MAX_SITEMAPS of them (an index names the others).
 */
export async function readSitemaps(d: SitemapDeps, seeds: FrontierEntry[]): Promise<void> {
  const origins = [...new Set(seeds.map((s) => new URL(s.url).origin))]
  const queue: string[] = []
  for (const origin of origins) queue.push(...(await d.robotsSitemaps(origin)), `${origin}/sitemap.xml`)
  const read = new Set<string>()
  while (queue.length && read.size < MAX_SITEMAPS && !d.leaving()) {
    const url = queue.shift()!
    if (read.has(url)) continue
    read.add(url)
    const started = Date.now()
    const where = { url, url_hash: linkHash(normalizeUrl(url) ?? url), host: new URL(url).hostname }
    const sent = d.journal.start({ ...where, step: 'discover', started_at: started })
    const logSent = (entry: Omit<EngineLog, 'url' | 'url_hash' | 'host' | 'step'>, at?: number) => d.batch.log({ ...where, step: 'discover', ...entry }, at, sent)
    try {
      const r = await d.fetcher.fetch({ ...d.fetchBase, url, max_retries: 1 }, d.tenant, d.signal)
      if (r.status !== 200) {
        logSent({ status: 'skipped', error_reason: 'http_status', error_detail: `the sitemap answered ${r.status}`, http_status: r.status, latency_ms: Date.now() - started })
        continue
      }
      const sitemap = await parseSitemap(r.body, { maxUrls: d.maxUrls })
      logSent({ status: 'ok', http_status: r.status, latency_ms: Date.now() - started })
      if (sitemap.kind === 'index') queue.push(...sitemap.urls)
      else {
        const entries: FrontierEntry[] = []
        for (const raw of sitemap.urls) {
          const u = normalizeUrl(raw)
          if (u && !d.scope.whyOut(u)) entries.push(d.entry(u, 0, null, PAGE))
        }
        d.enqueue(entries)
      }
    } catch (err) {
      if (d.signal.aborted) {
        d.batch.log(interruptedEntry(where, 'discover', 'error', { latency_ms: Date.now() - started }), started, sent)
        return
      }
      logSent({ status: 'error', ...reasonOf(err), latency_ms: Date.now() - started })
      if (d.leaving()) return
    }
  }
}

/** What an execution gives its sitemap reading: its fetch settings, its batch, its queues. */
export function sitemapDepsOf(x: RunExecution): SitemapDeps {
  return {
    fetcher: x.deps.fetcher,
    journal: x.journal,
    batch: x.batch,
    tenant: x.run.tenant,
    fetchBase: x.fetchBase,
    scope: x.scope,
    maxUrls: x.maxUrls,
    signal: x.abort.signal,
    leaving: () => x.leaving !== null,
    robotsSitemaps: async (origin: string) => {
      const host = x.hosts.get(new URL(origin).host)
      await x.robots.load(host)
      return x.robots.sitemapsOf(host.key)
    },
    enqueue: (entries: FrontierEntry[]) => void x.enqueue(entries),
    entry: (url: string, depth: number, parent: string | null, kind: number) => x.discovery.entry(url, depth, parent, kind),
  }
}
