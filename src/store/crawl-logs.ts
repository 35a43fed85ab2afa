import type { Database, SQLQueryBindings, Statement } from 'bun:sqlite'
import { normalizeHost } from '../core/url'
import { decodeCursor } from '../http/cursor'
import { ValidationError } from '../core/errors'
import { emptyPage, INT, keysetPage, TEXT, type Page } from './list'
import { epoch, formatIso } from './time'

/** The vocabulary of design.md §5. */
export const LOG_STEPS = ['schedule', 'robots', 'fetch', 'parse', 'extract', 'store', 'discover'] as const
export const LOG_STATUSES = ['ok', 'error', 'skipped', 'retried'] as const
export const ERROR_REASONS = [
  'timeout',
  'dns',
  'connect',
  'tls',
  'http_status',
  'too_large',
  'redirect_limit',
  'robots_disallowed',
  'out_of_scope',
  'unsupported_content_type',
  'blocked_address',
  'parse_error',
  'store_error',
  // design.md §5 marks the queued URLs of a host that failed 5 times in a row with this reason.
  'host_unreachable',
  // A fetch that was sent and never recorded: the process stopped (or was killed) first.
  'interrupted',
] as const
export const METRIC_DIMENSIONS = ['step', 'status', 'host', 'error_reason', 'pipeline_id', 'http_status'] as const
export const WINDOWS = ['minute', 'hour', 'day', 'week'] as const
export type LogStep = (typeof LOG_STEPS)[number]
export type LogStatus = (typeof LOG_STATUSES)[number]
export type ErrorReason = (typeof ERROR_REASONS)[number]
export type MetricDimension = (typeof METRIC_DIMENSIONS)[number]
export type Window = (typeof WINDOWS)[number]

/** What the crawl engine records: one URL's passage through one step. */
export type LogEntry = {
  run_seq: number
  url: string
  url_hash: string
  host: string
  step: LogStep
  status: LogStatus
  pipeline_id?: string
  error_reason?: ErrorReason
  error_detail?: string
  http_status?: number
  latency_ms?: number
  depth?: number
  parent_url_hash?: string
  /** Epoch milliseconds. */
  occurred_at: number
}

/** An entry as the API shows it (SPEC "Crawl log entry"): absent fields are left out, not null. */
export type CrawlLogEntry = { id: string; run_id: string; job_id: string } & Omit<LogEntry, 'run_seq' | 'occurred_at'> & { occurred_at: string }

/** Bounds on occurred_at, strict like every `*_before` / `*_after` filter. */
export type TimeRange = { occurred_after?: string; occurred_before?: string }
export type LogFilter = TimeRange & { hosts?: string[]; steps?: string[]; statuses?: string[]; error_reasons?: string[]; pipeline_ids?: string[] }
export type MetricsQuery = TimeRange & { window: Window; group_by?: MetricDimension[]; filters?: Partial<Record<MetricDimension, string>> }
export type LatencyQuery = TimeRange & { window: Window; steps?: string[]; hosts?: string[] }

/** One combination of the group_by values in a bucket; null stands for entries without the field. */
export type MetricGroup = { [D in MetricDimension]?: string | number | null } & { count: number }
export type Metrics = { window: Window; group_by: MetricDimension[]; buckets: { start: string; end: string; count: number; groups: MetricGroup[] }[] }
export type StepLatency = { step: LogStep; count: number; p50: number; p90: number; p95: number; p99: number; max: number }
export type Latency = { window: Window; buckets: { start: string; end: string; steps: StepLatency[] }[] }

/**
 * An aggregate answers at most this many (bucket, group) rows. The work is a scan of the range
 * either way; the cap keeps a minute window over a month of a big run from answering megabytes.
 */
export const MAX_GROUPS = 50_000

// Bucket width and the epoch instant one bucket starts at: weeks start on Monday, and
// 1970-01-05 was the first Monday after the epoch.
const DAY = 86_400_000
const BUCKETS: Record<Window, { width: number; origin: number }> = {
  minute: { width: 60_000, origin: 0 },
  hour: { width: 3_600_000, origin: 0 },
  day: { width: DAY, origin: 0 },
  week: { width: 7 * DAY, origin: 4 * DAY },
}
// Floor modulo: SQLite's % truncates toward zero, which would misplace instants before the origin.
const bucketStart = (w: Window) => {
  const { width, origin } = BUCKETS[w]
  return `t.occurred_at - (((t.occurred_at - ${origin}) % ${width}) + ${width}) % ${width}`
}

const COLUMNS = 't.id, t.url, t.url_hash, t.host, t.step, t.status, t.pipeline_id, t.error_reason, t.error_detail, t.http_status, t.latency_ms, t.depth, t.parent_url_hash, t.occurred_at'
type Row = {
  _seq: number
  id: string
  url: string
  url_hash: string
  host: string
  step: LogStep
  status: LogStatus
  pipeline_id: string | null
  error_reason: ErrorReason | null
  error_detail: string | null
  http_status: number | null
  latency_ms: number | null
  depth: number | null
  parent_url_hash: string | null
  occurred_at: number
}
type RunRef = { seq: number; id: string; job_id: string }

function toEntry(r: Row, run: RunRef): CrawlLogEntry {
  // occurred_at is set last so it also comes last in the JSON, after the optional fields.
  const e = { id: r.id, run_id: run.id, job_id: run.job_id, url: r.url, url_hash: r.url_hash, host: r.host, step: r.step, status: r.status } as CrawlLogEntry
  if (r.pipeline_id !== null) e.pipeline_id = r.pipeline_id
  if (r.error_reason !== null) e.error_reason = r.error_reason
  if (r.error_detail !== null) e.error_detail = r.error_detail
  if (r.http_status !== null) e.http_status = r.http_status
  if (r.latency_ms !== null) e.latency_ms = r.latency_ms
  if (r.depth !== null) e.depth = r.depth
  if (r.parent_url_hash !== null) e.parent_url_hash = r.parent_url_hash
  e.occurred_at = formatIso(r.occurred_at)
  return e
}

/** Host filter values match the stored (normalized) spelling, as for links and hosts. */
const storedHosts = (hosts: string[] | undefined) => hosts?.map((h) => normalizeHost(h) ?? h)

/** WHERE terms over the alias `t` with their parameters. */
class Where {
  readonly terms: string[] = []
  readonly params: SQLQueryBindings[] = []
  add(term: string, ...params: SQLQueryBindings[]): this {
    this.terms.push(term)
    this.params.push(...params)
    return this
  }
  /** One value is an equality (an ordered index walk); several travel as one JSON parameter. */
  in(column: string, values: readonly string[] | undefined): this {
    if (values === undefined) return this
    if (values.length === 1) return this.add(`${column} = ${TEXT}`, values[0]!)
    return this.add(`${column} IN (SELECT value FROM json_each(${TEXT}))`, JSON.stringify(values))
  }
  range(r: TimeRange): this {
    if (r.occurred_before !== undefined) this.add(`t.occurred_at < ${INT}`, epoch(r.occurred_before))
    if (r.occurred_after !== undefined) this.add(`t.occurred_at > ${INT}`, epoch(r.occurred_after))
    return this
  }
  get sql() {
    return this.terms.join(' AND ')
  }
}

/** The keyset position after which a page starts: the last entry of the previous page. */
export type LogPosition = { occurred_at: number; seq: number }

/**
 * The statement of one page of a run's entries, newest first by (occurred_at, seq). It names
 * the index that drives it (INDEXED BY: the plan cannot drift with table statistics), chosen
 * so the rows it walks are mostly rows it returns:
 * - error_reasons: the partial index of entries that have one (errors are few);
 * - statuses without `ok`: the partial index of non-ok entries;
 * - hosts: the host index;
 * - otherwise the run's time index; steps, statuses and pipeline_ids are tested on the way
 *   (few distinct values, so matches are dense).
 * One value of the driving filter is an ordered walk from the cursor, O(log n + page). Several
 * values are looked up and sorted: O(their entries), which is small for errors and non-ok
 * outcomes but is all of those hosts' entries for several hosts.
 * Exported so tests can EXPLAIN it.
 */
export function listStatement(runSeq: number, f: LogFilter, after: LogPosition | undefined, perPage: number): { sql: string; params: SQLQueryBindings[] } {
  const w = new Where().add(`t.run_seq = ${INT}`, runSeq)
  let index = 'crawl_logs_by_time'
  if (f.error_reasons !== undefined) {
    index = 'crawl_logs_errors'
    w.add('t.error_reason IS NOT NULL') // the partial index's own condition, for the planner
  } else if (f.statuses !== undefined && !f.statuses.includes('ok')) {
    index = 'crawl_logs_not_ok'
    w.add("t.status <> 'ok'")
  } else if (f.hosts !== undefined) {
    index = 'crawl_logs_by_host'
  }
  w.in('t.error_reason', f.error_reasons).in('t.status', f.statuses).in('t.host', storedHosts(f.hosts))
  w.in('t.step', f.steps).in('t.pipeline_id', f.pipeline_ids).range(f)
  if (after) w.add(`t.occurred_at <= ${INT} AND (t.occurred_at < ${INT} OR t.seq < ${INT})`, after.occurred_at, after.occurred_at, after.seq)
  return {
    sql: `SELECT t.seq AS _seq, ${COLUMNS} FROM crawl_logs t INDEXED BY ${index} WHERE ${w.sql} ORDER BY t.occurred_at DESC, t.seq DESC LIMIT ${INT}`,
    params: [...w.params, perPage + 1],
  }
}

const hasEmptyList = (f: LogFilter | LatencyQuery) => Object.values(f).some((v) => Array.isArray(v) && v.length === 0)

/** Crawl log entries of runs: the batched writer and the three read endpoints (SPEC "Crawl logs"). */
export function crawlLogRepository(db: Database) {
  const runOf = db.query('SELECT seq, id, job_id FROM runs WHERE tenant = ? AND id = ?')
  const loggedSince = db.query(`SELECT 1 AS one FROM crawl_logs INDEXED BY crawl_logs_by_time WHERE run_seq = ${INT} AND occurred_at >= ${INT} AND url_hash = ${TEXT} AND step = ${TEXT} LIMIT 1`)
  const positionOf = db.query(`SELECT occurred_at, seq FROM crawl_logs WHERE seq = ${INT} AND run_seq = ${INT}`)
  const findRun = (tenant: string, runId: string) => runOf.get(tenant, runId) as RunRef | null
  // The partial errors index walks only the run's error entries, which a healthy run has few of.
  const errorsOf = db.query(
    `SELECT url_hash, step, error_reason, error_detail FROM crawl_logs INDEXED BY crawl_logs_errors WHERE run_seq = ${INT} AND error_reason IS NOT NULL AND occurred_at <= ${INT} AND url_hash IN (SELECT value FROM json_each(${TEXT})) ORDER BY seq`,
  )

  return {
    /** A batching writer for the crawl engine (see LogWriter). One per process is enough. */
    writer(options?: WriterOptions): LogWriter {
      return new LogWriter(db, options)
    },

    /**
     * Whether the run has an entry of this URL and step at or after `since` (epoch ms): a fetch
     * the journal still lists whose entry was committed just before a crash. Walks the run's
     * entries since then, which for a journal's leftovers are the last seconds of the run.
     */
    loggedSince: (runSeq: number, urlHash: string, step: LogStep, since: number): boolean => loggedSince.get(runSeq, since, urlHash, step) !== null,

    /**
     * Why each of these URLs failed in the run (at most a few hundred link hashes): the last
     * error entry at or before `upTo` (epoch ms), a fetch step's before any other step's. URLs
     * without an error entry are absent.
     */
    errorsOf(runSeq: number, urlHashes: readonly string[], upTo: number): Map<string, { reason: ErrorReason; detail: string | null }> {
      const found = new Map<string, { reason: ErrorReason; detail: string | null }>()
      if (!urlHashes.length) return found
      const rows = errorsOf.all(runSeq, upTo, JSON.stringify(urlHashes)) as { url_hash: string; step: LogStep; error_reason: ErrorReason; error_detail: string | null }[]
      // URLs whose entry found so far is a fetch step's: a later entry of another step does not replace it.
      const byFetch = new Set<string>()
      for (const r of rows) {
        if (r.step === 'fetch') byFetch.add(r.url_hash)
        else if (byFetch.has(r.url_hash)) continue
        found.set(r.url_hash, { reason: r.error_reason, detail: r.error_detail })
      }
      return found
    },

    /** A page of a run's entries, newest first; null when this tenant has no such run. */
    list(tenant: string, runId: string, f: LogFilter, page: string | undefined, perPage: number): Page<CrawlLogEntry> | null {
      const cursor = page === undefined ? undefined : decodeCursor(page) // a malformed cursor is a 422 before the 404
      const run = findRun(tenant, runId)
      if (!run) return null
      if (hasEmptyList(f)) return emptyPage()
      let after: LogPosition | undefined
      if (cursor !== undefined) {
        after = positionOf.get(cursor, run.seq) as LogPosition | undefined
        if (!after) throw ValidationError.of('page', 'is not a cursor of this run')
      }
      return keysetPage(db, listStatement(run.seq, f, after, perPage), perPage, (r: Row) => toEntry(r, run))
    },

    /**
     * Entry counts per time bucket (oldest first) and per combination of the group_by values
     * (largest first). Cost: one pass over the matching entries in the range, driven by the
     * index the list would pick (errors, non-ok statuses, a host, or else the run's time index;
     * named, since without statistics SQLite once chose the host index for a whole-run scan),
     * plus a sort of the groups. A 422 on `window` when the answer would exceed MAX_GROUPS rows.
     */
    metrics(tenant: string, runId: string, q: MetricsQuery): Metrics | null {
      const run = findRun(tenant, runId)
      if (!run) return null
      const dims = q.group_by ?? []
      for (const d of [...dims, ...Object.keys(q.filters ?? {})]) {
        if (!(METRIC_DIMENSIONS as readonly string[]).includes(d)) throw new Error(`unknown metric dimension ${d}`) // a column name goes into the SQL text
      }
      const f = q.filters ?? {}
      const w = new Where().add(`t.run_seq = ${INT}`, run.seq).range(q)
      const index =
        f.error_reason !== undefined ? 'crawl_logs_errors' : f.status !== undefined && f.status !== 'ok' ? 'crawl_logs_not_ok' : f.host !== undefined ? 'crawl_logs_by_host' : 'crawl_logs_by_time'
      if (index === 'crawl_logs_not_ok') w.add("t.status <> 'ok'")
      for (const [dim, value] of Object.entries(f)) {
        if (value === undefined) continue
        if (dim === 'http_status') w.add(`t.http_status = ${INT}`, Number(value))
        else w.add(`t.${dim} = ${TEXT}`, dim === 'host' ? (normalizeHost(value) ?? value) : value)
      }
      const cols = dims.map((d) => `, t.${d} AS ${d}`).join('')
      const keys = dims.map((_, i) => `, ${i + 2}`).join('')
      const sql = `SELECT ${bucketStart(q.window)} AS b${cols}, count(*) AS n FROM crawl_logs t INDEXED BY ${index} WHERE ${w.sql} GROUP BY 1${keys} ORDER BY 1, n DESC${keys} LIMIT ${MAX_GROUPS + 1}`
      const rows = db.query(sql).all(...w.params) as ({ b: number; n: number } & Record<string, string | number | null>)[]
      if (rows.length > MAX_GROUPS) throw tooManyGroups()
      const { width } = BUCKETS[q.window]
      const buckets: Metrics['buckets'] = []
      let bucket: Metrics['buckets'][number] | undefined
      let bucketAt = NaN
      for (const r of rows) {
        if (r.b !== bucketAt) {
          bucketAt = r.b
          buckets.push((bucket = { start: formatIso(r.b), end: formatIso(r.b + width), count: 0, groups: [] }))
        }
        const group = {} as MetricGroup // the dimensions first, then count, as the docs show it
        for (const d of dims) group[d] = r[d] ?? null
        group.count = r.n
        bucket!.count += r.n
        bucket!.groups.push(group)
      }
      return { window: q.window, group_by: dims, buckets }
    },

    /**
     * Nearest-rank percentiles (p = the value at rank ceil(p/100 × count) of the sorted
     * latencies) per bucket and step, over entries that have latency_ms. Exact, so every value
     * in the range is sorted: SQLite's window functions do it in one sort of the range's
     * latencies (O(n log n), spilling to temporary files past the page cache), and only the
     * five ranked rows per group come back to JS.
     */
    latency(tenant: string, runId: string, q: LatencyQuery): Latency | null {
      const run = findRun(tenant, runId)
      if (!run) return null
      if (hasEmptyList(q)) return { window: q.window, buckets: [] }
      const w = new Where().add(`t.run_seq = ${INT}`, run.seq).add('t.latency_ms IS NOT NULL').range(q)
      w.in('t.step', q.steps).in('t.host', storedHosts(q.hosts))
      const rank = (p: number) => `(${p} * n + 99) / 100` // ceil(p·n/100) in integer arithmetic
      const sql = `SELECT b, step, rn, n, ms FROM (
          SELECT b, step, ms, row_number() OVER w AS rn, count(*) OVER (w ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING) AS n
          FROM (SELECT ${bucketStart(q.window)} AS b, t.step AS step, t.latency_ms AS ms FROM crawl_logs t INDEXED BY ${q.hosts ? 'crawl_logs_by_host' : 'crawl_logs_by_time'} WHERE ${w.sql})
          WINDOW w AS (PARTITION BY b, step ORDER BY ms))
        WHERE rn = n OR rn IN (${rank(50)}, ${rank(90)}, ${rank(95)}, ${rank(99)})
        ORDER BY b, step, rn`
      const rows = db.query(sql).all(...w.params) as { b: number; step: LogStep; rn: number; n: number; ms: number }[]
      const { width } = BUCKETS[q.window]
      const buckets: Latency['buckets'] = []
      const rankOf = (p: number, n: number) => Math.floor((p * n + 99) / 100) // as in the SQL
      let bucket: Latency['buckets'][number] | undefined
      let bucketAt = NaN
      let current: StepLatency | undefined
      let groups = 0
      for (const r of rows) {
        if (r.b !== bucketAt) {
          bucketAt = r.b
          buckets.push((bucket = { start: formatIso(r.b), end: formatIso(r.b + width), steps: [] }))
          current = undefined
        }
        if (current?.step !== r.step) {
          if (++groups > MAX_GROUPS) throw tooManyGroups()
          bucket!.steps.push((current = { step: r.step, count: r.n, p50: 0, p90: 0, p95: 0, p99: 0, max: 0 }))
        }
        // One row can hold several ranks: with few values they coincide.
        if (r.rn === rankOf(50, r.n)) current.p50 = r.ms
        if (r.rn === rankOf(90, r.n)) current.p90 = r.ms
        if (r.rn === rankOf(95, r.n)) current.p95 = r.ms
        if (r.rn === rankOf(99, r.n)) current.p99 = r.ms
        if (r.rn === r.n) current.max = r.ms
      }
      return { window: q.window, buckets }
    },
  }
}

const tooManyGroups = () => ValidationError.of('window', `gives more than ${MAX_GROUPS} groups: use a wider window, a shorter occurred_after..occurred_before range, or fewer group_by dimensions`)

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
