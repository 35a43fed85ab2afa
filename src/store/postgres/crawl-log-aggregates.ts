import { normalizeHost } from '../../core/url'
import { BUCKETS, latencyBuckets, MAX_GROUPS, tooManyGroups } from '../crawl-log-aggregates'
import {
  hasEmptyList,
  METRIC_DIMENSIONS,
  storedHosts,
  type Latency,
  type LatencyQuery,
  type LogStep,
  type MetricDimension,
  type MetricGroup,
  type Metrics,
  type MetricsQuery,
  type RunRef,
  type TimeRange,
  type Window,
} from '../crawl-log-types'
import { PAGE_STEPS, type Envelope } from '../page-records'
import { epoch, formatIso } from '../time'
import { PgWhere, type Param } from './crawl-log-where'
import { numbered } from './list'
import { CUT_SQL, latencySql, occurredAtSql, PAGE_STEP_ROWS } from './page-records'
import { numeric, type Pg } from './pg'

// Floor modulo: PostgreSQL's % truncates toward zero, as SQLite's does, which would misplace
// instants before the origin. The same expression as the SQLite engine's, in bigints.
const bucketStart = (w: Window, a: string) => {
  const { width, origin } = BUCKETS[w]
  return `${a}.occurred_at - (((${a}.occurred_at - ${origin}::int8) % ${width}::int8) + ${width}::int8) % ${width}::int8`
}

/**
 * How a group_by value sorts among its bucket's groups of one count, as SQLite sorts it: NULL
 * first, text by its bytes (SQLite's BINARY collation is PostgreSQL's "C" on UTF-8, whatever
 * the database's own collation is).
 */
const orderOf = (d: MetricDimension) => (d === 'http_status' ? `${d} NULLS FIRST` : `${d} COLLATE "C" NULLS FIRST`)

const ALWAYS = 'true'

/**
 * The metrics and latency of a run's entries on PostgreSQL: its crawl_logs rows and the entries
 * its visit rows stand for, one UNION ALL of the two aggregated in SQL, with the SQLite
 * engine's buckets, group order and nearest-rank percentiles (crawl-log-aggregates.ts), so both
 * answer the same numbers. `db` is the caller's read transaction.
 */
export function pgCrawlLogAggregates() {
  /**
   * The entries the run's visit rows stand for, as rows with crawl_logs' columns (to be aliased
   * `e`): each visit once per bit of `logged`; `host` only when asked for. Within a time range,
   * only the visits that can hold entries in it are read, their seqs cut from the run's envelope
   * inside the statement (CUT_SQL; a from cut that finds no visit reads none). Null before the
   * run's first visit. Times are rounded as the SQLite engine's SQL rounds them.
   */
  const visitEntries = (run: RunRef, e: Envelope | null, withHost: boolean, range: TimeRange): { sql: string; params: Param[] } | null => {
    if (!e) return null
    const after = range.occurred_after === undefined ? undefined : epoch(range.occurred_after) + 1
    const before = range.occurred_before === undefined ? undefined : epoch(range.occurred_before)
    const params: Param[] = withHost ? [run.tenant, run.seq] : [run.seq]
    let seqs = ''
    if (after !== undefined) {
      seqs += ` AND v.seq >= ${CUT_SQL}`
      params.push(run.seq, after - e.disorder - e.after)
    }
    if (before !== undefined) {
      seqs += ` AND v.seq < coalesce(${CUT_SQL}, ${Number.MAX_SAFE_INTEGER}::int8)`
      params.push(run.seq, before + e.disorder + e.before)
    }
    const sql = `SELECT ${occurredAtSql('s.i', 'sqlite')} AS occurred_at, s.step AS step, 'ok'::text AS status, ${withHost ? 'h.domain' : 'NULL::text'} AS host, NULL::text AS error_reason,
        CASE s.i WHEN 1 THEN v.pipeline_id END AS pipeline_id, CASE s.i WHEN 0 THEN v.status END AS http_status, ${latencySql('s.i')} AS latency_ms
      FROM visits v CROSS JOIN ${PAGE_STEP_ROWS}${withHost ? ' LEFT JOIN hosts h ON h.tenant = ? AND h.hash = v.host_hash' : ''}
      WHERE v.run_seq = ?::int8${seqs} AND (v.logged & s.bit) <> 0`
    return { sql, params }
  }

  return {
    /** Entry counts per time bucket (oldest first) and per combination of the group_by values (largest first); a 422 on `window` past MAX_GROUPS rows. */
    async metrics(db: Pg, run: RunRef, e: Envelope | null, q: MetricsQuery): Promise<Metrics> {
      const dims = q.group_by ?? []
      for (const d of [...dims, ...Object.keys(q.filters ?? {})]) {
        if (!(METRIC_DIMENSIONS as readonly string[]).includes(d)) throw new Error(`unknown metric dimension ${d}`) // a column name goes into the SQL text
      }
      const f = q.filters ?? {}
      const where = (w: PgWhere) => {
        w.range(q)
        for (const [dim, value] of Object.entries(f)) {
          if (value === undefined) continue
          if (dim === 'http_status') w.add(`${w.alias}.http_status = ?::int`, Number(value))
          else w.add(`${w.alias}.${dim} = ?`, dim === 'host' ? (normalizeHost(value) ?? value) : value)
        }
        return w
      }
      const wt = where(new PgWhere('t').add('t.run_seq = ?::int8', run.seq))
      // The partial index of non-ok entries, as the SQLite engine picks it, stated for the planner.
      if (f.error_reason === undefined && f.status !== undefined && f.status !== 'ok') wt.add("t.status <> 'ok'")
      // Visit rows stand for ok entries of four steps only, none with an error reason.
      const admitted = f.error_reason === undefined && (f.status === undefined || f.status === 'ok') && (f.step === undefined || (PAGE_STEPS as readonly string[]).includes(f.step))
      const virtual = admitted ? visitEntries(run, e, dims.includes('host') || f.host !== undefined, q) : null
      const arm = (from: string, w: PgWhere) => `SELECT ${bucketStart(q.window, w.alias)} AS b${dims.map((d) => `, ${w.alias}.${d} AS ${d}`).join('')} FROM ${from} WHERE ${w.sql || ALWAYS}`
      const we = virtual ? where(new PgWhere('e')) : null
      const union = arm('crawl_logs t', wt) + (virtual ? ` UNION ALL ${arm(`(${virtual.sql}) e`, we!)}` : '')
      const keys = dims.map((d) => `, ${d}`).join('')
      const text = `SELECT b${keys}, count(*) AS n FROM (${union}) u GROUP BY b${keys} ORDER BY b, count(*) DESC${dims.map((d) => `, ${orderOf(d)}`).join('')} LIMIT ${MAX_GROUPS + 1}`
      const params = [...wt.params, ...(virtual ? [...virtual.params, ...we!.params] : [])]
      const rows = numeric<{ b: number; n: number } & Record<string, string | number | null>>(await db.unsafe(numbered(text), params as unknown[]))
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
     * Nearest-rank percentiles (the value at rank ceil(p/100 × count) of the sorted latencies)
     * per bucket and step, over entries that have latency_ms: one sort of the range's latencies
     * by window functions, only the five ranked rows per group back to JS.
     */
    async latency(db: Pg, run: RunRef, e: Envelope | null, q: LatencyQuery): Promise<Latency> {
      if (hasEmptyList(q)) return { window: q.window, buckets: [] }
      const where = (w: PgWhere) => w.add(`${w.alias}.latency_ms IS NOT NULL`).range(q).in('step', q.steps).in('host', storedHosts(q.hosts))
      const wt = where(new PgWhere('t').add('t.run_seq = ?::int8', run.seq))
      // A discover entry has no latency: fetch, parse and store are the visit rows' part.
      const admitted = q.steps === undefined || q.steps.some((s) => s === 'fetch' || s === 'parse' || s === 'store')
      const virtual = admitted ? visitEntries(run, e, q.hosts !== undefined, q) : null
      const we = virtual ? where(new PgWhere('e')) : null
      const arm = (from: string, w: PgWhere) => `SELECT ${bucketStart(q.window, w.alias)} AS b, ${w.alias}.step AS step, ${w.alias}.latency_ms AS ms FROM ${from} WHERE ${w.sql}`
      const union = arm('crawl_logs t', wt) + (virtual ? ` UNION ALL ${arm(`(${virtual.sql}) e`, we!)}` : '')
      const rank = (p: number) => `(${p} * n + 99) / 100` // ceil(p·n/100) in integer arithmetic
      const text = `SELECT b, step, rn, n, ms FROM (
          SELECT b, step, ms, row_number() OVER (PARTITION BY b, step ORDER BY ms) AS rn, count(*) OVER (PARTITION BY b, step) AS n
          FROM (${union}) u) r
        WHERE rn = n OR rn IN (${rank(50)}, ${rank(90)}, ${rank(95)}, ${rank(99)})
        ORDER BY b, step COLLATE "C", rn`
      const params = [...wt.params, ...(virtual ? [...virtual.params, ...we!.params] : [])]
      const rows = numeric<{ b: number; step: LogStep; rn: number; n: number; ms: number }>(await db.unsafe(numbered(text), params as unknown[]))
      return latencyBuckets(q.window, rows)
    },
  }
}
