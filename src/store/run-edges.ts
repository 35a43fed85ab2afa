import type { Database, SQLQueryBindings } from 'bun:sqlite'
import { linkHash, normalizeUrl } from '../core/url'
import type { hostRepository } from './hosts'
import { parseLabels } from './labels'
import type { Link } from './links'
import { emptyPage, INT, TEXT, type Page } from './list'
import { childrenOf, MAX_CHILDREN } from './page-records'
import { iso } from './time'

/** A parent → child link pair a run discovered. */
export type Edge = { parent: Link; child: Link; created_at: string }
export type EdgeFilter = { url_hashes?: string[]; urls?: string[]; host_hashes?: string[]; hosts?: string[] }

type LinkRow = { hash: string; url: string; labels: string; created_at: number; host_seq: number }

// The walk over a run's visits is the same in both engines but for its statements (synchronous
// here, awaited on PostgreSQL): these are its engine-neutral steps, which postgres/run-edges.ts uses too.

/** A visit with children, as the walk reads it. */
export type VisitChildren = { seq: number; hash: string; visited_at: number; children: string }
/** An edge found, before its ends are looked up in the catalogue. */
export type EdgeCandidate = { key: number; parent: string; child: string; at: number }

/** The key of a run's edge (its cursor): the parent's visit seq and the child's place among its children. */
export const edgeKey = (visitSeq: number, index: number) => visitSeq * MAX_CHILDREN + index

/** The url filters, each a set of link hashes an edge must touch at either end (a URL by its normalized URL's hash). */
export function linkTouches(f: EdgeFilter): Set<string>[] {
  const touches: Set<string>[] = []
  for (const hashes of [f.url_hashes, f.urls?.map((u) => linkHash(normalizeUrl(u) ?? u))]) if (hashes) touches.push(new Set(hashes))
  return touches
}

/** Where a page's walk starts: the cursor's visit is read again, from the child after the cursor's. */
export function edgeCursor(after: number | undefined): { afterVisit: number; afterIndex: number; fromSeq: number } {
  const afterVisit = after === undefined ? -1 : Math.floor(after / MAX_CHILDREN)
  return { afterVisit, afterIndex: after === undefined ? -1 : after % MAX_CHILDREN, fromSeq: Math.max(afterVisit, 0) }
}

/** Visits read per statement when a filter may skip most of them; doubled up to the last. */
const CHUNKS = [128, 512, 2048, 4096]
/** Visits to read in a round. Unfiltered, each visit read gives an edge at least: `wanted` visits fill the page. */
export const walkLimit = (filtered: boolean, round: number, wanted: number) => (filtered ? CHUNKS[Math.min(round, CHUNKS.length - 1)]! : wanted)

/** The edges of these visits past the cursor that touch every url filter at either end, in visit and child order. */
export function edgeCandidates(visits: readonly VisitChildren[], links: readonly Set<string>[], afterVisit: number, afterIndex: number): EdgeCandidate[] {
  const batch: EdgeCandidate[] = []
  for (const v of visits) {
    const children = childrenOf(v.children)
    const parentMatches = links.map((s) => s.has(v.hash))
    children.forEach((child, i) => {
      if (v.seq === afterVisit && i <= afterIndex) return
      if (links.some((s, k) => !parentMatches[k] && !s.has(child))) return
      batch.push({ key: edgeKey(v.seq, i), parent: v.hash, child, at: v.visited_at })
    })
  }
  return batch
}

/** Whether an edge touches every host filter (each a set of host seqs) at either end; `hostOf` answers an end's host seq. */
export const touchesHosts = (c: EdgeCandidate, hosts: readonly Set<number>[], hostOf: (hash: string) => number | undefined) => hosts.every((s) => s.has(hostOf(c.parent)!) || s.has(hostOf(c.child)!))

/** A page's edges, their ends from `links`. An end missing from the catalogue (never written so) drops its edge, as a join would. */
export function edgesOf<R>(page: readonly EdgeCandidate[], links: ReadonlyMap<string, R>, toLink: (r: R) => Link): Edge[] {
  const data: Edge[] = []
  for (const c of page) {
    const parent = links.get(c.parent)
    const child = links.get(c.child)
    if (parent && child) data.push({ parent: toLink(parent), child: toLink(child), created_at: iso(c.at)! })
  }
  return data
}

const IN_LIST = `IN (SELECT value FROM json_each(${TEXT}))`

/**
 * The statement that walks a run's visits with children in visit order from `fromSeq`
 * (visits_by_run), skipping those that touch none of a url filter's links: a parent among
 * them, or one of them among its children (an `instr` test of the children text, checked at a
 * child's place afterwards). Exported so tests can EXPLAIN it.
 */
export function edgeWalkStatement(run: number, linkSets: readonly string[][], fromSeq: number, limit: number): { sql: string; params: SQLQueryBindings[] } {
  const where = [`v.run_seq = ${INT}`, `v.seq >= ${INT}`, 'v.children IS NOT NULL']
  const params: SQLQueryBindings[] = [run, fromSeq]
  for (const hashes of linkSets) {
    const list = JSON.stringify(hashes)
    where.push(`(v.hash ${IN_LIST} OR EXISTS (SELECT 1 FROM json_each(${TEXT}) j WHERE instr(v.children, j.value) > 0))`)
    params.push(list, list)
  }
  params.push(limit)
  return { sql: `SELECT v.seq, v.hash, v.visited_at, v.children FROM visits v WHERE ${where.join(' AND ')} ORDER BY v.seq LIMIT ${INT}`, params }
}

/**
 * A run's edges read from its visits' children (migration 013): in visit order, each visit's
 * children in the order found, each edge created when its parent was visited. Pages are keyed
 * by edgeKey; a page walks the run's visits from the cursor's until it is full.
 */
export function runEdges(db: Database, hosts: ReturnType<typeof hostRepository>) {
  const linksOf = db.query(`SELECT hash, url, labels, created_at, host_seq FROM links WHERE tenant = ${TEXT} AND hash ${IN_LIST}`)
  const toLink = (r: LinkRow): Link => ({ hash: r.hash, url: r.url, host: hosts.ref(r.host_seq), labels: parseLabels(r.labels), created_at: iso(r.created_at)! })

  /** The catalogue rows of these hashes not in `known` yet, added to it. */
  const resolve = (tenant: string, known: Map<string, LinkRow>, hashes: Iterable<string>) => {
    const missing = [...new Set(hashes)].filter((h) => !known.has(h))
    if (!missing.length) return
    for (const r of linksOf.all(tenant, JSON.stringify(missing)) as LinkRow[]) known.set(r.hash, r)
  }

  return {
    page(tenant: string, run: number, f: EdgeFilter, after: number | undefined, perPage: number): Page<Edge> {
      const touch = { links: linkTouches(f), hosts: [] as Set<number>[] }
      for (const seqs of [hosts.seqsMatching(tenant, f.host_hashes, undefined), hosts.seqsMatching(tenant, undefined, f.hosts)]) {
        if (seqs?.length === 0) return emptyPage()
        if (seqs) touch.hosts.push(new Set(seqs))
      }
      const linkSets = touch.links.map((s) => [...s])
      const filtered = touch.links.length > 0 || touch.hosts.length > 0
      const wanted = perPage + 1
      const found: EdgeCandidate[] = []
      const links = new Map<string, LinkRow>()
      const { afterVisit, afterIndex, fromSeq: start } = edgeCursor(after)
      let fromSeq = start
      for (let round = 0; found.length < wanted; round++) {
        const limit = walkLimit(filtered, round, wanted)
        const built = edgeWalkStatement(run, linkSets, fromSeq, limit)
        const visits = db.query(built.sql).all(...built.params) as VisitChildren[]
        const batch = edgeCandidates(visits, touch.links, afterVisit, afterIndex)
        if (touch.hosts.length) {
          resolve(
            tenant,
            links,
            batch.flatMap((c) => [c.parent, c.child]),
          )
          const hostOf = (hash: string) => links.get(hash)?.host_seq
          for (const c of batch) if (touchesHosts(c, touch.hosts, hostOf)) found.push(c)
        } else found.push(...batch)
        if (visits.length < limit) break
        fromSeq = visits[visits.length - 1]!.seq + 1
      }
      const page = found.slice(0, perPage)
      resolve(
        tenant,
        links,
        page.flatMap((c) => [c.parent, c.child]),
      )
      return { data: edgesOf(page, links, toLink), next: found.length > perPage ? page[page.length - 1]!.key : null }
    },
  }
}
