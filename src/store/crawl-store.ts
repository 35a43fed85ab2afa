import type { ClaimableRun, Claimed, FrontierEntry, RobotsRecord, RunCounters } from './frontier'
import type { LogEntry } from './crawl-logs'
import type { PageRecord } from './page-records'
import type { NewArtifact } from './artifacts'
import type { RunJournal } from './fetch-journal'

export type { ClaimableRun, Claimed, FrontierEntry, RobotsRecord, RunCounters, LogEntry, PageRecord, NewArtifact, RunJournal }
export { newPageRecord, PAGE_STEP_BIT } from './page-records'

/** A frontier row's move, applied in the order the engine made them (a requeue, then a done, of one seq). */
export type FrontierMark = { seq: number; to: 'done' | 'failed' } | { seq: number; to: 'requeued'; notBefore: number }

/**
 * Everything an execution of a run writes between two commits, as plain data: what a network
 * database needs to write it in one transaction, with no callback run inside it. The engine fills
 * one while pages finish and hands it over whole (src/crawl/page-batch.ts).
 */
export type CrawlBatch = {
  /** Catalogue rows (hosts and links of the run's tenant) for URLs the run met. */
  links: string[]
  /** New frontier rows, seqs from `first`; `done` ones were fetched already (a redirect's target). */
  enqueued: { entries: FrontierEntry[]; first: number; done: boolean }[]
  marks: FrontierMark[]
  /** Hosts' consecutive failed fetches, as they stand now. */
  hostFailures: Map<string, number>
  /** One record per visited page: the visit, its children (edges) and its successful log entries. */
  pages: PageRecord[]
  /** Every other crawl log entry (errors, skips, retries, robots, schedule, extract). */
  logs: LogEntry[]
  artifacts: NewArtifact[]
  /** The run's counters after this batch; error counts when they changed. */
  counters: RunCounters
  errorCounts: Record<string, number> | null
}

/** The end of an execution: written with the last batch. */
export type CrawlEnd = {
  /** The stop reason and outcome to finish the run with; null leaves it running or paused. */
  finish: { reason: string; outcome: string | null } | null
  /** Fail what is still queued (a run that stalled or finished for another reason than its limits). */
  failQueued: boolean
}

/** What an execution starts from when it takes a run (design.md §5: the frontier is the truth). */
export type ResumeState = {
  counters: RunCounters
  errorCounts: Record<string, number>
  /** Every URL hash of the run's frontier (its seen set). */
  hashes: string[]
  maxSeq: number
  /** Still to visit, in discovery order. */
  queued: (Claimed & { not_before: number })[]
  hostFailures: { host: string; failures: number }[]
}

/** A host queue of a run that this process now holds (a shared store's claim). */
export type HostGrant = {
  host: string
  /** Requests this process may have in flight to the host: the run's per_host_concurrency, or less under the cluster's per-host ceiling. */
  slots: number
  /** The earliest start of the host's next request: the delay its last holder left. */
  nextAt: number
  failures: number
  /**
   * Rows of the host a holder that died had taken to fetch and never settled: possibly fetched,
   * fetched again now, each logged (taken_at is when it took them). They are queued again.
   */
  interrupted: (Claimed & { taken_at: number })[]
}

/**
 * How a store shared by many processes lets them crawl one run together (the PostgreSQL engine;
 * decision 112). A run is joined, not held: claimRun adds the process as one of its workers, and
 * the work is leased by host queue, so per-host limits, the delay and robots.txt hold for every
 * process at once. A process fetches only URLs of hosts it holds, taking their rows from the
 * frontier as it starts them; rows it discovers go to the frontier and reach whoever holds their host.
 */
export interface SharedCrawl {
  /**
   * Takes up to `want` of the run's host queues that have work and no live holder, each with
   * min(perHost, what the per-host `ceiling` leaves of it across every run and process) slots.
   */
  claimHosts(runSeq: number, owner: string, want: number, now: number, until: number, perHost: number, ceiling: number): Promise<HostGrant[]>
  /** Renews this worker and its hosts; null when it is no longer a worker of the run (finished, deleted, lapsed). */
  renewHosts(runSeq: number, owner: string, until: number): Promise<string[] | null>
  /** Gives hosts back (no work left for this process), with when each may next be fetched. */
  releaseHosts(runSeq: number, owner: string, hosts: { host: string; nextAt: number }[]): Promise<void>
  /** Takes up to `n` queued rows, ready by `now`, of each of these held hosts: they are in flight from now. */
  take(runSeq: number, owner: string, wants: { host: string; n: number }[], now: number): Promise<Claimed[]>
  /** Puts rows this owner took and will not start (its host went to another) back in the queue. */
  giveBack(runSeq: number, owner: string, seqs: number[]): Promise<void>
  /** Marks this worker as still adding the run's first entries (its sitemaps): the run is not over meanwhile. */
  seeding(runSeq: number, owner: string, on: boolean): Promise<void>
  /** Where the run stands across processes: whether rows are queued or in flight (or a live worker is still seeding), hosts with work no live worker holds, live workers. */
  outlook(runSeq: number, now: number): Promise<{ remaining: number; freeHosts: number; workers: number }>
  /** Calls `onChange` when any process creates a run or moves one (LISTEN/NOTIFY); answers how to stop. */
  watch(onChange: () => void): Promise<() => Promise<void>>
}

/**
 * The crawl engine's part of the store: async, and batch-oriented on the hot path. The engine
 * knows this interface only; the SQLite engine implements it (sqlite-crawl-store.ts).
 */
export interface CrawlStore {
  /** Present when many processes share each run (PostgreSQL); absent when one process holds a run whole (SQLite). */
  shared?: SharedCrawl

  // ---- runs a runner may take, and their leases
  claimable(now: number, limit: number): Promise<ClaimableRun[]>
  run(seq: number): Promise<ClaimableRun | null>
  heldRunning(now: number): Promise<{ seq: number; lease_owner: string }[]>
  claimRun(seq: number, owner: string, now: number, until: number, deadOwner?: string | null): Promise<boolean>
  renew(seq: number, owner: string, until: number): Promise<boolean>
  status(seq: number): Promise<{ status: string; paused_ms: number } | null>
  /** Finishes a run outside an execution (one whose stored state cannot be read back). */
  finish(seq: number, reason: string, now: number, outcome: string | null): Promise<void>

  // ---- an execution
  /** Leases left by a process that died go back to the queue; answers where the run stands. */
  resume(runSeq: number): Promise<ResumeState>
  robots(runSeq: number, host: string): Promise<RobotsRecord | null>
  saveRobots(runSeq: number, host: string, record: RobotsRecord): Promise<void>
  /** Whether an entry of this URL and step was written at or after `since` (the journal's leftovers). */
  loggedSince(runSeq: number, urlHash: string, step: string, since: number): Promise<boolean>
  /** Whether any URL of the run was answered below 400. */
  pageFetched(runSeq: number): Promise<boolean>
  /**
   * Writes the batch in one transaction if `owner` still holds the run, and with `end` releases
   * the lease (requeueing what is in flight) and finishes the run. False when the run is gone or
   * another process holds it: nothing was written.
   */
  commit(runSeq: number, owner: string, batch: CrawlBatch, end?: CrawlEnd): Promise<{ held: boolean; counters: RunCounters }>
  /** Which of these blob keys an artifact row names (a body without one may be deleted). */
  claimedBodies(keys: string[]): Promise<Set<string>>
  /** Writes crawl log entries of a run no one executes (a swept journal's leftovers). */
  writeLogs(entries: LogEntry[]): Promise<void>

  // ---- the fetch journal: a local file per run (fetch-journal.ts), not a database table
  journal(runSeq: number): RunJournal
  journalRuns(): number[]
}
