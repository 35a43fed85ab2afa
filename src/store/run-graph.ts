import type { Database, SQLQueryBindings } from 'bun:sqlite'
import { hostHash, linkHash, normalizeHost, normalizeUrl } from '../core/url'
import type { hostRepository } from './hosts'
import { parseLabels } from './labels'
import type { Link } from './links'
import { INT, keysetPage, TEXT, type Page } from './list'
import { pageRecordWriter } from './page-records'
import { runEdges, type Edge, type EdgeFilter } from './run-edges'
import { epoch, iso } from './time'

/** A link as visited by one run (SPEC: depth and visited time); `status` is null when the fetch failed. */
export type VisitedLink = Link & { depth: number; visited_at: string; status: number | null }

export type VisitFilter = {
  depth?: number[]
  visited_before?: string
  visited_after?: string
  url_hashes?: string[]
  urls?: string[]
  host_hashes?: string[]
  hosts?: string[]
}
export type { Edge, EdgeFilter }

type LinkCols = { hash: string; url: string; labels: string; created_at: number; host_seq: number }
type VisitRow = LinkCols & { depth: number; status: number | null; visited_at: number; _seq: number }

const VISIT_COLUMNS = 'l.hash, l.url, l.labels, l.created_at, l.host_seq, v.depth, v.status, v.visited_at'

const json = (values: readonly (string | number)[]) => JSON.stringify(values)
const IN_LIST = `IN (SELECT value FROM json_each(${TEXT}))`
/** Filter values name links and hosts as stored: normalized, then hashed. */
const urlHashes = (urls: string[] | undefined) => urls?.map((u) => linkHash(normalizeUrl(u) ?? u))
const hostHashes = (domains: string[] | undefined) => domains?.map((d) => hostHash(normalizeHost(d) ?? d))

/**
 * One keyset page of a run's visits, in the order the run recorded them (oldest
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
  build(select: string, cursor: number | undefined, perPage: number): { sql: string; params: SQLQueryBindings[] } | null {
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

  page<Row extends { _seq: number }, T>(db: Database, select: string, after: number | undefined, perPage: number, shape: (row: Row) => T): Page<T> {
    return keysetPage(db, this.build(select, after, perPage), perPage, shape)
  }
}

/**
 * A run's link graph: the links it visited and the parent → child edges it found, both read
 * from its visit rows (page-records.ts). Rows hold link hashes of the run's tenant and are
 * joined to the link catalogue when read, so the engine must upsert a link before it records a
 * page naming it, as itself or as a child.
 */
export function runGraphRepository(db: Database, hosts: ReturnType<typeof hostRepository>) {
  const edges = runEdges(db, hosts)

  const toLink = (r: LinkCols): Link => ({
    hash: r.hash,
    url: r.url,
    host: hosts.ref(r.host_seq),
    labels: parseLabels(r.labels),
    created_at: iso(r.created_at)!,
  })
  const toVisit = (r: VisitRow): VisitedLink => ({ ...toLink(r), depth: r.depth, visited_at: iso(r.visited_at)!, status: r.status })

  const visitQuery = (tenant: string, run: number, f: VisitFilter) => {
    // CROSS JOIN keeps visits outer: the page is a walk (or lookup) of the run's rows, each
    // joined to its link by (tenant, hash).
    const q = new RunGraphQuery('visits v CROSS JOIN links l', 'v', run, false, `l.tenant = ${TEXT} AND l.hash = v.hash`, tenant)
    // A URL is found by its link's seq (visits_once, migration 015).
    for (const hashes of [f.url_hashes, urlHashes(f.urls)]) q.lookup(hashes, `v.link_seq IN (SELECT k.seq FROM links k WHERE k.tenant = ${TEXT} AND k.hash ${IN_LIST})`, tenant, json(hashes ?? []))
    return q.in('v.host_hash', f.host_hashes).in('v.host_hash', hostHashes(f.hosts)).in('v.depth', f.depth).range('v.visited_at', f.visited_before, f.visited_after)
  }

  return {
    /** Inserts a batch of page records (page-records.ts): call it inside the engine's transaction. */
    recordPages: pageRecordWriter(db),
    /** Links a run visited, in visit order; `run` comes from `frontier.runSeq` (tenant-checked). */
    visits(tenant: string, run: number, f: VisitFilter, after: number | undefined, perPage: number): Page<VisitedLink> {
      return visitQuery(tenant, run, f).page(db, VISIT_COLUMNS, after, perPage, toVisit)
    },
    /** Edges of a run, in the order they were found (run-edges.ts). */
    edges(tenant: string, run: number, f: EdgeFilter, after: number | undefined, perPage: number): Page<Edge> {
      return edges.page(tenant, run, f, after, perPage)
    },
    /** The query behind the visit list (tests EXPLAIN it). */
    visitQuery,
  }
}
