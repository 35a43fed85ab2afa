import { hostHash, hostOf, linkHash } from '../../core/url'
import type { Pg } from './pg'

// How the catalogue's rows are inserted when many processes may insert the same ones at once
// (API upserts, every crawl's commits):
//
// - One statement per table, whatever the number of rows: the values travel as arrays and are
//   unnested.
// - Rows already there are filtered out before the insert (NOT EXISTS), so the crawl's usual
//   case, URLs it met before, takes no identity value and writes nothing. ON CONFLICT DO NOTHING
//   covers the rows another transaction inserts meanwhile: the insert waits for that transaction
//   and then skips them.
// - Rows are inserted in hash order. Two transactions that insert overlapping rows then wait for
//   each other in one order only and cannot deadlock, as they could if each inserted in the order
//   its URLs were met.
// - Seqs still follow the order of the input, as the SQLite engine gives them (lists show the
//   newest first): the identity values are drawn (nextval) over the rows in input order, in a
//   subquery sorted by it, before the insert sorts them by hash. A sorted subquery is never
//   merged into the query around it, and a CTE calling a volatile function is never inlined.
//   The sequence is looked up by an uncorrelated subquery, once a statement: looked up once a
//   row, it cost 7 µs a row (a catalogue scan).
//
// Both run in the caller's transaction, which must be READ COMMITTED (PostgreSQL's default): the
// links statement finds the hosts the hosts statement saw inserted by others only because each
// statement reads a new snapshot.

/** Inserts the normalized domains that are new (a domain given twice is inserted once). */
export async function insertHosts(tx: Pg, tenant: string, given: readonly string[], now: number): Promise<void> {
  const domains = [...new Set(given)]
  const hashes = domains.map(hostHash)
  await tx`
    WITH fresh AS MATERIALIZED (
      SELECT nextval((SELECT pg_get_serial_sequence('hosts', 'seq')::regclass)) AS seq, i.hash, i.domain
      FROM (
        SELECT d.hash, d.domain FROM unnest(${tx.array(hashes, 'TEXT')}::text[], ${tx.array(domains, 'TEXT')}::text[]) WITH ORDINALITY AS d (hash, domain, ord)
        WHERE NOT EXISTS (SELECT 1 FROM hosts h WHERE h.tenant = ${tenant} AND h.hash = d.hash)
        ORDER BY d.ord
      ) i
    )
    INSERT INTO hosts (seq, tenant, hash, domain, created_at)
    SELECT seq, ${tenant}, hash, domain, ${now}::bigint FROM fresh ORDER BY hash
    ON CONFLICT (tenant, hash) DO NOTHING`
}

/**
 * Inserts what is new of these normalized URLs, their hosts first; answers their hashes, in
 * order (a URL given twice is inserted once).
 */
export async function insertLinks(tx: Pg, tenant: string, urls: readonly string[], now: number): Promise<string[]> {
  const all = urls.map(linkHash)
  const seen = new Set<string>()
  const hashes: string[] = []
  const distinct: string[] = []
  const hostHashes: string[] = []
  const hosts = new Set<string>() // in the order first met, as their seqs go
  for (let i = 0; i < urls.length; i++) {
    const hash = all[i]!
    if (seen.has(hash)) continue
    seen.add(hash)
    const url = urls[i]!
    const host = hostOf(url)
    hosts.add(host)
    hashes.push(hash)
    distinct.push(url)
    hostHashes.push(hostHash(host))
  }
  if (distinct.length === 0) return all
  await insertHosts(tx, tenant, [...hosts], now)
  await tx`
    WITH fresh AS MATERIALIZED (
      SELECT nextval((SELECT pg_get_serial_sequence('links', 'seq')::regclass)) AS seq, i.hash, i.url, i.host_seq
      FROM (
        SELECT u.hash, u.url, h.seq AS host_seq
        FROM unnest(${tx.array(hashes, 'TEXT')}::text[], ${tx.array(distinct, 'TEXT')}::text[], ${tx.array(hostHashes, 'TEXT')}::text[]) WITH ORDINALITY AS u (hash, url, host_hash, ord)
        JOIN hosts h ON h.tenant = ${tenant} AND h.hash = u.host_hash
        WHERE NOT EXISTS (SELECT 1 FROM links l WHERE l.tenant = ${tenant} AND l.hash = u.hash)
        ORDER BY u.ord
      ) i
    )
    INSERT INTO links (seq, tenant, hash, url, host_seq, created_at)
    SELECT seq, ${tenant}, hash, url, host_seq, ${now}::bigint FROM fresh ORDER BY hash
    ON CONFLICT (tenant, hash) DO NOTHING`
  return all
}
