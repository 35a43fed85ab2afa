import { Type } from '@sinclair/typebox'
import { route, type Route } from '../http/route'
import { DateTime, PageQuery, PER_PAGE_DEFAULT, StringEnum } from '../http/schemas'
import { PAYMENT_STATUSES } from '../store/payments'
import type { Deps } from './deps'
import { afterOf, pageBody } from './paging'
import { PageOf } from './shapes'

const Nullable = <T extends ReturnType<typeof Type.String>>(t: T) => Type.Union([t, Type.Null()])

export const PaymentShape = Type.Object({
  key: Type.String({ description: 'the authorization the replay guard keys on' }),
  payer: Type.String(),
  amount: Type.String({ description: 'USDC atomic units' }),
  network: Type.String(),
  version: Type.Integer({ description: 'x402 version, 1 or 2' }),
  status: StringEnum(PAYMENT_STATUSES),
  payload: Type.Record(Type.String(), Type.Unknown()),
  requirements: Type.Record(Type.String(), Type.Unknown()),
  valid_before: Nullable(DateTime),
  resource: Type.String(),
  settle_tx: Nullable(Type.String()),
  settle_error: Nullable(Type.String()),
  created_at: Nullable(DateTime),
  updated_at: Nullable(DateTime),
})

/**
 * The x402 ledger, read-only (docs/payments.md), as `trawl payments` prints it. The ledger is the
 * process's, not a tenant's: every tenant reads the same rows, paged by the ledger's seq as every
 * list is, so a payment recorded while paging repeats no row.
 */
export const paymentRoutes = ({ store }: Deps): Route[] => [
  route({
    method: 'GET',
    path: '/v1/payments',
    summary: 'List the payment ledger, newest first (not tenant-scoped)',
    description: 'Every tenant sees the whole ledger: payments are made to the scrape surface, which has no tenants. `status` keeps the rows in that state.',
    tag: 'payments',
    query: Type.Object({ ...PageQuery, status: Type.Optional(StringEnum(PAYMENT_STATUSES)) }, { additionalProperties: false }),
    response: { status: 200, schema: PageOf(PaymentShape) },
    handle: async ({ query }) => ({ status: 200, body: pageBody(await store.payments.page(query.status, afterOf(query.page), query.per_page ?? PER_PAGE_DEFAULT)) }),
  }),
]
