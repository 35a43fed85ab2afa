import type { Database } from 'bun:sqlite'
import { multiRowWriter } from './multi-row'
import { INT } from './list'

/**
 * What a visited page leaves in the database (migration 013, decision 101): one `visits` row
 * holding the page's children (the run's edges from it) and standing for its successful fetch,
 * parse, store and discover log entries, which are read back as if they were crawl_logs rows.
 */
export type PageRecord = {
  hash: string
  host_hash: string
  depth: number
  parent: string | null
  status: number | null
  visited_at: number
  /** in-scope child link hashes, deduplicated, in the order found; null or [] when none */
  children: string[] | null
  /** bits: 1 fetch ok, 2 parse ok, 4 store ok, 8 discover ok (see the migration) */
  logged: number
  fetch_at: number | null
  fetch_ms: number | null
  parse_ms: number | null
  store_ms: number | null
  pipeline_id: string | null
}

/** The steps a visit row can stand for, in bit order: step i is bit 1 << i. */
export const PAGE_STEPS = ['fetch', 'parse', 'store', 'discover'] as const
/** The bit of PageRecord.logged each step's successful entry is. */
export const PAGE_STEP_BIT = { fetch: 1, parse: 2, store: 4, discover: 8 } as const satisfies Record<(typeof PAGE_STEPS)[number], number>
export const ALL_PAGE_STEPS = 15

/** A visited page before its steps: no children, no entries it stands for, no time yet. */
export function newPageRecord(hash: string, hostHash: string, depth: number, parent: string | null, status: number | null): PageRecord {
  return { hash, host_hash: hostHash, depth, parent, status, visited_at: 0, children: null, logged: 0, fetch_at: null, fetch_ms: null, parse_ms: null, store_ms: null, pipeline_id: null }
}

/** Link hashes are 32 hex characters: `children` holds them back to back. */
export const HASH_LENGTH = 32
/**
 * A page's edges are keyed visitSeq × MAX_CHILDREN + index (the edge list's cursor), so a page
 * keeps at most this many children. src/parse caps nothing, but a page past a million distinct
 * in-scope links is beyond any real site; the key stays a safe integer while visit seqs are
 * below 2^33.
 */
export const MAX_CHILDREN = 2 ** 20

/** The children of a visit row, in the order found. */
export function childrenOf(text: string | null): string[] {
  if (!text) return []
  const out: string[] = new Array(text.length / HASH_LENGTH)
  for (let i = 0; i < out.length; i++) out[i] = text.slice(i * HASH_LENGTH, (i + 1) * HASH_LENGTH)
  return out
}

const COLUMNS = ['run_seq', 'hash', 'host_hash', 'depth', 'status', 'visited_at', 'parent', 'children', 'logged', 'fetch_at', 'fetch_ms', 'parse_ms', 'store_ms', 'pipeline_id']
/** The visit's link_seq (migration 015): the seq of the run tenant's catalogue link of the hash. */
const LINK_SEQ = '(SELECT l.seq FROM links l WHERE l.tenant = CAST(? AS TEXT) AND l.hash = CAST(? AS TEXT))'
const INSERT = `INSERT OR IGNORE INTO visits (${COLUMNS.join(', ')}, link_seq)`
const INSERT_ROW = `(${COLUMNS.map(() => '?').join(', ')}, ${LINK_SEQ})`

/** `values` without repeats, in order. A page's few dozen children are compared directly: a Set hashed every new string first. */
function distinct(values: readonly string[]): string[] {
  if (values.length > 64) return [...new Set(values)]
  const out: string[] = []
  for (const v of values) if (!out.includes(v)) out.push(v)
  return out
}

/** A page's children as a visit row stores them (both engines): distinct, checked, capped at MAX_CHILDREN, back to back. */
export function childrenText(children: readonly string[] | null): string | null {
  if (!children?.length) return null
  const kept = distinct(children)
  for (const c of kept) if (c.length !== HASH_LENGTH) throw new TypeError(`a child link hash must be ${HASH_LENGTH} characters: ${c}`)
  if (kept.length > MAX_CHILDREN) kept.length = MAX_CHILDREN
  return kept.join('')
}

/**
 * The writer of page records: every page of a batch in multi-row statements (multiRowWriter).
 * A second record of a link by the same run is ignored, as a second visit always was.
 */
export function pageRecordWriter(db: Database) {
  const tenantOf = db.query('SELECT tenant FROM runs WHERE seq = ?')
  const write = multiRowWriter<PageRecord, { runSeq: number; tenant: string }>(db, INSERT, INSERT_ROW, (p, params, run) => {
    if (!Number.isInteger(p.logged) || p.logged < 0 || p.logged > ALL_PAGE_STEPS) throw new TypeError(`bad page record: logged=${p.logged}`)
    params.push(
      run.runSeq,
      p.hash,
      p.host_hash,
      p.depth,
      p.status,
      p.visited_at,
      p.parent,
      childrenText(p.children),
      p.logged,
      p.fetch_at,
      p.fetch_ms,
      p.parse_ms,
      p.store_ms,
      p.pipeline_id,
      run.tenant,
      p.hash,
    )
  })
  /** `tenant` is the run's (the crawl store has it from the lease check); looked up when not given. */
  return function recordPages(runSeq: number, pages: readonly PageRecord[], tenant?: string): void {
    write(pages, { runSeq, tenant: tenant ?? (tenantOf.get(runSeq) as { tenant: string } | null)?.tenant ?? '' })
  }
}

// ---------------------------------------------------------------- the entries a visit stands for

/** The columns of a visit row its log entries are made of: the record without its children, and the row's seq. */
export type VisitLogRow = Omit<PageRecord, 'children'> & { seq: number }
export const VISIT_LOG_COLUMNS = 'v.seq, v.hash, v.host_hash, v.depth, v.parent, v.status, v.visited_at, v.logged, v.fetch_at, v.fetch_ms, v.parse_ms, v.store_ms, v.pipeline_id'

/**
 * When each step's entry occurred (migration 013): the fetch when it answered, the parse
 * parse_ms later, the store store_ms after that (both rounded to the millisecond), the discover
 * at visited_at. The SQL below computes the same numbers in the same order of operations.
 */
export function occurredAt(r: Pick<VisitLogRow, 'fetch_at' | 'parse_ms' | 'store_ms' | 'visited_at'>, step: number): number {
  const fetched = r.fetch_at ?? r.visited_at
  if (step === 0) return fetched
  if (step === 1) return Math.round(fetched + (r.parse_ms ?? 0))
  if (step === 2) return Math.round(fetched + (r.parse_ms ?? 0) + (r.store_ms ?? 0))
  return r.visited_at
}
const FETCHED = 'coalesce(v.fetch_at, v.visited_at)'
/** occurredAt in SQL over the visit alias `v`, step by step. */
const STEP_TIMES = [FETCHED, `CAST(round(${FETCHED} + coalesce(v.parse_ms, 0)) AS INTEGER)`, `CAST(round(${FETCHED} + coalesce(v.parse_ms, 0) + coalesce(v.store_ms, 0)) AS INTEGER)`, 'v.visited_at']
/** occurredAt in SQL over the visit alias `v`, for a step given as an SQL expression. */
export const occurredAtSql = (step: string) => `(CASE ${step} ${STEP_TIMES.map((t, i) => `WHEN ${i} THEN ${t}`).join(' ')} END)`
/** The step's latency_ms: fetch_ms, parse_ms, store_ms; a discover entry has none. */
export const latencyOf = (r: Pick<VisitLogRow, 'fetch_ms' | 'parse_ms' | 'store_ms'>, step: number): number | null =>
  step === 0 ? r.fetch_ms : step === 1 ? r.parse_ms : step === 2 ? r.store_ms : null
export const latencySql = (step: string) => `(CASE ${step} WHEN 0 THEN v.fetch_ms WHEN 1 THEN v.parse_ms WHEN 2 THEN v.store_ms END)`
/** The steps as rows (i, step, bit), to join a visit with the entries it stands for. */
export const PAGE_STEP_ROWS = `(SELECT 0 AS i, 'fetch' AS step, 1 AS bit UNION ALL SELECT 1, 'parse', 2 UNION ALL SELECT 2, 'store', 4 UNION ALL SELECT 3, 'discover', 8)`

/**
 * List keys: a crawl_logs row is keyed by its seq, an entry a visit stands for by
 * VIRTUAL_KEYS + visitSeq × 4 + step, so the two never meet and both stay safe integers.
 */
export const VIRTUAL_KEYS = 2 ** 50
export const virtualKey = (visitSeq: number, step: number) => VIRTUAL_KEYS + visitSeq * 4 + step
export const fromVirtualKey = (key: number) => ({ visitSeq: Math.floor((key - VIRTUAL_KEYS) / 4), step: (key - VIRTUAL_KEYS) % 4 })

/**
 * The id of an entry a visit stands for, the same at every read: its visit seq and step in a
 * uuid of version 8 (RFC 9562, custom), which no stored id has (they are random v4 or v7).
 */
export function virtualId(visitSeq: number, step: number): string {
  const hex = (visitSeq * 4 + step).toString(16).padStart(15, '0')
  return `00000000-0000-8000-8${hex.slice(0, 3)}-${hex.slice(3)}`
}

// ---------------------------------------------------------------- where in a run entries can be

/**
 * How far a run's entries stand from their visits' visited_at, which is all that orders visit
 * rows in time (there is no time index on visits):
 * - every entry of a visit lies in [visited_at − before, visited_at + after];
 * - a visit's visited_at is at most `disorder` below that of any visit recorded before it.
 * A page's entries precede its visit record by its parse and store time, and visits are
 * recorded in about visited_at order, so all three are small. Kept per run and brought up to
 * date from the visits recorded since (a run only appends visits).
 */
export type Envelope = { upTo: number; maxAt: number; before: number; after: number; disorder: number }

const FAR = 9e15
// Bounds of a visit's entry times, whichever bits it has: its four possible times (cheaper
// than testing each bit, and never tighter than the entries it has).
const TIMES = STEP_TIMES.join(', ')

export function envelopes(db: Database) {
  // One pass over the visits since the last: the run's whole once per process, then what it
  // recorded since. The running max of visited_at in seq order gives the disorder.
  const grow = db.query(
    `SELECT max(seq) AS upTo, max(visited_at) AS maxAt, max(CASE WHEN logged <> 0 THEN visited_at - lo END) AS before, max(CASE WHEN logged <> 0 THEN hi - visited_at END) AS after,
       max(max(prior, ${INT}) - visited_at) AS disorder
     FROM (SELECT v.seq, v.visited_at, v.logged, min(${TIMES}) AS lo, max(${TIMES}) AS hi, max(v.visited_at) OVER (ORDER BY v.seq) AS prior
       FROM visits v WHERE v.run_seq = ${INT} AND v.seq > ${INT})`,
  )
  const firstFrom = db.query(`SELECT seq, visited_at FROM visits WHERE run_seq = ${INT} AND seq >= ${INT} ORDER BY seq LIMIT 1`)
  const last = db.query(`SELECT seq, visited_at FROM visits WHERE run_seq = ${INT} ORDER BY seq DESC LIMIT 1`)
  type At = { seq: number; visited_at: number }
  /**
   * A visit whose visited_at reaches `t` while the one before it (if any) is below `t`: a binary
   * search over the run's seqs, O(log n) index probes. Null when no visit reaches `t`.
   */
  const cut = (runSeq: number, t: number): number | null => {
    const top = last.get(runSeq) as At | null
    if (!top || top.visited_at < t) return null
    let lo = (firstFrom.get(runSeq, 0) as At).seq
    let hi = top.seq
    while (lo < hi) {
      const mid = Math.floor((lo + hi) / 2)
      if ((firstFrom.get(runSeq, mid) as At).visited_at >= t) hi = mid
      else lo = mid + 1
    }
    return (firstFrom.get(runSeq, lo) as At).seq
  }
  const cache = new Map<string, Envelope>()
  return {
    /**
     * The run's visits that can hold entries at or after `from` and before `below` (epoch ms,
     * either open): seqs in [first, end). Null when none can.
     */
    seqRange(runSeq: number, e: Envelope, from: number | undefined, below: number | undefined): { first: number; end: number } | null {
      const first = from === undefined ? 0 : cut(runSeq, from - e.disorder - e.after)
      if (first === null) return null
      const end = below === undefined ? null : cut(runSeq, below + e.disorder + e.before)
      return { first, end: end ?? Number.MAX_SAFE_INTEGER }
    },
    /** The run's envelope (key: what tells this run from a later one given its seq); null before its first visit. */
    of(runSeq: number, key: string): Envelope | null {
      let e = cache.get(key)
      const maxAt = e?.maxAt ?? -FAR
      const r = grow.get(maxAt, runSeq, e?.upTo ?? 0) as { upTo: number | null; maxAt: number; before: number | null; after: number | null; disorder: number }
      if (r.upTo === null) return e ?? null
      if (cache.size >= 1000 && !e) cache.clear()
      const prev = e ?? { upTo: 0, maxAt: -FAR, before: 0, after: 0, disorder: 0 }
      e = {
        upTo: r.upTo,
        maxAt: Math.max(prev.maxAt, r.maxAt),
        before: Math.max(prev.before, r.before ?? 0),
        after: Math.max(prev.after, r.after ?? 0),
        disorder: Math.max(prev.disorder, r.disorder),
      }
      cache.set(key, e)
      return e
    },
  }
}
