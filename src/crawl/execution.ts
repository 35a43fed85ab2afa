import type { BlobStore } from '../blob/blob-store'
import { FetchError } from '../fetch/errors'
import type { Fetcher } from '../fetch/fetcher'
import { requestOptions } from '../fetch/options-schema'
import type { FetchRequest } from '../fetch/types'
import type { Logger } from '../log'
import { CRAWL_PIPELINE } from '../parse/crawl-pipeline'
import type { Pipeline } from '../parse/pipeline-schema'
import type { ParsePool } from '../parse/pool'
import type { Store } from '../store'
import type { Claimed, CrawlStore, FrontierEntry, RunCounters } from '../store/crawl-store'
import { PAGE } from '../store/frontier'
import { parseDuration } from '../util/duration'
import { collectGarbage } from './gc'
import { Discovery } from './discovery'
import { HostSlots, type Host } from './host-slots'
import { closeJournal, dropBodies, logInterrupted } from './interrupted'
import { CRAWL_FETCH_DEFAULTS, type CrawlConfig } from './manifest'
import { ErrorTally, runOutcome } from './outcome'
import { PageBatch } from './page-batch'
import { RobotsLoader, robotsDepsOf } from './robots-loader'
import { Scope } from './scope'
import { readSitemaps, sitemapDepsOf } from './sitemap-seeds'
import { hostOf, linkHash, normalizeUrl } from '../core/url'
import { PageVisitor } from './visit'
import { Waker } from './waker'
import { Commits } from './commits'
import { SharedHosts } from './shared-hosts'
import { RunState } from './run-state'
import { hostEnded, hostRoom, hostStarted } from './host-load'
import { StoreParseContext } from '../catalogue/parse-context'

export type EngineDeps = {
  /** The store; the engine writes through its crawl part (async, batch-oriented). */
  store: Store
  fetcher: Fetcher
  parser: ParsePool
  blobs: BlobStore
  log: Logger
  /** TRAWL_HOST_CEILING: requests in flight to one host over every run (and every process of a shared store). */
  hostCeiling?: number
}

export const DEFAULT_HOST_CEILING = 16
export type RunRow = { seq: number; id: string; tenant: string; config: Required<CrawlConfig>; started_at: number; paused_ms: number }
export type StopReason = 'max_depth' | 'max_urls' | 'max_empty_evaluations' | 'max_age' | 'manual' | 'empty_seed' | 'unknown'
/** How an execution ended: the run finished, or it was left for later (paused, shut down, taken away). */
export type Outcome = { finished: StopReason } | { left: 'paused' | 'stopped' | 'shutdown' | 'lost_lease' | 'store_error' }

const TICK_MS = 100
/** How long a run's lease lasts without renewal (renewed every RENEW_MS). */
export const LEASE_MS = 15_000
const RENEW_MS = 3_000
const EVALUATION_MS = 1_000

/**
 * One run being crawled by this process (design.md §5): the run loop. The frontier is the truth;
 * this object holds what is cheap to rebuild from it. Per-host politeness is HostSlots, the seen
 * set and links Discovery, robots.txt RobotsLoader, one URL's visit PageVisitor, what a commit
 * writes PageBatch.
 */
export class RunExecution {
  readonly cfg: Required<CrawlConfig>
  readonly hosts: HostSlots
  readonly discovery: Discovery
  readonly scope: Scope
  readonly batch: PageBatch
  readonly robots: RobotsLoader
  readonly abort = new AbortController()
  readonly fetchBase: Omit<FetchRequest, 'url'>
  readonly pipelines: Pipeline[]
  /** Whether the run parses with the crawl pipeline alone, whose parsed artifacts are made again from the raw body when read (decision 103). */
  readonly derivesParsed: boolean
  readonly ctx: StoreParseContext
  /** Whether parsing or discovery asks for pattern sets (category guards, scope.categories). */
  readonly needsPatterns: boolean
  counters!: RunCounters
  readonly journal: ReturnType<CrawlStore['journal']>
  private readonly visitor: PageVisitor
  /** The run ended after max_empty_evaluations empty looks with URLs still queued. */
  private stalled = false
  nextSeq = 0
  inFlight = 0
  readonly commits: Commits
  /** This process's share of a run that many crawl together (a shared store); null when it holds the run whole. */
  readonly shared: SharedHosts | null
  private emptyEvaluations = 0
  private lastEvaluation = 0
  private lastRenew = 0
  private readonly runState: RunState
  seedsLeft = 0
  seedsDisallowed = 0
  private startupWork = 0
  leaving: Outcome | null = null
  private readonly waker = new Waker()
  private orphansDropped: Promise<void> = Promise.resolve()
  readonly maxUrls: number
  private readonly hostCeiling: number
  private readonly maxAgeMs: number

  constructor(
    readonly run: RunRow,
    readonly deps: EngineDeps,
    readonly owner: string,
  ) {
    const cfg = (this.cfg = run.config)
    this.scope = new Scope(cfg.seeds, { domains: cfg.scope.domains!, include: cfg.scope.include ?? [], exclude: cfg.scope.exclude ?? [] })
    this.journal = deps.store.crawl.journal(run.seq)
    this.ctx = new StoreParseContext(deps.store, run.tenant)
    this.hosts = new HostSlots(parseDuration(cfg.politeness.delay ?? '0s')!, cfg.politeness.respect_robots !== false)
    this.discovery = new Discovery(cfg, this.scope, this.ctx)
    this.batch = new PageBatch(deps.store.crawl, run, this.journal)
    // A user pipeline without a navigator still lets the crawl go on: it follows every a[href].
    this.pipelines = cfg.pipelines.length ? cfg.pipelines.map((p) => (p.navigator ? p : ({ ...p, navigator: { kind: 'links' } } as Pipeline))) : [CRAWL_PIPELINE]
    this.derivesParsed = !cfg.pipelines.length
    this.fetchBase = { method: 'GET', ...requestOptions(cfg.fetch, CRAWL_FETCH_DEFAULTS), max_body_bytes: cfg.store.max_body_bytes, retry_throttled: false }
    this.needsPatterns = (cfg.scope.categories ?? []).length > 0 || this.pipelines.some((p) => p.guards?.some((g) => g.kind === 'category'))
    this.maxUrls = cfg.limits.max_urls!
    this.maxAgeMs = parseDuration(cfg.limits.max_age ?? '1h')!
    this.robots = new RobotsLoader(robotsDepsOf(this))
    this.visitor = new PageVisitor(this, this.journal)
    this.commits = new Commits(this)
    this.hostCeiling = deps.hostCeiling ?? DEFAULT_HOST_CEILING
    const shared = deps.store.crawl.shared
    this.shared = shared ? new SharedHosts(this, shared, owner, this.hostCeiling, LEASE_MS) : null
    this.runState = new RunState(deps.store.crawl, run.seq, this.shared !== null)
  }

  /** Asks the execution to leave at once: in-flight fetches are aborted and requeued. */
  shutdown() {
    this.leave({ left: 'shutdown' })
  }

  /** Crawls until the run finishes or is left; never throws. */
  async execute(): Promise<Outcome> {
    try {
      await this.resume()
      await this.ctx.preparePipelines(this.pipelines)
      if (this.nextSeq === 0) await this.seed()
      while (!this.leaving) {
        await this.control()
        if (this.leaving) break
        this.pump()
        await this.evaluate()
        if (this.leaving) break
        await this.sleep(this.hosts.nextWakeMs(Date.now(), this.cfg.politeness.per_host_concurrency!, TICK_MS * 5))
      }
      // Let what is in flight settle: pause finishes fetches; stop and shutdown abort them.
      while (this.inFlight > 0 || this.startupWork > 0 || this.hosts.robotsLoading()) {
        await this.sleep(TICK_MS)
        // A stop (or deletion) of the run while a pause waits for its fetches aborts them.
        const row = await this.deps.store.crawl.status(this.run.seq)
        if (!row || row.status === 'finished') this.leave({ left: 'stopped' })
      }
    } catch (err) {
      this.deps.log.error('crawl failed', { run: this.run.id, error: String((err as Error).stack ?? err) })
      // A shared run goes on without this process (its store may be away for a moment).
      this.leaving ??= this.shared ? { left: 'store_error' } : { finished: 'unknown' }
    }
    const outcome = this.leaving!
    try {
      await this.commits.settled()
      await this.end(outcome)
    } catch (err) {
      this.deps.log.error('crawl checkpoint failed', { run: this.run.id, error: String(err) })
    }
    this.batch.close()
    await this.orphansDropped
    try {
      await closeJournal(this.deps, this.run, this.journal, 'left' in outcome && outcome.left === 'lost_lease')
    } catch (err) {
      // The store is away: the journal stays as it is, for this process's next execution of the run.
      this.deps.log.warn('the run journal could not be closed', { run: this.run.id, error: String(err) })
      this.journal.abandon()
    }
    return outcome
  }

  /** The last commit: what is buffered, the leftovers failed or left queued, the run finished or released. */
  private async end(outcome: Outcome) {
    // A `manual` finish was written by the stop itself; the engine writes the others.
    const finish = 'finished' in outcome && outcome.finished !== 'manual' ? outcome.finished : null
    if (finish) await this.commits.now() // the pages first: the outcome reads whether any was answered
    const failQueued = finish !== null && finish !== 'max_urls' && finish !== 'max_age'
    const outcomeText = finish ? runOutcome(finish, { stalled: this.stalled, pageFetched: await this.deps.store.crawl.pageFetched(this.run.seq) }) : null
    this.commits.saveErrorCounts()
    const out = await this.batch.commit(this.owner, this.counters, { finish: finish ? { reason: finish, outcome: outcomeText } : null, failQueued })
    if (out.held) this.counters = out.counters
  }

  // ------------------------------------------------------------------ start and resume

  private async resume() {
    const state = await this.deps.store.crawl.resume(this.run.seq)
    this.counters = state.counters
    this.commits.errors = new ErrorTally(state.errorCounts)
    const interrupted = await logInterrupted(this.deps.store.crawl, this.run.seq, this.journal, this.batch)
    if (interrupted) this.deps.log.info('interrupted fetches logged', { run: this.run.id, fetches: interrupted })
    // Bodies an earlier holder put and never committed rows for: gone, as their pages are refetched.
    this.orphansDropped = dropBodies(this.deps, this.journal, this.journal.orphanBodies()).catch((err) =>
      this.deps.log.warn('bodies without artifact rows could not be deleted; the next execution tries again', { run: this.run.id, error: String(err) }),
    )
    this.discovery.seen(state.hashes)
    this.nextSeq = state.maxSeq
    const now = Date.now()
    for (const row of state.queued) {
      const h = this.hosts.get(row.host)
      h.origin ||= new URL(row.url).origin
      if (row.not_before > now) h.delayed.push({ entry: row, at: row.not_before })
      else h.buffer.push(row)
    }
    for (const { host, failures } of state.hostFailures) this.hosts.get(host).failures = failures
  }

  private async seed() {
    const seeds: FrontierEntry[] = []
    for (const raw of this.cfg.seeds) {
      const url = normalizeUrl(raw)
      if (!url) continue
      const why = this.scope.whyOut(url)
      if (why) {
        this.batch.log({ url, url_hash: linkHash(url), host: hostOf(url), step: 'schedule', status: 'skipped', error_reason: 'out_of_scope', error_detail: `the seed ${why}`, depth: 0 })
        continue
      }
      seeds.push(this.discovery.entry(url, 0, null, PAGE))
    }
    this.seedsLeft = this.enqueue(seeds)
    if (this.seedsLeft === 0) return this.leave({ finished: 'empty_seed' })
    if (this.cfg.sitemaps) {
      this.startupWork++
      // A shared run is not over while its sitemaps are read: the others are told until what
      // they add is committed.
      await this.shared?.seeding(true)
      void readSitemaps(sitemapDepsOf(this), seeds)
        .then(async () => {
          if (!this.shared) return
          await this.commits.now()
          await this.shared.seeding(false)
        })
        .catch((err) => this.deps.log.warn('the end of reading sitemaps could not be recorded', { run: this.run.id, error: String(err) }))
        .finally(() => {
          this.startupWork--
          this.poke()
        })
    }
  }

  // ------------------------------------------------------------------ scheduling

  /** Adds unseen URLs to the frontier and the catalogue; answers how many were new. */
  enqueue(entries: FrontierEntry[]): number {
    const { fresh, uncataloged } = this.discovery.fresh(entries)
    if (!fresh.length) return 0
    const first = this.nextSeq + 1
    this.batch.links(uncataloged)
    this.batch.enqueue(fresh, first)
    this.nextSeq += fresh.length
    this.counters.queued += fresh.length
    // A shared run's rows reach local queues through the holders of their hosts (SharedHosts.take).
    if (this.shared) return fresh.length
    fresh.forEach((e, i) => {
      const h = this.hosts.get(e.host)
      h.origin ||= new URL(e.url).origin
      h.buffer.push({ ...e, attempts: 0, seq: first + i })
    })
    return fresh.length
  }

  /** Starts fetches while there is room: global and per-host concurrency, delays, the URL budget. */
  private pump() {
    const concurrency = this.cfg.politeness.concurrency!
    const perHost = this.cfg.politeness.per_host_concurrency!
    // A due commit first: SQLite commits before the call returns, and `now` below dates the
    // host delays of the fetches that start after it.
    if (this.commits.due(Date.now())) this.commits.soon()
    const now = Date.now()
    this.shared?.pump(now)
    const used = () => this.inFlight + this.commits.held
    for (const host of this.hosts.all()) {
      if (used() >= concurrency || this.leaving) return
      this.hosts.release(host, now)
      const slots = host.slots ?? perHost
      if (!host.buffer.length || host.inFlight >= slots || host.nextAt > now) continue
      if (this.counters.fetched + this.inFlight >= this.maxUrls) return
      if (host.robots === null) {
        if (!host.robotsLoading) void this.robots.load(host).finally(() => this.poke())
        continue
      }
      // With a delay, one request at a time starts per gap; without, fill the host's slots.
      const room = Math.min(host.delayMs > 0 ? 1 : slots - host.inFlight, concurrency - used(), this.maxUrls - this.counters.fetched - this.inFlight, hostRoom(host.key, this.hostCeiling))
      if (room <= 0) continue
      const starting = host.buffer.splice(0, room)
      host.nextAt = now + host.delayMs
      for (const c of starting) this.start(host, c)
    }
  }

  private start(host: Host, c: Claimed) {
    host.inFlight++
    this.inFlight++
    hostStarted(host.key)
    void this.visitor.visit(host, c).finally(() => {
      hostEnded(host.key)
      host.inFlight--
      this.inFlight--
      this.commits.waiting++
      this.poke()
    })
  }

  /**
   * design.md §5: an evaluation looks for ready work whenever nothing is in flight, at most once a
   * second; the run ends when nothing is queued, or after too many empty looks in a row.
   */
  private async evaluate() {
    if (this.inFlight > 0 || this.startupWork > 0 || this.leaving) return
    await this.commits.now()
    const now = Date.now()
    if (this.counters.fetched >= this.maxUrls) return this.leave({ finished: 'max_urls' })
    const loading = this.hosts.robotsLoading()
    // A shared run's other processes hold the rest of it: it is over when no row is left anywhere.
    if (this.hosts.queued() === 0 && !loading && (!this.shared || (await this.shared.evaluate(now)))) {
      if (this.counters.fetched === 0 && this.seedsDisallowed > 0 && this.seedsDisallowed >= this.seedsLeft) return this.leave({ finished: 'empty_seed' })
      return this.leave({ finished: this.counters.depth_cut ? 'max_depth' : 'max_empty_evaluations' })
    }
    if (this.shared) return
    if (now - this.lastEvaluation < EVALUATION_MS) return
    this.lastEvaluation = now
    this.emptyEvaluations = this.hosts.ready(now) || loading ? 0 : this.emptyEvaluations + 1
    if (this.emptyEvaluations >= this.cfg.limits.max_empty_evaluations!) {
      // SPEC's stop reason is the same as a complete crawl's; the outcome tells them apart.
      this.stalled = true
      this.leave({ finished: this.counters.depth_cut ? 'max_depth' : 'max_empty_evaluations' })
    }
  }

  /** Reads the run's row: a stop or pause from the API, the age limit, the lease. */
  private async control() {
    const now = Date.now()
    const row = await this.runState.read(now)
    if (!row || row.status === 'finished') return this.leave({ left: 'stopped' })
    if (row.status === 'paused') return this.leave({ left: 'paused' })
    if (now - this.run.started_at - row.paused_ms >= this.maxAgeMs) return this.leave({ finished: 'max_age' })
    if (now - this.lastRenew >= RENEW_MS) {
      this.lastRenew = now
      const renewed = this.shared ? await this.shared.renew(now + LEASE_MS) : await this.deps.store.crawl.renew(this.run.seq, this.owner, now + LEASE_MS)
      if (!renewed) return this.leave({ left: 'lost_lease' })
    }
    collectGarbage(now)
  }

  /** The run was moved (paused, resumed, stopped, finished) somewhere in the cluster. */
  runChanged() {
    this.runState.moved()
    this.poke()
  }

  countError(reason: string, n = 1) {
    this.commits.errors.add(reason, n)
  }

  // ------------------------------------------------------------------ leaving and waking

  leave(outcome: Outcome) {
    // A pause or a finish waits for in-flight fetches; a stop or a shutdown arriving meanwhile
    // still has to be prompt, so it replaces them.
    if (this.leaving && !(isPrompt(outcome) && !isPrompt(this.leaving))) return
    this.leaving = outcome
    // Stop and shutdown are prompt: in-flight fetches are aborted (and requeued). A pause and a
    // finish let them complete, so their pages are recorded.
    if (isPrompt(outcome)) this.abort.abort(new FetchError('timeout', 'the run was stopped'))
    this.poke()
  }

  /** Whether the execution is leaving promptly (stopped, shut down, lost): late answers are not recorded. */
  leavingPromptly(): boolean {
    return this.leaving !== null && isPrompt(this.leaving)
  }

  private sleep(ms: number): Promise<void> {
    return this.waker.sleep(ms)
  }

  poke() {
    this.waker.poke()
  }
}

/** A stop, a shutdown or a lost lease: in-flight fetches are aborted, not waited for. */
const isPrompt = (o: Outcome): boolean => 'left' in o && o.left !== 'paused'
