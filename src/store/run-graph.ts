import type { Database, SQLQueryBindings } from 'bun:sqlite'
import { hostHash, linkHash, normalizeHost, normalizeUrl } from '../core/url'
import { decodeCursor } from '../http/cursor'
import type { hostRepository } from './hosts'
import { parseLabels } from './labels'
import type { Link } from './links'
import { INT, keysetPage, TEXT, type Page } from './list'
import { epoch, iso } from './time'

/** A link as visited by one run (SPEC: depth and visited time); `status` is null when the fetch failed. */
export type VisitedLink = Link & { depth: number; visited_at: string; status: number | null }
/** A parent → child link pair a run discovered. */
export type Edge = { parent: Link; child: Link; created_at: string }

export type VisitFilter = {
  depth?: number[]
  visited_before?: string
  visited_after?: string
  url_hashes?: string[]
  urls?: string[]
  host_hashes?: string[]
  hosts?: string[]
}
export type EdgeFilter = { url_hashes?: string[]; urls?: string[]; host_hashes?: string[]; hosts?: string[] }

type LinkCols = { hash: string; url: string; labels: string; created_at: number; host_seq: number }
type VisitRow = LinkCols & { depth: number; status: number | null; visited_at: number; _seq: number }
type EdgeRow = { created_at: number; _seq: number } & { [K in keyof LinkCols as `p_${K}` | `c_${K}`]: LinkCols[K] }

const VISIT_COLUMNS = 'l.hash, l.url, l.labels, l.created_at, l.host_seq, v.depth, v.status, v.visited_at'
const EDGE_COLUMNS = ['hash', 'url', 'labels', 'created_at', 'host_seq']
  .flatMap((c) => [`p.${c} AS p_${c}`, `c.${c} AS c_${c}`])
  .concat('e.created_at')
  .join(', ')

const json = (values: readonly (string | number)[]) => JSON.stringify(values)
const IN_LIST = `IN (SELECT value FROM json_each(${TEXT}))`
/** Filter values name links and hosts as stored: normalized, then hashed. */
const urlHashes = (urls: string[] | undefined) => urls?.map((u) => linkHash(normalizeUrl(u) ?? u))
const hostHashes = (domains: string[] | undefined) => domains?.map((d) => hostHash(normalizeHost(d) ?? d))

/**
 * One keyset page of a run's visits or edges, in the order the run recorded them (oldest
 * first: a crawl reads naturally from its seeds outwards). `seq` is the cursor.
 * - no selective filter: walk the run's (run_seq, seq) index forward from the cursor;
 * - link hashes (at most 500 values): look those rows up by their own index and sort the few
 *   matches (`ORDER BY +seq` keeps SQLite from preferring the ordered walk).
 */
export class RunGraphQuery {
  private readonly where: string[] = []
  private readonly params: SQLQueryBindings[] = []
  private selective = false
  /** A filter that can match nothing was given (an unknown host). */
  private none = false

  constructor(
    private readonly from: string,
    /** The alias of the table whose `seq` orders the page and whose `run_seq` scopes it. */
    private readonly alias: string,
    private readonly run: number,
    /**
     * The selective terms find their rows by seq (`alias.seq IN (…)`), so the run term must
     * not offer SQLite the run's ordered walk instead (unary +).
     */
    private readonly lookupBySeq: boolean,
    joins: string,
    ...params: SQLQueryBindings[]
  ) {
    this.where.push(joins)
    this.params.push(...params)
  }

  when<V>(value: V | undefined, fragment: string, ...params: SQLQueryBindings[]): this {
    if (value === undefined) return this
    this.where.push(fragment)
    this.params.push(...params)
    return this
  }

  in(column: string, values: readonly (string | number)[] | undefined): this {
    return this.when(values, `${column} ${IN_LIST}`, json(values ?? []))
  }

  /** A term an index answers for a bounded set of values: it drives the lookup. */
  lookup<V>(value: V | undefined, fragment: string, ...params: SQLQueryBindings[]): this {
    if (value !== undefined) this.selective = true
    return this.when(value, fragment, ...params)
  }

  nothing(): this {
    this.none = true
    return this
  }

  range(column: string, before: string | undefined, after: string | undefined): this {
    this.when(before, `${column} < ${INT}`, before === undefined ? 0 : epoch(before))
    return this.when(after, `${column} > ${INT}`, after === undefined ? 0 : epoch(after))
  }

  /** The statement a page runs (exposed so tests can EXPLAIN it); null when nothing can match. */
  build(select: string, page: string | undefined, perPage: number): { sql: string; params: SQLQueryBindings[] } | null {
    const cursor = page === undefined ? undefined : decodeCursor(page)
    if (this.none) return null
    const seq = `${this.alias}.seq`
    const where = [`${this.selective && this.lookupBySeq ? '+' : ''}${this.alias}.run_seq = ${INT}`, ...this.where]
    const params = [this.run, ...this.params]
    if (cursor !== undefined) {
      where.push(`${seq} > ${INT}`)
      params.push(cursor)
    }
    params.push(perPage + 1)
    const order = this.selective ? `+${seq}` : seq
    return { sql: `SELECT ${seq} AS _seq, ${select} FROM ${this.from} WHERE ${where.join(' AND ')} ORDER BY ${order} LIMIT ${INT}`, params }
  }

  page<Row extends { _seq: number }, T>(db: Database, select: string, page: string | undefined, perPage: number, shape: (row: Row) => T): Page<T> {
    return keysetPage(db, this.build(select, page, perPage), perPage, shape)
  }
}

/**
 * A run's link graph: the links it visited and the parent → child edges it found. Rows hold
 * link hashes of the run's tenant and are joined to the link catalogue when read, so the engine
 * must upsert a link before it records a visit or an edge naming it.
 */
export function runGraphRepository(db: Database, hosts: ReturnType<typeof hostRepository>) {
  const visit = db.query('INSERT OR IGNORE INTO visits (run_seq, hash, host_hash, depth, status, visited_at) VALUES (?, ?, ?, ?, ?, ?)')
  // One statement per page of children, however many: a bound JSON array instead of a call each.
  // Its rows take consecutive seqs, which edge_parents records as the parent's range.
  const edges = db.query('INSERT INTO edges (run_seq, parent, child, created_at) SELECT ?1, ?2, value, ?3 FROM json_each(?4)')
  const parentKnown = db.query('SELECT 1 AS one FROM edge_parents WHERE run_seq = ?1 AND parent = ?2')
  const parentRange = db.query('INSERT INTO edge_parents (run_seq, parent, first_seq, last_seq) VALUES (?1, ?2, ?3, ?4)')

  const toLink = (r: LinkCols): Link => ({
    hash: r.hash,
    url: r.url,
    host: hosts.ref(r.host_seq),
    labels: parseLabels(r.labels),
    created_at: iso(r.created_at)!,
  })
  const toVisit = (r: VisitRow): VisitedLink => ({ ...toLink(r), depth: r.depth, visited_at: iso(r.visited_at)!, status: r.status })
  const side = (r: EdgeRow, p: 'p' | 'c'): Link => toLink({ hash: r[`${p}_hash`], url: r[`${p}_url`], labels: r[`${p}_labels`], created_at: r[`${p}_created_at`], host_seq: r[`${p}_host_seq`] })
  const toEdge = (r: EdgeRow): Edge => ({ parent: side(r, 'p'), child: side(r, 'c'), created_at: iso(r.created_at)! })

  const visitQuery = (tenant: string, run: number, f: VisitFilter) => {
    // CROSS JOIN keeps visits outer: the page is a walk (or lookup) of the run's rows, each
    // joined to its link by (tenant, hash).
    const q = new RunGraphQuery('visits v CROSS JOIN links l', 'v', run, false, `l.tenant = ${TEXT} AND l.hash = v.hash`, tenant)
    for (const hashes of [f.url_hashes, urlHashes(f.urls)]) q.lookup(hashes, `v.hash ${IN_LIST}`, json(hashes ?? []))
    return q.in('v.host_hash', f.host_hashes).in('v.host_hash', hostHashes(f.hosts)).in('v.depth', f.depth).range('v.visited_at', f.visited_before, f.visited_after)
  }

  const edgeQuery = (tenant: string, run: number, f: EdgeFilter) => {
    const q = new RunGraphQuery('edges e CROSS JOIN links p CROSS JOIN links c', 'e', run, true, `p.tenant = ${TEXT} AND p.hash = e.parent AND c.tenant = ${TEXT} AND c.hash = e.child`, tenant, tenant)
    // "Touching" is parent or child: the seq ranges of the parents (edge_parents), and the run's
    // edges walked for children (no child index: children are random keys, and that index
    // cost the crawl about 0.3 ms a page). The IN set holds an edge matching at both ends once.
    for (const hashes of [f.url_hashes, urlHashes(f.urls)]) {
      const list = json(hashes ?? [])
      q.lookup(
        hashes,
        `e.seq IN (SELECT x.seq FROM edge_parents r JOIN edges x ON x.seq BETWEEN r.first_seq AND r.last_seq AND x.parent = r.parent WHERE r.run_seq = ${INT} AND r.parent ${IN_LIST} UNION ALL SELECT seq FROM edges WHERE run_seq = ${INT} AND child ${IN_LIST})`,
        run,
        list,
        run,
        list,
      )
    }
    // Host filters walk the run's edges (an edge carries no host); each may match either end.
    for (const seqs of [hosts.seqsMatching(tenant, f.host_hashes, undefined), hosts.seqsMatching(tenant, undefined, f.hosts)]) {
      if (seqs?.length === 0) q.nothing()
      const list = json(seqs ?? [])
      q.when(seqs, `(p.host_seq ${IN_LIST} OR c.host_seq ${IN_LIST})`, list, list)
    }
    return q
  }

  return {
    /**
     * Records that a run visited a link (its hash; the host hash of its URL). Prepared, one row;
     * a second visit of the same link by the same run is ignored. True when it was new.
     */
    recordVisit(runSeq: number, hash: string, hostHash: string, depth: number, status: number | null, at: number): boolean {
      return visit.run(runSeq, hash, hostHash, depth, status, at).changes > 0
    },
    /**
     * Records the links a visited page points at (each once, in order), in one statement. A
     * page's children are recorded once per run: a second call for the same parent is ignored.
     * Answers how many edges were recorded. Call it inside a transaction (the engine's batch):
     * the edges and their parent's range land together.
     */
    recordEdges(runSeq: number, parentHash: string, childHashes: readonly string[], at: number): number {
      const children = distinct(childHashes)
      if (children.length === 0) return 0
      const record = () => {
        if (parentKnown.get(runSeq, parentHash)) return 0
        const added = edges.run(runSeq, parentHash, at, JSON.stringify(children))
        const last = Number(added.lastInsertRowid)
        parentRange.run(runSeq, parentHash, last - added.changes + 1, last)
        return added.changes
      }
      // The engine's batch is the transaction; a lone call gets its own (no savepoint per page).
      return db.inTransaction ? record() : db.transaction(record).immediate()
    },
    /** Links a run visited, in visit order; `run` comes from `frontier.runSeq` (tenant-checked). */
    visits(tenant: string, run: number, f: VisitFilter, page: string | undefined, perPage: number): Page<VisitedLink> {
      return visitQuery(tenant, run, f).page(db, VISIT_COLUMNS, page, perPage, toVisit)
    },
    /** Edges of a run, in the order they were found. */
    edges(tenant: string, run: number, f: EdgeFilter, page: string | undefined, perPage: number): Page<Edge> {
      return edgeQuery(tenant, run, f).page(db, EDGE_COLUMNS, page, perPage, toEdge)
    },
    /** The queries behind the lists (tests EXPLAIN them). */
    visitQuery,
    edgeQuery,
  }
}

/** `values` without repeats, in order. A page's few dozen children are compared directly: a Set hashed every new string first. */
function distinct(values: readonly string[]): string[] {
  if (values.length > 64) return [...new Set(values)]
  const out: string[] = []
  for (const v of values) if (!out.includes(v)) out.push(v)
  return out
}
