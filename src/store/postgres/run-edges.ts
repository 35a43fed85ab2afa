import { normalizeHost } from '../../core/url'
import { emptyPage, type Page } from '../list'
import { edgeCandidates, edgeCursor, edgesOf, linkTouches, touchesHosts, walkLimit, type Edge, type EdgeCandidate, type EdgeFilter, type VisitChildren } from '../run-edges'
import type { Param } from './crawl-log-where'
import { numbered } from './list'
import { numeric, type Pg } from './pg'
import { toLink, type LinkRow } from './run-graph'

type Row = LinkRow & { host_seq: number }

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

  const touch = { links: linkTouches(f), hosts: [] as Set<number>[] }
  for (const seqs of [await hostSeqs(sql, tenant, f.host_hashes, undefined), await hostSeqs(sql, tenant, undefined, f.hosts)]) {
    if (seqs?.length === 0) return emptyPage()
    if (seqs) touch.hosts.push(new Set(seqs))
  }
  const linkSets = touch.links.map((s) => [...s])
  const filtered = touch.links.length > 0 || touch.hosts.length > 0
  const wanted = perPage + 1
  const found: EdgeCandidate[] = []
  const { afterVisit, afterIndex, fromSeq: start } = edgeCursor(after)
  let fromSeq = start
  for (let round = 0; found.length < wanted; round++) {
    const limit = walkLimit(filtered, round, wanted)
    const built = edgeWalkStatement(run, linkSets, fromSeq, limit)
    const visits = numeric<VisitChildren>(await sql.unsafe(built.text, built.params as unknown[]))
    const batch = edgeCandidates(visits, touch.links, afterVisit, afterIndex)
    if (touch.hosts.length) {
      await resolve(batch.flatMap((c) => [c.parent, c.child]))
      const hostOf = (hash: string) => links.get(hash)?.host_seq
      for (const c of batch) if (touchesHosts(c, touch.hosts, hostOf)) found.push(c)
    } else found.push(...batch)
    if (visits.length < limit) break
    fromSeq = visits[visits.length - 1]!.seq + 1
  }
  const page = found.slice(0, perPage)
  await resolve(page.flatMap((c) => [c.parent, c.child]))
  return { data: edgesOf(page, links, toLink), next: found.length > perPage ? page[page.length - 1]!.key : null }
}
