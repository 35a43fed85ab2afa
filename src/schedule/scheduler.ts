import type { Logger } from '../log'
import { triggerFirings } from '../metrics'
import { fireTrigger } from '../runs/create'
import type { Store } from '../store'
import type { DueFiring, Execution, ScheduleParams } from '../store/triggers'
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
  /** A turn is under way; a wake meanwhile asks for another look once it ends (`again`). */
  private busy = false
  private again = false

  constructor(
    private readonly store: Store,
    private readonly log: Logger,
    /** Told when a firing created a run (the runner, to start it now rather than at its next poll). */
    private readonly onRun: () => void = () => {},
    private readonly now: () => number = Date.now,
  ) {}

  start() {
    this.stopped = false
    void this.wake()
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
      void this.wake()
    })
  }

  /**
   * Makes up to one batch of the firings due at the scheduler's `now`. A firing that fails for a
   * reason that may pass stays due, and the turn ends there; `more` is then false, and the next
   * try waits RETRY_MS.
   */
  async tick(): Promise<Turn> {
    const made: Execution[] = []
    const now = this.now()
    if (now < this.retryAt) return { made, more: false }
    const due = await this.store.triggers.due(now, BATCH)
    let more = due.length === BATCH
    for (const d of due) {
      const outcome = await this.fire(d, now)
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

  private async fire(d: DueFiring, now: number): Promise<Execution | null | 'retry'> {
    const nextAt = d.schedule ? this.next(d.schedule, now) : null
    try {
      const execution = await fireTrigger(this.store, d, now, nextAt)
      if (execution) {
        triggerFirings.labels(d.kind, execution.outcome).inc()
        this.log.info('trigger fired', { trigger: execution.trigger_id, outcome: execution.outcome, run: execution.run_id })
      }
      return execution
    } catch (err) {
      if (transient(err)) {
        triggerFirings.labels(d.kind, 'deferred').inc()
        this.log.warn('trigger firing deferred: the database is not available', { trigger_seq: d.trigger_seq, error: String(err), retry_ms: RETRY_MS })
        return 'retry'
      }
      // A failure of the firing itself would recur at every try: a schedule moves on to its next
      // tick and a delayed firing is dropped, both logged.
      this.log.error('trigger firing failed', { trigger_seq: d.trigger_seq, error: String(err) })
      triggerFirings.labels(d.kind, 'failed').inc()
      try {
        await this.store.triggers.discard(d, nextAt)
      } catch (discardError) {
        this.log.warn('trigger firing deferred: the database is not available', { trigger_seq: d.trigger_seq, error: String(discardError), retry_ms: RETRY_MS })
        return 'retry'
      }
      return null
    }
  }

  /** The tick after `after`; null (no more ticks) when the expression cannot be evaluated. */
  private next(schedule: ScheduleParams, after: number): number | null {
    try {
      return nextTick(schedule, after)
    } catch (err) {
      this.log.error('cron expression cannot be evaluated; the schedule stops', { expression: schedule.expression, error: String(err) })
      return null
    }
  }

  private async wake(): Promise<void> {
    if (this.stopped) return
    if (this.busy) {
      this.again = true
      return
    }
    this.busy = true
    try {
      let more = false
      try {
        more = (await this.tick()).more
      } catch (err) {
        this.log.error('trigger scheduler failed', { error: String(err) })
        this.retryAt = this.now() + RETRY_MS
      }
      // A notification during the turn may concern what it had already looked at.
      if (this.again) more = true
      this.again = false
      // A full batch leaves more: the next one after other work has had its turn (HTTP, the runs' leases).
      if (more) return this.arm(0)
      let wait = POLL_MS
      const now = this.now()
      try {
        const at = await this.store.triggers.nextDue()
        if (at !== null) wait = Math.max(0, Math.min(POLL_MS, at - now))
      } catch (err) {
        this.log.error('trigger scheduler failed', { error: String(err) })
      }
      this.arm(Math.max(wait, this.retryAt - now))
    } finally {
      this.busy = false
    }
  }

  private arm(wait: number) {
    if (this.stopped) return
    if (this.timer) clearTimeout(this.timer)
    this.timer = setTimeout(() => void this.wake(), wait)
  }
}
