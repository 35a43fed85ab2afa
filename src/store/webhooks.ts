import type { Database } from 'bun:sqlite'
import { conflict } from '../core/errors'
import { emptyPage, INT, ListQuery, TEXT, type Page } from './list'
import {
  afterAttempt,
  DELIVERY_COLUMNS,
  patched,
  toDeliveries,
  toWebhook,
  WEBHOOK_COLUMNS,
  type AttemptResult,
  type AttemptRow,
  type Delivery,
  type DeliveryFilter,
  type DeliveryRow,
  type DueDelivery,
  type NewWebhook,
  type Webhook,
  type WebhookFilter,
  type WebhookPatch,
  type WebhookRow,
} from './webhook-model'

/**
 * Webhooks and their outbox on SQLite (decision 116). The deliveries are written by the
 * migration's triggers, in the transaction that moved the run; this repository reads them, and
 * the deliverer's side claims due ones under a lease and records each attempt.
 */
export function webhookRepository(db: Database) {
  const insert = db.query(
    `INSERT INTO webhooks (tenant, id, job_seq, job_id, url, secret, events, enabled, description, created_at, updated_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (tenant, id) DO NOTHING`,
  )
  const byId = db.query(`SELECT t.seq, ${WEBHOOK_COLUMNS} FROM webhooks t WHERE tenant = ${TEXT} AND id = ${TEXT}`)
  const write = db.query('UPDATE webhooks SET url = ?2, events = ?3, enabled = ?4, secret = ?5, description = ?6, updated_at = ?7 WHERE seq = ?1')
  // Its deliveries and their attempts go with it (ON DELETE CASCADE).
  const remove = db.query('DELETE FROM webhooks WHERE tenant = ? AND id = ?')
  const deliveryById = db.query(`SELECT ${DELIVERY_COLUMNS} FROM webhook_deliveries t WHERE t.webhook_seq = ${INT} AND t.tenant = ${TEXT} AND t.id = ${TEXT}`)
  const attemptsOf = db.query(`SELECT delivery_seq, at, duration_ms, status_code, error FROM webhook_attempts WHERE delivery_seq IN (SELECT value FROM json_each(${TEXT})) ORDER BY seq`)
  const retry = db.query("UPDATE webhook_deliveries SET status = 'pending', next_at = ?2, lease_owner = NULL, lease_until = NULL WHERE seq = ?1 AND status = 'failed'")
  const due = db.query(
    `SELECT d.seq, d.id, w.url, w.secret, d.payload, d.attempts, d.created_at FROM webhook_deliveries d JOIN webhooks w ON w.seq = d.webhook_seq
     WHERE d.status = 'pending' AND d.next_at <= ${INT} AND (d.lease_until IS NULL OR d.lease_until < ${INT}) AND w.enabled = 1
     ORDER BY d.next_at LIMIT ${INT}`,
  )
  const lease = db.query('UPDATE webhook_deliveries SET lease_owner = ?2, lease_until = ?3 WHERE seq = ?1')
  // Unless the delivery went meanwhile (its webhook deleted while it was being sent).
  const insertAttempt = db.query(
    'INSERT INTO webhook_attempts (delivery_seq, at, duration_ms, status_code, error) SELECT ?1, ?2, ?3, ?4, ?5 WHERE EXISTS (SELECT 1 FROM webhook_deliveries WHERE seq = ?1)',
  )
  const settle = db.query(
    `UPDATE webhook_deliveries SET attempts = attempts + 1, status = ?3, next_at = ?4, delivered_at = ?5, lease_owner = NULL, lease_until = NULL
     WHERE seq = ?1 AND lease_owner = ?2 AND status = 'pending'`,
  )

  const owners = db.query(`SELECT DISTINCT lease_owner FROM webhook_deliveries WHERE status = 'pending' AND lease_until >= ${INT}`)
  const release = db.query("UPDATE webhook_deliveries SET lease_owner = NULL, lease_until = NULL WHERE lease_owner = ? AND status = 'pending'")

  type Stored = WebhookRow & { seq: number }
  const getRow = (tenant: string, id: string) => byId.get(tenant, id) as Stored | null
  const withAttempts = (rows: DeliveryRow[]): Delivery[] => toDeliveries(rows, rows.length ? (attemptsOf.all(JSON.stringify(rows.map((r) => r.seq))) as AttemptRow[]) : [])

  return {
    /** A webhook of the tenant, of one job (its seq) or of all its jobs; 409 when the id is taken. */
    create(tenant: string, job: { seq: number; id: string } | null, w: NewWebhook, now: number): Webhook {
      const { changes } = insert.run(tenant, w.id, job?.seq ?? null, job?.id ?? null, w.url, w.secret, JSON.stringify(w.events), w.enabled ? 1 : 0, w.description, now, now)
      if (changes === 0) throw conflict(`webhook ${w.id} already exists`)
      return toWebhook(getRow(tenant, w.id)!)
    },
    get(tenant: string, id: string): (Webhook & { seq: number }) | null {
      const row = getRow(tenant, id)
      return row ? { ...toWebhook(row), seq: row.seq } : null
    },
    update(tenant: string, id: string, patch: WebhookPatch, now: number): Webhook | null {
      return db
        .transaction(() => {
          const row = getRow(tenant, id)
          if (!row) return null
          const w = patched(toWebhook(row), patch)
          write.run(row.seq, w.url, JSON.stringify(w.events), w.enabled ? 1 : 0, w.secret, w.description, Math.max(now, row.updated_at + 1))
          return toWebhook(getRow(tenant, id)!)
        })
        .immediate()
    },
    delete(tenant: string, id: string): boolean {
      return remove.run(tenant, id).changes > 0
    },
    /** Webhooks of this tenant; `jobSeqs` (resolved for this tenant) narrows to those jobs'. */
    list(tenant: string, f: WebhookFilter, after: number | undefined, perPage: number, jobSeqs?: number[]): Page<Webhook> {
      if (jobSeqs?.length === 0) return emptyPage()
      return new ListQuery('webhooks', tenant)
        .parents('t.job_seq', jobSeqs)
        .when(f.enabled, `t.enabled = ${INT}`, f.enabled ? 1 : 0)
        .page(db, WEBHOOK_COLUMNS, after, perPage, toWebhook)
    },
    /** Deliveries of one webhook (seq of this tenant's), newest first, with their attempts. */
    deliveries(tenant: string, webhookSeq: number, f: DeliveryFilter, after: number | undefined, perPage: number): Page<Delivery> {
      const page = new ListQuery('webhook_deliveries', tenant)
        .parents('t.webhook_seq', [webhookSeq])
        .in('t.status', f.statuses)
        .page(db, DELIVERY_COLUMNS, after, perPage, (r: DeliveryRow) => r)
      return { data: withAttempts(page.data), next: page.next }
    },
    delivery(tenant: string, webhookSeq: number, id: string): Delivery | null {
      const row = deliveryById.get(webhookSeq, tenant, id) as DeliveryRow | null
      return row ? withAttempts([row])[0]! : null
    },
    /** A failed delivery back to pending, due at `now`; `conflict` when it is not failed. */
    retry(tenant: string, webhookSeq: number, id: string, now: number): Delivery | null {
      return db
        .transaction(() => {
          const row = deliveryById.get(webhookSeq, tenant, id) as DeliveryRow | null
          if (!row) return null
          if (retry.run(row.seq, now).changes === 0) throw conflict(`delivery ${id} is ${row.status}; only a failed one is retried`)
          return withAttempts([deliveryById.get(webhookSeq, tenant, id) as DeliveryRow])[0]!
        })
        .immediate()
    },

    // ------------------------------------------------------------ the deliverer's side

    /** Due deliveries of enabled webhooks not leased to a live sender, leased to `owner` until `now + leaseMs`. */
    claim(owner: string, now: number, leaseMs: number, limit: number): DueDelivery[] {
      // The deliverer asks every second; a read first keeps an idle server from taking the write
      // lock each time, which would queue the crawl's commits behind it. The lease is taken on
      // what the locked read finds.
      if (due.all(now, now, 1).length === 0) return []
      return db
        .transaction(() => {
          const rows = due.all(now, now, limit) as DueDelivery[]
          for (const r of rows) lease.run(r.seq, owner, now + leaseMs)
          return rows
        })
        .immediate()
    },
    /** Records an attempt and moves the delivery on (afterAttempt), if `owner` still holds it. */
    record(owner: string, d: DueDelivery, r: AttemptResult, now: number): boolean {
      return db
        .transaction(() => {
          insertAttempt.run(d.seq, r.at, r.duration_ms, r.status_code, r.error)
          const next = afterAttempt(d, r, now)
          return settle.run(d.seq, owner, next.status, next.next_at, next.delivered_at).changes > 0
        })
        .immediate()
    },
    leaseOwners(now: number): string[] {
      return (owners.all(now) as { lease_owner: string }[]).map((r) => r.lease_owner)
    },
    releaseLeases(owner: string): number {
      return release.run(owner).changes
    },
  }
}
