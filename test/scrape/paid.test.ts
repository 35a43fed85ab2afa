// The rate limit with payment on (design.md §7): a verified payer's scrapes count in that payer's
// bucket; anything unpaid or invalid (a forged payer included) counts against the client
// address; a 429 comes before the 402 and never consumes a payment.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { paymentRefusals, scrapes } from '../../src/metrics'
import { addressKey } from '../../src/scrape'
import { b64, otherPayer, payer, testGate, v1Payload } from '../payment/helpers'
import { testScrape, type TestScrape } from '../helpers/scrape'

let site: ReturnType<typeof Bun.serve>
let page: string
const gate = testGate()
let ip = '198.51.100.10'
let scrape: TestScrape

beforeAll(() => {
  site = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: () => new Response('<h1>ok</h1>', { headers: { 'content-type': 'text/html' } }) })
  page = `http://127.0.0.1:${site.port}/`
  scrape = testScrape({ TRAWL_ALLOW_PRIVATE_NETWORKS: 'true', TRAWL_SCRAPE_RATE: '1/s' }, { payments: gate.gate, clientIp: () => ip })
})
afterAll(async () => {
  await scrape.close()
  gate.close()
  site.stop(true)
})

const paid = (header: string | null) => scrape.post('/v1/scrape', { url: page }, { tenant: null, headers: header ? { 'X-PAYMENT': header } : {} })
const signed = async (account = payer) => b64(await v1Payload({ account }))
/** The process's scrape results and 402 refusals (all reasons), for comparing their moves. */
const counted = () => ({
  ok: scrapes.labels('paid', 'ok').value,
  refused: scrapes.labels('paid', 'payment_refused').value,
  limited: scrapes.labels('paid', 'rate_limited').value,
  refusals: paymentRefusals.entries().reduce((n, e) => n + e.child.value, 0),
})

describe('rate limit with payment', () => {
  test("a forged payer's requests count against the address, never the payer's bucket", async () => {
    ip = '198.51.100.11'
    // Another key's signature claiming `payer`: refused, and charged to this address.
    const forgeries = await Promise.all(
      Array.from({ length: 3 }, async () => {
        const p = await v1Payload({ account: otherPayer, authorization: { from: payer.address } })
        return b64(p)
      }),
    )
    const statuses = []
    const before = counted()
    for (const f of forgeries) statuses.push((await paid(f)).status)
    expect(statuses).toEqual([402, 402, 429])
    // The 429 was no refusal of the payment, though its check failed too.
    const after = counted()
    expect({ ok: after.ok - before.ok, refused: after.refused - before.refused, limited: after.limited - before.limited, refusals: after.refusals - before.refusals }).toEqual({
      ok: 0,
      refused: 2,
      limited: 1,
      refusals: 2,
    })
    // The real payer's bucket is untouched: two paid scrapes at once pass.
    ip = '198.51.100.12'
    expect([(await paid(await signed())).status, (await paid(await signed())).status]).toEqual([200, 200])
  })

  test("a verified payer's scrapes use the payer's bucket, whatever the address; a 429 leaves the payment unspent", async () => {
    ip = '198.51.100.13'
    const a = [await signed(otherPayer), await signed(otherPayer), await signed(otherPayer)]
    expect((await paid(a[0]!)).status).toBe(200)
    ip = '198.51.100.14'
    expect((await paid(a[1]!)).status).toBe(200)
    const limited = await paid(a[2]!)
    expect(limited.status).toBe(429)
    expect(limited.headers.get('retry-after')).toBe('1')
    const before = gate.rows().length
    await Bun.sleep(1100)
    // The payment refused with 429 was not recorded: it pays now.
    expect((await paid(a[2]!)).status).toBe(200)
    expect(gate.rows().length).toBe(before + 1)
    // The address itself still has its own bucket for unpaid requests.
    expect((await paid(null)).status).toBe(402)
  })
})

describe('addressKey', () => {
  test('IPv4 as it is, IPv4-mapped IPv6 as IPv4, IPv6 by its /64', () => {
    expect(addressKey('203.0.113.7')).toBe('203.0.113.7')
    expect(addressKey('::ffff:203.0.113.7')).toBe('203.0.113.7')
    expect(addressKey('2001:db8:1:2:3:4:5:6')).toBe('2001:db8:1:2::/64')
    expect(addressKey('2001:0DB8:0001:0002::9')).toBe('2001:db8:1:2::/64')
    expect(addressKey('2001:db8::1')).toBe('2001:db8:0:0::/64')
    expect(addressKey('::1')).toBe('0:0:0:0::/64')
  })
})
