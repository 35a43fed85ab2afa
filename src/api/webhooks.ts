import { Type } from '@sinclair/typebox'
import { webhookUrlError } from '../fetch/webhook'
import { notFound, type FieldErrors } from '../http/errors'
import { route, type Route } from '../http/route'
import { DateTime, PageQuery, PER_PAGE_DEFAULT, QueryArray, StringEnum, Uuid } from '../http/schemas'
import { DELIVERY_STATUSES, WEBHOOK_EVENTS, type WebhookEvent, type WebhookPatch } from '../store/webhook-model'
import { generateSecret, secretError } from '../webhooks/signature'
import type { Deps } from './deps'
import { afterOf, pageBody } from './paging'
import { PageOf } from './shapes'

const closed = { additionalProperties: false } as const
const Url = Type.String({ minLength: 1, maxLength: 2048, description: 'http or https; a literal private address only with TRAWL_ALLOW_PRIVATE_NETWORKS' })
const Events = Type.Array(StringEnum(WEBHOOK_EVENTS), { minItems: 1, uniqueItems: true, description: 'the events sent to it (docs/webhooks.md)' })
const Secret = Type.String({ maxLength: 200, description: 'whsec_ and the standard base64 of a 24 to 64-byte key; generated when omitted' })
const Description = Type.Union([Type.String({ maxLength: 1000 }), Type.Null()])

export const WebhookShape = Type.Object({
  id: Uuid,
  job_id: Type.Union([Uuid, Type.Null()], { description: 'null: every job of the tenant' }),
  url: Type.String(),
  events: Type.Array(StringEnum(WEBHOOK_EVENTS)),
  enabled: Type.Boolean(),
  description: Description,
  secret: { ...Type.String(), description: 'the signing secret (Standard Webhooks)' },
  created_at: DateTime,
  updated_at: DateTime,
})
const AttemptShape = Type.Object({
  at: DateTime,
  duration_ms: Type.Integer(),
  status_code: Type.Union([Type.Integer(), Type.Null()], { description: 'null when no answer came' }),
  error: Type.Union([Type.String(), Type.Null()], { description: 'why the attempt failed; null when delivered' }),
})
export const DeliveryShape = Type.Object({
  id: { ...Type.String(), description: 'the webhook-id header, the same on every attempt' },
  event: StringEnum(WEBHOOK_EVENTS),
  status: StringEnum(DELIVERY_STATUSES),
  attempts: Type.Array(AttemptShape),
  next_attempt_at: Type.Union([DateTime, Type.Null()]),
  created_at: DateTime,
  delivered_at: Type.Union([DateTime, Type.Null()]),
  payload: Type.Object({ type: StringEnum(WEBHOOK_EVENTS), timestamp: DateTime, data: Type.Record(Type.String(), Type.Unknown()) }, { description: 'the request body, as sent' }),
})

const WebhookParams = Type.Object({ webhook_id: Uuid })
const DeliveryParams = Type.Object({ webhook_id: Uuid, delivery_id: Type.String({ pattern: '^msg_[A-Za-z0-9]{1,64}$', patternHint: 'a delivery id (msg_…)' }) })

/** What a schema cannot check: the URL's scheme and literal address, the secret's encoding. */
const refineWith = (allowPrivate: boolean) => (body: unknown, errors: FieldErrors) => {
  const b = body as { url?: unknown; secret?: unknown }
  if (typeof b.url === 'string' && b.url.length <= 2048) {
    const error = webhookUrlError(b.url, allowPrivate)
    if (error) errors.add('url', error)
  }
  if (typeof b.secret === 'string') {
    const error = secretError(b.secret)
    if (error) errors.add('secret', error)
  }
}

/** Webhooks (docs/webhooks.md): signed calls when a run moves or a trigger fires, and their deliveries. */
export const webhookRoutes = ({ store, config, engine }: Deps): Route[] => {
  const refine = refineWith(config.allowPrivateNetworks)
  return [
    route({
      method: 'GET',
      path: '/v1/webhooks',
      summary: 'List webhooks, newest first',
      tag: 'webhooks',
      query: Type.Object({ ...PageQuery, job_ids: Type.Optional(QueryArray(Uuid)), enabled: Type.Optional(Type.Boolean()) }, closed),
      response: { status: 200, schema: PageOf(WebhookShape) },
      handle: async ({ tenant, query }) => ({ status: 200, body: pageBody(await store.webhooks.list(tenant, query, afterOf(query.page), query.per_page ?? PER_PAGE_DEFAULT)) }),
    }),
    route({
      method: 'POST',
      path: '/v1/webhooks',
      summary: 'Create a webhook for one job or every job of the tenant',
      description:
        'trawl POSTs each event to `url`, signed as the Standard Webhooks specification says (webhook-id, webhook-timestamp, webhook-signature). A delivery is written in the transaction of the move it reports and retried with backoff for a day.',
      tag: 'webhooks',
      body: Type.Object(
        {
          url: Url,
          events: Events,
          job_id: Type.Optional(Type.Union([Uuid, Type.Null()], { description: "absent or null: every one of the tenant's jobs" })),
          secret: Type.Optional(Secret),
          enabled: Type.Optional(Type.Boolean({ default: true })),
          description: Type.Optional(Description),
          id: Type.Optional(Uuid),
        },
        closed,
      ),
      refine,
      response: { status: 201, schema: WebhookShape },
      handle: async ({ tenant, body }) => {
        const webhook = await store.webhooks.create(tenant, {
          id: body.id ?? crypto.randomUUID(),
          job_id: body.job_id ?? null,
          url: body.url,
          events: body.events as WebhookEvent[],
          secret: body.secret ?? generateSecret(),
          enabled: body.enabled ?? true,
          description: body.description ?? null,
        })
        if (!webhook) throw notFound('job')
        return { status: 201, body: webhook }
      },
    }),
    route({
      method: 'GET',
      path: '/v1/webhooks/:webhook_id',
      summary: 'Get a webhook',
      tag: 'webhooks',
      params: WebhookParams,
      response: { status: 200, schema: WebhookShape },
      handle: async ({ tenant, params }) => {
        const webhook = await store.webhooks.get(tenant, params.webhook_id)
        if (!webhook) throw notFound('webhook')
        return { status: 200, body: webhook }
      },
    }),
    route({
      method: 'PATCH',
      path: '/v1/webhooks/:webhook_id',
      summary: 'Change a webhook: the fields given',
      description: 'Deliveries not yet sent go to the new URL, signed with the new secret. A disabled webhook gets no new deliveries, and those it has wait until it is enabled again.',
      tag: 'webhooks',
      params: WebhookParams,
      body: Type.Object(
        { url: Type.Optional(Url), events: Type.Optional(Events), enabled: Type.Optional(Type.Boolean()), secret: Type.Optional(Secret), description: Type.Optional(Description) },
        closed,
      ),
      refine,
      response: { status: 200, schema: WebhookShape },
      handle: async ({ tenant, params, body }) => {
        const webhook = await store.webhooks.update(tenant, params.webhook_id, body as WebhookPatch)
        if (!webhook) throw notFound('webhook')
        if (body.enabled) engine?.notify()
        return { status: 200, body: webhook }
      },
    }),
    route({
      method: 'DELETE',
      path: '/v1/webhooks/:webhook_id',
      summary: 'Delete a webhook with its deliveries',
      tag: 'webhooks',
      params: WebhookParams,
      response: { status: 204, description: 'deleted' },
      handle: async ({ tenant, params }) => {
        if (!(await store.webhooks.delete(tenant, params.webhook_id))) throw notFound('webhook')
        return { status: 204 }
      },
    }),
    route({
      method: 'GET',
      path: '/v1/webhooks/:webhook_id/deliveries',
      summary: 'List the deliveries of a webhook, newest first, with their attempts',
      tag: 'webhooks',
      params: WebhookParams,
      query: Type.Object({ ...PageQuery, statuses: Type.Optional(QueryArray(StringEnum(DELIVERY_STATUSES))) }, closed),
      response: { status: 200, schema: PageOf(DeliveryShape) },
      handle: async ({ tenant, params, query }) => {
        const page = await store.webhooks.deliveries(tenant, params.webhook_id, query, afterOf(query.page), query.per_page ?? PER_PAGE_DEFAULT)
        if (!page) throw notFound('webhook')
        return { status: 200, body: pageBody(page) }
      },
    }),
    route({
      method: 'GET',
      path: '/v1/webhooks/:webhook_id/deliveries/:delivery_id',
      summary: 'Get a delivery with its attempts',
      tag: 'webhooks',
      params: DeliveryParams,
      response: { status: 200, schema: DeliveryShape },
      handle: async ({ tenant, params }) => {
        const delivery = await store.webhooks.delivery(tenant, params.webhook_id, params.delivery_id)
        if (!delivery) throw notFound('delivery')
        return { status: 200, body: delivery }
      },
    }),
    route({
      method: 'POST',
      path: '/v1/webhooks/:webhook_id/deliveries/:delivery_id/retry',
      summary: 'Send a failed delivery again, now',
      description: 'The delivery is pending again and attempted at once; if that attempt fails too, it is failed again (its day of retries is over). 409 when it is not failed.',
      tag: 'webhooks',
      params: DeliveryParams,
      body: Type.Object({}, closed),
      bodyOptional: true,
      response: { status: 200, schema: DeliveryShape },
      handle: async ({ tenant, params }) => {
        const delivery = await store.webhooks.retry(tenant, params.webhook_id, params.delivery_id, Date.now())
        if (!delivery) throw notFound('delivery')
        engine?.notify()
        return { status: 200, body: delivery }
      },
    }),
  ]
}
