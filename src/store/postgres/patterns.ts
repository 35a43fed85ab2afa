import { conflict } from '../../core/errors'
import type { PatternFormat } from '../../extract/patterns'
import { emptyPage } from '../list'
import type { PatternFilter, PatternSet } from '../patterns'
import { iso } from '../time'
import type { PatternStore } from '../types'
import { HOST_REF, hostOfHash, hostSeqsMatching } from './catalogue-rows'
import { hostSeqOf } from './keys'
import { PgListQuery } from './list'
import { first, numeric, type Pg } from './pg'

type Row = { id: string; category: string; format: string; patterns: string; created_at: number; host_hash: string; host_domain: string }
const COLUMNS = `t.id, t.category, t.format, t.patterns, t.created_at, ${HOST_REF}`

const toSet = (r: Row): PatternSet => ({
  id: r.id,
  category: r.category,
  patterns: { format: r.format as PatternFormat, patterns: JSON.parse(r.patterns) },
  host: { hash: r.host_hash, domain: r.host_domain },
  created_at: iso(r.created_at)!,
})

const query = (tenant: string, f: PatternFilter, hostSeqs: number[] | undefined) =>
  new PgListQuery('pattern_sets', tenant)
    .in('t.id', f.include_ids)
    .notIn('t.id', f.exclude_ids)
    .in('t.category', f.categories)
    .in('t.format', f.formats)
    .parents('t.host_seq', hostSeqs)
    .range('t.created_at', f.created_before, f.created_after)

/** Per-host pattern sets: a category and the regexes or URL patterns that put a URL in it. */
export function pgPatternStore(sql: Pg): PatternStore {
  return {
    async create(tenant, hostHash, set) {
      const host = await hostOfHash(sql, tenant, hostHash)
      if (!host) return null
      const now = Date.now()
      // ON CONFLICT: of two creates of one id at once, the second waits for the first and inserts nothing.
      const row = first<Omit<Row, 'host_hash' | 'host_domain'>>(
        await sql`
          INSERT INTO pattern_sets (tenant, id, host_seq, category, format, patterns, created_at, updated_at)
          VALUES (${tenant}, ${set.id}, ${host.seq}, ${set.category}, ${set.patterns.format}, ${JSON.stringify(set.patterns.patterns)}, ${now}, ${now})
          ON CONFLICT (tenant, id) DO NOTHING
          RETURNING id, category, format, patterns, created_at`,
      )
      if (!row) throw conflict(`pattern set ${set.id} already exists`)
      return toSet({ ...row, host_hash: host.hash, host_domain: host.domain })
    },
    async get(tenant, id) {
      const row = first<Row>(await sql`SELECT ${sql.unsafe(COLUMNS)} FROM pattern_sets t WHERE t.tenant = ${tenant} AND t.id = ${id}`)
      return row ? toSet(row) : null
    },
    async replace(tenant, id, patterns) {
      // One conditional UPDATE, not a read then a write: a set deleted meanwhile answers null.
      const row = first<Row>(
        await sql`
          WITH t AS (
            UPDATE pattern_sets SET format = ${patterns.format}, patterns = ${JSON.stringify(patterns.patterns)}, updated_at = ${Date.now()}
            WHERE tenant = ${tenant} AND id = ${id}
            RETURNING *
          )
          SELECT ${sql.unsafe(COLUMNS)} FROM t`,
      )
      return row ? toSet(row) : null
    },
    async delete(tenant, id) {
      return (await sql`DELETE FROM pattern_sets WHERE tenant = ${tenant} AND id = ${id}`).count > 0
    },
    async list(tenant, f, after, perPage) {
      const hostSeqs = await hostSeqsMatching(sql, tenant, f.host_hashes, f.hosts)
      if (hostSeqs?.length === 0) return emptyPage()
      return query(tenant, f, hostSeqs).page(sql, COLUMNS, after, perPage, toSet)
    },
    async listOfHost(tenant, hostHash, f, after, perPage) {
      const seq = await hostSeqOf(sql, tenant, hostHash)
      return seq === null ? null : query(tenant, f, [seq]).page(sql, COLUMNS, after, perPage, toSet)
    },
    /** Every set of a host, oldest first: the order categorize() tries them in. Empty for an unknown host. */
    async forHost(tenant, hostHash) {
      const rows = numeric<Row>(
        await sql`
          SELECT t.id, t.category, t.format, t.patterns, t.created_at, h.hash AS host_hash, h.domain AS host_domain
          FROM hosts h JOIN pattern_sets t ON t.host_seq = h.seq
          WHERE h.tenant = ${tenant} AND h.hash = ${hostHash} AND t.tenant = ${tenant}
          ORDER BY t.seq`,
      )
      return rows.map(toSet)
    },
  }
}
