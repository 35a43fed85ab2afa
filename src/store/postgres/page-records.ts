import { ALL_PAGE_STEPS, HASH_LENGTH, MAX_CHILDREN, type Envelope, type PageRecord } from '../page-records'
import { first, numeric, type Pg } from './pg'

/**
 * Page records on PostgreSQL (src/store/page-records.ts, decision 101): one `visits` row per
 * page, holding its children and the `logged` bits of its successful fetch, parse, store and
 * discover entries, in the SQLite engine's encoding so that every read answers the same.
 */

/** `values` without repeats, in order (a page's few dozen children compared directly, as the SQLite writer does). */
function distinct(values: readonly string[]): string[] {
  if (values.length > 64) return [...new Set(values)]
  const out: string[] = []
  for (const v of values) if (!out.includes(v)) out.push(v)
  return out
}

function childrenText(children: readonly string[] | null): string | null {
  if (!children?.length) return null
  const kept = distinct(children)
  for (const c of kept) if (c.length !== HASH_LENGTH) throw new TypeError(`a child link hash must be ${HASH_LENGTH} characters: ${c}`)
  if (kept.length > MAX_CHILDREN) kept.length = MAX_CHILDREN
  return kept.join('')
}

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
 * occurredAt (page-records.ts) in SQL over the visit alias `v`, step by step, as bigints. The
 * SQLite engine rounds with round(), which is trunc(x + 0.5) for the positive times here, and
 * the list rounds with Math.round, floor(x + 0.5): floor(x + 0.5) in double precision is both.
 * (PostgreSQL's round(double) rounds halves to even, and round(numeric) of a double first cuts
 * it to 15 digits: neither would match.)
 */
const STEP_TIMES = [FETCHED, `floor((${FETCHED} + coalesce(v.parse_ms, 0)) + 0.5)::int8`, `floor((${FETCHED} + coalesce(v.parse_ms, 0) + coalesce(v.store_ms, 0)) + 0.5)::int8`, 'v.visited_at']
/** occurredAt in SQL over the visit alias `v`, for a step given as an SQL expression. */
export const occurredAtSql = (step: string) => `(CASE ${step} ${STEP_TIMES.map((t, i) => `WHEN ${i} THEN ${t}`).join(' ')} END)`
/** The step's latency_ms: fetch_ms, parse_ms, store_ms; a discover entry has none. */
export const latencySql = (step: string) => `(CASE ${step} WHEN 0 THEN v.fetch_ms WHEN 1 THEN v.parse_ms WHEN 2 THEN v.store_ms END)`
/** The steps as rows (i, step, bit), to join a visit with the entries it stands for. */
export const PAGE_STEP_ROWS = `(VALUES (0, 'fetch', 1), (1, 'parse', 2), (2, 'store', 4), (3, 'discover', 8)) AS s (i, step, bit)`

// ---------------------------------------------------------------- where in a run entries can be

const FAR = 9e15

/**
 * The run envelopes of page-records.ts (how far a run's entries stand from their visits'
 * visited_at, kept per run and grown from the visits recorded since), on PostgreSQL.
 *
 * Growing from `seq > upTo` assumes a run's visits become visible in seq order: true while one
 * execution at a time writes a run, each commit under the run's lease (the crawl store's commit
 * locks the run's row before it inserts, so two commits of a run never interleave). Of two
 * reads racing to grow it, the one that saw more visits is kept; an envelope of more visits
 * than a reader's snapshot holds only widens its bounds, which stays correct.
 */
export function pgEnvelopes() {
  const cache = new Map<string, Envelope>()
  return {
    /**
     * A visit whose visited_at reaches `t` while the one before it (if any) is below `t`: the
     * SQLite engine's binary search over the run's seqs, O(log n) index probes, in one
     * recursive statement (one round trip). Null when no visit reaches `t`.
     */
    async cut(db: Pg, runSeq: number, t: number): Promise<number | null> {
      const row = first<{ seq: number | null }>(
        await db`
          WITH RECURSIVE
            top AS (SELECT seq, visited_at FROM visits WHERE run_seq = ${runSeq}::int8 ORDER BY seq DESC LIMIT 1),
            bs (lo, hi) AS (
              SELECT (SELECT seq FROM visits WHERE run_seq = ${runSeq}::int8 ORDER BY seq LIMIT 1), top.seq FROM top WHERE top.visited_at >= ${t}::int8
              UNION ALL
              SELECT CASE WHEN f.visited_at >= ${t}::int8 THEN bs.lo ELSE m.mid + 1 END, CASE WHEN f.visited_at >= ${t}::int8 THEN m.mid ELSE bs.hi END
              FROM bs
              CROSS JOIN LATERAL (SELECT (bs.lo + bs.hi) / 2 AS mid) m
              CROSS JOIN LATERAL (SELECT v.visited_at FROM visits v WHERE v.run_seq = ${runSeq}::int8 AND v.seq >= m.mid ORDER BY v.seq LIMIT 1) f
              WHERE bs.lo < bs.hi
            )
          SELECT (SELECT v.seq FROM visits v WHERE v.run_seq = ${runSeq}::int8 AND v.seq >= bs.lo ORDER BY v.seq LIMIT 1) AS seq FROM bs WHERE bs.lo >= bs.hi`,
      )
      return row?.seq ?? null
    },

    /**
     * The run's visits that can hold entries at or after `from` and before `below` (epoch ms,
     * either open): seqs in [first, end). Null when none can.
     */
    async seqRange(db: Pg, runSeq: number, e: Envelope, from: number | undefined, below: number | undefined): Promise<{ first: number; end: number } | null> {
      const start = from === undefined ? 0 : await this.cut(db, runSeq, from - e.disorder - e.after)
      if (start === null) return null
      const end = below === undefined ? null : await this.cut(db, runSeq, below + e.disorder + e.before)
      return { first: start, end: end ?? Number.MAX_SAFE_INTEGER }
    },

    /** The run's envelope (key: what tells this run from a later one given its seq); null before its first visit. */
    async of(db: Pg, runSeq: number, key: string): Promise<Envelope | null> {
      let e = cache.get(key)
      const maxAt = e?.maxAt ?? -FAR
      // Its four possible times bound a visit's entries, whichever bits it has (never NULL, so
      // least/greatest answer as SQLite's min/max of several arguments do).
      const times = STEP_TIMES.join(', ')
      const [r] = numeric<{ up_to: number | null; max_at: number; before: number | null; after: number | null; disorder: number }>(
        await db.unsafe(
          `SELECT max(seq) AS up_to, max(visited_at) AS max_at, max(CASE WHEN logged <> 0 THEN visited_at - lo END) AS before,
             max(CASE WHEN logged <> 0 THEN hi - visited_at END) AS after, max(greatest(prior, $1::int8) - visited_at) AS disorder
           FROM (SELECT v.seq, v.visited_at, v.logged, least(${times}) AS lo, greatest(${times}) AS hi, max(v.visited_at) OVER (ORDER BY v.seq) AS prior
             FROM visits v WHERE v.run_seq = $2::int8 AND v.seq > $3::int8) s`,
          [maxAt, runSeq, e?.upTo ?? 0],
        ),
      )
      if (!r || r.up_to === null) return e ?? null
      if (cache.size >= 1000 && !e) cache.clear()
      const prev = e ?? { upTo: 0, maxAt: -FAR, before: 0, after: 0, disorder: 0 }
      e = {
        upTo: r.up_to,
        maxAt: Math.max(prev.maxAt, r.max_at),
        before: Math.max(prev.before, r.before ?? 0),
        after: Math.max(prev.after, r.after ?? 0),
        disorder: Math.max(prev.disorder, r.disorder),
      }
      // A read of an older snapshot must not take back what a newer one knew.
      const now = cache.get(key)
      if (!now || now.upTo <= e.upTo) cache.set(key, e)
      return e
    },
  }
}
export type PgEnvelopes = ReturnType<typeof pgEnvelopes>
