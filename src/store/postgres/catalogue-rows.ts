import { normalizeHost } from '../../core/url'
import type { Host } from '../hosts'
import { parseLabels } from '../labels'
import type { Link } from '../links'
import { iso } from '../time'
import { PgListQuery } from './list'
import { first, type Pg } from './pg'

/** A row's host as lists show it. */
export type HostRef = { hash: string; domain: string }

/**
 * The hash and domain of the host of a row aliased `t` (links, pattern sets, data maps). Scalar
 * subqueries rather than a join, because PgListQuery builds its FROM of one table; each is one
 * primary-key probe per row of a page. The SQLite engine caches these instead; a cache is state
 * another process could not invalidate (though host rows are never deleted).
 */
export const HOST_REF = '(SELECT h.hash FROM hosts h WHERE h.seq = t.host_seq) AS host_hash, (SELECT h.domain FROM hosts h WHERE h.seq = t.host_seq) AS host_domain'

/**
 * A tenant's host of this hash, with its seq, for creating a row of that host (a pattern set, a
 * data map); null when the tenant has no such host. Host rows are never deleted: once found, the
 * host is there for the insert.
 */
export const hostOfHash = async (sql: Pg, tenant: string, hash: string) => first<HostRef & { seq: number }>(await sql`SELECT seq, hash, domain FROM hosts WHERE tenant = ${tenant} AND hash = ${hash}`)

export type HostRow = { hash: string; domain: string; labels: string; created_at: number }
export const HOST_COLUMNS = 't.hash, t.domain, t.labels, t.created_at'
export const toHost = (r: HostRow): Host => ({ hash: r.hash, domain: r.domain, labels: parseLabels(r.labels), created_at: iso(r.created_at)! })

export type LinkRow = { hash: string; url: string; labels: string; created_at: number; host_hash: string; host_domain: string }
export const LINK_COLUMNS = `t.hash, t.url, t.labels, t.created_at, ${HOST_REF}`
export const toLink = (r: LinkRow): Link => ({
  hash: r.hash,
  url: r.url,
  host: { hash: r.host_hash, domain: r.host_domain },
  labels: parseLabels(r.labels),
  created_at: iso(r.created_at)!,
})

/** Domains are stored normalized; a filter value that normalizes matches its stored spelling. */
export const storedDomains = (domains: string[] | undefined) => domains?.map((d) => normalizeHost(d) ?? d)

/**
 * Seqs of the tenant's hosts matching both lists (either may be absent), for filtering the rows
 * of those hosts; undefined when neither list is given.
 */
export async function hostSeqsMatching(sql: Pg, tenant: string, hashes: string[] | undefined, domains: string[] | undefined): Promise<number[] | undefined> {
  if (hashes === undefined && domains === undefined) return undefined
  return new PgListQuery('hosts', tenant, 'host').in('t.hash', hashes).in('t.domain', storedDomains(domains)).seqs(sql)
}
