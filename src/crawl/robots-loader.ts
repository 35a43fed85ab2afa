import { FetchError } from '../fetch/errors'
import type { Fetcher } from '../fetch/fetcher'
import type { FetchRequest } from '../fetch/types'
import { robotsAgent } from '../fetch/user-agents'
import type { CrawlStore, RobotsRecord, RunJournal } from '../store/crawl-store'
import type { RunExecution } from './execution'
import { hostOf, linkHash } from '../core/url'
import { interruptedEntry } from './interrupted'
import { reasonOf } from './fetch-reasons'
import type { Host } from './host-slots'
import type { EngineLog, LogReason, PageBatch } from './page-batch'
import { ALLOW_ALL_RULES, MAX_ROBOTS_BYTES, robotsFromStatus } from './robots'

export type RobotsDeps = {
  store: CrawlStore
  fetcher: Fetcher
  journal: RunJournal
  batch: PageBatch
  run: { seq: number; tenant: string }
  fetchBase: Omit<FetchRequest, 'url'>
  seeds: string[]
  signal: AbortSignal
  /** Whether the execution is leaving: a failed load then records nothing more. */
  leaving: () => boolean
}

/**
 * robots.txt once per host per run (kept in run_hosts, so a resumed run does not fetch it again):
 * its rules, its crawl delay and its sitemaps.
 */
export class RobotsLoader {
  private readonly sitemaps = new Map<string, string[]>()

  constructor(private readonly d: RobotsDeps) {}

  /** The `Sitemap:` lines of a host's robots.txt, once loaded. */
  sitemapsOf(hostKey: string): string[] {
    return this.sitemaps.get(hostKey) ?? []
  }

  load(host: Host): Promise<void> {
    if (host.robots) return Promise.resolve()
    return (host.robotsLoad ??= this.fetch(host))
  }

  private async fetch(host: Host) {
    const d = this.d
    host.robotsLoading = true
    try {
      let record = await d.store.robots(d.run.seq, host.key)
      const url = `${this.originOf(host)}/robots.txt`
      if (!record || record.status === null) {
        const fetched = await this.get(host, url)
        if (!fetched) return
        record = fetched
        await d.store.saveRobots(d.run.seq, host.key, record)
      }
      if (record.status === -1) host.unreachable = unreachableWhy(record.body)
      const robots = robotsFromStatus(record.status === -1 ? 'unreachable' : record.status!, record.status === -1 ? undefined : (record.body ?? undefined))
      this.sitemaps.set(host.key, robots.sitemaps)
      const rules = robots.forAgent(robotsAgent(d.fetchBase.user_agent))
      // Only a run that respects robots.txt loads it: HostSlots gives the others allow-all at once.
      host.robots = rules
      if (rules.crawlDelayMs) host.delayMs = Math.max(host.delayMs, rules.crawlDelayMs)
    } finally {
      host.robotsLoading = false
    }
  }

  /** Fetches robots.txt; null when there is nothing to record (stopped, or the host cannot be fetched at all). */
  private async get(host: Host, url: string): Promise<RobotsRecord | null> {
    const d = this.d
    const started = Date.now()
    const where = { url, url_hash: linkHash(url), host: hostOf(url), step: 'robots' as const }
    const sent = d.journal.start({ ...where, started_at: started })
    const logSent = (entry: EngineLog, at?: number) => d.batch.log(entry, at, sent)
    try {
      const r = await d.fetcher.fetch({ ...d.fetchBase, url, max_redirects: 5, max_retries: 1, max_body_bytes: MAX_ROBOTS_BYTES }, d.run.tenant, d.signal)
      const failed = r.status === 429 || r.status >= 500
      logSent({
        ...where,
        status: failed ? 'error' : 'ok',
        ...(failed ? { error_reason: 'http_status' as const, error_detail: `robots.txt answered ${r.status}: the host is treated as disallowing everything` } : {}),
        http_status: r.status,
        latency_ms: Date.now() - started,
      })
      return { status: r.status, body: r.status >= 200 && r.status < 300 ? new TextDecoder().decode(r.body) : null }
    } catch (err) {
      if (d.signal.aborted) {
        logSent(interruptedEntry(where, 'robots', 'retried', { latency_ms: Date.now() - started }), started)
        return null
      }
      const why = reasonOf(err)
      logSent({ ...where, status: 'error', ...why, latency_ms: Date.now() - started })
      if (d.leaving()) return null
      if (err instanceof FetchError && (err.code === 'blocked_address' || err.code === 'dns')) {
        // Not a robots answer: the host itself cannot be fetched. Its pages are tried and fail
        // with the real reason, rather than being reported as disallowed by robots.txt.
        host.robots = ALLOW_ALL_RULES
        return null
      }
      // No answer: the body keeps why, for the URLs that fail with it (after a resume too).
      return { status: -1, body: `${why.error_reason}\n${why.error_detail}` }
    }
  }

  private originOf(host: Host): string {
    if (host.origin) return host.origin
    // Every URL of a host key shares its scheme in practice; the seeds decide otherwise.
    const seed = this.d.seeds.map((s) => URL.parse(s)).find((u) => u?.host === host.key)
    return `${seed?.protocol ?? 'https:'}//${host.key}`
  }
}

/** Why robots.txt got no answer, as saved in run_hosts (`reason\ndetail`); a record saved before reasons were kept has none. */
function unreachableWhy(body: string | null): { error_reason: LogReason; error_detail: string } {
  const cut = body?.indexOf('\n') ?? -1
  if (!body || cut < 0) return { error_reason: 'connect', error_detail: 'robots.txt did not answer' }
  return { error_reason: body.slice(0, cut) as LogReason, error_detail: body.slice(cut + 1) }
}

/** What an execution gives its robots loader. */
export function robotsDepsOf(x: RunExecution): RobotsDeps {
  return {
    store: x.deps.store.crawl,
    fetcher: x.deps.fetcher,
    journal: x.journal,
    batch: x.batch,
    run: x.run,
    fetchBase: x.fetchBase,
    seeds: x.cfg.seeds,
    signal: x.abort.signal,
    leaving: () => x.leaving !== null,
  }
}
