import { hostHash, linkHash, normalizeHost, normalizeUrl } from '../../core/url'
import { parseLabels } from '../labels'
import type { Link } from '../links'
import { emptyPage, type Page } from '../list'
import type { VisitedLink, VisitFilter } from '../run-graph'
import { epoch, iso } from '../time'
import type { Param } from './crawl-log-where'
import { numbered } from './list'
import { numeric, type Pg } from './pg'

/** A catalogue link as a run's lists show it, its host read with it. */
export type LinkRow = { hash: string; url: string; labels: string; created_at: number; host_hash: string; domain: string }
export const toLink = (r: LinkRow): Link => ({ hash: r.hash, url: r.url, host: { hash: r.host_hash, domain: r.domain }, labels: parseLabels(r.labels), created_at: iso(r.created_at)! })

type VisitRow = LinkRow & { depth: number; status: number | null; visited_at: number; _seq: number }
const VISIT_COLUMNS = 'l.hash, l.url, l.labels, l.created_at, h.hash AS host_hash, h.domain, v.depth, v.status, v.visited_at'

/** Filter values name links and hosts as stored: normalized, then hashed. */
const urlHashes = (urls: string[] | undefined) => urls?.map((u) => linkHash(normalizeUrl(u) ?? u))
const hostHashes = (domains: string[] | undefined) => domains?.map((d) => hostHash(normalizeHost(d) ?? d))

/**
 * The statement of one keyset page of a run's visits, in the order the run recorded them
 * (oldest first), as the SQLite engine's RunGraphQuery filters them (run-graph.ts): each visit
 * joined to its link by (tenant, hash), a URL found by its link's seq (visits_once), `seq` the
 * cursor. Exported so tests can EXPLAIN it.
 */
export function visitStatement(tenant: string, run: number, f: VisitFilter, after: number | undefined, perPage: number): { text: string; params: Param[] } {
  const where = ['v.run_seq = ?::int8']
  const params: Param[] = [tenant, run]
  const when = (value: unknown, term: string, ...values: Param[]) => {
    if (value === undefined) return
    where.push(term)
    params.push(...values)
  }
  for (const hashes of [f.url_hashes, urlHashes(f.urls)]) when(hashes, 'v.link_seq IN (SELECT k.seq FROM links k WHERE k.tenant = ? AND k.hash = ANY(?::text[]))', tenant, hashes!)
  for (const hashes of [f.host_hashes, hostHashes(f.hosts)]) when(hashes, 'v.host_hash = ANY(?::text[])', hashes!)
  when(f.depth, 'v.depth = ANY(?::int[])', f.depth!)
  when(f.visited_before, 'v.visited_at < ?::int8', f.visited_before === undefined ? 0 : epoch(f.visited_before))
  when(f.visited_after, 'v.visited_at > ?::int8', f.visited_after === undefined ? 0 : epoch(f.visited_after))
  when(after, 'v.seq > ?::int8', after!)
  params.push(perPage + 1)
  return {
    text: numbered(
      `SELECT v.seq AS _seq, ${VISIT_COLUMNS} FROM visits v JOIN links l ON l.tenant = ? AND l.hash = v.hash JOIN hosts h ON h.seq = l.host_seq WHERE ${where.join(' AND ')} ORDER BY v.run_seq, v.seq LIMIT ?::int8`,
    ),
    params,
  }
}

/** Links a run visited, in visit order (the run's seq comes from a tenant-checked lookup). */
export async function runVisits(sql: Pg, tenant: string, run: number, f: VisitFilter, after: number | undefined, perPage: number): Promise<Page<VisitedLink>> {
  const built = visitStatement(tenant, run, f, after, perPage)
  const rows = numeric<VisitRow>(await sql.unsafe(built.text, built.params as unknown[]))
  if (rows.length === 0) return emptyPage()
  const more = rows.length > perPage
  if (more) rows.length = perPage
  return { data: rows.map((r) => ({ ...toLink(r), depth: r.depth, visited_at: iso(r.visited_at)!, status: r.status })), next: more ? rows[rows.length - 1]!._seq : null }
}
