import { linkHash, normalizeHost, normalizeUrl } from '../../core/url'
import { emptyPage, type Page } from '../list'
import { childrenOf, MAX_CHILDREN } from '../page-records'
import { edgeKey, type Edge, type EdgeFilter } from '../run-edges'
import { iso } from '../time'
import type { Param } from './crawl-log-where'
import { numbered } from './list'
import { numeric, type Pg } from './pg'
import { toLink, type LinkRow } from './run-graph'

type VisitChildren = { seq: number; hash: string; visited_at: number; children: string }
type Candidate = { key: number; parent: string; child: string; at: number }
type Row = LinkRow & { host_seq: number }

/** Visits read per statement when a filter may skip most of them; doubled up to the last. */
const CHUNKS = [128, 512, 2048, 4096]

/**
 * The statement that walks a run's visits with children in visit order from `fromSeq`
 * (visits_by_run), skipping those that touch none of a url filter's links: a parent among them,
 * or one of them in its children text (a strpos test, checked at a child's place afterwards).
 */
export function edgeWalkStatement(run: number, linkSets: readonly string[][], fromSeq: number, limit: number): { text: string; params: Param[] } {
  const where = ['v.run_seq = ?::int8', 'v.seq >= ?::int8', 'v.children IS NOT NULL']
  const params: Param[] = [run, fromSeq]
  for (const hashes of linkSets) {
    where.push('(v.hash = ANY(?::text[]) OR EXISTS (SELECT 1 FROM unnest(?::text[]) j (h) WHERE strpos(v.children, j.h) > 0))')
    params.push(hashes, hashes)
  }
  params.push(limit)
  return { text: numbered(`SELECT v.seq, v.hash, v.visited_at, v.children FROM visits v WHERE ${where.join(' AND ')} ORDER BY v.run_seq, v.seq LIMIT ?::int8`), params }
}

/** Seqs of the tenant's hosts of these hashes or (normalized) domains; undefined without a filter. */
async function hostSeqs(sql: Pg, tenant: string, hashes: string[] | undefined, domains: string[] | undefined): Promise<number[] | undefined> {
  if (hashes !== undefined) return numeric<{ seq: number }>(await sql`SELECT seq FROM hosts WHERE tenant = ${tenant} AND hash = ANY(${sql.array(hashes, 'TEXT')}::text[])`).map((r) => r.seq)
  if (domains !== undefined) {
    const stored = domains.map((d) => normalizeHost(d) ?? d)
    return numeric<{ seq: number }>(await sql`SELECT seq FROM hosts WHERE tenant = ${tenant} AND domain = ANY(${sql.array(stored, 'TEXT')}::text[])`).map((r) => r.seq)
  }
  return undefined
}

/**
 * A run's edges read from its visits' children, as the SQLite engine's runEdges pages them
 * (run-edges.ts): in visit order, each visit's children in the order found, each edge created
 * when its parent was visited, keyed by edgeKey (visitSeq × MAX_CHILDREN + index).
 */
export async function runEdgesPage(sql: Pg, tenant: string, run: number, f: EdgeFilter, after: number | undefined, perPage: number): Promise<Page<Edge>> {
  const links = new Map<string, Row>()
  /** The catalogue rows of these hashes not known yet, added to `links`. */
  const resolve = async (hashes: Iterable<string>) => {
    const missing = [...new Set(hashes)].filter((h) => !links.has(h))
    if (!missing.length) return
    const rows = numeric<Row>(
      await sql`SELECT l.hash, l.url, l.labels, l.created_at, l.host_seq, h.hash AS host_hash, h.domain FROM links l JOIN hosts h ON h.seq = l.host_seq
        WHERE l.tenant = ${tenant} AND l.hash = ANY(${sql.array(missing, 'TEXT')}::text[])`,
    )
    for (const r of rows) links.set(r.hash, r)
  }

  const touch: { links: Set<string>[]; hosts: Set<number>[] } = { links: [], hosts: [] }
  for (const hashes of [f.url_hashes, f.urls?.map((u) => linkHash(normalizeUrl(u) ?? u))]) if (hashes) touch.links.push(new Set(hashes))
  for (const seqs of [await hostSeqs(sql, tenant, f.host_hashes, undefined), await hostSeqs(sql, tenant, undefined, f.hosts)]) {
    if (seqs?.length === 0) return emptyPage()
    if (seqs) touch.hosts.push(new Set(seqs))
  }
  const linkSets = touch.links.map((s) => [...s])
  const filtered = touch.links.length > 0 || touch.hosts.length > 0
  const wanted = perPage + 1
  const found: Candidate[] = []
  // The cursor's visit is read again, from the child after the cursor's.
  const afterVisit = after === undefined ? -1 : Math.floor(after / MAX_CHILDREN)
  const afterIndex = after === undefined ? -1 : after % MAX_CHILDREN
  let fromSeq = Math.max(afterVisit, 0)
  for (let round = 0; found.length < wanted; round++) {
    // Unfiltered, each visit read gives an edge at least: perPage + 1 visits fill the page.
    const limit = filtered ? CHUNKS[Math.min(round, CHUNKS.length - 1)]! : wanted
    const built = edgeWalkStatement(run, linkSets, fromSeq, limit)
    const visits = numeric<VisitChildren>(await sql.unsafe(built.text, built.params as unknown[]))
    const batch: Candidate[] = []
    for (const v of visits) {
      const children = childrenOf(v.children)
      const parentMatches = touch.links.map((s) => s.has(v.hash))
      children.forEach((child, i) => {
        if (v.seq === afterVisit && i <= afterIndex) return
        if (touch.links.some((s, k) => !parentMatches[k] && !s.has(child))) return
        batch.push({ key: edgeKey(v.seq, i), parent: v.hash, child, at: v.visited_at })
      })
    }
    if (touch.hosts.length) {
      await resolve(batch.flatMap((c) => [c.parent, c.child]))
      const hostOf = (hash: string) => links.get(hash)?.host_seq
      for (const c of batch) if (touch.hosts.every((s) => s.has(hostOf(c.parent)!) || s.has(hostOf(c.child)!))) found.push(c)
    } else found.push(...batch)
    if (visits.length < limit) break
    fromSeq = visits[visits.length - 1]!.seq + 1
  }
  const page = found.slice(0, perPage)
  await resolve(page.flatMap((c) => [c.parent, c.child]))
  const data: Edge[] = []
  // An end missing from the catalogue (never written so) drops its edge, as a join would.
  for (const c of page) {
    const parent = links.get(c.parent)
    const child = links.get(c.child)
    if (parent && child) data.push({ parent: toLink(parent), child: toLink(child), created_at: iso(c.at)! })
  }
  return { data, next: found.length > perPage ? page[page.length - 1]!.key : null }
}
