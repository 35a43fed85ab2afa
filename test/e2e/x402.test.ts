// End-to-end: paying the compiled binary's scrape API with the real x402 clients (x402-fetch
// 1.2.0, @x402/fetch 2.27.0 with @x402/evm) and viem test accounts (docs/payments.md). The challenge
// against x402's own zod schemas; refused payments get 402 with the reason; 20 concurrent copies
// of one payment get one 200; a failing target is not charged (read back with `trawl payments`);
// facilitator mode against a loopback facilitator, settle failure included. Only 127.0.0.1.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { wrapFetchWithPayment as wrapV1, decodeXPaymentResponse } from 'x402-fetch'
import { wrapFetchWithPayment as wrapV2, x402Client, decodePaymentResponseHeader } from '@x402/fetch'
import { registerExactEvmScheme } from '@x402/evm/exact/client'
import { PaymentRequirementsSchema } from 'x402/types'
import { cleanup, ensureBinary, runBinary, startTrawl, type Trawl } from '../helpers/binary'
import { b64, highS, loopbackFacilitator, otherPayer, PAY_TO, OTHER_ADDRESS, payer, TX, unb64, v1Payload, v2Payload } from '../payment/helpers'

let site: ReturnType<typeof Bun.serve>
let origin: string
let trawl: Trawl
let facilitator: ReturnType<typeof loopbackFacilitator>
let settled: Trawl
const env = { TRAWL_ALLOW_PRIVATE_NETWORKS: 'true', TRAWL_SCRAPE_RENDER: 'never', TRAWL_SCRAPE_RATE: 'off', TRAWL_PAY_TO: PAY_TO, TRAWL_PRICE: '$0.001' }

beforeAll(async () => {
  await ensureBinary()
  site = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    fetch: (req) =>
      new URL(req.url).pathname === '/page' ? new Response('<html><body><h1>Paid for</h1></body></html>', { headers: { 'content-type': 'text/html' } }) : new Response('down', { status: 503 }),
  })
  origin = `http://127.0.0.1:${site.port}`
  trawl = await startTrawl({ env })
  facilitator = loopbackFacilitator()
  settled = await startTrawl({ env: { ...env, TRAWL_FACILITATOR_URL: facilitator.url } })
}, 180_000)
afterAll(async () => {
  await cleanup()
  site.stop(true)
  facilitator.server.stop(true)
})

const scrapeBody = () => ({ method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ url: `${origin}/page` }) })
const ledger = async (t: Trawl) => {
  const r = await runBinary(['payments', '--json', '--data-dir', t.dataDir])
  expect(r.code).toBe(0)
  return r.stdout.trim() === ''
    ? []
    : r.stdout
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as Record<string, any>)
}
const post = (t: Trawl, headers: Record<string, string>) => fetch(`${t.scrapeUrl}/v1/scrape`, { ...scrapeBody(), headers: { 'Content-Type': 'application/json', ...headers } })

describe('paying the binary', () => {
  test('unpaid: 402 with the v1 challenge (x402 zod schemas) and the v2 PAYMENT-REQUIRED header', async () => {
    const r = await post(trawl, {})
    expect(r.status).toBe(402)
    expect(r.headers.get('cache-control')).toBe('no-store')
    const body = (await r.json()) as { x402Version: number; accepts: unknown[]; error: string }
    expect(body.x402Version).toBe(1)
    expect(body.accepts).toHaveLength(1)
    for (const a of body.accepts) expect(PaymentRequirementsSchema.safeParse(a).success).toBe(true)
    expect(body.accepts[0]).toMatchObject({ scheme: 'exact', network: 'base-sepolia', maxAmountRequired: '1000', payTo: PAY_TO, resource: `${trawl.scrapeUrl}/v1/scrape` })
    const v2 = unb64(r.headers.get('payment-required')!)
    expect(v2).toMatchObject({ x402Version: 2, accepts: [{ scheme: 'exact', network: 'eip155:84532', amount: '1000', payTo: PAY_TO }] })
  })

  test('x402-fetch 1.2.0 pays: 200 with the scrape and an X-PAYMENT-RESPONSE receipt', async () => {
    const response = await wrapV1(fetch, payer)(`${trawl.scrapeUrl}/v1/scrape`, scrapeBody())
    expect(response.status).toBe(200)
    expect(await response.json()).toEqual({
      url: `${origin}/page`,
      rendered: false,
      status: 200,
      metadata: { title: null, description: null, canonical: null, language: null, open_graph: {}, json_ld: [] },
      links: [],
      results: [{ kind: 'markdown', content: '# Paid for' }],
    })
    expect(decodeXPaymentResponse(response.headers.get('x-payment-response')!) as Record<string, unknown>).toEqual({ success: true, transaction: '', network: 'base-sepolia', payer: payer.address })
  })

  test('@x402/fetch 2.27.0 pays the GET form: 200 markdown and a PAYMENT-RESPONSE receipt', async () => {
    const client = new x402Client()
    registerExactEvmScheme(client, { signer: otherPayer })
    const response = await wrapV2(fetch, client)(`${trawl.scrapeUrl}/v1/scrape/${origin}/page`)
    expect(response.status).toBe(200)
    expect(await response.text()).toBe('# Paid for')
    expect(decodePaymentResponseHeader(response.headers.get('payment-response')!)).toMatchObject({ success: true, network: 'eip155:84532', payer: otherPayer.address })
    const rows = await ledger(trawl)
    expect(
      rows
        .filter((r) => r.status === 'served')
        .map((r) => r.payer)
        .sort(),
    ).toEqual([payer.address, otherPayer.address].sort())
  })

  test('refused payments: 402 with the reason, nothing scraped, nothing recorded', async () => {
    const before = (await ledger(trawl)).length
    const replayed = await v1Payload()
    expect((await post(trawl, { 'X-PAYMENT': b64(replayed) })).status).toBe(200)
    const tampered = await v1Payload()
    tampered.payload.authorization.value = '1000000'
    const wrongNetwork = await v1Payload({ network: 'base', payloadNetwork: 'base-sepolia' })
    const cases: [string, Record<string, string>, string][] = [
      ['replayed', { 'X-PAYMENT': b64(replayed) }, 'duplicate_settlement'],
      ['tampered', { 'X-PAYMENT': b64(tampered) }, 'invalid_exact_evm_payload_signature'],
      ['under-priced', { 'X-PAYMENT': b64(await v1Payload({ authorization: { value: '999' } })) }, 'invalid_exact_evm_payload_authorization_value'],
      ['wrong recipient', { 'X-PAYMENT': b64(await v1Payload({ authorization: { to: OTHER_ADDRESS } })) }, 'invalid_exact_evm_payload_recipient_mismatch'],
      ['wrong network', { 'X-PAYMENT': b64(await v1Payload({ network: 'base' })) }, 'invalid_network'],
      ['signed for another chain', { 'X-PAYMENT': b64(wrongNetwork) }, 'invalid_exact_evm_payload_signature'],
      ['expired', { 'X-PAYMENT': b64(await v1Payload({ authorization: { validBefore: String(Math.floor(Date.now() / 1000) + 2) } })) }, 'invalid_exact_evm_payload_authorization_valid_before'],
      ['malformed', { 'X-PAYMENT': 'not base64 json' }, 'invalid_payload'],
      [
        'high s',
        {
          'X-PAYMENT': b64(
            await (async () => {
              const p = await v1Payload()
              p.payload.signature = highS(p.payload.signature)
              return p
            })(),
          ),
        },
        'invalid_exact_evm_payload_signature',
      ],
    ]
    for (const [what, headers, reason] of cases) {
      const r = await post(trawl, headers)
      const body = (await r.json()) as { error: string; accepts?: unknown[] }
      expect([what, r.status, body.error]).toEqual([what, 402, reason])
      expect(body.accepts).toHaveLength(1)
    }
    expect((await ledger(trawl)).length).toBe(before + 1)
  })

  test('20 concurrent copies of one payment: exactly one 200', async () => {
    const header = b64(await v2Payload({ accepted: undefined }))
    const statuses = await Promise.all(Array.from({ length: 20 }, () => post(trawl, { 'PAYMENT-SIGNATURE': header }).then((r) => r.status)))
    expect(statuses.filter((s) => s === 200)).toHaveLength(1)
    expect(statuses.filter((s) => s === 402)).toHaveLength(19)
  })

  test('a failing target is not charged: 500, no receipt, the ledger row handler_failed', async () => {
    const response = await wrapV1(fetch, payer)(`${trawl.scrapeUrl}/v1/scrape`, { ...scrapeBody(), body: JSON.stringify({ url: `${origin}/down` }) })
    expect(response.status).toBe(500)
    expect(await response.json()).toEqual({ error: 'http_status', message: `${origin}/down answered HTTP 503` })
    expect(response.headers.get('x-payment-response')).toBeNull()
    const rows = await ledger(trawl)
    expect(rows[0]).toMatchObject({ status: 'handler_failed', payer: payer.address })
    const listed = await runBinary(['payments', '--status', 'handler_failed', '--data-dir', trawl.dataDir])
    expect(listed.stdout).toContain('handler_failed')
    expect(listed.stdout).not.toContain(' served ')
  })
})

describe('with a facilitator', () => {
  test('verify, scrape, settle: 200 with the transaction hash; the row settled', async () => {
    facilitator.answers.settle = () => Response.json({ success: true, transaction: TX, network: 'base-sepolia', payer: payer.address })
    const response = await wrapV1(fetch, payer)(`${settled.scrapeUrl}/v1/scrape`, scrapeBody())
    expect(response.status).toBe(200)
    expect(decodeXPaymentResponse(response.headers.get('x-payment-response')!)).toMatchObject({ success: true, transaction: TX })
    expect(facilitator.calls.map((c) => c.path)).toEqual(['/facilitator/verify', '/facilitator/settle'])
    expect((await ledger(settled))[0]).toMatchObject({ status: 'settled', settle_tx: TX })
  })

  test('settlement refused: the result is withheld (402 with the failed receipt); the row settle_failed', async () => {
    facilitator.answers.settle = () => Response.json({ success: false, errorReason: 'insufficient_funds', transaction: '', network: 'base-sepolia', payer: payer.address })
    const client = new x402Client()
    registerExactEvmScheme(client, { signer: payer })
    const response = await wrapV2(fetch, client)(`${settled.scrapeUrl}/v1/scrape/${origin}/page`)
    expect(response.status).toBe(402)
    expect(await response.text()).not.toContain('Paid for')
    expect(decodePaymentResponseHeader(response.headers.get('payment-response')!)).toMatchObject({ success: false })
    expect((await ledger(settled))[0]).toMatchObject({ status: 'settle_failed' })
  })
})
