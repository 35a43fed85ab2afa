import { conflict } from '../../core/errors'
import { emptyPage } from '../list'
import type { WebhookStore } from '../types'
import {
  afterAttempt,
  DELIVERY_COLUMNS,
  patched,
  toDeliveries,
  toWebhook,
  WEBHOOK_COLUMNS,
  type AttemptRow,
  type Delivery,
  type DeliveryRow,
  type DueDelivery,
  type Webhook,
  type WebhookRow,
} from '../webhook-model'
import { PgListQuery } from './list'
import { first, numeric, type Pg } from './pg'
import { jobSeqsOf } from './runs'

/**
 * Webhooks and their outbox on PostgreSQL (decision 116). Deliveries are written by the
 * migration's triggers in the transaction that moved the run, whichever process moved it; every
 * process's deliverer claims due ones with FOR UPDATE SKIP LOCKED under a lease, so two
 * processes never send the same one.
 */
export function pgWebhookStore(sql: Pg): WebhookStore {
  const rowOf = async (sql: Pg, tenant: string, id: string) =>
    first<WebhookRow & { seq: number }>(await sql`SELECT t.seq, ${sql.unsafe(WEBHOOK_COLUMNS)} FROM webhooks t WHERE t.tenant = ${tenant} AND t.id = ${id}`)
  const seqOf = async (tenant: string, id: string) => first<{ seq: number }>(await sql`SELECT seq FROM webhooks WHERE tenant = ${tenant} AND id = ${id}`)?.seq
  const deliveryRow = async (sql: Pg, webhookSeq: number, tenant: string, id: string) =>
    first<DeliveryRow>(await sql`SELECT ${sql.unsafe(DELIVERY_COLUMNS)} FROM webhook_deliveries t WHERE t.webhook_seq = ${webhookSeq} AND t.tenant = ${tenant} AND t.id = ${id}`)
  const withAttempts = async (sql: Pg, rows: DeliveryRow[]): Promise<Delivery[]> => {
    if (!rows.length) return []
    const seqs = rows.map((r) => r.seq)
    const attempts = numeric<AttemptRow>(
      await sql`SELECT delivery_seq, at, duration_ms, status_code, error FROM webhook_attempts WHERE delivery_seq = ANY(${sql.array(seqs, 'int8')}::bigint[]) ORDER BY seq`,
    )
    return toDeliveries(rows, attempts)
  }

  return {
    create: (tenant, w) =>
      sql.begin(async (tx) => {
        let job: { seq: number; id: string } | null = null
        if (w.job_id !== null) {
          // FOR KEY SHARE: the job cannot be deleted before the webhook is in.
          job = first<{ seq: number; id: string }>(await tx`SELECT seq, id FROM jobs WHERE tenant = ${tenant} AND id = ${w.job_id} FOR KEY SHARE`)
          if (!job) return null
        }
        const now = Date.now()
        const inserted = first<WebhookRow>(
          await tx`INSERT INTO webhooks AS t (tenant, id, job_seq, job_id, url, secret, events, enabled, description, created_at, updated_at)
                   VALUES (${tenant}, ${w.id}, ${job?.seq ?? null}, ${job?.id ?? null}, ${w.url}, ${w.secret}, ${JSON.stringify(w.events)}, ${w.enabled ? 1 : 0}, ${w.description}, ${now}, ${now})
                   ON CONFLICT (tenant, id) DO NOTHING RETURNING ${tx.unsafe(WEBHOOK_COLUMNS)}`,
        )
        if (!inserted) throw conflict(`webhook ${w.id} already exists`)
        return toWebhook(inserted)
      }),

    get: async (tenant, id) => {
      const row = await rowOf(sql, tenant, id)
      return row ? toWebhook(row) : null
    },

    update: (tenant, id, patch) =>
      sql.begin(async (tx) => {
        const row = first<WebhookRow & { seq: number }>(await tx`SELECT t.seq, ${tx.unsafe(WEBHOOK_COLUMNS)} FROM webhooks t WHERE t.tenant = ${tenant} AND t.id = ${id} FOR NO KEY UPDATE`)
        if (!row) return null
        const w = patched(toWebhook(row), patch)
        const updated = first<WebhookRow>(
          await tx`UPDATE webhooks AS t SET url = ${w.url}, events = ${JSON.stringify(w.events)}, enabled = ${w.enabled ? 1 : 0}, secret = ${w.secret},
                   description = ${w.description}, updated_at = ${Math.max(Date.now(), row.updated_at + 1)} WHERE t.seq = ${row.seq} RETURNING ${tx.unsafe(WEBHOOK_COLUMNS)}`,
        )
        return toWebhook(updated!)
      }),

    // Deliveries and their attempts go with it (ON DELETE CASCADE).
    delete: async (tenant, id) => (await sql`DELETE FROM webhooks WHERE tenant = ${tenant} AND id = ${id}`).count > 0,

    list: async (tenant, f, after, perPage) => {
      const jobSeqs = f.job_ids && (await jobSeqsOf(sql, tenant, f.job_ids))
      if (jobSeqs?.length === 0) return emptyPage<Webhook>()
      return new PgListQuery('webhooks', tenant)
        .parents('t.job_seq', jobSeqs)
        .when(f.enabled, 't.enabled = ?::int', f.enabled ? 1 : 0)
        .page(sql, WEBHOOK_COLUMNS, after, perPage, toWebhook)
    },

    deliveries: async (tenant, webhookId, f, after, perPage) => {
      const seq = await seqOf(tenant, webhookId)
      if (seq === undefined) return null
      const page = await new PgListQuery('webhook_deliveries', tenant)
        .parents('t.webhook_seq', [seq])
        .in('t.status', f.statuses)
        .page(sql, DELIVERY_COLUMNS, after, perPage, (r: DeliveryRow) => r)
      return { data: await withAttempts(sql, page.data), next: page.next }
    },

    delivery: async (tenant, webhookId, deliveryId) => {
      const seq = await seqOf(tenant, webhookId)
      if (seq === undefined) return null
      const row = await deliveryRow(sql, seq, tenant, deliveryId)
      return row ? (await withAttempts(sql, [row]))[0]! : null
    },

    retry: async (tenant, webhookId, deliveryId, now) => {
      const seq = await seqOf(tenant, webhookId)
      if (seq === undefined) return null
      return sql.begin(async (tx) => {
        const row = await deliveryRow(tx, seq, tenant, deliveryId)
        if (!row) return null
        const moved = await tx`UPDATE webhook_deliveries SET status = 'pending', next_at = ${now}, lease_owner = NULL, lease_until = NULL WHERE seq = ${row.seq} AND status = 'failed'`
        if (moved.count === 0) throw conflict(`delivery ${deliveryId} is ${row.status}; only a failed one is retried`)
        return (await withAttempts(tx, [(await deliveryRow(tx, seq, tenant, deliveryId))!]))[0]!
      })
    },

    // SKIP LOCKED: a row another claimer is leasing right now is passed over, not waited for, and
    // the lease it writes keeps it from every claimer after that commit.
    claim: async (owner, now, leaseMs, limit) =>
      numeric<DueDelivery>(
        await sql`UPDATE webhook_deliveries AS d SET lease_owner = ${owner}, lease_until = ${now + leaseMs}
                  FROM (SELECT c.seq FROM webhook_deliveries c JOIN webhooks cw ON cw.seq = c.webhook_seq
                        WHERE c.status = 'pending' AND c.next_at <= ${now} AND (c.lease_until IS NULL OR c.lease_until < ${now}) AND cw.enabled = 1
                        ORDER BY c.next_at LIMIT ${limit} FOR UPDATE OF c SKIP LOCKED) due, webhooks w
                  WHERE d.seq = due.seq AND w.seq = d.webhook_seq
                  RETURNING d.seq, d.id, w.url, w.secret, d.payload, d.attempts, d.created_at`,
      ),

    record: (owner, d, r, now) =>
      sql.begin(async (tx) => {
        // Unless the delivery went meanwhile (its webhook deleted while it was being sent).
        await tx`INSERT INTO webhook_attempts (delivery_seq, at, duration_ms, status_code, error)
                 SELECT ${d.seq}, ${r.at}, ${r.duration_ms}, ${r.status_code}, ${r.error} WHERE EXISTS (SELECT 1 FROM webhook_deliveries WHERE seq = ${d.seq})`
        const next = afterAttempt(d, r, now)
        const settled = await tx`UPDATE webhook_deliveries SET attempts = attempts + 1, status = ${next.status}, next_at = ${next.next_at}, delivered_at = ${next.delivered_at},
                                 lease_owner = NULL, lease_until = NULL WHERE seq = ${d.seq} AND lease_owner = ${owner} AND status = 'pending'`
        return settled.count > 0
      }),

    leaseOwners: async (now) =>
      ((await sql`SELECT DISTINCT lease_owner FROM webhook_deliveries WHERE status = 'pending' AND lease_until >= ${now}`) as { lease_owner: string }[]).map((r) => r.lease_owner),

    releaseLeases: async (owner) => (await sql`UPDATE webhook_deliveries SET lease_owner = NULL, lease_until = NULL WHERE lease_owner = ${owner} AND status = 'pending'`).count,
  }
}
