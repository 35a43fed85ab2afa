import type { Database, SQLQueryBindings } from 'bun:sqlite'
import { ValidationError } from '../core/errors'
import { normalizeHost } from '../core/url'
import {
  hasEmptyList,
  METRIC_DIMENSIONS,
  storedHosts,
  Where,
  type Latency,
  type LatencyQuery,
  type LogStep,
  type MetricGroup,
  type Metrics,
  type MetricsQuery,
  type RunRef,
  type StepLatency,
  type TimeRange,
  type Window,
} from './crawl-log-types'
import { INT, TEXT } from './list'
import { latencySql, occurredAtSql, PAGE_STEP_ROWS, PAGE_STEPS, type envelopes } from './page-records'
import { epoch, formatIso } from './time'

/**
 * An aggregate answers at most this many (bucket, group) rows. The work is a scan of the range
 * either way; the cap keeps a minute window over a month of a big run from answering megabytes.
 */
export const MAX_GROUPS = 50_000

// Bucket width and the epoch instant one bucket starts at: weeks start on Monday, and
// 1970-01-05 was the first Monday after the epoch.
const DAY = 86_400_000
export const BUCKETS: Record<Window, { width: number; origin: number }> = {
  minute: { width: 60_000, origin: 0 },
  hour: { width: 3_600_000, origin: 0 },
  day: { width: DAY, origin: 0 },
  week: { width: 7 * DAY, origin: 4 * DAY },
}
// Floor modulo: SQLite's % truncates toward zero, which would misplace instants before the origin.
const bucketStart = (w: Window, a: string) => {
  const { width, origin } = BUCKETS[w]
  return `${a}.occurred_at - (((${a}.occurred_at - ${origin}) % ${width}) + ${width}) % ${width}`
}

export const tooManyGroups = () =>
  ValidationError.of('window', `gives more than ${MAX_GROUPS} groups: use a wider window, a shorter occurred_after..occurred_before range, or fewer group_by dimensions`)
const ALWAYS = '1 = 1'

/**
 * The metrics and latency of a run's entries: its crawl_logs rows and the entries its visit
 * rows stand for (page-records.ts), one UNION ALL of the two aggregated in SQL.
 */
export function crawlLogAggregates(db: Database, visits: ReturnType<typeof envelopes>) {
  /**
   * The entries the run's visit rows stand for, as rows with crawl_logs' columns (to be
   * aliased `e`): each visit once per bit of `logged`. `host` (a join with the catalogue's
   * hosts) only when asked for. Within a time range, only the visits that can hold entries in
   * it are read (their seqs from the run's envelope). Null when no visit can.
   */
  const visitEntries = (run: RunRef, withHost: boolean, range: TimeRange): { sql: string; params: SQLQueryBindings[] } | null => {
    const e = visits.of(run.seq, run.key)
    if (!e) return null
    const after = range.occurred_after === undefined ? undefined : epoch(range.occurred_after) + 1
    const before = range.occurred_before === undefined ? undefined : epoch(range.occurred_before)
    const seqs = after === undefined && before === undefined ? { first: 0, end: Number.MAX_SAFE_INTEGER } : visits.seqRange(run.seq, e, after, before)
    if (!seqs) return null
    const params: SQLQueryBindings[] = withHost ? [run.tenant] : []
    params.push(run.seq, seqs.first, seqs.end)
    const sql = `SELECT ${occurredAtSql('s.i')} AS occurred_at, s.step AS step, 'ok' AS status, ${withHost ? 'h.domain' : 'NULL'} AS host, NULL AS error_reason,
        CASE s.i WHEN 1 THEN v.pipeline_id END AS pipeline_id, CASE s.i WHEN 0 THEN v.status END AS http_status, ${latencySql('s.i')} AS latency_ms
      FROM visits v CROSS JOIN ${PAGE_STEP_ROWS} s${withHost ? ` LEFT JOIN hosts h ON h.tenant = ${TEXT} AND h.hash = v.host_hash` : ''}
      WHERE v.run_seq = ${INT} AND v.seq >= ${INT} AND v.seq < ${INT} AND (v.logged & s.bit) <> 0`
    return { sql, params }
  }

  return {
    /**
     * Entry counts per time bucket (oldest first) and per combination of the group_by values
     * (largest first). Cost: one pass over the matching entries in the range, driven by the
     * index the list would pick (errors, non-ok statuses, a host, or else the run's time index;
     * named, since without statistics SQLite once chose the host index for a whole-run scan),
     * plus a pass over the run's visits in the range when the filters admit the entries they
     * stand for, plus a sort of the groups. A 422 on `window` when the answer would exceed
     * MAX_GROUPS rows.
     */
    metrics(run: RunRef, q: MetricsQuery): Metrics {
      const dims = q.group_by ?? []
      for (const d of [...dims, ...Object.keys(q.filters ?? {})]) {
        if (!(METRIC_DIMENSIONS as readonly string[]).includes(d)) throw new Error(`unknown metric dimension ${d}`) // a column name goes into the SQL text
      }
      const f = q.filters ?? {}
      const index =
        f.error_reason !== undefined ? 'crawl_logs_errors' : f.status !== undefined && f.status !== 'ok' ? 'crawl_logs_not_ok' : f.host !== undefined ? 'crawl_logs_by_host' : 'crawl_logs_by_time'
      const where = (w: Where) => {
        w.range(q)
        for (const [dim, value] of Object.entries(f)) {
          if (value === undefined) continue
          if (dim === 'http_status') w.add(`${w.alias}.http_status = ${INT}`, Number(value))
          else w.add(`${w.alias}.${dim} = ${TEXT}`, dim === 'host' ? (normalizeHost(value) ?? value) : value)
        }
        return w
      }
      const wt = where(new Where('t').add(`t.run_seq = ${INT}`, run.seq))
      if (index === 'crawl_logs_not_ok') wt.add("t.status <> 'ok'")
      // Visit rows stand for ok entries of four steps only, none with an error reason.
      const admitted = f.error_reason === undefined && (f.status === undefined || f.status === 'ok') && (f.step === undefined || (PAGE_STEPS as readonly string[]).includes(f.step))
      const virtual = admitted ? visitEntries(run, dims.includes('host') || f.host !== undefined, q) : null
      const arm = (from: string, w: Where) => `SELECT ${bucketStart(q.window, w.alias)} AS b${dims.map((d) => `, ${w.alias}.${d} AS ${d}`).join('')} FROM ${from} WHERE ${w.sql || ALWAYS}`
      const we = virtual ? where(new Where('e')) : null
      const union = arm(`crawl_logs t INDEXED BY ${index}`, wt) + (virtual ? ` UNION ALL ${arm(`(${virtual.sql}) e`, we!)}` : '')
      const keys = dims.map((_, i) => `, ${i + 2}`).join('')
      const sql = `SELECT b${dims.map((d) => `, ${d}`).join('')}, count(*) AS n FROM (${union}) GROUP BY 1${keys} ORDER BY 1, n DESC${keys} LIMIT ${MAX_GROUPS + 1}`
      const params = [...wt.params, ...(virtual ? [...virtual.params, ...we!.params] : [])]
      const rows = db.query(sql).all(...params) as ({ b: number; n: number } & Record<string, string | number | null>)[]
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
    latency(run: RunRef, q: LatencyQuery): Latency {
      if (hasEmptyList(q)) return { window: q.window, buckets: [] }
      const where = (w: Where) => w.add(`${w.alias}.latency_ms IS NOT NULL`).range(q).in('step', q.steps).in('host', storedHosts(q.hosts))
      const wt = where(new Where('t').add(`t.run_seq = ${INT}`, run.seq))
      // A discover entry has no latency: fetch, parse and store are the visit rows' part.
      const admitted = q.steps === undefined || q.steps.some((s) => s === 'fetch' || s === 'parse' || s === 'store')
      const virtual = admitted ? visitEntries(run, q.hosts !== undefined, q) : null
      const we = virtual ? where(new Where('e')) : null
      const arm = (from: string, w: Where) => `SELECT ${bucketStart(q.window, w.alias)} AS b, ${w.alias}.step AS step, ${w.alias}.latency_ms AS ms FROM ${from} WHERE ${w.sql}`
      const union = arm(`crawl_logs t INDEXED BY ${q.hosts ? 'crawl_logs_by_host' : 'crawl_logs_by_time'}`, wt) + (virtual ? ` UNION ALL ${arm(`(${virtual.sql}) e`, we!)}` : '')
      const rank = (p: number) => `(${p} * n + 99) / 100` // ceil(p·n/100) in integer arithmetic
      const sql = `SELECT b, step, rn, n, ms FROM (
          SELECT b, step, ms, row_number() OVER w AS rn, count(*) OVER (w ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING) AS n
          FROM (${union})
          WINDOW w AS (PARTITION BY b, step ORDER BY ms))
        WHERE rn = n OR rn IN (${rank(50)}, ${rank(90)}, ${rank(95)}, ${rank(99)})
        ORDER BY b, step, rn`
      const params = [...wt.params, ...(virtual ? [...virtual.params, ...we!.params] : [])]
      const rows = db.query(sql).all(...params) as { b: number; step: LogStep; rn: number; n: number; ms: number }[]
      return latencyBuckets(q.window, rows)
    },
  }
}

/** A latency row: one rank of a bucket's step, as both engines' statements answer it (ordered by bucket, step, rank). */
export type LatencyRankRow = { b: number; step: LogStep; rn: number; n: number; ms: number }

/** The buckets of a latency answer from its rank rows: the nearest-rank percentiles the statement picked. */
export function latencyBuckets(window: LatencyQuery['window'], rows: LatencyRankRow[]): Latency {
  const { width } = BUCKETS[window]
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
  return { window, buckets }
}
