import { PAYMENT_COLUMNS, storedSeconds, toPayment, type NewPayment, type Payment, type PaymentRow, type PaymentStatus } from '../payments'
import type { PaymentStore } from '../types'
import { numeric, type Pg } from './pg'

/** Rows a list reads at a time: a long ledger is never held whole. */
const LIST_PAGE = 500

/**
 * The payment ledger on PostgreSQL. A replay is refused by the key's unique index (INSERT ... ON
 * CONFLICT DO NOTHING), which holds across every process sharing the database; each write is
 * one statement. Writes of one key from this process go out in the order they were made, as
 * the SQLite engine's group commit applies them: of two accepts of a key in flight together,
 * the first made is the one accepted.
 */
export function pgPaymentStore(sql: Pg): PaymentStore {
  const tails = new Map<string, Promise<unknown>>()
  const inOrder = <T>(key: string, write: () => Promise<T>): Promise<T> => {
    const before = tails.get(key)
    const result = before ? before.then(write, write) : write()
    const tail = result.catch(() => {})
    tails.set(key, tail)
    void tail.then(() => {
      if (tails.get(key) === tail) tails.delete(key)
    })
    return result
  }

  /** A page of the ledger newest first, before the seq `after`. */
  const page: PaymentStore['page'] = async (status, after, perPage) => {
    const before = after ?? Number.MAX_SAFE_INTEGER
    const rows = numeric<PaymentRow & { seq: number }>(
      status === undefined
        ? await sql`SELECT seq, ${sql.unsafe(PAYMENT_COLUMNS)} FROM payments WHERE seq < ${before} ORDER BY seq DESC LIMIT ${perPage + 1}`
        : await sql`SELECT seq, ${sql.unsafe(PAYMENT_COLUMNS)} FROM payments WHERE status = ${status} AND seq < ${before} ORDER BY seq DESC LIMIT ${perPage + 1}`,
    )
    const more = rows.length > perPage
    if (more) rows.length = perPage
    // seq is read for the keyset only: the ledger row as the API shows it has none.
    return { data: rows.map(({ seq: _, ...row }) => toPayment(row)), next: more ? rows[rows.length - 1]!.seq : null }
  }

  return {
    accept: (p: NewPayment) =>
      inOrder(p.key, async () => {
        const now = Date.now()
        const rows = await sql`INSERT INTO payments (key, payer, amount, network, version, status, payload, requirements, valid_before, resource, created_at, updated_at)
                               VALUES (${p.key}, ${p.payer}, ${p.amount}, ${p.network}, ${p.version}, 'accepted', ${JSON.stringify(p.payload)}, ${JSON.stringify(p.requirements)},
                                       ${storedSeconds(p.validBefore)}, ${p.resource}, ${now}, ${now})
                               ON CONFLICT (key) DO NOTHING RETURNING 1 AS one`
        return rows.length === 1
      }),

    mark: (key, from, to, settle = {}) =>
      inOrder(key, async () => {
        const moved = await sql`UPDATE payments SET status = ${to}, settle_tx = ${settle.tx ?? null}, settle_error = ${settle.error ?? null}, updated_at = ${Date.now()}
                                WHERE key = ${key} AND status = ${from}`
        return moved.count === 1
      }),

    release: (key) => inOrder(key, async () => (await sql`DELETE FROM payments WHERE key = ${key} AND status = 'accepted'`).count === 1),

    get: async (key) => {
      const [row] = numeric<PaymentRow>(await sql`SELECT ${sql.unsafe(PAYMENT_COLUMNS)} FROM payments WHERE key = ${key}`)
      return row ? toPayment(row) : null
    },

    /** Newest first, read a page at a time by seq (keyset), so rows added meanwhile never repeat one. */
    list: (status?: PaymentStatus): AsyncIterable<Payment> => ({
      async *[Symbol.asyncIterator]() {
        for (let after: number | null | undefined = undefined; after !== null;) {
          const p = await page(status, after, LIST_PAGE)
          yield* p.data
          after = p.next
        }
      },
    }),

    page,
  }
}
