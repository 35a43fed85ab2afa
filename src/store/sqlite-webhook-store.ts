import type { SqliteRepositories } from './index'
import type { WebhookStore } from './types'

/** The SQLite engine's WebhookStore: the repository's calls, each one transaction or one statement. */
export function sqliteWebhookStore(r: SqliteRepositories): WebhookStore {
  const seqOf = (tenant: string, id: string) => r.webhooks.get(tenant, id)?.seq
  return {
    create: async (tenant, w) =>
      r.transaction(() => {
        if (w.job_id === null) return r.webhooks.create(tenant, null, w, Date.now())
        const job = r.jobs.get(tenant, w.job_id)
        return job ? r.webhooks.create(tenant, job, w, Date.now()) : null
      }),
    get: async (tenant, id) => {
      const w = r.webhooks.get(tenant, id)
      if (!w) return null
      const { seq: _, ...shown } = w
      return shown
    },
    update: async (tenant, id, patch) => r.webhooks.update(tenant, id, patch, Date.now()),
    delete: async (tenant, id) => r.webhooks.delete(tenant, id),
    list: async (tenant, f, after, perPage) => r.webhooks.list(tenant, f, after, perPage, f.job_ids && r.jobs.seqsOf(tenant, f.job_ids)),
    deliveries: async (tenant, webhookId, f, after, perPage) => {
      const seq = seqOf(tenant, webhookId)
      return seq === undefined ? null : r.webhooks.deliveries(tenant, seq, f, after, perPage)
    },
    delivery: async (tenant, webhookId, deliveryId) => {
      const seq = seqOf(tenant, webhookId)
      return seq === undefined ? null : r.webhooks.delivery(tenant, seq, deliveryId)
    },
    retry: async (tenant, webhookId, deliveryId, now) => {
      const seq = seqOf(tenant, webhookId)
      return seq === undefined ? null : r.webhooks.retry(tenant, seq, deliveryId, now)
    },
    claim: async (owner, now, leaseMs, limit) => r.webhooks.claim(owner, now, leaseMs, limit),
    record: async (owner, d, result, now) => r.webhooks.record(owner, d, result, now),
    leaseOwners: async (now) => r.webhooks.leaseOwners(now),
    releaseLeases: async (owner) => r.webhooks.releaseLeases(owner),
  }
}
