import type { Database } from 'bun:sqlite'
import { hostOf, linkHash, normalizeUrl } from '../core/url'
import type { hostRepository } from './hosts'
import { labelRepository, parseLabels, type Labels } from './labels'
import { emptyPage, ListQuery, type Page } from './list'
import { iso } from './time'

export type Link = { hash: string; url: string; host: { hash: string; domain: string }; labels: Labels; created_at: string }
export type LinkFilter = { url_hashes?: string[]; urls?: string[]; host_hashes?: string[]; hosts?: string[]; labels?: Labels }

type LinkRow = { hash: string; url: string; labels: string; created_at: number; host_seq: number }
const COLUMNS = 't.hash, t.url, t.labels, t.created_at, t.host_seq'

/** Links of the catalogue, keyed per tenant by the hash of the normalized URL. */
export function linkRepository(db: Database, hosts: ReturnType<typeof hostRepository>) {
  const insert = db.query('INSERT INTO links (tenant, hash, url, host_seq, created_at) VALUES (?, ?, ?, ?, ?) ON CONFLICT (tenant, hash) DO NOTHING')
  const byHash = db.query(`SELECT ${COLUMNS} FROM links t WHERE t.tenant = ? AND t.hash = ?`)
  const toLink = (r: LinkRow): Link => ({
    hash: r.hash,
    url: r.url,
    host: hosts.ref(r.host_seq),
    labels: parseLabels(r.labels),
    created_at: iso(r.created_at)!,
  })

  /** Filters; `hostSeqs` narrows to those hosts' links (already resolved for this tenant). */
  const query = (tenant: string, f: LinkFilter, hostSeqs: number[] | undefined) =>
    new ListQuery('links', tenant, 'link')
      .in('t.hash', f.url_hashes, true)
      // URLs are stored normalized and keyed by their hash, so `urls` uses the hash index too.
      .in(
        't.hash',
        f.urls?.map((u) => linkHash(normalizeUrl(u) ?? u)),
        true,
      )
      .parents('t.host_seq', hostSeqs)
      .labels(f.labels)

  /** Inserts what is new of `urls` (hosts first); answers their hashes, in order. */
  const insertAll = (tenant: string, urls: string[], now: number): string[] => {
    const hostSeqs = new Map<string, number>() // a batch is usually a few hosts' URLs
    return urls.map((url) => {
      const host = hostOf(url)
      let hostSeq = hostSeqs.get(host)
      if (hostSeq === undefined) hostSeqs.set(host, (hostSeq = hosts.ensure(tenant, host, now)))
      const hash = linkHash(url)
      insert.run(tenant, hash, url, hostSeq, now)
      return hash
    })
  }

  return {
    /** Inserts the normalized URLs that are new (and their hosts); answers every one, in order. */
    upsert(tenant: string, urls: string[]): Link[] {
      return db.transaction(() => insertAll(tenant, urls, Date.now()).map((hash) => toLink(byHash.get(tenant, hash) as LinkRow))).immediate()
    },
    /** Inserts the normalized URLs that are new and their hosts, answering nothing (the crawl's hot path). */
    ensure(tenant: string, urls: string[], now = Date.now()) {
      insertAll(tenant, urls, now)
    },
    get(tenant: string, hash: string): Link | null {
      const row = byHash.get(tenant, hash) as LinkRow | null
      return row ? toLink(row) : null
    },
    list(tenant: string, f: LinkFilter, after: number | undefined, perPage: number): Page<Link> {
      const hostSeqs = hosts.seqsMatching(tenant, f.host_hashes, f.hosts)
      if (hostSeqs?.length === 0) return emptyPage()
      return query(tenant, f, hostSeqs).page(db, COLUMNS, after, perPage, toLink)
    },
    /** Links of one host (its seq comes from a tenant-checked lookup). */
    listOfHost(tenant: string, hostSeq: number, f: LinkFilter, after: number | undefined, perPage: number): Page<Link> {
      return query(tenant, f, [hostSeq]).page(db, COLUMNS, after, perPage, toLink)
    },
    labels: labelRepository(db, 'link', 'links'),
  }
}
