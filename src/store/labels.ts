import type { Database } from 'bun:sqlite'
import { ValidationError } from '../core/errors'

export type Labels = Record<string, string>

/** Most labels one host or link may carry. */
export const MAX_LABELS = 64

/** Labels JSON of a row; most rows have none, and '{}' needs no parser. */
export const parseLabels = (json: string): Labels => (json === '{}' ? {} : (JSON.parse(json) as Labels))
export const LABEL_KIND = { host: 1, link: 2, job: 3, run: 4 } as const
export type LabelKind = keyof typeof LABEL_KIND

/**
 * Keeps the `labels` index table in step with a row's labels JSON. Call inside the transaction
 * that writes the row.
 */
export function indexLabels(db: Database, kind: LabelKind, tenant: string, ref: number, labels: Labels) {
  const k = LABEL_KIND[kind]
  db.query('DELETE FROM labels WHERE kind = ? AND ref = ?').run(k, ref)
  const insert = db.query('INSERT OR IGNORE INTO labels (kind, tenant, key, value, ref) VALUES (?, ?, ?, ?, ?)')
  for (const [key, value] of Object.entries(labels)) insert.run(k, tenant, key, value, ref)
}

/** Drops the index rows of refs that are being deleted (a subquery over their seqs). */
export function unindexLabels(db: Database, kind: LabelKind, refsSql: string, ...params: (string | number)[]) {
  db.query(`DELETE FROM labels WHERE kind = ? AND ref IN (${refsSql})`).run(LABEL_KIND[kind], ...params)
}

/**
 * Label operations of the resources whose labels can be edited (hosts, links). They answer
 * the labels now, or null when the row does not exist for this tenant.
 */
export function labelRepository(db: Database, kind: LabelKind, table: 'hosts' | 'links') {
  const read = db.query(`SELECT seq, labels FROM ${table} WHERE tenant = ? AND hash = ?`)
  const write = db.query(`UPDATE ${table} SET labels = ? WHERE seq = ?`)
  const change = (tenant: string, hash: string, edit: (labels: Labels) => Labels): Labels | null =>
    db
      .transaction(() => {
        const row = read.get(tenant, hash) as { seq: number; labels: string } | null
        if (!row) return null
        const labels = edit(JSON.parse(row.labels) as Labels)
        write.run(JSON.stringify(labels), row.seq)
        indexLabels(db, kind, tenant, row.seq, labels)
        return labels
      })
      .immediate()
  return {
    get(tenant: string, hash: string): Labels | null {
      const row = read.get(tenant, hash) as { labels: string } | null
      return row ? (JSON.parse(row.labels) as Labels) : null
    },
    /** Merges `add` in (its keys win); a 422 on `labels` when that would exceed `max` labels. */
    merge: (tenant: string, hash: string, add: Labels, max = MAX_LABELS) =>
      change(tenant, hash, (labels) => {
        const merged = { ...labels, ...add }
        // Checked inside the transaction, so two concurrent merges cannot pass it together.
        if (Object.keys(merged).length > max) throw ValidationError.of('labels', `would leave more than ${max} labels`)
        return merged
      }),
    remove: (tenant: string, hash: string, keys: string[]) => change(tenant, hash, (labels) => Object.fromEntries(Object.entries(labels).filter(([k]) => !keys.includes(k)))),
  }
}
