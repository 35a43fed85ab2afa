// GET /v1/payments: the x402 ledger, read-only, newest first, paged; the same rows for every
// tenant (the ledger is the scrape surface's, which has none).
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { testApi, type TestApi } from '../helpers/api'
import { ledgerPayment } from '../helpers/payment'

let api: TestApi
const KEYS = Array.from({ length: 7 }, (_, i) => `0xkey${i}`)
beforeAll(async () => {
  api = testApi()
  for (const key of KEYS) {
    expect(await api.store.payments.accept(payment(key))).toBe(true)
    await Bun.sleep(2) // distinct created_at, so newest first is this order reversed
  }
  await api.store.payments.mark('0xkey2', 'accepted', 'settled', { tx: '0xtx2' })
  await api.store.payments.mark('0xkey5', 'accepted', 'settle_failed', { error: 'facilitator said no' })
})
afterAll(() => api.close())

const payment = (key: string) => ledgerPayment(key, { version: 2, requirements: { amount: '1000' } })

describe('GET /v1/payments', () => {
  test('every row newest first, as the ledger holds it', async () => {
    const r = await api.get('/v1/payments?per_page=100')
    expect(r.status).toBe(200)
    expect(r.body.next_page).toBeNull()
    expect(r.body.data.map((p: { key: string }) => p.key)).toEqual([...KEYS].reverse())
    expect(r.body.data.find((p: { key: string }) => p.key === '0xkey2')).toMatchObject({
      payer: '0x70997970C51812dc3A010C7d01b50e0d17dc79C8',
      amount: '1000',
      network: 'base-sepolia',
      version: 2,
      status: 'settled',
      payload: { nonce: '0xkey2' },
      requirements: { amount: '1000' },
      valid_before: '2033-05-18T03:33:20.000Z',
      resource: 'http://127.0.0.1:8081/v1/scrape',
      settle_tx: '0xtx2',
      settle_error: null,
    })
  })

  test('pages: per_page and next_page walk every row once; a status keeps its rows', async () => {
    const seen: string[] = []
    let page: string | null = null
    do {
      const r = await api.get(`/v1/payments?per_page=3${page ? `&page=${page}` : ''}`)
      expect(r.body.data.length).toBeLessThanOrEqual(3)
      seen.push(...r.body.data.map((p: { key: string }) => p.key))
      page = r.body.next_page
    } while (page)
    expect(seen).toEqual([...KEYS].reverse())
    const failed = await api.get('/v1/payments?status=settle_failed')
    expect(failed.body).toMatchObject({ data: [{ key: '0xkey5', settle_error: 'facilitator said no' }], next_page: null })
    expect((await api.get('/v1/payments?status=accepted')).body.data.map((p: { key: string }) => p.key)).toEqual(['0xkey6', '0xkey4', '0xkey3', '0xkey1', '0xkey0'])
  })

  test('not tenant-scoped: another tenant reads the same rows; the header is still required; bad queries are 422s', async () => {
    const a = await api.get('/v1/payments?per_page=100', { tenant: 'tenant-a' })
    expect((await api.get('/v1/payments?per_page=100', { tenant: 'tenant-b' })).body).toEqual(a.body)
    expect((await api.get('/v1/payments', { tenant: null })).status).toBe(400)
    expect((await api.get('/v1/payments?status=paid')).body.fields[0].field).toBe('status')
    expect((await api.get('/v1/payments?page=nope')).body.fields).toEqual([{ field: 'page', errors: ['is not a cursor this service issued'] }])
    expect((await api.get('/v1/payments?tenant=x')).body.fields).toEqual([{ field: 'tenant', errors: ['is not a known query parameter'] }])
  })

  test('a payment recorded while paging repeats no row: it comes before the first page', async () => {
    const first = await api.get('/v1/payments?per_page=2')
    expect(await api.store.payments.accept(payment('0xkey-new'))).toBe(true)
    const seen: string[] = first.body.data.map((p: { key: string }) => p.key)
    for (let page = first.body.next_page; page;) {
      const r = await api.get(`/v1/payments?per_page=2&page=${page}`)
      seen.push(...r.body.data.map((p: { key: string }) => p.key))
      page = r.body.next_page
    }
    expect(seen).toEqual([...KEYS].reverse())
    expect((await api.get('/v1/payments?per_page=1')).body.data[0].key).toBe('0xkey-new')
  })
})
