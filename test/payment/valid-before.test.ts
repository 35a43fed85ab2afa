/**
 * A payer picks validBefore, a uint256. One far in the future is refused before it reaches the
 * ledger, and a row that holds one anyway (written by an older trawl, or under a
 * TRAWL_PAY_MAX_TIMEOUT past any date) is still listed by `trawl payments`, with every older row.
 * Paid through the scrape surface on a real socket, listed by the real CLI.
 */
import { afterAll, describe, expect, test } from 'bun:test'
import { x402ResponseSchema } from 'x402/types'
import { testScrape } from '../helpers/scrape'
import { b64, payer, testGate, trawl, unb64, v1Payload, v2Payload } from './helpers'

const UINT256_MAX = (2n ** 256n - 1n).toString()

const target = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: () => new Response('<h1>paid</h1>', { headers: { 'content-type': 'text/html' } }) })
const page = `http://127.0.0.1:${target.port}/`

/** The scrape surface as `trawl serve` builds it, paid through a gate over its own data dir, listening on loopback. */
function paidSurface(env: Record<string, string> = {}) {
  const gate = testGate(env)
  const scrape = testScrape({ TRAWL_ALLOW_PRIVATE_NETWORKS: 'true', TRAWL_SCRAPE_RATE: 'off' }, { payments: gate.gate })
  const server = scrape.app.listen({ hostname: '127.0.0.1', port: 0 }).server!
  const pay = (headers: Record<string, string>) =>
    fetch(`http://127.0.0.1:${server.port}/v1/scrape`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify({ url: page }) })
  return {
    gate,
    pay,
    async close() {
      server.stop(true)
      await scrape.close()
      gate.close()
    },
  }
}

const jsonRows = (stdout: string) =>
  stdout
    .trimEnd()
    .split('\n')
    .map((l) => JSON.parse(l))
const nowSeconds = () => Math.floor(Date.now() / 1000)

const surfaces: { close(): Promise<void> }[] = []
afterAll(async () => {
  for (const s of surfaces) await s.close()
  target.stop(true)
})
const surface = (env: Record<string, string> = {}) => {
  const s = paidSurface(env)
  surfaces.push(s)
  return s
}

describe('a far-future validBefore', () => {
  test('is refused with 402 and the valid_before reason, in v1 and v2, and the ledger stays as it was', async () => {
    const s = surface()
    const honest = await s.pay({ 'X-PAYMENT': b64(await v1Payload()) })
    expect(honest.status).toBe(200)
    const before = s.gate.rows()
    expect(before).toHaveLength(1)

    for (const validBefore of ['10000000000000', UINT256_MAX]) {
      const v1 = await s.pay({ 'X-PAYMENT': b64(await v1Payload({ authorization: { validBefore } })) })
      expect(v1.status).toBe(402)
      const body = (await v1.json()) as Record<string, unknown>
      expect(body.error).toBe('invalid_exact_evm_payload_authorization_valid_before')
      expect(body.message).toBe('the authorization is valid for longer than the challenge allows (validBefore must be at most maxTimeoutSeconds, and half of it again for clock skew, ahead)')
      expect(x402ResponseSchema.safeParse(body).success).toBe(true)

      const v2 = await s.pay({ 'PAYMENT-SIGNATURE': b64(await v2Payload({ authorization: { validBefore } })) })
      expect(v2.status).toBe(402)
      expect(unb64(v2.headers.get('payment-required')!).error).toBe('invalid_exact_evm_payload_authorization_valid_before')
      expect(((await v2.json()) as { message: string }).message).toContain('longer than the challenge allows')
    }
    expect(s.gate.rows()).toEqual(before)
  })

  test('the bound is maxTimeoutSeconds plus half of it: a client clock 149 s ahead pays, one 160 s ahead is refused', async () => {
    const s = surface()
    const ahead = (skew: number) => ({ authorization: { validBefore: String(nowSeconds() + 300 + skew) } })
    const fine = await s.pay({ 'X-PAYMENT': b64(await v1Payload(ahead(149))) })
    expect(fine.status).toBe(200)
    const late = await s.pay({ 'PAYMENT-SIGNATURE': b64(await v2Payload(ahead(160))) })
    expect(late.status).toBe(402)
    expect(unb64(late.headers.get('payment-required')!).error).toBe('invalid_exact_evm_payload_authorization_valid_before')
    expect(s.gate.rows().map((r) => r.status)).toEqual(['served'])
  })
})

describe('trawl payments lists every row, whatever its numbers', () => {
  test('a row an older trawl stored with validBefore clamped to 2^53 s: listed, and so are the rows before and after it', async () => {
    const s = surface()
    const signed = async () => b64(await v1Payload())
    expect((await s.pay({ 'X-PAYMENT': await signed() })).status).toBe(200)
    await Bun.sleep(2)
    expect((await s.pay({ 'X-PAYMENT': await signed() })).status).toBe(200)
    await Bun.sleep(2)
    expect((await s.pay({ 'X-PAYMENT': await signed() })).status).toBe(200)
    const [newest, poisoned, oldest] = s.gate.rows()
    // What an older trawl kept for validBefore = 2^256 - 1; and a created_at no date can hold.
    s.gate.db.run('UPDATE payments SET valid_before = ? WHERE key = ?', [Number.MAX_SAFE_INTEGER, poisoned!.key])
    s.gate.db.run('UPDATE payments SET created_at = ? WHERE key = ?', [9e18, newest!.key])

    const table = await trawl('payments', '--data-dir', s.gate.dir)
    expect(table.stderr).toBe('')
    expect(table.code).toBe(0)
    const lines = table.stdout.trimEnd().split('\n')
    expect(lines).toHaveLength(5)
    expect(lines[1]).toMatch(new RegExp(`^-\\s+served\\s+${payer.address}\\s+\\$0\\.001 \\(1000\\)`))
    expect(lines[2]).toContain(poisoned!.created_at!)
    expect(lines[3]).toContain(oldest!.created_at!)
    expect(lines[4]).toBe('3 payments: served 3 ($0.003)')

    for (const args of [['--json'], ['--json', '--status', 'served']]) {
      const listed = await trawl('payments', ...args, '--data-dir', s.gate.dir)
      expect(listed.stderr).toBe('')
      expect(listed.code).toBe(0)
      const rows = jsonRows(listed.stdout)
      expect(rows.map((r) => r.key)).toEqual([newest!.key, poisoned!.key, oldest!.key])
      expect(rows.map((r) => r.created_at)).toEqual([null, poisoned!.created_at, oldest!.created_at])
      // Past any date: null, and the exact value is in the authorization, for settling.
      expect(rows[1].valid_before).toBeNull()
      expect(rows[1].authorization).toEqual((poisoned!.payload.payload as { authorization: unknown }).authorization)
      expect(rows[2].valid_before).toBe(oldest!.valid_before)
      expect(rows[2].valid_before).toMatch(/^\d{4}-\d\d-\d\dT[\d:.]+Z$/)
    }
  })

  test('a TRAWL_PAY_MAX_TIMEOUT past any date: the honest client is served, and its row lists with the latest date there is', async () => {
    const s = surface({ TRAWL_PAY_MAX_TIMEOUT: '104000000d' })
    // As the x402 clients sign: now + maxTimeoutSeconds, here about year 286,700.
    const honest = () => v1Payload({ authorization: { validBefore: String(nowSeconds() + 104_000_000 * 86_400) } })
    expect((await s.pay({ 'X-PAYMENT': b64(await honest()) })).status).toBe(200)
    await Bun.sleep(2)
    const payload = await honest()
    expect((await s.pay({ 'X-PAYMENT': b64(payload) })).status).toBe(200)

    const listed = await trawl('payments', '--json', '--data-dir', s.gate.dir)
    expect(listed.stderr).toBe('')
    expect(listed.code).toBe(0)
    const rows = jsonRows(listed.stdout)
    expect(rows).toHaveLength(2)
    expect(rows[0].valid_before).toBe('+275760-09-13T00:00:00.000Z')
    expect(rows[0].authorization.validBefore).toBe(payload.payload.authorization.validBefore)
    expect(rows[1].status).toBe('served')
  })
})
