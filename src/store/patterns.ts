import type { Database } from 'bun:sqlite'
import type { PatternDef, PatternFormat } from '../extract/patterns'
import { conflict } from '../core/errors'
import type { hostRepository } from './hosts'
import { emptyPage, ListQuery, type Page } from './list'
import { iso } from './time'

export type PatternSet = { id: string; category: string; patterns: PatternDef; host: { hash: string; domain: string }; created_at: string }
export type PatternFilter = {
  include_ids?: string[]
  exclude_ids?: string[]
  categories?: string[]
  formats?: string[]
  host_hashes?: string[]
  hosts?: string[]
  created_before?: string
  created_after?: string
}
export type NewPatternSet = { id: string; category: string; patterns: PatternDef }

type Row = { id: string; category: string; format: string; patterns: string; host_seq: number; created_at: number }
const COLUMNS = 't.id, t.category, t.format, t.patterns, t.host_seq, t.created_at'

/** Per-host pattern sets: a category and the regexes or URL patterns that put a URL in it. */
export function patternRepository(db: Database, hosts: ReturnType<typeof hostRepository>) {
  const insert = db.query('INSERT INTO pattern_sets (tenant, id, host_seq, category, format, patterns, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (tenant, id) DO NOTHING')
  const byId = db.query(`SELECT t.seq, ${COLUMNS} FROM pattern_sets t WHERE t.tenant = ? AND t.id = ?`)
  const ofHost = db.query(`SELECT ${COLUMNS} FROM pattern_sets t WHERE t.host_seq = ? AND t.tenant = ? ORDER BY t.seq`)
  const replace = db.query('UPDATE pattern_sets SET format = ?, patterns = ?, updated_at = ? WHERE seq = ?')
  const remove = db.query('DELETE FROM pattern_sets WHERE seq = ?')

  const toSet = (r: Row): PatternSet => ({
    id: r.id,
    category: r.category,
    patterns: { format: r.format as PatternFormat, patterns: JSON.parse(r.patterns) },
    host: hosts.ref(r.host_seq),
    created_at: iso(r.created_at)!,
  })
  const getRow = (tenant: string, id: string) => byId.get(tenant, id) as (Row & { seq: number }) | null
  const query = (tenant: string, f: PatternFilter, hostSeqs: number[] | undefined) =>
    new ListQuery('pattern_sets', tenant)
      .in('t.id', f.include_ids, true)
      .notIn('t.id', f.exclude_ids)
      .in('t.category', f.categories)
      .in('t.format', f.formats)
      .parents('t.host_seq', hostSeqs)
      .range('t.created_at', f.created_before, f.created_after)

  return {
    /** Inserts a set for a host (its seq from a tenant-checked lookup); 409 when the id exists. */
    create(tenant: string, hostSeq: number, set: NewPatternSet): PatternSet {
      const now = Date.now()
      const { changes } = insert.run(tenant, set.id, hostSeq, set.category, set.patterns.format, JSON.stringify(set.patterns.patterns), now, now)
      if (changes === 0) throw conflict(`pattern set ${set.id} already exists`)
      return toSet(getRow(tenant, set.id)!)
    },
    get(tenant: string, id: string): PatternSet | null {
      const row = getRow(tenant, id)
      return row ? toSet(row) : null
    },
    /** Replaces the definition (format and patterns); null when the set does not exist. */
    replace(tenant: string, id: string, patterns: PatternDef): PatternSet | null {
      return db
        .transaction(() => {
          const row = getRow(tenant, id)
          if (!row) return null
          replace.run(patterns.format, JSON.stringify(patterns.patterns), Date.now(), row.seq)
          return toSet(getRow(tenant, id)!)
        })
        .immediate()
    },
    /** Answers false when the set did not exist. */
    delete(tenant: string, id: string): boolean {
      const row = getRow(tenant, id)
      if (!row) return false
      remove.run(row.seq)
      return true
    },
    list(tenant: string, f: PatternFilter, after: number | undefined, perPage: number): Page<PatternSet> {
      const hostSeqs = hosts.seqsMatching(tenant, f.host_hashes, f.hosts)
      if (hostSeqs?.length === 0) return emptyPage()
      return query(tenant, f, hostSeqs).page(db, COLUMNS, after, perPage, toSet)
    },
    /** Sets of one host (its seq from a tenant-checked lookup). */
    listOfHost(tenant: string, hostSeq: number, f: PatternFilter, after: number | undefined, perPage: number): Page<PatternSet> {
      return query(tenant, f, [hostSeq]).page(db, COLUMNS, after, perPage, toSet)
    },
    /** Every set of a host, oldest first: the order categorize() tries them in. Empty for an unknown host. */
    forHost(tenant: string, hostHash: string): PatternSet[] {
      const host = hosts.get(tenant, hostHash)
      return host ? (ofHost.all(host.seq, tenant) as Row[]).map(toSet) : []
    },
  }
}
