import type { Database } from 'bun:sqlite'
import type { DataMapDef } from '../extract/data-map'
import { conflict } from '../core/errors'
import type { hostRepository } from './hosts'
import { emptyPage, ListQuery, type Page } from './list'
import { iso } from './time'

export type DataMap = { id: string; schema_id: string; map: DataMapDef; host: { hash: string; domain: string }; created_at: string; updated_at: string }
export type DataMapFilter = {
  include_ids?: string[]
  exclude_ids?: string[]
  host_hashes?: string[]
  hosts?: string[]
  schema_ids?: string[]
  created_before?: string
  created_after?: string
}
export type NewDataMap = { id: string; schema_id: string; map: DataMapDef }
export type DataMapPatch = { schema_id?: string; map?: DataMapDef }

type Row = { seq: number; id: string; schema_id: string; map: string; host_seq: number; created_at: number; updated_at: number }
const COLUMNS = 't.id, t.schema_id, t.map, t.host_seq, t.created_at, t.updated_at'

/** Data maps: per-host extraction definitions (design.md §6; docs/extract.md), owned by one tenant. */
export function dataMapRepository(db: Database, hosts: ReturnType<typeof hostRepository>) {
  const insert = db.query('INSERT INTO data_maps (tenant, id, host_seq, schema_id, map, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (tenant, id) DO NOTHING')
  const byId = db.query(`SELECT t.seq, ${COLUMNS} FROM data_maps t WHERE t.tenant = ? AND t.id = ?`)
  const update = db.query('UPDATE data_maps SET schema_id = ?, map = ?, updated_at = ? WHERE seq = ?')
  const remove = db.query('DELETE FROM data_maps WHERE tenant = ? AND id = ?')

  const getRow = (tenant: string, id: string) => byId.get(tenant, id) as Row | null
  const toDataMap = (r: Omit<Row, 'seq'>): DataMap => ({
    id: r.id,
    schema_id: r.schema_id,
    map: JSON.parse(r.map),
    host: hosts.ref(r.host_seq),
    created_at: iso(r.created_at)!,
    updated_at: iso(r.updated_at)!,
  })

  const query = (tenant: string, f: DataMapFilter, hostSeqs: number[] | undefined) =>
    new ListQuery('data_maps', tenant)
      .in('t.id', f.include_ids, true)
      .notIn('t.id', f.exclude_ids)
      .in('t.schema_id', f.schema_ids, true)
      .parents('t.host_seq', hostSeqs)
      .range('t.created_at', f.created_before, f.created_after)

  return {
    /** Inserts a data map of a host (its seq from a tenant-checked lookup); 409 when the id exists. */
    create(tenant: string, hostSeq: number, map: NewDataMap): DataMap {
      const now = Date.now()
      const { changes } = insert.run(tenant, map.id, hostSeq, map.schema_id, JSON.stringify(map.map), now, now)
      if (changes === 0) throw conflict(`data map ${map.id} already exists`)
      return toDataMap(getRow(tenant, map.id)!)
    },
    /** A data map with its host's hash and domain (the domain is the base of `url` fields in /apply). */
    get(tenant: string, id: string): DataMap | null {
      const row = getRow(tenant, id)
      return row ? toDataMap(row) : null
    },
    /** Replaces the supplied fields and moves updated_at; null when the map does not exist. */
    update(tenant: string, id: string, patch: DataMapPatch): DataMap | null {
      return db
        .transaction(() => {
          const row = getRow(tenant, id)
          if (!row) return null
          // Strictly later, so a client can tell an update happened even within one millisecond.
          const now = Math.max(Date.now(), row.updated_at + 1)
          update.run(patch.schema_id ?? row.schema_id, patch.map ? JSON.stringify(patch.map) : row.map, now, row.seq)
          return toDataMap(getRow(tenant, id)!)
        })
        .immediate()
    },
    /** Deletes; false when it did not exist. */
    delete(tenant: string, id: string): boolean {
      return remove.run(tenant, id).changes > 0
    },
    list(tenant: string, f: DataMapFilter, after: number | undefined, perPage: number): Page<DataMap> {
      const hostSeqs = hosts.seqsMatching(tenant, f.host_hashes, f.hosts)
      if (hostSeqs?.length === 0) return emptyPage()
      return query(tenant, f, hostSeqs).page(db, COLUMNS, after, perPage, toDataMap)
    },
    /** Data maps of one host (its seq from a tenant-checked lookup). */
    listOfHost(tenant: string, hostSeq: number, f: DataMapFilter, after: number | undefined, perPage: number): Page<DataMap> {
      return query(tenant, f, [hostSeq]).page(db, COLUMNS, after, perPage, toDataMap)
    },
  }
}
