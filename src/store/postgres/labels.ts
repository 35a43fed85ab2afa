import { ValidationError } from '../../core/errors'
import { LABEL_KIND, MAX_LABELS, type LabelKind, type Labels } from '../labels'
import type { LabelStore } from '../types'
import { first, type Pg } from './pg'

/** Keeps the `labels` index table in step with a row's labels JSON; call inside the transaction that writes the row. */
export async function indexLabels(tx: Pg, kind: LabelKind, tenant: string, ref: number, labels: Labels): Promise<void> {
  const k = LABEL_KIND[kind]
  await tx`DELETE FROM labels WHERE kind = ${k} AND ref = ${ref}`
  const rows = Object.entries(labels).map(([key, value]) => ({ kind: k, tenant, key, value, ref }))
  if (rows.length) await tx`INSERT INTO labels ${tx(rows)} ON CONFLICT DO NOTHING`
}

/** Drops the index rows of these refs (rows being deleted). */
export async function unindexLabels(tx: Pg, kind: LabelKind, refs: readonly number[]): Promise<void> {
  if (refs.length) await tx`DELETE FROM labels WHERE kind = ${LABEL_KIND[kind]} AND ref = ANY(${tx.array(refs as number[], 'int8')})`
}

/** Label edits of hosts or links: the labels now, or null when the row does not exist for this tenant. */
export function pgLabelStore(sql: Pg, kind: LabelKind, table: 'hosts' | 'links'): LabelStore {
  const change = (tenant: string, hash: string, edit: (labels: Labels) => Labels): Promise<Labels | null> =>
    sql.begin(async (tx) => {
      // FOR UPDATE: two concurrent edits of one row apply one after the other, each on the other's result.
      const row = first<{ seq: number; labels: string }>(await tx.unsafe(`SELECT seq, labels FROM ${table} WHERE tenant = $1 AND hash = $2 FOR UPDATE`, [tenant, hash]))
      if (!row) return null
      const labels = edit(JSON.parse(row.labels) as Labels)
      await tx.unsafe(`UPDATE ${table} SET labels = $1 WHERE seq = $2`, [JSON.stringify(labels), row.seq])
      await indexLabels(tx, kind, tenant, row.seq, labels)
      return labels
    })
  return {
    async get(tenant, hash) {
      const row = first<{ labels: string }>(await sql.unsafe(`SELECT labels FROM ${table} WHERE tenant = $1 AND hash = $2`, [tenant, hash]))
      return row ? (JSON.parse(row.labels) as Labels) : null
    },
    merge: (tenant, hash, add) =>
      change(tenant, hash, (labels) => {
        const merged = { ...labels, ...add }
        if (Object.keys(merged).length > MAX_LABELS) throw ValidationError.of('labels', `would leave more than ${MAX_LABELS} labels`)
        return merged
      }),
    remove: (tenant, hash, keys) => change(tenant, hash, (labels) => Object.fromEntries(Object.entries(labels).filter(([k]) => !keys.includes(k)))),
  }
}
