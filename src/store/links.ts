import type { Database } from 'bun:sqlite'
import { hostOf, linkHash } from '../crawl/url'
import type { hostRepository } from './hosts'
import { labelRepository, type Labels } from './labels'
import { ListQuery, type Page } from './list'
import { iso } from './time'

export type Link = { hash: string; url: string; host: { hash: string; domain: string }; labels: Labels; created_at: string }
export type LinkFilter = { url_hashes?: string[]; urls?: string[]; host_hashes?: string[]; hosts?: string[]; labels?: Labels }

type LinkRow = { hash: string; url: string; labels: string; created_at: number; host_hash: string; domain: string }
const COLUMNS = 't.hash, t.url, t.labels, t.created_at, h.hash AS host_hash, h.domain'
const JOIN_HOST = 'CROSS JOIN hosts h ON h.seq = t.host_seq'
export const toLink = (r: LinkRow): Link => ({
  hash: r.hash,
  url: r.url,
  host: { hash: r.host_hash, domain: r.domain },
  labels: JSON.parse(r.labels),
  created_at: iso(r.created_at)!,
})

/** Links of the catalogue, keyed per tenant by the hash of the normalized URL. */
export function linkRepository(db: Database, hosts: ReturnType<typeof hostRepository>) {
  const insert = db.query('INSERT INTO links (tenant, hash, url, host_seq, created_at) VALUES (?, ?, ?, ?, ?) ON CONFLICT (tenant, hash) DO NOTHING')
  const byHash = db.query(`SELECT ${COLUMNS} FROM links t ${JOIN_HOST} WHERE t.tenant = ? AND t.hash = ?`)

  const filtered = (tenant: string, f: LinkFilter) =>
    new ListQuery('links', tenant, 'link')
      .in('t.hash', f.url_hashes)
      .in('t.url', f.urls)
      .in('h.hash', f.host_hashes)
      .in('h.domain', f.hosts)
      .labels(f.labels)

  return {
    /** Inserts the normalized URLs that are new (and their hosts); answers every one, in order. */
    upsert(tenant: string, urls: string[]): Link[] {
      return db.transaction(() => {
        const now = Date.now()
        return urls.map((url) => {
          const hostSeq = hosts.ensure(tenant, hostOf(url), now)
          const hash = linkHash(url)
          insert.run(tenant, hash, url, hostSeq, now)
          return toLink(byHash.get(tenant, hash) as LinkRow)
        })
      })()
    },
    get(tenant: string, hash: string): Link | null {
      const row = byHash.get(tenant, hash) as LinkRow | null
      return row ? toLink(row) : null
    },
    list(tenant: string, f: LinkFilter, page: string | undefined, perPage: number): Page<Link> {
      return filtered(tenant, f).page(db, COLUMNS, JOIN_HOST, page, perPage, toLink)
    },
    /** Links of one host (its seq comes from a tenant-checked lookup). */
    listOfHost(tenant: string, hostSeq: number, f: LinkFilter, page: string | undefined, perPage: number): Page<Link> {
      return filtered(tenant, f).when(hostSeq, 't.host_seq = ?', hostSeq).page(db, COLUMNS, JOIN_HOST, page, perPage, toLink)
    },
    labels: labelRepository(db, 'link', 'links'),
  }
}
