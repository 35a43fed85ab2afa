import { ALL_PAGE_STEPS, childrenText, type Envelope, type PageRecord } from '../page-records'
import type { RunRef } from '../crawl-log-types'
import { numbered } from './list'
import { first, type Pg } from './pg'

/**
 * Page records on PostgreSQL (src/store/page-records.ts, decision 101): one `visits` row per
 * page, holding its children and the `logged` bits of its successful fetch, parse, store and
 * discover entries, in the SQLite engine's encoding so that every read answers the same.
 */

/**
 * Writes a batch's page records inside the caller's transaction: every page in one INSERT of
 * column arrays (one statement text whatever the batch's size, so one prepared plan). A second
 * record of a link by the same run is ignored (visits_once), as a second visit always was, also
 * within one batch. Each row's link_seq is the run tenant's catalogue link of its hash (migration
 * 015), which the engine writes before the page. Rows take seqs in the batch's order.
 */
export async function recordPages(tx: Pg, runSeq: number, pages: readonly PageRecord[], tenant: string): Promise<void> {
  if (!pages.length) return
  // Everything is checked before anything is sent: a bad record fails the batch, written or not.
  const children = pages.map((p) => {
    if (!Number.isInteger(p.logged) || p.logged < 0 || p.logged > ALL_PAGE_STEPS) throw new TypeError(`bad page record: logged=${p.logged}`)
    return childrenText(p.children)
  })
  const column = (type: 'TEXT' | 'INT' | 'BIGINT' | 'DOUBLE PRECISION') => (get: (p: PageRecord) => string | number | null) => tx.array(pages.map(get), type)
  const [text, int, int8, float8] = [column('TEXT'), column('INT'), column('BIGINT'), column('DOUBLE PRECISION')]
  await tx`
    INSERT INTO visits (run_seq, hash, host_hash, depth, status, visited_at, parent, children, logged, fetch_at, fetch_ms, parse_ms, store_ms, pipeline_id, link_seq)
    SELECT ${runSeq}::int8, u.hash, u.host_hash, u.depth, u.status, u.visited_at, u.parent, u.children, u.logged, u.fetch_at, u.fetch_ms, u.parse_ms, u.store_ms, u.pipeline_id, l.seq
    FROM unnest(
      ${text((p) => p.hash)}::text[], ${text((p) => p.host_hash)}::text[], ${int((p) => p.depth)}::int[], ${int((p) => p.status)}::int[],
      ${int8((p) => p.visited_at)}::int8[], ${text((p) => p.parent)}::text[], ${tx.array(children, 'TEXT')}::text[], ${int((p) => p.logged)}::int[],
      ${int8((p) => p.fetch_at)}::int8[], ${float8((p) => p.fetch_ms)}::float8[], ${float8((p) => p.parse_ms)}::float8[], ${float8((p) => p.store_ms)}::float8[],
      ${text((p) => p.pipeline_id)}::text[]
    ) WITH ORDINALITY AS u (hash, host_hash, depth, status, visited_at, parent, children, logged, fetch_at, fetch_ms, parse_ms, store_ms, pipeline_id, ord)
    LEFT JOIN links l ON l.tenant = ${tenant} AND l.hash = u.hash
    ORDER BY u.ord
    ON CONFLICT DO NOTHING`
}

// ---------------------------------------------------------------- the entries a visit stands for

export const VISIT_LOG_COLUMNS = 'v.seq, v.hash, v.host_hash, v.depth, v.parent, v.status, v.visited_at, v.logged, v.fetch_at, v.fetch_ms, v.parse_ms, v.store_ms, v.pipeline_id'

const FETCHED = 'coalesce(v.fetch_at, v.visited_at)'
/**
 * occurredAt (page-records.ts) in SQL over the visit alias `v`, step by step, as bigints, rounded
 * as the SQLite engine rounds where it computes them: `js`, as its list does in JS (Math.round:
 * the integer part plus one from a fraction of one half up, exact for these times), or `sqlite`,
 * as its SQL does (round(), which is trunc(x + 0.5) for positive x). They differ only for a sum
 * so large that adding one half rounds. PostgreSQL's own round(double) rounds halves to even,
 * and round(numeric) of a double first cuts it to 15 digits: neither would match.
 */
const stepTimes = (rounding: 'js' | 'sqlite') => {
  const round = (x: string) => (rounding === 'js' ? `(floor(${x}) + CASE WHEN ${x} - floor(${x}) >= 0.5 THEN 1 ELSE 0 END)::int8` : `floor(${x} + 0.5)::int8`)
  return [FETCHED, round(`(${FETCHED} + coalesce(v.parse_ms, 0))`), round(`(${FETCHED} + coalesce(v.parse_ms, 0) + coalesce(v.store_ms, 0))`), 'v.visited_at']
}
const TIMES = { js: stepTimes('js'), sqlite: stepTimes('sqlite') }
/** occurredAt in SQL over the visit alias `v`, for a step given as an SQL expression. */
export const occurredAtSql = (step: string, rounding: 'js' | 'sqlite') => `(CASE ${step} ${TIMES[rounding].map((t, i) => `WHEN ${i} THEN ${t}`).join(' ')} END)`
/** The step's latency_ms: fetch_ms, parse_ms, store_ms; a discover entry has none. */
export const latencySql = (step: string) => `(CASE ${step} WHEN 0 THEN v.fetch_ms WHEN 1 THEN v.parse_ms WHEN 2 THEN v.store_ms END)`
/** The steps as rows (i, step, bit), to join a visit with the entries it stands for. */
export const PAGE_STEP_ROWS = `(VALUES (0, 'fetch', 1), (1, 'parse', 2), (2, 'store', 4), (3, 'discover', 8)) AS s (i, step, bit)`

// ---------------------------------------------------------------- where in a run entries can be

/**
 * The SQLite engine's `cut` (page-records.ts) as a scalar subquery with two `?` parameters, the
 * run's seq and a time `t`: a visit whose visited_at reaches `t` while the one before it (if
 * any) is below `t`, found by the same binary search over the run's seqs (O(log n) index
 * probes: visits_by_run, or the primary key where the run's statistics say its visits are
 * dense), NULL when no visit reaches `t`. A subquery, so that a statement can find its bounds
 * and read within them in one round trip.
 */
export const CUT_SQL = `(SELECT c.seq FROM (SELECT ?::int8 AS run, ?::int8 AS t) p CROSS JOIN LATERAL (
    WITH RECURSIVE
      top AS (SELECT seq, visited_at FROM visits WHERE run_seq = p.run ORDER BY run_seq DESC, seq DESC LIMIT 1),
      bs (lo, hi) AS (
        SELECT (SELECT seq FROM visits WHERE run_seq = p.run ORDER BY run_seq, seq LIMIT 1), top.seq FROM top WHERE top.visited_at >= p.t
        UNION ALL
        SELECT CASE WHEN f.visited_at >= p.t THEN bs.lo ELSE m.mid + 1 END, CASE WHEN f.visited_at >= p.t THEN m.mid ELSE bs.hi END
        FROM bs
        CROSS JOIN LATERAL (SELECT (bs.lo + bs.hi) / 2 AS mid) m
        CROSS JOIN LATERAL (SELECT v.visited_at FROM visits v WHERE v.run_seq = p.run AND v.seq >= m.mid ORDER BY v.run_seq, v.seq LIMIT 1) f
        WHERE bs.lo < bs.hi
      )
    SELECT (SELECT v.seq FROM visits v WHERE v.run_seq = p.run AND v.seq >= bs.lo ORDER BY v.run_seq, v.seq LIMIT 1) AS seq FROM bs WHERE bs.lo >= bs.hi) c)`

const FAR = 9e15
// Bounds of a visit's entry times, whichever bits it has: its four possible times (never NULL,
// so least/greatest answer as SQLite's min/max of several arguments do).
const BOUNDS = TIMES.js.join(', ')
/**
 * How the run's envelope grows from the visits after `upTo` (a LATERAL subquery over the run's
 * seq `run`, with `?` parameters maxAt and upTo): one pass in seq order, the running max of
 * visited_at giving the disorder.
 */
const growSql = (run: string) => `(SELECT max(seq) AS up_to, max(visited_at) AS max_at, max(CASE WHEN logged <> 0 THEN visited_at - lo END) AS before,
    max(CASE WHEN logged <> 0 THEN hi - visited_at END) AS after, max(greatest(prior, ?::int8) - visited_at) AS disorder
  FROM (SELECT v.seq, v.visited_at, v.logged, least(${BOUNDS}) AS lo, greatest(${BOUNDS}) AS hi, max(v.visited_at) OVER (ORDER BY v.seq) AS prior
    FROM visits v WHERE v.run_seq = ${run} AND v.seq > ?::int8) s)`
type Grown = { up_to: number | null; max_at: number; before: number | null; after: number | null; disorder: number }
type RunRow = Omit<RunRef, 'key'> & { created_at: number }

/**
 * The run envelopes of page-records.ts (how far a run's entries stand from their visits'
 * visited_at, kept per run and grown from the visits recorded since), on PostgreSQL. A read
 * finds its run and grows the run's envelope in one statement (`open`).
 *
 * Growing from `seq > upTo` assumes a run's visits become visible in seq order: true while one
 * execution at a time writes a run, each commit under the run's lease (the crawl store's commit
 * locks the run's row before it inserts, so two commits of a run never interleave). Of two
 * reads racing to grow it, the one that saw more visits is kept; an envelope of more visits
 * than a reader's snapshot holds only widens its bounds, which stays correct.
 */
export function pgEnvelopes() {
  // By tenant and run id, which is what a read knows first; `key` tells a run from a later one
  // given the same id (the first deleted), whose envelope starts again.
  const cache = new Map<string, Envelope & { key: string }>()
  const keyOf = (r: RunRow) => `${r.seq}/${r.id}/${r.created_at}`
  const merge = (prev: Envelope | undefined, r: Grown): Envelope | null => {
    if (r.up_to === null) return prev ?? null
    const p = prev ?? { upTo: 0, maxAt: -FAR, before: 0, after: 0, disorder: 0 }
    return { upTo: r.up_to, maxAt: Math.max(p.maxAt, r.max_at), before: Math.max(p.before, r.before ?? 0), after: Math.max(p.after, r.after ?? 0), disorder: Math.max(p.disorder, r.disorder) }
  }
  return {
    /** The tenant's run and its envelope (null before its first visit); null when the tenant has no such run. */
    async open(db: Pg, tenant: string, runId: string): Promise<{ run: RunRef; envelope: Envelope | null } | null> {
      const id = `${tenant}\n${runId}`
      const known = cache.get(id)
      const row = first<RunRow & Grown>(
        await db.unsafe(numbered(`SELECT r.seq, r.id, r.job_id, r.tenant, r.created_at, g.* FROM runs r CROSS JOIN LATERAL ${growSql('r.seq')} g WHERE r.tenant = ? AND r.id = ?`), [
          known?.maxAt ?? -FAR,
          known?.upTo ?? 0,
          tenant,
          runId,
        ]),
      )
      if (!row) return null
      const key = keyOf(row)
      const run: RunRef = { seq: row.seq, id: row.id, job_id: row.job_id, tenant: row.tenant, key }
      let grown: Grown = row
      let prev: Envelope | undefined = known
      if (known && known.key !== key) {
        // Another run of this id: its envelope from its first visit.
        prev = undefined
        grown = first<Grown>(await db.unsafe(numbered(`SELECT g.* FROM ${growSql('?::int8')} g`), [-FAR, run.seq, 0]))!
      }
      const envelope = merge(prev, grown)
      if (envelope && envelope !== prev) {
        if (cache.size >= 1000 && !cache.has(id)) cache.clear()
        // A read of an older snapshot must not take back what a newer one knew.
        const now = cache.get(id)
        if (!now || now.key !== key || now.upTo <= envelope.upTo) cache.set(id, { ...envelope, key })
      }
      return { run, envelope }
    },
  }
}
