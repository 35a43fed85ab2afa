import { resolveConfig, type CrawlConfig } from '../crawl/manifest'
import type { Logger } from '../log'
import type { Store } from '../store'
import type { Condition, DueFiring, Execution } from '../store/triggers'
import { nextTick } from './cron'

/** At most this long between looks at the database, so firings recorded by another process are seen. */
const POLL_MS = 5_000
/** Firings made per turn of the event loop; more wait for the next turn, which comes at once. */
const BATCH = 64
/** After a failure that may pass (the database busy, full or failing), the next try waits this long. */
const RETRY_MS = 1_000
// SQLite failures that say nothing about the firing itself (extended codes included, such as
// SQLITE_BUSY_SNAPSHOT): the firing stays due and is tried again.
const TRANSIENT = ['SQLITE_BUSY', 'SQLITE_LOCKED', 'SQLITE_IOERR', 'SQLITE_FULL', 'SQLITE_CANTOPEN', 'SQLITE_PROTOCOL', 'SQLITE_NOMEM']
function transient(err: unknown): boolean {
  const code = String((err as { code?: unknown } | null)?.code ?? '')
  return TRANSIENT.some((c) => code === c || code.startsWith(`${c}_`))
}

/** What one turn did: the executions recorded, and whether firings are left for another turn. */
export type Turn = { made: Execution[]; more: boolean }

/**
 * Makes the firings of triggers (design.md §5): a schedule's cron ticks, and the on_finish firings
 * that a run's finish recorded in the database (migration 009), each after its delay. Everything
 * it waits for is a row, so nothing is lost to a restart: a tick missed while the process was
 * down is still due at start and fires once (the next tick is computed from now), and an
 * on_finish firing that fell due meanwhile fires then.
 */
export class Scheduler {
  private timer: ReturnType<typeof setTimeout> | null = null
  private stopped = true
  /** A wake is queued already: notifications in one turn make one look, not one each. */
  private queued = false
  /** No firing is tried before this (epoch ms): set by a transient failure. */
  private retryAt = 0

  constructor(
    private readonly store: Store,
    private readonly log: Logger,
    /** Told when a firing created a run (the runner, to start it now rather than at its next poll). */
    private readonly onRun: () => void = () => {},
    private readonly now: () => number = Date.now,
  ) {}

  start() {
    this.stopped = false
    this.wake()
  }

  stop() {
    this.stopped = true
    if (this.timer) clearTimeout(this.timer)
    this.timer = null
  }

  /** Something may be due sooner than the timer knows (a trigger created or enabled, a run finished). */
  notify() {
    if (this.stopped || this.queued) return
    this.queued = true
    queueMicrotask(() => {
      this.queued = false
      this.wake()
    })
  }

  /**
   * Makes up to one batch of the firings due at the scheduler's `now`. A firing that fails for a
   * reason that may pass stays due, and the turn ends there; `more` is then false, and the next
   * try waits RETRY_MS.
   */
  tick(): Turn {
    const made: Execution[] = []
    const now = this.now()
    if (now < this.retryAt) return { made, more: false }
    const due = this.store.triggers.due(now, BATCH)
    let more = due.length === BATCH
    for (const d of due) {
      const outcome = this.fire(d, now)
      if (outcome === 'retry') {
        this.retryAt = now + RETRY_MS
        more = false
        break
      }
      if (outcome) made.push(outcome)
    }
    // One look of the runner takes every run it has room for.
    if (made.some((e) => e.run_id)) this.onRun()
    return { made, more }
  }

  private fire(d: DueFiring, now: number): Execution | null | 'retry' {
    try {
      const execution = this.store.triggers.fire(
        d,
        now,
        (condition, after) => this.next(condition, after),
        (tenant, jobId) => this.createRun(tenant, jobId),
      )
      if (execution) this.log.info('trigger fired', { trigger: execution.trigger_id, outcome: execution.outcome, run: execution.run_id })
      return execution
    } catch (err) {
      if (transient(err)) {
        this.log.warn('trigger firing deferred: the database is not available', { trigger_seq: d.trigger_seq, error: String(err), retry_ms: RETRY_MS })
        return 'retry'
      }
      // A failure of the firing itself would recur at every try: a schedule moves on to its next
      // tick and a delayed firing is dropped, both logged.
      this.log.error('trigger firing failed', { trigger_seq: d.trigger_seq, error: String(err) })
      try {
        this.store.triggers.discard(d, (condition) => this.next(condition, now))
      } catch (discardError) {
        this.log.warn('trigger firing deferred: the database is not available', { trigger_seq: d.trigger_seq, error: String(discardError), retry_ms: RETRY_MS })
        return 'retry'
      }
      return null
    }
  }

  /** The tick after `after`; null (no more ticks) when the expression cannot be evaluated. */
  private next(condition: Condition, after: number): number | null {
    if (condition.kind !== 'schedule') return null
    try {
      return nextTick(condition.params, after)
    } catch (err) {
      this.log.error('cron expression cannot be evaluated; the schedule stops', { expression: condition.params.expression, error: String(err) })
      return null
    }
  }

  private createRun(tenant: string, jobId: string): string {
    const job = this.store.jobs.get(tenant, jobId)!
    const run = this.store.runs.create(tenant, job, { id: crypto.randomUUID(), config: resolveConfig(job.config as CrawlConfig) })
    return run.id
  }

  private wake(): void {
    if (this.stopped) return
    let more = false
    try {
      more = this.tick().more
    } catch (err) {
      this.log.error('trigger scheduler failed', { error: String(err) })
      this.retryAt = this.now() + RETRY_MS
    }
    // A full batch leaves more: the next one after other work has had its turn (HTTP, the runs' leases).
    if (more) {
      if (this.timer) clearTimeout(this.timer)
      this.timer = setTimeout(() => this.wake(), 0)
      return
    }
    this.arm()
  }

  private arm() {
    if (this.stopped) return
    if (this.timer) clearTimeout(this.timer)
    const now = this.now()
    let wait = POLL_MS
    try {
      const at = this.store.triggers.nextDue()
      if (at !== null) wait = Math.max(0, Math.min(POLL_MS, at - now))
    } catch (err) {
      this.log.error('trigger scheduler failed', { error: String(err) })
    }
    wait = Math.max(wait, this.retryAt - now)
    this.timer = setTimeout(() => this.wake(), wait)
  }
}
