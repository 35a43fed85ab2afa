// The payment ledger on PostgreSQL: a replay guard across processes, moves made once, and a list
// read in pages that shows every row once, newest first.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import type { SQL } from 'bun'
import { openPostgres } from '../../../src/store/postgres/open'
import { pgPaymentStore } from '../../../src/store/postgres/payments'
import { clusterPort, freshDatabase } from '../../helpers/postgres'
import { ledgerPayment } from '../../helpers/payment'

// The throwaway cluster starts before the tests, which are timed without it.
beforeAll(() => void clusterPort(), 120_000)
const opened: SQL[] = []
afterAll(async () => {
  await Promise.all(opened.map((sql) => sql.close()))
})

/** `n` pools over one new database, as `n` processes. */
async function processes(n: number): Promise<SQL[]> {
  const url = freshDatabase()
  const pools: SQL[] = []
  for (let i = 0; i < n; i++) pools.push(await openPostgres(url))
  opened.push(...pools)
  return pools
}

const payment = ledgerPayment

describe('payment ledger on PostgreSQL', () => {
  test('20 accepts of one key at once, from four processes: exactly one is accepted, the row written once', async () => {
    const pools = await processes(4)
    const ledgers = pools.map(pgPaymentStore)
    for (let round = 0; round < 5; round++) {
      const key = `replay-${round}`
      const results = await Promise.all(Array.from({ length: 20 }, (_, i) => ledgers[i % 4]!.accept(payment(key, { amount: String(i) }))))
      expect(results.filter(Boolean)).toHaveLength(1)
      const winner = results.indexOf(true)
      expect(await ledgers[0]!.get(key)).toMatchObject({ key, status: 'accepted', amount: String(winner) })
    }
    expect((await Array.fromAsync(ledgers[1]!.list())).length).toBe(5)
  })

  test('in one process, the first of writes of a key in flight together wins, as the group commit applies them', async () => {
    const [sql] = await processes(1)
    const ledger = pgPaymentStore(sql!)
    const results = await Promise.all([
      ledger.accept(payment('a', { amount: '1' })),
      ledger.accept(payment('a', { amount: '2' })),
      ledger.mark('a', 'accepted', 'served'),
      ledger.mark('a', 'accepted', 'handler_failed'),
      ledger.accept(payment('b')),
      ledger.release('b'),
      ledger.mark('missing', 'accepted', 'served'),
    ])
    expect(results).toEqual([true, false, true, false, true, true, false])
    expect(await ledger.get('a')).toMatchObject({ amount: '1', status: 'served' })
    expect(await ledger.get('b')).toBeNull()
  })

  test('two processes moving one row at once from the same state: one move is made', async () => {
    const [p1, p2] = await processes(2)
    const one = pgPaymentStore(p1!)
    const two = pgPaymentStore(p2!)
    for (let i = 0; i < 10; i++) {
      const key = `k${i}`
      await one.accept(payment(key))
      const [a, b] = await Promise.all([one.mark(key, 'accepted', 'settled', { tx: '0x1' }), two.mark(key, 'accepted', 'settle_failed', { error: 'refused' })])
      expect([a, b].filter(Boolean)).toHaveLength(1)
      expect((await one.get(key))!.status).toBe(a ? 'settled' : 'settle_failed')
    }
  })

  test('a list reads page after page: every row once, newest first, and of one status', async () => {
    const [sql] = await processes(1)
    const ledger = pgPaymentStore(sql!)
    // 1,203 rows: past two of the list's pages of 500.
    const now = Date.now()
    await sql!`INSERT INTO payments (key, payer, amount, network, version, status, payload, requirements, valid_before, resource, created_at, updated_at)
               SELECT 'p' || i, 'x', '1', 'base', 2, CASE WHEN i % 3 = 0 THEN 'settled' ELSE 'accepted' END, '{}', '{}', 2000000000, 'r', ${now}, ${now}
               FROM generate_series(1, 1203) AS i`
    const keys = (await Array.fromAsync(ledger.list())).map((p) => p.key)
    expect(keys).toEqual(Array.from({ length: 1203 }, (_, i) => `p${1203 - i}`))
    const settled = (await Array.fromAsync(ledger.list('settled'))).map((p) => p.key)
    expect(settled).toEqual(Array.from({ length: 401 }, (_, i) => `p${(401 - i) * 3}`))
    expect(await Array.fromAsync(ledger.list('served'))).toEqual([])
  })

  test('a validBefore past any date is stored capped; a stored number no date can show reads as null and stops no list', async () => {
    const [sql] = await processes(1)
    const ledger = pgPaymentStore(sql!)
    expect(await ledger.accept(payment('far', { validBefore: 2n ** 200n }))).toBe(true)
    expect((await ledger.get('far'))!.valid_before).toBe(new Date(8.64e15).toISOString())
    await ledger.accept(payment('odd'))
    await sql!`UPDATE payments SET valid_before = 9007199254740991, created_at = 9007199254740991 WHERE key = 'odd'`
    expect(await ledger.get('odd')).toMatchObject({ valid_before: null, created_at: null, payload: { nonce: 'odd' } })
    expect((await Array.fromAsync(ledger.list())).map((p) => p.key)).toEqual(['odd', 'far'])
  })
})
