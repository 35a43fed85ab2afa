import type { Database, Statement } from 'bun:sqlite'
import { LOG_STATUSES, LOG_STEPS, type LogEntry } from './crawl-log-types'
import { TEXT } from './list'

export type WriterOptions = {
  /** Entries buffered before add() flushes them itself (default 500). */
  batchSize?: number
  /** How long the first buffered entry may wait for its flush (default 100 ms). */
  maxDelayMs?: number
  /** Told when a timer flush fails; the entries stay buffered and the timer retries, backing off. */
  onError?: (err: unknown) => void
  /**
   * Only the caller flushes (no size or timer flush): the crawl engine flushes inside each of its
   * commits, so entries land with the rows they describe, and none land after the run's lease is lost.
   */
  manual?: boolean
}

const STEP_SET: ReadonlySet<string> = new Set(LOG_STEPS)
const STATUS_SET: ReadonlySet<string> = new Set(LOG_STATUSES)
const INSERT = `INSERT INTO crawl_logs (run_seq, id, url, url_hash, host, step, status, pipeline_id, error_reason, error_detail, http_status, latency_ms, depth, parent_url_hash, occurred_at)
  VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`
type Tuple = [number, string, string, string, string, string, string, string | null, string | null, string | null, number | null, number | null, number | null, string | null, number]

/**
 * Buffers log entries and writes them in one transaction per batch (design.md §5: never one per
 * entry): when `batchSize` entries are buffered (add() then flushes synchronously) or
 * `maxDelayMs` after the first buffered entry, whichever comes first.
 *
 * - flush() writes what is buffered now. Called inside the engine's own db.transaction it
 *   joins that transaction (as a savepoint): the entries then commit or roll back with the
 *   engine's frontier changes, which is how a checkpoint makes them atomic.
 * - Entries of a run deleted meanwhile are dropped (their run's delete took its logs too);
 *   any other failure leaves the batch buffered and is thrown to the caller (or, from the
 *   timer, given to onError).
 * - close() flushes and stops the timer; call it before closing the database. Entries still
 *   buffered at a crash are lost: they were never acknowledged.
 *
 * One reused prepared statement inside the transaction measured as fast as multi-row
 * INSERTs (the per-row cost is the four indexes, not the statement).
 */
export class LogWriter {
  private buffer: Tuple[] = []
  private timer: ReturnType<typeof setTimeout> | undefined
  private closed = false
  private failures = 0
  private readonly insert: Statement
  private readonly batchSize: number
  private readonly maxDelayMs: number
  private readonly onError: (err: unknown) => void
  private readonly manual: boolean
  /** Totals since creation: entries written, transactions committed, entries of deleted runs dropped. */
  readonly stats = { written: 0, flushes: 0, dropped: 0 }

  constructor(
    private readonly db: Database,
    options: WriterOptions = {},
  ) {
    this.insert = db.prepare(INSERT)
    this.batchSize = options.batchSize ?? 500
    this.maxDelayMs = options.maxDelayMs ?? 100
    this.onError = options.onError ?? ((err) => console.error('crawl log flush failed:', err))
    this.manual = options.manual ?? false
  }

  /** Buffers one entry and answers its id. Throws on a closed writer or an impossible entry. */
  add(e: LogEntry): string {
    if (this.closed) throw new Error('crawl log writer is closed')
    // A bad row would fail its whole batch again at every retry; refuse it here instead.
    if (!STEP_SET.has(e.step) || !STATUS_SET.has(e.status) || !Number.isFinite(e.occurred_at)) {
      throw new TypeError(`bad crawl log entry: step=${e.step} status=${e.status} occurred_at=${e.occurred_at}`)
    }
    const id = crypto.randomUUID()
    this.buffer.push([
      e.run_seq,
      id,
      e.url,
      e.url_hash,
      e.host,
      e.step,
      e.status,
      e.pipeline_id ?? null,
      e.error_reason ?? null,
      e.error_detail ?? null,
      e.http_status ?? null,
      e.latency_ms ?? null,
      e.depth ?? null,
      e.parent_url_hash ?? null,
      Math.trunc(e.occurred_at),
    ])
    if (this.manual) return id
    if (this.buffer.length >= this.batchSize) this.flush()
    else this.timer ??= setTimeout(this.onTimer, this.maxDelayMs)
    return id
  }

  /** Writes every buffered entry in one transaction; answers how many were written. */
  flush(): number {
    if (this.timer !== undefined) clearTimeout(this.timer)
    this.timer = undefined
    if (this.buffer.length === 0) return 0
    let batch = this.buffer
    this.buffer = []
    try {
      this.write(batch)
    } catch (err) {
      if ((err as { code?: string }).code !== 'SQLITE_CONSTRAINT_FOREIGNKEY') {
        this.buffer = batch.concat(this.buffer)
        throw err
      }
      batch = this.withoutDeletedRuns(batch)
      try {
        this.write(batch)
      } catch (again) {
        this.buffer = batch.concat(this.buffer)
        throw again
      }
    }
    return batch.length
  }

  /** Flushes and refuses further entries. */
  close(): void {
    this.closed = true
    this.flush()
  }

  /** Drops what is buffered, unwritten, and refuses further entries; answers how many were dropped. */
  discard(): number {
    this.closed = true
    if (this.timer !== undefined) clearTimeout(this.timer)
    this.timer = undefined
    const dropped = this.buffer.length
    this.buffer = []
    this.stats.dropped += dropped
    return dropped
  }

  /** Entries waiting for a flush. */
  get buffered(): number {
    return this.buffer.length
  }

  private write(batch: Tuple[]) {
    if (batch.length === 0) return
    this.db
      .transaction(() => {
        for (const row of batch) this.insert.run(...row)
      })
      .immediate()
    this.stats.flushes++
    this.stats.written += batch.length
  }

  private withoutDeletedRuns(batch: Tuple[]): Tuple[] {
    const seqs = [...new Set(batch.map((r) => r[0]))]
    const live = new Set((this.db.query(`SELECT seq FROM runs WHERE seq IN (SELECT value FROM json_each(${TEXT}))`).all(JSON.stringify(seqs)) as { seq: number }[]).map((r) => r.seq))
    const kept = batch.filter((r) => live.has(r[0]))
    this.stats.dropped += batch.length - kept.length
    return kept
  }

  private readonly onTimer = () => {
    this.timer = undefined
    try {
      this.flush()
      this.failures = 0
    } catch (err) {
      this.failures++
      this.onError(err)
      // Retry with the entries still buffered, backing off so a locked database is not hammered.
      if (this.buffer.length > 0 && !this.closed) this.timer ??= setTimeout(this.onTimer, Math.min(this.maxDelayMs * 2 ** this.failures, 5000))
    }
  }
}
