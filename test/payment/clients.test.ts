/**
 * The real x402 client libraries pay the real scrape surface (scrapeApp, listening on loopback)
 * guarded by the gate: x402-fetch 1.2.0 (v1, X-PAYMENT) and @x402/fetch 2.27.0 with @x402/evm
 * (v2, PAYMENT-SIGNATURE). Targets are a loopback fixture (private addresses allowed).
 */
import { afterAll, describe, expect, test } from 'bun:test'
import { wrapFetchWithPayment as wrapV1, decodeXPaymentResponse } from 'x402-fetch'
import { wrapFetchWithPayment as wrapV2, x402Client, decodePaymentResponseHeader } from '@x402/fetch'
import { registerExactEvmScheme } from '@x402/evm/exact/client'
import type { PaymentGate } from '../../src/payment'
import { testScrape } from '../helpers/scrape'
import { loopbackFacilitator, otherPayer, payer, testGate, TX } from './helpers'

const target = Bun.serve({
  hostname: '127.0.0.1',
  port: 0,
  fetch: (req) =>
    new URL(req.url).pathname === '/page' ? new Response('<html><body><h1>Example</h1></body></html>', { headers: { 'content-type': 'text/html' } }) : new Response('gone', { status: 410 }),
})
const page = `http://127.0.0.1:${target.port}/page`
const missing = `http://127.0.0.1:${target.port}/missing`

/** The scrape surface as `trawl serve` builds it, paid through `gate`, on a real socket. */
function paidRoute(gate: PaymentGate) {
  const scrape = testScrape({ TRAWL_ALLOW_PRIVATE_NETWORKS: 'true', TRAWL_SCRAPE_RATE: 'off' }, { payments: gate })
  const server = scrape.app.listen({ hostname: '127.0.0.1', port: 0 }).server!
  return { server: { stop: () => (server.stop(true), void scrape.close()) }, base: `http://127.0.0.1:${server.port}` }
}

const t = testGate()
const { server, base } = paidRoute(t.gate)
const f = loopbackFacilitator()
const tf = testGate({ TRAWL_FACILITATOR_URL: f.url })
const viaFacilitator = paidRoute(tf.gate)
afterAll(() => {
  target.stop(true)
  server.stop()
  viaFacilitator.server.stop()
  f.server.stop(true)
  t.close()
  tf.close()
})

describe('real clients pay', () => {
  test('x402-fetch 1.2.0: 200, X-PAYMENT-RESPONSE decodes, the ledger row is served', async () => {
    const pay = wrapV1(fetch, payer)
    const response = await pay(`${base}/v1/scrape`, { method: 'POST', body: JSON.stringify({ url: page }), headers: { 'Content-Type': 'application/json' } })
    expect(response.status).toBe(200)
    expect(await response.json()).toEqual({
      url: page,
      rendered: false,
      status: 200,
      metadata: { title: null, description: null, canonical: null, language: null, open_graph: {}, json_ld: [] },
      links: [],
      results: [{ kind: 'markdown', content: '# Example' }],
    })
    expect(response.headers.get('cache-control')).toBe('private')
    const receipt: Record<string, unknown> = decodeXPaymentResponse(response.headers.get('x-payment-response')!)
    expect(receipt).toEqual({ success: true, transaction: '', network: 'base-sepolia', payer: payer.address })
    const rows = t.rows()
    expect(rows[0]).toMatchObject({ status: 'served', version: 1, payer: payer.address, amount: '1000', resource: `${base}/v1/scrape` })
  })

  test('@x402/fetch 2.27.0 with @x402/evm: 200, PAYMENT-RESPONSE decodes', async () => {
    const client = new x402Client()
    registerExactEvmScheme(client, { signer: otherPayer })
    const pay = wrapV2(fetch, client)
    const response = await pay(`${base}/v1/scrape/${page}`, { method: 'GET' })
    expect(response.status).toBe(200)
    expect(await response.text()).toBe('# Example')
    const receipt: Record<string, unknown> = decodePaymentResponseHeader(response.headers.get('payment-response')!)
    expect(receipt).toMatchObject({ success: true, transaction: '', network: 'eip155:84532', payer: otherPayer.address })
    expect(response.headers.get('x-payment-response')).toBeNull()
    expect(t.rows()[0]).toMatchObject({ status: 'served', version: 2, payer: otherPayer.address, amount: '1000' })
  })

  test('a failing target is not charged: 500, no receipt, row handler_failed', async () => {
    const pay = wrapV1(fetch, payer)
    const response = await pay(`${base}/v1/scrape/${missing}`)
    expect(response.status).toBe(500)
    expect(await response.json()).toEqual({ error: 'http_status', message: `${missing} answered HTTP 410` })
    expect(response.headers.get('x-payment-response')).toBeNull()
    expect(t.rows()[0]).toMatchObject({ status: 'handler_failed', resource: `${base}/v1/scrape/${missing}` })
  })

  test('CORS: the preflight allows what the clients send, responses expose the payment headers', async () => {
    const pre = await fetch(`${base}/v1/scrape`, {
      method: 'OPTIONS',
      headers: { Origin: 'https://app.example', 'Access-Control-Request-Method': 'POST', 'Access-Control-Request-Headers': 'x-payment,payment-signature,access-control-expose-headers,content-type' },
    })
    expect(pre.status).toBe(204)
    const allowed = pre.headers.get('access-control-allow-headers')!.toLowerCase().split(/,\s*/)
    for (const h of ['x-payment', 'payment-signature', 'access-control-expose-headers', 'content-type', 'x-scrape-timeout-seconds']) expect(allowed).toContain(h)
    expect(pre.headers.get('access-control-allow-origin')).toBe('*')
    const challenge = await fetch(`${base}/v1/scrape/${page}`, { headers: { Origin: 'https://app.example' } })
    expect(challenge.status).toBe(402)
    const exposed = challenge.headers.get('access-control-expose-headers')!.toLowerCase().split(/,\s*/)
    for (const h of ['payment-required', 'payment-response', 'x-payment-response', 'retry-after']) expect(exposed).toContain(h)
  })
})

describe('real clients pay through a facilitator', () => {
  test('@x402/fetch: 200, the transaction hash in PAYMENT-RESPONSE, the row settled', async () => {
    f.answers.settle = () => Response.json({ success: true, transaction: TX, network: 'eip155:84532', payer: payer.address })
    const client = new x402Client()
    registerExactEvmScheme(client, { signer: payer })
    const response = await wrapV2(fetch, client)(`${viaFacilitator.base}/v1/scrape/${page}`)
    expect(response.status).toBe(200)
    expect(decodePaymentResponseHeader(response.headers.get('payment-response')!)).toMatchObject({ success: true, transaction: TX })
    expect(f.calls.map((c) => c.path)).toEqual(['/facilitator/verify', '/facilitator/settle'])
    expect(tf.rows()[0]).toMatchObject({ status: 'settled', settle_tx: TX, version: 2 })
  })

  test('x402-fetch, settlement refused: the result is withheld (402), the row settle_failed', async () => {
    f.answers.settle = () => Response.json({ success: false, errorReason: 'insufficient_funds', transaction: '', network: 'base-sepolia' })
    const response = await wrapV1(fetch, payer)(`${viaFacilitator.base}/v1/scrape/${page}`)
    expect(response.status).toBe(402)
    const body = (await response.json()) as Record<string, unknown>
    expect(body.error).toBe('insufficient_funds')
    expect(body.url).toBeUndefined()
    expect(decodeXPaymentResponse(response.headers.get('x-payment-response')!)).toMatchObject({ success: false, errorReason: 'insufficient_funds' })
    expect(tf.rows()[0]).toMatchObject({ status: 'settle_failed', settle_error: 'insufficient_funds', version: 1 })
  })
})
