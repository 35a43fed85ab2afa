import type { Database } from 'bun:sqlite'
import { hostHash, normalizeHost } from '../core/url'
import { labelRepository, parseLabels, type Labels } from './labels'
import { ListQuery, type Page } from './list'
import { iso } from './time'

export type Host = { hash: string; domain: string; labels: Labels; created_at: string }
export type HostFilter = { host_hashes?: string[]; hosts?: string[]; labels?: Labels }

type HostRow = { hash: string; domain: string; labels: string; created_at: number }
/** Domains are stored normalized; a filter value that normalizes matches its stored spelling. */
const storedDomains = (domains: string[] | undefined) => domains?.map((d) => normalizeHost(d) ?? d)
const COLUMNS = 't.hash, t.domain, t.labels, t.created_at'
export const toHost = (r: HostRow): Host => ({ hash: r.hash, domain: r.domain, labels: parseLabels(r.labels), created_at: iso(r.created_at)! })

/** Hosts of the catalogue, keyed per tenant by the hash of the normalized host name. */
export function hostRepository(db: Database) {
  const insert = db.query('INSERT INTO hosts (tenant, hash, domain, created_at) VALUES (?, ?, ?, ?) ON CONFLICT (tenant, hash) DO NOTHING')
  const byHash = db.query(`SELECT seq, ${COLUMNS} FROM hosts t WHERE tenant = ? AND hash = ?`)
  const refBySeq = db.query('SELECT hash, domain FROM hosts WHERE seq = ?')
  const refs = new Map<number, { hash: string; domain: string }>()

  /** Seq of the host row for a normalized host name, creating it when new. */
  function ensure(tenant: string, domain: string, now: number): number {
    const hash = hostHash(domain)
    insert.run(tenant, hash, domain, now)
    return (byHash.get(tenant, hash) as { seq: number }).seq
  }

  return {
    ensure,
    /** Inserts the normalized domains that are new; answers every one, in order. */
    upsert(tenant: string, domains: string[]): Host[] {
      return db
        .transaction(() => {
          const now = Date.now()
          return domains.map((domain) => {
            ensure(tenant, domain, now)
            return toHost(byHash.get(tenant, hostHash(domain)) as HostRow)
          })
        })
        .immediate()
    },
    get(tenant: string, hash: string): (Host & { seq: number }) | null {
      const row = byHash.get(tenant, hash) as (HostRow & { seq: number }) | null
      return row ? { ...toHost(row), seq: row.seq } : null
    },
    list(tenant: string, f: HostFilter, after: number | undefined, perPage: number): Page<Host> {
      return new ListQuery('hosts', tenant, 'host').in('t.hash', f.host_hashes, true).in('t.domain', storedDomains(f.hosts), true).labels(f.labels).page(db, COLUMNS, after, perPage, toHost)
    },
    /**
     * Seqs of the hosts matching both lists (either may be absent), for filtering their links;
     * undefined when neither list is given.
     */
    seqsMatching(tenant: string, hashes: string[] | undefined, domains: string[] | undefined): number[] | undefined {
      if (hashes === undefined && domains === undefined) return undefined
      return new ListQuery('hosts', tenant, 'host').in('t.hash', hashes, true).in('t.domain', storedDomains(domains), true).seqs(db)
    },
    /**
     * Hash and domain of a host row, from a cache: links show them, and neither ever changes.
     * Host rows are never deleted, so a seq never comes to mean another host; a delete of
     * hosts would have to clear this cache.
     */
    ref(seq: number): { hash: string; domain: string } {
      let ref = refs.get(seq)
      if (!ref) {
        if (refs.size >= 100_000) refs.clear()
        ref = refBySeq.get(seq) as { hash: string; domain: string }
        refs.set(seq, ref)
      }
      return ref
    },
    labels: labelRepository(db, 'host', 'hosts'),
  }
}
