// The ledger's group-commit entry: several accepts and moves in one transaction, each with the
// result it would have alone, and all or nothing when one of them fails.
import { afterEach, beforeEach, describe, expect, test } from 'bun:test'
import type { Database } from 'bun:sqlite'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { openDatabase } from '../../src/store/db'
import { paymentRepository, type PaymentStatus } from '../../src/store/payments'
import { ledgerPayment } from '../helpers/payment'

let dir: string
let db: Database
let ledger: ReturnType<typeof paymentRepository>

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'trawl-ledger-'))
  db = openDatabase(dir)
  ledger = paymentRepository(db)
})
afterEach(() => {
  db.close()
  rmSync(dir, { recursive: true, force: true })
})

const payment = (key: string) => ledgerPayment(key)
const statuses = () => Object.fromEntries([...ledger.list()].map((p) => [p.key, p.status]))

describe('applyAll', () => {
  test('in order, one result per write: a replay inside the batch is false, a move of a row inserted earlier in it is true', () => {
    const results = ledger.applyAll([
      { kind: 'accept', payment: payment('a') },
      { kind: 'accept', payment: payment('b') },
      { kind: 'accept', payment: payment('a') },
      { kind: 'mark', key: 'a', from: 'accepted', to: 'served' },
      { kind: 'mark', key: 'a', from: 'accepted', to: 'handler_failed' },
      { kind: 'mark', key: 'b', from: 'accepted', to: 'settled', settle: { tx: '0xabc' } },
      { kind: 'mark', key: 'missing', from: 'accepted', to: 'served' },
    ])
    expect(results).toEqual([true, true, false, true, false, true, false])
    expect(statuses()).toEqual({ a: 'served', b: 'settled' })
    expect(ledger.get('b')!.settle_tx).toBe('0xabc')
    expect(ledger.get('a')!.payload).toEqual({ nonce: 'a' })
  })

  test('a replay of a row committed by an earlier batch is false, and changes nothing', () => {
    expect(
      ledger.applyAll([
        { kind: 'accept', payment: payment('a') },
        { kind: 'mark', key: 'a', from: 'accepted', to: 'served' },
      ]),
    ).toEqual([true, true])
    expect(ledger.applyAll([{ kind: 'accept', payment: { ...payment('a'), amount: '5' } }])).toEqual([false])
    expect(ledger.get('a')).toMatchObject({ status: 'served', amount: '1000' })
  })

  test('one failing write rolls the whole batch back', () => {
    ledger.applyAll([{ kind: 'accept', payment: payment('kept') }])
    const bad = 'nonsense' as PaymentStatus // the table's CHECK refuses it
    expect(() =>
      ledger.applyAll([
        { kind: 'accept', payment: payment('c') },
        { kind: 'mark', key: 'kept', from: 'accepted', to: 'served' },
        { kind: 'mark', key: 'c', from: 'accepted', to: bad },
      ]),
    ).toThrow()
    expect(statuses()).toEqual({ kept: 'accepted' })
  })
})
