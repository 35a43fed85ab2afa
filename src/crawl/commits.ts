import type { RunCounters } from '../store/crawl-store'
import type { RunExecution } from './execution'
import { ErrorTally } from './outcome'

/**
 * When an execution commits and what its slots wait for (decision 102): a finished page keeps
 * its concurrency slot until its batch lands, so a kill -9 refetches at most `concurrency`
 * pages (those in flight and those uncommitted together).
 */
export class Commits {
  /** Finished pages whose rows are not committed yet (in the batch being built). */
  waiting = 0
  /** Finished pages of the batch being committed. */
  committingPages = 0
  private committing: Promise<void> | null = null
  errors = new ErrorTally({})

  constructor(private readonly x: RunExecution) {}

  /** Slots in use beyond the fetches in flight. */
  get held(): number {
    return this.waiting + this.committingPages
  }

  /**
   * On time (COMMIT_MS) and on count: when half the slots hold finished pages, so pages never
   * wait for a whole round of slots, and a crawl that stores nothing still commits pages together.
   */
  due(now: number): boolean {
    return this.x.batch.due(now) || this.waiting >= Math.max(1, this.x.cfg.politeness.concurrency! >> 1)
  }

  /** Starts a commit of the batch unless one is under way (pages go on meanwhile, into the next batch). */
  soon() {
    if (this.committing) return
    this.committing = this.commitBatch().finally(() => {
      this.committing = null
    })
  }

  /** Commits what is buffered now, after any commit under way. */
  async now() {
    await this.committing
    this.soon()
    await this.committing
  }

  /** The commit under way, if any. */
  settled(): Promise<void> {
    return this.committing ?? Promise.resolve()
  }

  private async commitBatch() {
    const x = this.x
    if (x.batch.empty && this.waiting === 0 && !this.errors.changed) return
    this.saveErrorCounts()
    // The batch is taken now: the pages finished so far are in it, and free their slots once it lands.
    const pages = this.waiting
    this.waiting = 0
    this.committingPages += pages
    try {
      const sent = { ...x.counters }
      const out = await x.batch.commit(x.owner, sent)
      if (!out.held) x.leave({ left: 'lost_lease' })
      else x.counters = rebased(out.counters, sent, x.counters)
    } catch (err) {
      x.deps.log.error('crawl commit failed', { run: x.run.id, error: String(err) })
      // A shared run goes on in the other processes (and in this one once the database answers
      // again): this execution leaves it, its uncommitted pages to be fetched again. A run held
      // whole by this process cannot go on without its store: it ends.
      x.leave(x.shared ? { left: 'store_error' } : { finished: 'unknown' })
    } finally {
      this.committingPages -= pages
      // Their slots are free: the loop may start fetches now rather than at its next tick.
      if (pages > 0) x.poke()
    }
  }

  saveErrorCounts() {
    const counts = this.errors.takeChanged()
    if (counts) this.x.batch.errorCounts(counts)
  }
}

/**
 * The counters after a commit: the store's (a shared store answers the whole run's, every
 * process's pages in them) plus what this execution counted while the commit was under way.
 * A store of one process answers what it was sent, so the sum is the execution's own counters.
 */
export function rebased(stored: RunCounters, sent: RunCounters, now: RunCounters): RunCounters {
  return {
    queued: stored.queued + now.queued - sent.queued,
    visited: stored.visited + now.visited - sent.visited,
    failed: stored.failed + now.failed - sent.failed,
    bytes: stored.bytes + now.bytes - sent.bytes,
    fetched: stored.fetched + now.fetched - sent.fetched,
    depth_cut: Math.max(stored.depth_cut, now.depth_cut),
  }
}
