import { Type } from '@sinclair/typebox'
import { encodeCursor } from '../http/cursor'
import { route, type Route } from '../http/route'
import { DateTime, PageQuery, PER_PAGE_DEFAULT, StringEnum } from '../http/schemas'
import { PAYMENT_STATUSES } from '../store/payments'
import type { Deps } from './deps'
import { afterOf } from './paging'
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
 * process's, not a tenant's: every tenant reads the same rows. Its store answers the rows newest
 * first as an iterator, so a page skips to its position: a cursor is an offset, and a payment
 * recorded while paging shows the row before it again on the next page.
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
    handle: async ({ query }) => {
      const skip = (afterOf(query.page) ?? 1) - 1
      const perPage = query.per_page ?? PER_PAGE_DEFAULT
      const data = []
      let seen = 0
      let more = false
      for await (const payment of store.payments.list(query.status)) {
        if (seen++ < skip) continue
        if (data.length === perPage) {
          more = true
          break
        }
        data.push(payment)
      }
      return { status: 200, body: { data, next_page: more ? encodeCursor(skip + perPage + 1) : null } }
    },
  }),
]
