import { conflict } from '../../core/errors'
import type { DataMap, DataMapFilter } from '../data-maps'
import { emptyPage } from '../list'
import { iso } from '../time'
import type { DataMapStore } from '../types'
import { HOST_REF, hostOfHash, hostSeqsMatching } from './catalogue-rows'
import { hostSeqOf } from './keys'
import { PgListQuery } from './list'
import { first, type Pg } from './pg'

type Row = { id: string; schema_id: string; map: string; created_at: number; updated_at: number; host_hash: string; host_domain: string }
const COLUMNS = `t.id, t.schema_id, t.map, t.created_at, t.updated_at, ${HOST_REF}`

const toDataMap = (r: Row): DataMap => ({
  id: r.id,
  schema_id: r.schema_id,
  map: JSON.parse(r.map),
  host: { hash: r.host_hash, domain: r.host_domain },
  created_at: iso(r.created_at)!,
  updated_at: iso(r.updated_at)!,
})

const query = (tenant: string, f: DataMapFilter, hostSeqs: number[] | undefined) =>
  new PgListQuery('data_maps', tenant)
    .in('t.id', f.include_ids)
    .notIn('t.id', f.exclude_ids)
    .in('t.schema_id', f.schema_ids)
    .parents('t.host_seq', hostSeqs)
    .range('t.created_at', f.created_before, f.created_after)

/** Data maps: per-host extraction definitions (design.md §6; docs/extract.md), owned by one tenant. */
export function pgDataMapStore(sql: Pg): DataMapStore {
  return {
    async create(tenant, hostHash, map) {
      const host = await hostOfHash(sql, tenant, hostHash)
      if (!host) return null
      const now = Date.now()
      // ON CONFLICT: of two creates of one id at once, the second waits for the first and inserts nothing.
      const row = first<Omit<Row, 'host_hash' | 'host_domain'>>(
        await sql`
          INSERT INTO data_maps (tenant, id, host_seq, schema_id, map, created_at, updated_at)
          VALUES (${tenant}, ${map.id}, ${host.seq}, ${map.schema_id}, ${JSON.stringify(map.map)}, ${now}, ${now})
          ON CONFLICT (tenant, id) DO NOTHING
          RETURNING id, schema_id, map, created_at, updated_at`,
      )
      if (!row) throw conflict(`data map ${map.id} already exists`)
      return toDataMap({ ...row, host_hash: host.hash, host_domain: host.domain })
    },
    /** A data map with its host's hash and domain (the domain is the base of `url` fields in /apply). */
    async get(tenant, id) {
      const row = first<Row>(await sql`SELECT ${sql.unsafe(COLUMNS)} FROM data_maps t WHERE t.tenant = ${tenant} AND t.id = ${id}`)
      return row ? toDataMap(row) : null
    },
    async update(tenant, id, patch) {
      // One UPDATE computing from the row as it is: two updates at once take its lock in turn,
      // and the second reads the first's updated_at, so each moves it strictly forward (a client
      // can tell an update happened even within one millisecond).
      const row = first<Row>(
        await sql`
          WITH t AS (
            UPDATE data_maps
            SET schema_id = COALESCE(${patch.schema_id ?? null}::text, schema_id),
                map = COALESCE(${patch.map ? JSON.stringify(patch.map) : null}::text, map),
                updated_at = GREATEST(${Date.now()}::bigint, updated_at + 1)
            WHERE tenant = ${tenant} AND id = ${id}
            RETURNING *
          )
          SELECT ${sql.unsafe(COLUMNS)} FROM t`,
      )
      return row ? toDataMap(row) : null
    },
    async delete(tenant, id) {
      return (await sql`DELETE FROM data_maps WHERE tenant = ${tenant} AND id = ${id}`).count > 0
    },
    async list(tenant, f, after, perPage) {
      const hostSeqs = await hostSeqsMatching(sql, tenant, f.host_hashes, f.hosts)
      if (hostSeqs?.length === 0) return emptyPage()
      return query(tenant, f, hostSeqs).page(sql, COLUMNS, after, perPage, toDataMap)
    },
    async listOfHost(tenant, hostHash, f, after, perPage) {
      const seq = await hostSeqOf(sql, tenant, hostHash)
      return seq === null ? null : query(tenant, f, [seq]).page(sql, COLUMNS, after, perPage, toDataMap)
    },
  }
}
