import { hostHash, linkHash, normalizeUrl } from '../../core/url'
import type { LinkFilter } from '../links'
import { emptyPage } from '../list'
import type { HostStore, LinkStore } from '../types'
import { insertHosts, insertLinks } from './catalogue-insert'
import { HOST_COLUMNS, hostSeqsMatching, LINK_COLUMNS, storedDomains, toHost, toLink, type HostRow, type LinkRow } from './catalogue-rows'
import { hostSeqOf } from './keys'
import { pgLabelStore } from './labels'
import { PgListQuery } from './list'
import { first, numeric, type Pg } from './pg'

/** Hosts of the catalogue, keyed per tenant by the hash of the normalized host name. */
export function pgHostStore(sql: Pg): HostStore {
  return {
    async upsert(tenant, domains) {
      if (domains.length === 0) return []
      return sql.begin(async (tx) => {
        await insertHosts(tx, tenant, domains, Date.now())
        // A statement of its own (a new snapshot): it sees the rows other transactions inserted
        // that the insert skipped, once it waited for them to commit.
        const hashes = domains.map(hostHash)
        const rows = numeric<HostRow>(await tx`SELECT ${tx.unsafe(HOST_COLUMNS)} FROM hosts t WHERE t.tenant = ${tenant} AND t.hash = ANY(${tx.array(hashes, 'TEXT')}::text[])`)
        const byHash = new Map(rows.map((r) => [r.hash, toHost(r)]))
        return hashes.map((hash) => byHash.get(hash)!)
      })
    },
    async get(tenant, hash) {
      const row = first<HostRow>(await sql`SELECT ${sql.unsafe(HOST_COLUMNS)} FROM hosts t WHERE t.tenant = ${tenant} AND t.hash = ${hash}`)
      return row ? toHost(row) : null
    },
    list: (tenant, f, after, perPage) =>
      new PgListQuery('hosts', tenant, 'host').in('t.hash', f.host_hashes).in('t.domain', storedDomains(f.hosts)).labels(f.labels).page(sql, HOST_COLUMNS, after, perPage, toHost),
    labels: pgLabelStore(sql, 'host', 'hosts'),
  }
}

/** Links of the catalogue, keyed per tenant by the hash of the normalized URL. */
export function pgLinkStore(sql: Pg): LinkStore {
  /** Filters; `hostSeqs` narrows to those hosts' links (already resolved for this tenant). */
  const query = (tenant: string, f: LinkFilter, hostSeqs: number[] | undefined) =>
    new PgListQuery('links', tenant, 'link')
      .in('t.hash', f.url_hashes)
      // URLs are stored normalized and keyed by their hash, so `urls` uses the hash index too.
      .in(
        't.hash',
        f.urls?.map((u) => linkHash(normalizeUrl(u) ?? u)),
      )
      .parents('t.host_seq', hostSeqs)
      .labels(f.labels)

  return {
    async upsert(tenant, urls) {
      if (urls.length === 0) return []
      return sql.begin(async (tx) => {
        const hashes = await insertLinks(tx, tenant, urls, Date.now())
        // A statement of its own, as in hosts.upsert: it answers the rows of concurrent inserts too.
        const rows = numeric<LinkRow>(await tx`SELECT ${tx.unsafe(LINK_COLUMNS)} FROM links t WHERE t.tenant = ${tenant} AND t.hash = ANY(${tx.array(hashes, 'TEXT')}::text[])`)
        const byHash = new Map(rows.map((r) => [r.hash, toLink(r)]))
        return hashes.map((hash) => byHash.get(hash)!)
      })
    },
    async get(tenant, hash) {
      const row = first<LinkRow>(await sql`SELECT ${sql.unsafe(LINK_COLUMNS)} FROM links t WHERE t.tenant = ${tenant} AND t.hash = ${hash}`)
      return row ? toLink(row) : null
    },
    async list(tenant, f, after, perPage) {
      const hostSeqs = await hostSeqsMatching(sql, tenant, f.host_hashes, f.hosts)
      if (hostSeqs?.length === 0) return emptyPage()
      return query(tenant, f, hostSeqs).page(sql, LINK_COLUMNS, after, perPage, toLink)
    },
    async listOfHost(tenant, hostHash, f, after, perPage) {
      const seq = await hostSeqOf(sql, tenant, hostHash)
      return seq === null ? null : query(tenant, f, [seq]).page(sql, LINK_COLUMNS, after, perPage, toLink)
    },
    labels: pgLabelStore(sql, 'link', 'links'),
  }
}

/**
 * Inserts the catalogue rows (hosts and links) of these normalized URLs that are new, inside the
 * caller's transaction (which must be READ COMMITTED, see catalogue-insert.ts): the crawl's
 * commit. Two statements whatever the number of URLs; safe beside other processes inserting the
 * same URLs.
 */
export async function ensureLinks(tx: Pg, tenant: string, urls: string[]): Promise<void> {
  if (urls.length) await insertLinks(tx, tenant, urls, Date.now())
}
