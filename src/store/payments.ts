import type { Database } from 'bun:sqlite'
import { keysetPage, type Page } from './list'
import { iso } from './time'

/**
 * Where an accepted authorization is (docs/payments.md, "The ledger"): accepted → served |
 * handler_failed; with a facilitator, accepted → settled | settle_failed.
 */
export const PAYMENT_STATUSES = ['accepted', 'served', 'handler_failed', 'settled', 'settle_failed'] as const
export type PaymentStatus = (typeof PAYMENT_STATUSES)[number]

export type NewPayment = {
  key: string
  payer: string
  amount: string
  network: string
  version: 1 | 2
  payload: object
  requirements: object
  /** Unix seconds. */
  validBefore: bigint
  resource: string
}

/** A write of the gate's group commit. */
export type LedgerWrite = { kind: 'accept'; payment: NewPayment } | { kind: 'mark'; key: string; from: PaymentStatus; to: PaymentStatus; settle?: { tx?: string; error?: string } }

/** One ledger row as the operator reads it. */
export type Payment = {
  key: string
  payer: string
  amount: string
  network: string
  version: 1 | 2
  status: PaymentStatus
  payload: Record<string, unknown>
  requirements: Record<string, unknown>
  /** Null when the stored seconds are past any date (see `instant`). */
  valid_before: string | null
  resource: string
  settle_tx: string | null
  settle_error: string | null
  /** Null only in a row whose timestamp was not written by trawl. */
  created_at: string | null
  updated_at: string | null
}

// The row, its shaping and the capped seconds are shared with the PostgreSQL ledger, which stores the same columns.
export type PaymentRow = Omit<Payment, 'payload' | 'requirements' | 'valid_before' | 'created_at' | 'updated_at'> & {
  payload: string
  requirements: string
  valid_before: number
  created_at: number
  updated_at: number
}

/**
 * The latest instant a Date (and so an ISO timestamp) can hold, 8.64e15 ms (year 275760). A
 * stored number past it, or no number at all (a row written by an older trawl, which kept
 * validBefore up to 2^53 s, or edited by hand), is shown as null: one row that cannot be shown
 * must never stop a listing of the rows an operator has to settle.
 */
const MAX_DATE_MS = 8.64e15
const instant = (ms: unknown): string | null => (typeof ms === 'number' && Math.abs(ms) <= MAX_DATE_MS ? iso(ms) : null)

export const toPayment = (r: PaymentRow): Payment => ({
  ...r,
  payload: JSON.parse(r.payload),
  requirements: JSON.parse(r.requirements),
  valid_before: instant(r.valid_before * 1000),
  created_at: instant(r.created_at),
  updated_at: instant(r.updated_at),
})

// The gate refuses a validBefore far past now + maxTimeoutSeconds, but a huge TRAWL_PAY_MAX_TIMEOUT
// could still let through a second no date can show. Past that, it is "never" for any practical
// purpose, and the exact value stays in `payload`.
const MAX_SECONDS = BigInt(MAX_DATE_MS / 1000)
export const storedSeconds = (v: bigint) => Number(v > MAX_SECONDS ? MAX_SECONDS : v)

export const PAYMENT_COLUMNS = 'key, payer, amount, network, version, status, payload, requirements, valid_before, resource, settle_tx, settle_error, created_at, updated_at'

/** The payment ledger: accepted x402 authorizations, their state and the signed payload. */
export function paymentRepository(db: Database) {
  const insert = db.query(
    `INSERT INTO payments (key, payer, amount, network, version, status, payload, requirements, valid_before, resource, created_at, updated_at)
     VALUES (?, ?, ?, ?, ?, 'accepted', ?, ?, ?, ?, ?, ?) ON CONFLICT (key) DO NOTHING`,
  )
  const move = db.query('UPDATE payments SET status = ?, settle_tx = ?, settle_error = ?, updated_at = ? WHERE key = ? AND status = ?')
  const release = db.query("DELETE FROM payments WHERE key = ? AND status = 'accepted'")
  const byKey = db.query(`SELECT ${PAYMENT_COLUMNS} FROM payments WHERE key = ?`)
  const all = db.query(`SELECT ${PAYMENT_COLUMNS} FROM payments ORDER BY seq DESC`)
  const byStatus = db.query(`SELECT ${PAYMENT_COLUMNS} FROM payments WHERE status = ? ORDER BY seq DESC`)
  const pageSql = (status: boolean) => `SELECT seq AS _seq, ${PAYMENT_COLUMNS} FROM payments WHERE ${status ? 'status = ? AND ' : ''}seq < ? ORDER BY seq DESC LIMIT ?`

  /** Records an authorization as `accepted`; false when the key was there already (a replay), whoever inserted it and however recently. */
  const accept = (p: NewPayment): boolean => {
    const now = Date.now()
    const { changes } = insert.run(p.key, p.payer, p.amount, p.network, p.version, JSON.stringify(p.payload), JSON.stringify(p.requirements), storedSeconds(p.validBefore), p.resource, now, now)
    return changes === 1
  }
  /** Moves a row on from `from`; false when it is not in that state (moved already). */
  const mark = (key: string, from: PaymentStatus, to: PaymentStatus, settle: { tx?: string; error?: string } = {}): boolean =>
    move.run(to, settle.tx ?? null, settle.error ?? null, Date.now(), key, from).changes === 1
  const applyAll = db.transaction((writes: LedgerWrite[]) => writes.map((w) => (w.kind === 'accept' ? accept(w.payment) : mark(w.key, w.from, w.to, w.settle))))

  return {
    /**
     * Accepts and marks in one transaction (the gate's group commit), in order; each result is
     * what that write alone would answer. A replay within the batch is still a replay: the
     * unique key sees the earlier insert.
     */
    applyAll: (writes: LedgerWrite[]): boolean[] => applyAll.immediate(writes),
    /** Forgets an authorization a facilitator refused before any work: it was never accepted, and the payer may fix it (fund the wallet) and send it again. */
    release(key: string): boolean {
      return release.run(key).changes === 1
    },
    get(key: string): Payment | null {
      const row = byKey.get(key) as PaymentRow | null
      return row ? toPayment(row) : null
    },
    /** Rows newest first, optionally of one status; an iterator, so a long ledger is never held whole. */
    *list(status?: PaymentStatus): Generator<Payment> {
      for (const row of (status ? byStatus.iterate(status) : all.iterate()) as IterableIterator<PaymentRow>) yield toPayment(row)
    },
    /** A page of those rows before the seq `after`. */
    page(status: PaymentStatus | undefined, after: number | undefined, perPage: number): Page<Payment> {
      const before = after ?? Number.MAX_SAFE_INTEGER
      const params = status ? [status, before, perPage + 1] : [before, perPage + 1]
      return keysetPage(db, { sql: pageSql(status !== undefined), params }, perPage, ({ _seq, ...row }: PaymentRow & { _seq: number }) => toPayment(row))
    },
  }
}
export type PaymentRepository = ReturnType<typeof paymentRepository>
