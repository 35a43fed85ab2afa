import type { BlobStore } from '../blob/blob-store'
import { FetchError, type FetchErrorCode } from '../fetch/errors'
import type { Fetcher } from '../fetch/fetcher'
import { requestOptions } from '../fetch/options-schema'
import { retryAfterMs } from '../fetch/retry'
import type { FetchRequest, FetchResult } from '../fetch/types'
import { robotsAgent } from '../fetch/user-agents'
import { categorize } from '../extract/patterns'
import type { Logger } from '../log'
import { storeParseContext } from '../catalogue/parse-context'
import { documentKind } from '../parse/document'
import { parseDocument, ParseFailure, type ParseContext, type ParseResult } from '../parse/pipeline'
import type { Pipeline } from '../parse/pipeline-schema'
import type { ParsePool } from '../parse/pool'
import type { Store } from '../store'
import { ASSET, DONE, PAGE, type Claimed, type FrontierEntry, type RunCounters } from '../store/frontier'
import { parseDuration } from '../util/duration'
import { BoundedCache } from '../util/bounded-cache'
import { CRAWL_FETCH_DEFAULTS, type CrawlConfig } from './manifest'
import { closeJournal, dropBodies, interruptedEntry, logInterrupted } from './interrupted'
import { RunRecords, type EngineLog, type LogReason } from './records'
import type { RunJournal } from '../store/fetch-journal'
import { MAX_ROBOTS_BYTES, robotsFromStatus, type AgentRules } from './robots'
import { Scope } from './scope'
import { parseSitemap } from './sitemaps'
import { runOutcome, sortedCounts } from './outcome'
import { hostHash, hostOf, hostPortOf, linkHash, normalizeUrl } from '../core/url'

export type EngineDeps = { store: Store; fetcher: Fetcher; parser: ParsePool; blobs: BlobStore; log: Logger }
export type RunRow = { seq: number; id: string; tenant: string; config: Required<CrawlConfig>; started_at: number; paused_ms: number }
export type StopReason = 'max_depth' | 'max_urls' | 'max_empty_evaluations' | 'max_age' | 'manual' | 'empty_seed' | 'unknown'
/** How an execution ended: the run finished, or it was left for later (paused, shut down, taken away). */
export type Outcome = { finished: StopReason } | { left: 'paused' | 'stopped' | 'shutdown' | 'lost_lease' }

type Host = {
  key: string
  origin: string
  inFlight: number
  /** Earliest start of the next request: politeness delay, backoff. */
  nextAt: number
  delayMs: number
  robots: AgentRules | null
  robotsLoading: boolean
  /** The one robots.txt load of this host, awaited by everyone who needs it. */
  robotsLoad: Promise<void> | null
  failures: number
  /**
   * Why robots.txt got no answer (a connection refused, a timeout…): the host's URLs are not
   * fetched, and each fails with this reason rather than being called disallowed.
   */
  unreachable?: { error_reason: LogReason; error_detail: string }
  /** Consecutive 429/503 answers, for the backoff's exponent. */
  throttled: number
  /** The catalogue's hash of the host name (no port), which visits record: taken once per host. */
  hash?: string
  /**
   * The host's queued URLs in discovery order, held here as well as in the frontier: the
   * frontier is what a restart resumes from; this is what the dispatcher reads, so dispatching
   * costs no query (design.md §5 rule 2). `delayed` are requeued ones waiting for their time.
   */
  buffer: Claimed[]
  delayed: { entry: Claimed; at: number }[]
}

const TICK_MS = 100
/** How long a run's lease lasts without renewal (renewed every RENEW_MS). */
export const LEASE_MS = 15_000
const RENEW_MS = 3_000
const EVALUATION_MS = 1_000
const MAX_HOST_FAILURES = 5
const MAX_ATTEMPTS = 3
const BACKOFF_CAP_MS = 60_000
const MAX_SITEMAPS = 50
const SEEN = 2
const CATALOGED = 1
const UTF8 = new TextEncoder()
const COMMIT_MS = 250
const LINK_CACHE_SIZE = 50_000
/** The default pipeline of a crawl (design.md §4): every a[href], metadata only, so crawling stays cheap. */
const CRAWL_PIPELINE: Pipeline = { identifier: 'default', navigator: { kind: 'links' }, steps: [{ kind: 'metadata' }] } as Pipeline

/**
 * One run being crawled by this process (design.md §5). The frontier is the truth; this object
 * holds what is cheap to rebuild from it: per-host politeness, the seen set, counters.
 */
export class RunExecution {
  private readonly cfg: Required<CrawlConfig>
  private readonly hosts = new Map<string, Host>()
  /**
   * Link hashes this execution knows: SEEN ones are in the run's frontier, CATALOGED ones only
   * have catalogue rows (most links of a site are repeats). One map, one key string per URL.
   */
  private readonly known = new Map<string, typeof SEEN | typeof CATALOGED>()
  private readonly scope: Scope
  private readonly rec: RunRecords
  /** Every fetch sent, until its entry is committed: what the next holder logs after a crash. */
  private readonly journal: RunJournal
  private readonly ctx: ParseContext
  /** The deletion of an earlier holder's uncommitted bodies, awaited before the execution ends. */
  private orphansDropped: Promise<void> = Promise.resolve()
  private readonly abort = new AbortController()
  private counters: RunCounters
  /** URLs of the run that failed, by reason (`http_<status>` for answers of 400 or more), saved with the counters. */
  private readonly errorCounts: Map<string, number>
  private errorCountsChanged = false
  /** The run ended after max_empty_evaluations empty looks with URLs still queued. */
  private stalled = false
  private nextSeq = 0
  private inFlight = 0
  private emptyEvaluations = 0
  private lastEvaluation = 0
  private lastRenew = 0
  private lastSave = 0
  private seedsLeft = 0
  private seedsDisallowed = 0
  private startupWork = 0
  private leaving: Outcome | null = null
  /** Writes of finished pages, committed together in one transaction (never one per page: decision 50). */
  private writes: (() => void)[] = []
  private lastCommit = 0
  /**
   * Pages finished since the last commit. They keep their concurrency slot until committed: a
   * kill -9 then costs at most `concurrency` refetched pages, as it would with nothing batched.
   */
  private uncommitted = 0
  private wake: (() => void) | null = null
  private readonly pipelines: Pipeline[]
  /** Whether every pipeline is light enough to run on this thread (links and metadata only). */
  private readonly inThread: boolean
  private readonly fetchBase: Omit<FetchRequest, 'url'>
  private readonly maxDepth: number
  private readonly maxUrls: number
  private readonly maxAgeMs: number

  constructor(
    readonly run: RunRow,
    private readonly deps: EngineDeps,
    private readonly owner: string,
  ) {
    this.cfg = run.config
    this.scope = new Scope(this.cfg.seeds, { domains: this.cfg.scope.domains!, include: this.cfg.scope.include ?? [], exclude: this.cfg.scope.exclude ?? [] })
    this.rec = new RunRecords(deps.store, run)
    this.journal = deps.store.journals.open(run.seq)
    this.ctx = storeParseContext(deps.store, run.tenant)
    this.counters = deps.store.frontier.counters(run.seq)
    this.errorCounts = new Map(Object.entries(deps.store.frontier.errorCounts(run.seq)))
    // A user pipeline without a navigator still lets the crawl go on: it follows every a[href].
    this.pipelines = this.cfg.pipelines.length ? this.cfg.pipelines.map((p) => (p.navigator ? p : ({ ...p, navigator: { kind: 'links' } } as Pipeline))) : [CRAWL_PIPELINE]
    this.inThread = this.pipelines.every(
      (p) => (p.steps ?? []).every((st) => st.kind === 'metadata' || st.kind === 'links') && (p.guards ?? []).every((g) => g.kind !== 'category') && (p.steps ?? []).length > 0,
    )
    this.fetchBase = {
      method: 'GET',
      ...requestOptions(this.cfg.fetch, CRAWL_FETCH_DEFAULTS),
      max_body_bytes: this.cfg.store.max_body_bytes,
      retry_throttled: false,
    }
    this.maxDepth = this.cfg.limits.max_depth!
    this.maxUrls = this.cfg.limits.max_urls!
    this.maxAgeMs = parseDuration(this.cfg.limits.max_age ?? '1h')!
  }

  /** Asks the execution to leave at once: in-flight fetches are aborted and requeued. */
  shutdown() {
    this.leave({ left: 'shutdown' })
  }

  /** Crawls until the run finishes or is left; never throws. */
  async execute(): Promise<Outcome> {
    const { store } = this.deps
    try {
      this.resume()
      if (this.nextSeq === 0) await this.seed()
      while (!this.leaving) {
        this.control()
        if (this.leaving) break
        this.pump()
        this.evaluate()
        if (this.leaving) break
        await this.sleep(this.nextWakeMs())
      }
      // Let what is in flight settle: pause finishes fetches; stop and shutdown abort them.
      while (this.inFlight > 0 || this.startupWork > 0 || this.robotsLoading()) {
        await this.sleep(TICK_MS)
        // A stop (or deletion) of the run while a pause waits for its fetches aborts them.
        const row = this.deps.store.frontier.status(this.run.seq)
        if (!row || row.status === 'finished') this.leave({ left: 'stopped' })
      }
    } catch (err) {
      this.deps.log.error('crawl failed', { run: this.run.id, error: String((err as Error).stack ?? err) })
      this.leaving ??= { finished: 'unknown' }
    }
    const outcome = this.leaving!
    try {
      this.writeHeld(() => {
        // Leases of anything still in flight go back to the queue for whoever runs this next.
        store.frontier.reclaim(this.run.seq)
        // A `manual` finish was written by the stop itself; the engine writes the others.
        const finish = 'finished' in outcome && outcome.finished !== 'manual' ? outcome.finished : null
        // A stalled run's leftovers failed; a run cut by max_urls or max_age keeps them queued.
        if (finish && finish !== 'max_urls' && finish !== 'max_age') this.countError('left_queued', store.frontier.failQueued(this.run.seq))
        // writeHeld saves these once this has run.
        this.counters = { ...this.counters, ...this.countersFromFrontier() }
        if (finish) store.frontier.finish(this.run.seq, finish, Date.now(), runOutcome(finish, { stalled: this.stalled, pageFetched: store.frontier.pageFetched(this.run.seq) }))
        store.frontier.release(this.run.seq, this.owner)
      })
    } catch (err) {
      this.deps.log.error('crawl checkpoint failed', { run: this.run.id, error: String(err) })
    }
    this.rec.close()
    await this.orphansDropped
    await closeJournal(this.deps, this.run, this.journal, 'left' in outcome && outcome.left === 'lost_lease')
    return outcome
  }

  // ------------------------------------------------------------------ start and resume

  private resume() {
    const { frontier } = this.deps.store
    const interrupted = logInterrupted(this.deps.store, this.run.seq, this.journal, this.rec)
    if (interrupted) this.deps.log.info('interrupted fetches logged', { run: this.run.id, fetches: interrupted })
    // Bodies an earlier holder put and never committed rows for: gone, as their pages are refetched.
    this.orphansDropped = dropBodies(this.deps, this.journal, this.journal.orphanBodies()).catch((err) =>
      this.deps.log.warn('bodies without artifact rows could not be deleted; the next execution tries again', { run: this.run.id, error: String(err) }),
    )
    frontier.reclaim(this.run.seq)
    for (const h of frontier.hashes(this.run.seq)) this.known.set(h, SEEN)
    this.nextSeq = frontier.maxSeq(this.run.seq)
    const now = Date.now()
    for (const row of frontier.queued(this.run.seq)) {
      const h = this.host(row.host)
      h.origin ||= new URL(row.url).origin
      if (row.not_before > now) h.delayed.push({ entry: row, at: row.not_before })
      else h.buffer.push(row)
    }
    for (const { host, failures } of frontier.hostFailures(this.run.seq)) this.host(host).failures = failures
  }

  private async seed() {
    const seeds: FrontierEntry[] = []
    for (const raw of this.cfg.seeds) {
      const url = normalizeUrl(raw)
      if (!url) continue
      const why = this.scope.whyOut(url)
      if (why) {
        this.rec.log({ url, url_hash: linkHash(url), host: hostOf(url), step: 'schedule', status: 'skipped', error_reason: 'out_of_scope', error_detail: `the seed ${why}`, depth: 0 })
        continue
      }
      seeds.push(this.entry(url, 0, null, PAGE))
    }
    this.seedsLeft = this.enqueue(seeds)
    if (this.seedsLeft === 0) return this.leave({ finished: 'empty_seed' })
    if (this.cfg.sitemaps) {
      this.startupWork++
      void this.readSitemaps(seeds).finally(() => {
        this.startupWork--
        this.poke()
      })
    }
  }

  /** Sitemaps of the seeds' origins (robots.txt `Sitemap:` lines and /sitemap.xml) seed the frontier too. */
  private async readSitemaps(seeds: FrontierEntry[]) {
    const origins = [...new Set(seeds.map((s) => new URL(s.url).origin))]
    const queue: string[] = []
    for (const origin of origins) {
      const host = this.host(new URL(origin).host)
      await this.loadRobots(host)
      queue.push(...(host.robots ? (this.robotsSitemaps.get(host.key) ?? []) : []), `${origin}/sitemap.xml`)
    }
    const read = new Set<string>()
    while (queue.length && read.size < MAX_SITEMAPS && !this.leaving) {
      const url = queue.shift()!
      if (read.has(url)) continue
      read.add(url)
      const started = Date.now()
      const where = { url, url_hash: linkHash(normalizeUrl(url) ?? url), host: new URL(url).hostname }
      const sent = this.journal.start({ ...where, step: 'discover', started_at: started })
      const logSent = (entry: Omit<EngineLog, 'url' | 'url_hash' | 'host' | 'step'>) => this.logFetch(sent, { ...where, step: 'discover', ...entry })
      try {
        const r = await this.deps.fetcher.fetch({ ...this.fetchBase, url, max_retries: 1 }, this.run.tenant, this.abort.signal)
        if (r.status !== 200) {
          logSent({ status: 'skipped', error_reason: 'http_status', error_detail: `the sitemap answered ${r.status}`, http_status: r.status, latency_ms: Date.now() - started })
          continue
        }
        const sitemap = await parseSitemap(r.body, { maxUrls: this.maxUrls })
        logSent({ status: 'ok', http_status: r.status, latency_ms: Date.now() - started })
        if (sitemap.kind === 'index') queue.push(...sitemap.urls)
        else {
          const entries: FrontierEntry[] = []
          for (const raw of sitemap.urls) {
            const u = normalizeUrl(raw)
            if (u && !this.scope.whyOut(u)) entries.push(this.entry(u, 0, null, PAGE))
          }
          this.enqueue(entries)
        }
      } catch (err) {
        if (this.abort.signal.aborted) return this.logFetch(sent, interruptedEntry(where, 'discover', 'error', { latency_ms: Date.now() - started }), started)
        logSent({ status: 'error', ...this.reasonOf(err), latency_ms: Date.now() - started })
        if (this.leaving) return
      }
    }
  }

  // ------------------------------------------------------------------ writes

  private defer(write: () => void) {
    this.writes.push(write)
  }

  /**
   * Commits the deferred writes and the buffered log entries in one transaction: at most every
   * COMMIT_MS (each commit writes every index page it dirtied, so fewer commits write far less), and
   * at once when a claim needs the frontier current (`force`).
   */
  private commit(force = false, always = false) {
    if (!this.writes.length && !always) return
    const now = Date.now()
    if (!force && this.writes.length < 2048 && now - this.lastCommit < COMMIT_MS) return
    this.lastCommit = now
    this.uncommitted = 0
    if (!this.writeHeld()) this.leave({ left: 'lost_lease' })
  }

  /**
   * Writes what is deferred, the buffered log entries and the counters in one transaction, then
   * `andThen` in the same one, if this execution still holds the run. A deleted run took its
   * rows with it, and a run another process took over (this one stalled past its lease) is not
   * ours to write: its seqs may now name other URLs. The lease is asked under the write lock, so
   * no other process can take it between the check and the rows. False when it is gone: nothing
   * was written, and nothing logged from here on will be.
   */
  private writeHeld(andThen?: () => void): boolean {
    const writes = this.writes
    this.writes = []
    const { store } = this.deps
    let held: boolean
    try {
      held = store.transaction(() => {
        if (!store.frontier.holds(this.run.seq, this.owner)) return false
        for (const w of writes) w()
        this.rec.flush()
        andThen?.()
        // The run's counters move with the rows they count, so a resumed run starts from both.
        store.frontier.saveCounters(this.run.seq, this.counters)
        if (this.errorCountsChanged) store.frontier.saveErrorCounts(this.run.seq, sortedCounts(this.errorCounts))
        return true
      })
    } catch (err) {
      this.journal.rolledBack()
      throw err
    }
    if (held) {
      this.journal.committed()
      // Cleared only once the counts are committed: a rolled-back write saves them again next time.
      this.errorCountsChanged = false
    } else this.rec.lose()
    return held
  }

  // ------------------------------------------------------------------ scheduling

  private host(key: string): Host {
    let h = this.hosts.get(key)
    if (!h) {
      const delay = parseDuration(this.cfg.politeness.delay ?? '0s')!
      h = {
        key,
        origin: '',
        inFlight: 0,
        nextAt: 0,
        delayMs: delay,
        robots: this.cfg.politeness.respect_robots ? null : ALLOW_ALL,
        robotsLoading: false,
        robotsLoad: null,
        failures: 0,
        throttled: 0,
        buffer: [],
        delayed: [],
      }
      this.hosts.set(key, h)
    }
    return h
  }

  private entry(url: string, depth: number, parent: string | null, kind: number, hash = linkHash(url)): FrontierEntry {
    return { hash, url, host: hostPortOf(url), depth, parent, kind }
  }

  /** Adds unseen URLs to the frontier and the catalogue; answers how many were new. */
  private enqueue(entries: FrontierEntry[]): number {
    const urls: string[] = [] // the new ones without a catalogue row yet
    const fresh = entries.filter((e) => {
      const state = this.known.get(e.hash)
      if (state === SEEN) return false
      if (state === undefined) urls.push(e.url)
      this.known.set(e.hash, SEEN)
      return true
    })
    if (!fresh.length) return 0
    const first = this.nextSeq + 1
    this.defer(() => {
      this.rec.links(urls)
      this.deps.store.frontier.enqueue(this.run.seq, fresh, first)
    })
    this.nextSeq += fresh.length
    fresh.forEach((e, i) => {
      const h = this.host(e.host)
      h.origin ||= new URL(e.url).origin
      h.buffer.push({ ...e, attempts: 0, seq: first + i })
    })
    this.counters.queued += fresh.length
    return fresh.length
  }

  /** Starts fetches while there is room: global and per-host concurrency, delays, the URL budget. */
  private pump() {
    const concurrency = this.cfg.politeness.concurrency!
    const perHost = this.cfg.politeness.per_host_concurrency!
    const now = Date.now()
    this.commit(this.inFlight + this.uncommitted >= concurrency)
    for (const host of this.hosts.values()) {
      if (this.inFlight + this.uncommitted >= concurrency || this.leaving) return
      if (host.delayed.length) this.release(host, now)
      if (!host.buffer.length || host.inFlight >= perHost || host.nextAt > now) continue
      if (this.counters.fetched + this.inFlight >= this.maxUrls) return
      if (host.robots === null) {
        if (!host.robotsLoading) void this.loadRobots(host).finally(() => this.poke())
        continue
      }
      // With a delay, one request at a time starts per gap; without, fill the host's slots.
      const room = Math.min(host.delayMs > 0 ? 1 : perHost - host.inFlight, concurrency - this.inFlight - this.uncommitted, this.maxUrls - this.counters.fetched - this.inFlight)
      const starting = host.buffer.splice(0, room)
      host.nextAt = now + host.delayMs
      for (const c of starting) {
        host.inFlight++
        this.inFlight++
        void this.visit(host, c).finally(() => {
          host.inFlight--
          this.inFlight--
          this.uncommitted++
          pagesFinished++
          this.poke()
        })
      }
    }
  }

  /** Requeued URLs whose not-before time has come go back to the host's queue. */
  private release(host: Host, now: number) {
    const due = host.delayed.filter((d) => d.at <= now)
    if (!due.length) return
    host.delayed = host.delayed.filter((d) => d.at > now)
    host.buffer.push(...due.map((d) => d.entry))
  }

  /**
   * design.md §5: an evaluation looks for ready work whenever nothing is in flight, at most once a
   * second; the run ends when nothing is queued, or after too many empty looks in a row.
   */
  private evaluate() {
    if (this.inFlight > 0 || this.startupWork > 0 || this.leaving) return
    this.commit(true)
    const now = Date.now()
    if (this.counters.fetched >= this.maxUrls) return this.leave({ finished: 'max_urls' })
    const queued = [...this.hosts.values()].reduce((n, h) => n + h.buffer.length + h.delayed.length, 0)
    const loading = this.robotsLoading()
    if (queued === 0 && !loading) {
      if (this.counters.fetched === 0 && this.seedsDisallowed > 0 && this.seedsDisallowed >= this.seedsLeft) return this.leave({ finished: 'empty_seed' })
      return this.leave({ finished: this.counters.depth_cut ? 'max_depth' : 'max_empty_evaluations' })
    }
    if (now - this.lastEvaluation < EVALUATION_MS) return
    this.lastEvaluation = now
    const ready = [...this.hosts.values()].some((h) => (h.buffer.length > 0 || h.delayed.some((d) => d.at <= now)) && h.nextAt <= now) || loading
    this.emptyEvaluations = ready ? 0 : this.emptyEvaluations + 1
    if (this.emptyEvaluations >= this.cfg.limits.max_empty_evaluations!) {
      // SPEC's stop reason is the same as a complete crawl's; the outcome tells them apart.
      this.stalled = true
      this.leave({ finished: this.counters.depth_cut ? 'max_depth' : 'max_empty_evaluations' })
    }
  }

  /** Reads the run's row: a stop or pause from the API, the age limit, the lease. */
  private control() {
    const now = Date.now()
    const { frontier } = this.deps.store
    const row = frontier.status(this.run.seq)
    if (!row || row.status === 'finished') return this.leave({ left: 'stopped' })
    if (row.status === 'paused') return this.leave({ left: 'paused' })
    if (now - this.run.started_at - row.paused_ms >= this.maxAgeMs) return this.leave({ finished: 'max_age' })
    if (now - this.lastRenew >= RENEW_MS) {
      this.lastRenew = now
      if (!frontier.renew(this.run.seq, this.owner, now + LEASE_MS)) return this.leave({ left: 'lost_lease' })
    }
    collectGarbage(now)
    if (now - this.lastSave >= 500) {
      this.lastSave = now
      this.commit(true, true)
    }
  }

  /** Whether a robots.txt fetch is under way: its entry belongs in the execution's last commit. */
  private robotsLoading(): boolean {
    for (const h of this.hosts.values()) if (h.robotsLoading) return true
    return false
  }

  private leave(outcome: Outcome) {
    // A pause or a finish waits for in-flight fetches; a stop or a shutdown arriving meanwhile
    // still has to be prompt, so it replaces them.
    const prompt = 'left' in outcome && outcome.left !== 'paused'
    const waiting = this.leaving && !('left' in this.leaving && this.leaving.left !== 'paused')
    if (this.leaving && !(prompt && waiting)) return
    this.leaving = outcome
    // Stop and shutdown are prompt: in-flight fetches are aborted (and requeued). A pause and a
    // finish let them complete, so their pages are recorded.
    if ('left' in outcome && outcome.left !== 'paused') this.abort.abort(new FetchError('timeout', 'the run was stopped'))
    this.poke()
  }

  private nextWakeMs(): number {
    const now = Date.now()
    let next = TICK_MS * 5
    const perHost = this.cfg.politeness.per_host_concurrency!
    for (const h of this.hosts.values()) {
      if (h.buffer.length && h.inFlight < perHost && h.nextAt > now) next = Math.min(next, h.nextAt - now)
      for (const d of h.delayed) next = Math.min(next, Math.max(d.at, h.nextAt) - now)
    }
    return Math.max(5, Math.min(next, TICK_MS * 5))
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms)
      function done() {
        clearTimeout(timer)
        resolve()
      }
      this.wake = done
    })
  }

  private poke() {
    const wake = this.wake
    this.wake = null
    wake?.()
  }

  // ------------------------------------------------------------------ robots

  private readonly robotsSitemaps = new Map<string, string[]>()

  /** robots.txt once per host per run (kept in run_hosts, so a resumed run does not fetch it again). */
  private loadRobots(host: Host): Promise<void> {
    if (host.robots) return Promise.resolve()
    return (host.robotsLoad ??= this.fetchRobots(host))
  }

  private async fetchRobots(host: Host) {
    host.robotsLoading = true
    const { frontier } = this.deps.store
    try {
      const origin = `${this.originOf(host.key)}`
      let record = frontier.robots(this.run.seq, host.key)
      const url = `${origin}/robots.txt`
      if (!record || record.status === null) {
        const started = Date.now()
        const where = { url, url_hash: linkHash(url), host: hostOf(url), step: 'robots' as const }
        const sent = this.journal.start({ ...where, started_at: started })
        try {
          const r = await this.deps.fetcher.fetch({ ...this.fetchBase, url, max_redirects: 5, max_retries: 1, max_body_bytes: MAX_ROBOTS_BYTES }, this.run.tenant, this.abort.signal)
          record = { status: r.status, body: r.status >= 200 && r.status < 300 ? new TextDecoder().decode(r.body) : null }
          const failed = r.status === 429 || r.status >= 500
          this.logFetch(sent, {
            ...where,
            status: failed ? 'error' : 'ok',
            ...(failed ? { error_reason: 'http_status' as const, error_detail: `robots.txt answered ${r.status}: the host is treated as disallowing everything` } : {}),
            http_status: r.status,
            latency_ms: Date.now() - started,
          })
        } catch (err) {
          if (this.abort.signal.aborted) return this.logFetch(sent, interruptedEntry(where, 'robots', 'retried', { latency_ms: Date.now() - started }), started)
          this.logFetch(sent, { ...where, status: 'error', ...this.reasonOf(err), latency_ms: Date.now() - started })
          if (this.leaving) return
          if (err instanceof FetchError && (err.code === 'blocked_address' || err.code === 'dns')) {
            // Not a robots answer: the host itself cannot be fetched. Its pages are tried and fail
            // with the real reason, rather than being reported as disallowed by robots.txt.
            host.robots = ALLOW_ALL
            return
          }
          // No answer: the body keeps why, for the URLs that fail with it (after a resume too).
          const why = this.reasonOf(err)
          record = { status: -1, body: `${why.error_reason}\n${why.error_detail}` }
        }
        frontier.saveRobots(this.run.seq, host.key, record)
      }
      if (record.status === -1) host.unreachable = unreachableWhy(record.body)
      const robots = robotsFromStatus(record.status === -1 ? 'unreachable' : record.status!, record.status === -1 ? undefined : (record.body ?? undefined))
      this.robotsSitemaps.set(host.key, robots.sitemaps)
      const rules = robots.forAgent(robotsAgent(this.fetchBase.user_agent))
      host.robots = this.cfg.politeness.respect_robots ? rules : ALLOW_ALL
      if (this.cfg.politeness.respect_robots && rules.crawlDelayMs) host.delayMs = Math.max(host.delayMs, rules.crawlDelayMs)
    } finally {
      host.robotsLoading = false
    }
  }

  private originOf(hostKey: string): string {
    const h = this.hosts.get(hostKey)
    if (h?.origin) return h.origin
    // Every URL of a host key shares its scheme in practice; the seeds decide otherwise.
    const seed = this.cfg.seeds.map((s) => URL.parse(s)).find((u) => u?.host === hostKey)
    return `${seed?.protocol ?? 'https:'}//${hostKey}`
  }

  // ------------------------------------------------------------------ one URL

  private async visit(host: Host, c: Claimed) {
    const { frontier } = this.deps.store
    if (!host.origin) host.origin = new URL(c.url).origin
    const u = new URL(c.url)
    if (host.robots && !host.robots.allowed(u.pathname + u.search)) {
      if (c.depth === 0 && c.parent === null) this.seedsDisallowed++
      if (host.unreachable) return this.unreachable(host, c)
      this.rec.log({ ...this.where(c), step: 'robots', status: 'skipped', error_reason: 'robots_disallowed', error_detail: 'robots.txt disallows this URL' })
      this.defer(() => frontier.done(this.run.seq, c.seq))
      this.counters.queued--
      return
    }
    const started = Date.now()
    const sent = this.journal.start({ ...this.where(c), step: 'fetch', started_at: started })
    let result: FetchResult
    try {
      result = await this.deps.fetcher.fetch({ ...this.fetchBase, url: c.url }, this.run.tenant, this.abort.signal)
    } catch (err) {
      // Stopped or shut down: the URL stays queued (the checkpoint requeues it), and the fetch,
      // which the server may have seen, is logged as such.
      if (this.abort.signal.aborted) return this.fetchInterrupted(sent, c, started)
      return this.fetchFailed(sent, host, c, err, Date.now() - started)
    }
    const latency = Date.now() - started
    if (this.leaving && 'left' in this.leaving && this.leaving.left !== 'paused') return this.fetchInterrupted(sent, c, started, result.status)
    if (host.failures > 0) this.setFailures(host, 0)
    if ((result.status === 429 || result.status === 503) && c.attempts + 1 < MAX_ATTEMPTS) {
      const wait = this.backoff(host, result)
      const notBefore = Date.now() + wait
      this.defer(() => frontier.requeue(this.run.seq, c.seq, notBefore))
      host.delayed.push({ entry: { ...c, attempts: c.attempts + 1 }, at: notBefore })
      this.logFetch(sent, {
        ...this.where(c),
        step: 'fetch',
        status: 'retried',
        error_reason: 'http_status',
        error_detail: `${result.status}; the host backs off for ${wait} ms`,
        http_status: result.status,
        latency_ms: latency,
      })
      return
    }
    host.throttled = 0
    this.counters.fetched++
    this.counters.bytes += result.body.byteLength
    const ok = result.status >= 200 && result.status < 300
    if (result.status >= 400) this.countError(`http_${result.status}`)
    this.logFetch(sent, {
      ...this.where(c),
      step: 'fetch',
      status: ok || (result.status >= 300 && result.status < 400) ? 'ok' : 'error',
      ...(ok || result.status < 400 ? {} : { error_reason: 'http_status' as const, error_detail: `the server answered ${result.status}` }),
      http_status: result.status,
      latency_ms: latency,
    })
    // Where redirects ended is the same page, and every hop of the chain led there: each is
    // marked seen so no one fetches it again.
    for (const url of [...result.redirects.map((r) => r.url), result.final_url]) {
      const seen = normalizeUrl(url)
      if (seen && seen !== c.url) this.markSeen(seen, c.depth, c.parent)
    }

    let parsed: ParseResult | null = null
    if (c.kind === PAGE && ok && result.content_type && documentKind(result.content_type)) parsed = await this.parse(c, result)
    else if (c.kind === PAGE && ok) {
      this.rec.log({ ...this.where(c), step: 'parse', status: 'skipped', error_reason: 'unsupported_content_type', error_detail: `content type ${result.content_type ?? '(none)'} is not parsed` })
    }
    await this.store(c, result, parsed)
    if (parsed) this.discover(c, parsed)
    this.recordVisit(host, c, result.status)
    this.counters.visited++
    this.counters.queued--
  }

  /** The visit and the frontier's mark, with the next batch: `status` null when there was no answer. */
  private recordVisit(host: Host, c: Claimed, status: number | null) {
    const hostKeyHash = (host.hash ??= hostHash(hostOf(c.url)))
    const at = Date.now()
    this.defer(() => {
      this.rec.visit(c, hostKeyHash, status, at)
      if (status === null) this.deps.store.frontier.failed(this.run.seq, c.seq)
      else this.deps.store.frontier.done(this.run.seq, c.seq)
    })
  }

  private where(c: Claimed) {
    // Logs name the host as the catalogue does (no port); `c.host` keys politeness per origin.
    return { url: c.url, url_hash: c.hash, host: hostOf(c.url), depth: c.depth, ...(c.parent ? { parent_url_hash: c.parent } : {}) }
  }

  /** A fetch's own entry, which settles it in the journal once committed (unless it was refused). */
  private logFetch(sent: number, entry: EngineLog, at?: number) {
    if (this.rec.log(entry, at)) this.journal.logged(sent)
  }

  /**
   * A fetch cut short by a stop or a shutdown (aborted, or answered too late to be recorded):
   * the URL stays queued, `retried` when a later execution will fetch it, `error` when the run
   * was stopped for good. Its entry is dated when the fetch started, like one written after a
   * crash: nothing about the page happened after the stop.
   */
  private fetchInterrupted(sent: number, c: Claimed, started: number, status?: number) {
    const stopped = this.leaving !== null && 'left' in this.leaving && this.leaving.left === 'stopped'
    this.logFetch(
      sent,
      interruptedEntry(this.where(c), 'fetch', stopped ? 'error' : 'retried', { latency_ms: Date.now() - started, ...(status !== undefined ? { http_status: status } : {}) }),
      started,
    )
  }

  private fetchFailed(sent: number, host: Host, c: Claimed, err: unknown, latency: number) {
    const { frontier } = this.deps.store
    const reason = this.reasonOf(err)
    const network = err instanceof FetchError && ['dns', 'connect', 'tls', 'timeout', 'proxy'].includes(err.code)
    if (network) this.setFailures(host, host.failures + 1)
    this.logFetch(sent, { ...this.where(c), step: 'fetch', status: 'error', ...reason, latency_ms: latency })
    this.recordVisit(host, c, null)
    this.counters.failed++
    this.counters.queued--
    this.countError(reason.error_reason)
    if (host.failures >= MAX_HOST_FAILURES) {
      // A host that keeps failing is given up on: what it still has queued fails with it.
      const given = [...host.buffer.splice(0), ...host.delayed.splice(0).map((d) => d.entry)]
      this.defer(() => given.forEach((b) => frontier.failed(this.run.seq, b.seq)))
      for (const row of given) {
        this.rec.log({
          url: row.url,
          url_hash: row.hash,
          host: hostOf(row.url),
          depth: row.depth,
          ...(row.parent ? { parent_url_hash: row.parent } : {}),
          step: 'fetch',
          status: 'error',
          error_reason: 'host_unreachable',
          error_detail: `${host.key} failed ${host.failures} times in a row`,
        })
        this.counters.failed++
        this.counters.queued--
      }
      this.countError('host_unreachable', given.length)
    }
  }

  /** A URL of a host whose robots.txt got no answer: it fails with that fetch's reason, unfetched. */
  private unreachable(host: Host, c: Claimed) {
    const why = host.unreachable!
    this.rec.log({ ...this.where(c), step: 'fetch', status: 'error', error_reason: why.error_reason, error_detail: `not fetched: robots.txt got no answer (${why.error_detail})`.slice(0, 2000) })
    this.recordVisit(host, c, null)
    this.counters.failed++
    this.counters.queued--
    this.countError(why.error_reason)
  }

  private countError(reason: string, n = 1) {
    if (n <= 0) return
    this.errorCounts.set(reason, (this.errorCounts.get(reason) ?? 0) + n)
    this.errorCountsChanged = true
  }

  /** A host's consecutive failures, kept in run_hosts with the page's rows: a resumed run goes on counting. */
  private setFailures(host: Host, failures: number) {
    host.failures = failures
    this.defer(() => this.deps.store.frontier.saveHostFailures(this.run.seq, host.key, failures))
  }

  /** 429/503: the host waits Retry-After (capped) or an exponential backoff before its next request. */
  private backoff(host: Host, r: FetchResult): number {
    const header = r.headers.find(([n]) => n === 'retry-after')?.[1]
    const wait = retryAfterMs(header, Date.now(), BACKOFF_CAP_MS) ?? Math.min(1000 * 2 ** Math.min(host.throttled, 6), BACKOFF_CAP_MS)
    host.throttled++
    host.nextAt = Math.max(host.nextAt, Date.now() + wait)
    return wait
  }

  private async parse(c: Claimed, r: FetchResult): Promise<ParseResult | null> {
    const started = Date.now()
    try {
      const input = { url: c.url, body: r.body, content_type: r.content_type!, redirects: r.redirects, pipelines: this.pipelines, collect_assets: this.cfg.store.assets }
      // Links and metadata come from the scan's one walk over the tags, cheaper than handing the
      // page to a worker and back (a worker per page made a crawler slower: design.md, measured
      // fact 14). Pipelines with heavier steps, categories or data maps go to the parse workers
      // and their time limit.
      const result = this.inThread ? await parseDocument(input, this.ctx) : await this.deps.parser.parse(input, this.ctx, this.run.tenant)
      const latency = Date.now() - started
      for (const p of result.pipelines) {
        this.rec.log({
          ...this.where(c),
          step: 'parse',
          status: p.status === 'ran' ? 'ok' : 'skipped',
          pipeline_id: p.identifier,
          latency_ms: latency,
          ...(p.skipped_reason ? { error_detail: `skipped: ${p.skipped_reason}` } : {}),
        })
        for (const step of p.steps) {
          if (step.kind === 'data_map' && 'error' in step)
            this.rec.log({ ...this.where(c), step: 'extract', status: 'error', pipeline_id: p.identifier, error_reason: 'parse_error', error_detail: step.error.message })
          else if ((step.kind === 'fields' || step.kind === 'data_map') && 'errors' in step) {
            this.rec.log({
              ...this.where(c),
              step: 'extract',
              status: step.errors.length ? 'error' : 'ok',
              pipeline_id: p.identifier,
              ...(step.errors.length
                ? {
                    error_reason: 'parse_error' as const,
                    error_detail: step.errors
                      .map((e) => `${e.field}: ${e.message}`)
                      .join('; ')
                      .slice(0, 2000),
                  }
                : {}),
            })
          }
        }
      }
      return result
    } catch (err) {
      const unsupported = err instanceof ParseFailure && err.code === 'unsupported_content_type'
      this.rec.log({
        ...this.where(c),
        step: 'parse',
        status: unsupported ? 'skipped' : 'error',
        error_reason: unsupported ? 'unsupported_content_type' : 'parse_error',
        error_detail: (err as Error).message,
        latency_ms: Date.now() - started,
      })
      return null
    }
  }

  /** Artifacts: the raw body, one parsed JSON per pipeline that ran (design.md §4 `store`). */
  private async store(c: Claimed, r: FetchResult, parsed: ParseResult | null) {
    const wanted: { kind: 'raw' | 'parsed' | 'asset'; pipeline: string | null; body: Uint8Array; type: string }[] = []
    const type = r.content_type ?? 'application/octet-stream'
    if (c.kind === ASSET) wanted.push({ kind: 'asset', pipeline: null, body: r.body, type })
    else if (this.cfg.store.raw) wanted.push({ kind: 'raw', pipeline: null, body: r.body, type })
    if (parsed && this.cfg.store.parsed) {
      for (const p of parsed.pipelines) {
        if (p.status !== 'ran') continue
        wanted.push({
          kind: 'parsed',
          pipeline: p.identifier,
          body: UTF8.encode(JSON.stringify({ url: parsed.url, base_url: parsed.base_url, content_type: parsed.content_type, charset: parsed.charset, pipeline: p })),
          type: 'application/json',
        })
      }
    }
    if (!wanted.length) return
    const started = Date.now()
    // Each artifact stands alone: one the store refused does not drop the others' rows (their
    // blobs are stored already, and a row is what lets them be listed and deleted).
    const settled = await Promise.allSettled(wanted.map((w) => this.rec.artifact(c.hash, w.kind, w.pipeline, w.body, w.type, this.deps.blobs, this.journal)))
    const refused: string[] = []
    settled.forEach((s, i) => {
      if (s.status === 'fulfilled') this.defer(s.value)
      else refused.push(`${wanted[i]!.kind}${wanted[i]!.pipeline ? ` (${wanted[i]!.pipeline})` : ''}: ${(s.reason as Error)?.message ?? String(s.reason)}`)
    })
    const latency = Date.now() - started
    if (!refused.length) this.rec.log({ ...this.where(c), step: 'store', status: 'ok', latency_ms: latency })
    else {
      const detail = `${refused.length} of ${wanted.length} artifacts not stored: ${refused.join('; ')}`
      this.rec.log({ ...this.where(c), step: 'store', status: 'error', error_reason: 'store_error', error_detail: detail.slice(0, 2000), latency_ms: latency })
    }
  }

  /**
   * A link as parsed → its normalized URL, hash and whether the run's scope takes it; null for
   * no URL. Most links of a site are repeats (design.md, measured fact 13), so this saves a URL parse, a
   * hash and the scope tests for about nineteen of a page's twenty links.
   */
  private readonly linkCache = new BoundedCache<ChildLink | null>(LINK_CACHE_SIZE)

  private childLink(raw: string): ChildLink | null {
    return this.linkCache.get(raw, (key) => {
      const url = normalizeUrl(key)
      // Most links are written normalized already: the key then holds the URL for both.
      return url === null ? null : { url: url === key ? key : url, hash: linkHash(url), inScope: !this.scope.whyOut(url) && this.inCategories(url) }
    })
  }

  /** Links of the pipelines' navigators: edges for in-scope children, the new ones queued. */
  private discover(c: Claimed, parsed: ParseResult) {
    const children = new Map<string, { link: ChildLink; follow: boolean }>() // by normalized URL; follow: not nofollow, or follow_nofollow
    for (const p of parsed.pipelines) {
      for (const raw of p.links ?? []) {
        const link = this.childLink(raw.url)
        if (!link || link.url === c.url) continue
        const follow = !raw.nofollow || this.cfg.scope.follow_nofollow === true
        const had = children.get(link.url)
        if (had) had.follow ||= follow
        else children.set(link.url, { link, follow })
      }
    }
    const kept = [...children.values()].filter((child) => child.link.inScope)
    const inScope = kept.map((child) => child.link.url)
    const childHashes = kept.map((child) => child.link.hash)
    const next: FrontierEntry[] = []
    const depth = c.depth + 1
    inScope.forEach((url, i) => {
      if (!kept[i]!.follow) return
      if (depth > this.maxDepth) {
        if (!this.isSeen(childHashes[i]!)) this.counters.depth_cut = 1
        return
      }
      next.push(this.entry(url, depth, c.hash, PAGE, childHashes[i]))
    })
    // rel=canonical: the same content under its own name, at this page's depth.
    for (const p of parsed.pipelines) {
      for (const step of p.steps) {
        if (step.kind !== 'metadata' || !step.metadata.canonical) continue
        const canonical = normalizeUrl(step.metadata.canonical)
        if (canonical && canonical !== c.url && !this.scope.whyOut(canonical)) next.push(this.entry(canonical, c.depth, c.parent, PAGE))
      }
    }
    if (this.cfg.store.assets && parsed.assets) {
      for (const raw of parsed.assets) {
        const url = normalizeUrl(raw)
        if (url && !this.scope.whyOut(url)) next.push(this.entry(url, depth, c.hash, ASSET))
      }
    }
    this.enqueue(next)
    // Edges name their child's catalogue row: depth-cut and nofollow children get theirs here.
    const urls = this.uncataloged(inScope.map((u, i) => [u, childHashes[i]!]))
    this.defer(() => {
      this.rec.links(urls)
      this.rec.edges(c.hash, childHashes)
    })
    this.rec.log({ ...this.where(c), step: 'discover', status: 'ok' })
  }

  /**
   * `scope.categories`: a discovered URL is followed only when its host's pattern sets put it in
   * one of them. Matching runs here, on compiled RE2 programs cached per set, each pattern within
   * the size budget every user regex has (decision 60).
   */
  private inCategories(url: string): boolean {
    const wanted = this.cfg.scope.categories ?? []
    if (!wanted.length) return true
    const category = categorize(url, this.ctx.patternSets(url))
    return category !== null && (wanted as string[]).includes(category)
  }

  private isSeen(hash: string): boolean {
    return this.known.get(hash) === SEEN
  }

  /** The URLs of these that have no catalogue row yet as far as this execution knows; marks them known. */
  private uncataloged(pairs: [string, string][]): string[] {
    const out: string[] = []
    for (const [url, hash] of pairs) {
      if (this.known.has(hash)) continue
      this.known.set(hash, CATALOGED)
      out.push(url)
    }
    return out
  }

  private markSeen(url: string, depth: number, parent: string | null) {
    const hash = linkHash(url)
    if (this.isSeen(hash)) {
      // Already queued (not yet fetched): the redirect fetched it, so it leaves the queue.
      const h = this.hosts.get(hostPortOf(url))
      const i = h ? h.buffer.findIndex((e) => e.hash === hash) : -1
      if (h && i >= 0) {
        const [gone] = h.buffer.splice(i, 1)
        this.counters.queued--
        this.defer(() => this.deps.store.frontier.done(this.run.seq, gone!.seq))
      }
      return
    }
    const cataloged = this.known.get(hash) === CATALOGED
    this.known.set(hash, SEEN)
    const seq = ++this.nextSeq
    const entry = this.entry(url, depth, parent, PAGE, hash)
    this.defer(() => {
      if (!cataloged) this.rec.links([url])
      this.deps.store.frontier.enqueue(this.run.seq, [entry], seq, DONE)
    })
  }

  private reasonOf(err: unknown): { error_reason: LogReason; error_detail: string } {
    if (err instanceof FetchError) return { error_reason: FETCH_REASON[err.code], error_detail: err.message }
    return { error_reason: 'connect', error_detail: String((err as Error)?.message ?? err) }
  }

  private countersFromFrontier(): Partial<RunCounters> {
    const c = this.deps.store.frontier.counts(this.run.seq)
    return { queued: c.queued + c.leased, failed: c.failed }
  }
}

type ChildLink = { url: string; hash: string; inScope: boolean }

/** What the heap held after the last full collection (cells and string buffers), in bytes, and when. */
let liveAfterFullGc = 0
let lastGc = 0
let lastFullGc = 0
/** Pages finished by every execution of the process, and that count at the last collection of each kind. */
let pagesFinished = 0
let pagesAtGc = 0
let pagesAtFullGc = 0
const GC_MS = 100
const GC_PAGES = 100
const FULL_GC_MS = 1000
const FULL_GC_PAGES = 1000
/** Full collections cost tens of ms: pages come as fast as they like (tiny pages, errors), these not. */
const FULL_GC_FLOOR_MS = 250
const GC_HEAP_STEP = 64 * 1024 * 1024

/**
 * A young-generation collection every 100 ms or 100 pages, whichever comes first, and a full one
 * every second or 1,000 pages, but never within 250 ms of the last (the second and the pages
 * are spaced out by as much again per 64 MB live after the last full one).
 * A crawl makes a page's worth of garbage per fetch, and
 * JavaScriptCore lets the heap grow to several times what is live before it collects: a
 * 20,000-page crawl peaked at about 250 MB with an asynchronous collection every second. A full
 * collection every 200 ms held it at 130 MB but took a fifth of the crawl thread (about 40 ms
 * each); most of a page's garbage dies young, so frequent young collections (well under a
 * millisecond each) and a rarer full one hold it at 125-130 MB for a twentieth (decision 67).
 * Garbage comes with pages, not time: when the crawl got faster, collections by time alone let
 * the peak rise with it (134 MB at 1,400 pages/s), so pages count too (126-128 MB; decision 78).
 * A full collection costs in proportion to what is live, so a large run's are spaced out.
 */
function collectGarbage(now: number) {
  if (now - lastGc < GC_MS && pagesFinished - pagesAtGc < GC_PAGES) return
  lastGc = now
  pagesAtGc = pagesFinished
  const scale = Math.max(1, liveAfterFullGc / GC_HEAP_STEP)
  const since = now - lastFullGc
  if (since < FULL_GC_MS * scale && (pagesFinished - pagesAtFullGc < FULL_GC_PAGES * scale || since < FULL_GC_FLOOR_MS)) {
    Bun.gc(false)
    return
  }
  Bun.gc(true)
  pagesAtFullGc = pagesFinished
  lastFullGc = Date.now()
  const after = process.memoryUsage()
  liveAfterFullGc = after.heapUsed + after.external
}

const ALLOW_ALL: AgentRules = { allowed: () => true, crawlDelayMs: null }

/** Why robots.txt got no answer, as saved in run_hosts (`reason\ndetail`); a record saved before reasons were kept has none. */
function unreachableWhy(body: string | null): { error_reason: LogReason; error_detail: string } {
  const cut = body?.indexOf('\n') ?? -1
  if (!body || cut < 0) return { error_reason: 'connect', error_detail: 'robots.txt did not answer' }
  return { error_reason: body.slice(0, cut) as LogReason, error_detail: body.slice(cut + 1) }
}

/** Fetch error codes as crawl log error reasons (design.md §5 lists the reasons). */
const FETCH_REASON: Record<FetchErrorCode, LogReason> = {
  timeout: 'timeout',
  dns: 'dns',
  connect: 'connect',
  tls: 'tls',
  too_large: 'too_large',
  redirect_limit: 'redirect_limit',
  proxy: 'connect',
  rejected: 'http_status',
  bad_response: 'connect',
  blocked_address: 'blocked_address',
  browser_unavailable: 'connect',
}
