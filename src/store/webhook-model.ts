import { iso } from './time'

/** What a webhook can be sent (docs/webhooks.md); the migrations' triggers write them. */
export const WEBHOOK_EVENTS = ['run.started', 'run.paused', 'run.resumed', 'run.finished', 'trigger.fired'] as const
export const DELIVERY_STATUSES = ['pending', 'delivered', 'failed'] as const
export type WebhookEvent = (typeof WEBHOOK_EVENTS)[number]
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number]

export type Webhook = {
  id: string
  job_id: string | null
  url: string
  events: WebhookEvent[]
  enabled: boolean
  description: string | null
  secret: string
  created_at: string
  updated_at: string
}
export type NewWebhook = Pick<Webhook, 'id' | 'job_id' | 'url' | 'events' | 'enabled' | 'description' | 'secret'>
export type WebhookPatch = Partial<Pick<Webhook, 'url' | 'events' | 'enabled' | 'secret' | 'description'>>
export type WebhookFilter = { job_ids?: string[]; enabled?: boolean }

export type Attempt = { at: string; duration_ms: number; status_code: number | null; error: string | null }
export type Delivery = {
  id: string
  event: WebhookEvent
  status: DeliveryStatus
  attempts: Attempt[]
  next_attempt_at: string | null
  created_at: string
  delivered_at: string | null
  payload: unknown
}
export type DeliveryFilter = { statuses?: DeliveryStatus[] }

/** A delivery claimed for sending: its stored bytes and where and how to sign them. */
export type DueDelivery = { seq: number; id: string; url: string; secret: string; payload: string; attempts: number; created_at: number }
/** What one attempt got: a 2xx (`delivered`), or a status or error text. */
export type AttemptResult = { at: number; duration_ms: number; status_code: number | null; error: string | null; delivered: boolean }

/** The first retry waits this long, each next one twice as long, up to BACKOFF_MAX_MS. */
export const BACKOFF_FIRST_MS = 1000
export const BACKOFF_MAX_MS = 3_600_000
/** A delivery is attempted for this long after it was written, then `failed`. */
export const GIVE_UP_MS = 86_400_000

/**
 * Where a delivery stands after an attempt that ended at `now`: delivered; failed, once the day
 * it is tried for is over; or pending, the next attempt after the backoff (never later than the
 * day's end, so the last attempt is made then).
 */
export function afterAttempt(d: Pick<DueDelivery, 'attempts' | 'created_at'>, r: AttemptResult, now: number): { status: DeliveryStatus; next_at: number | null; delivered_at: number | null } {
  if (r.delivered) return { status: 'delivered', next_at: null, delivered_at: now }
  const end = d.created_at + GIVE_UP_MS
  if (now >= end) return { status: 'failed', next_at: null, delivered_at: null }
  const delay = Math.min(BACKOFF_FIRST_MS * 2 ** Math.min(d.attempts, 30), BACKOFF_MAX_MS)
  return { status: 'pending', next_at: Math.min(now + delay, end), delivered_at: null }
}

/** A webhook with a patch's fields that are given (an absent or undefined one stays). */
export const patched = (w: Webhook, patch: WebhookPatch): Webhook => ({ ...w, ...Object.fromEntries(Object.entries(patch).filter(([, v]) => v !== undefined)) })

// Rows and their shaping, shared by both engines (the same columns).
export type WebhookRow = {
  id: string
  job_id: string | null
  url: string
  events: string
  enabled: number
  description: string | null
  secret: string
  created_at: number
  updated_at: number
}
export const WEBHOOK_COLUMNS = 't.id, t.job_id, t.url, t.events, t.enabled, t.description, t.secret, t.created_at, t.updated_at'
export const toWebhook = (r: WebhookRow): Webhook => ({
  id: r.id,
  job_id: r.job_id,
  url: r.url,
  events: JSON.parse(r.events),
  enabled: r.enabled === 1,
  description: r.description,
  secret: r.secret,
  created_at: iso(r.created_at)!,
  updated_at: iso(r.updated_at)!,
})

export type DeliveryRow = {
  seq: number
  id: string
  event: WebhookEvent
  status: DeliveryStatus
  payload: string
  next_at: number | null
  created_at: number
  delivered_at: number | null
}
export const DELIVERY_COLUMNS = 't.seq, t.id, t.event, t.status, t.payload, t.next_at, t.created_at, t.delivered_at'
export type AttemptRow = { delivery_seq: number; at: number; duration_ms: number; status_code: number | null; error: string | null }

/** Deliveries with their attempts (rows of the deliveries given, oldest first). */
export function toDeliveries(rows: DeliveryRow[], attempts: AttemptRow[]): Delivery[] {
  const of = new Map<number, Attempt[]>()
  for (const a of attempts) {
    const list = of.get(a.delivery_seq) ?? []
    list.push({ at: iso(a.at)!, duration_ms: a.duration_ms, status_code: a.status_code, error: a.error })
    of.set(a.delivery_seq, list)
  }
  return rows.map((r) => ({
    id: r.id,
    event: r.event,
    status: r.status,
    attempts: of.get(r.seq) ?? [],
    next_attempt_at: r.status === 'pending' ? iso(r.next_at) : null,
    created_at: iso(r.created_at)!,
    delivered_at: iso(r.delivered_at),
    payload: JSON.parse(r.payload),
  }))
}
