import { afterAll, beforeEach, describe, expect, test } from 'bun:test'
import { SettleResponseSchema } from 'x402/types'
import { paymentRefusals, payments } from '../../src/metrics'
import { loopbackFacilitator, PAY_TO, payer, RESOURCE, testGate, TX, unb64, v1Payload, v1Request, v2Payload, v2Request } from './helpers'

const f = loopbackFacilitator()
const t = testGate({ TRAWL_FACILITATOR_URL: f.url }, { facilitatorTimeoutMs: 500 })
const defaults = { ...f.answers }
beforeEach(() => {
  f.calls.length = 0
  Object.assign(f.answers, defaults)
})
afterAll(() => {
  f.server.stop(true)
  t.close()
})

async function admitted(request: Request) {
  const result = await t.gate.admit(request, RESOURCE)
  if (!result.ok) throw new Error(`refused: ${await result.response.text()}`)
  return result.payment
}

describe('facilitator mode', () => {
  test('verify before, settle after: row settled, the transaction in the receipt', async () => {
    const payload = await v1Payload()
    const payment = await admitted(v1Request(payload))
    expect(f.paths()).toEqual(['/verify'])
    const verifyBody = f.calls[0]!.body
    expect(verifyBody).toEqual({
      x402Version: 1,
      paymentPayload: payload,
      paymentRequirements: expect.objectContaining({ scheme: 'exact', network: 'base-sepolia', maxAmountRequired: '1000', payTo: PAY_TO, resource: RESOURCE }),
    })
    const settled = await t.gate.settle(payment, true)
    if (!('headers' in settled)) throw new Error('withheld')
    expect(f.paths()).toEqual(['/verify', '/settle'])
    expect(f.calls[1]!.body).toEqual(verifyBody)
    const receipt = unb64(settled.headers['X-PAYMENT-RESPONSE']!)
    expect(receipt).toEqual({ success: true, transaction: TX, network: 'base-sepolia', payer: payer.address })
    expect(SettleResponseSchema.safeParse(receipt).success).toBe(true)
    expect(settled.headers['Cache-Control']).toBe('private')
    expect(t.ledger.get(payment.key)).toMatchObject({ status: 'settled', settle_tx: TX, settle_error: null })
  })

  test('v2: the v2 requirements go to the facilitator, the receipt to PAYMENT-RESPONSE', async () => {
    const payload = await v2Payload()
    const payment = await admitted(v2Request(payload))
    expect(f.calls[0]!.body).toEqual({ x402Version: 2, paymentPayload: payload, paymentRequirements: expect.objectContaining({ network: 'eip155:84532', amount: '1000' }) })
    const settled = await t.gate.settle(payment, true)
    if (!('headers' in settled)) throw new Error('withheld')
    expect(unb64(settled.headers['PAYMENT-RESPONSE']!)).toMatchObject({ success: true, transaction: TX, network: 'eip155:84532' })
  })

  test('verify says invalid: 402 with its reason, the authorization released, nothing settled', async () => {
    f.answers.verify = () => Response.json({ isValid: false, invalidReason: 'insufficient_funds', payer: payer.address })
    const payload = await v1Payload()
    const result = await t.gate.admit(v1Request(payload), RESOURCE)
    if (result.ok) throw new Error('admitted')
    expect(result.response.status).toBe(402)
    expect(((await result.response.json()) as any).error).toBe('insufficient_funds')
    expect(f.paths()).toEqual(['/verify'])
    expect(t.rows().some((r) => (r.payload as any).payload.authorization.nonce === payload.payload.authorization.nonce)).toBe(false)
    // Funded now: the same authorization goes through.
    f.answers.verify = defaults.verify
    await admitted(v1Request(payload))
  })

  test('a reason that is not a reason code is not passed on', async () => {
    f.answers.verify = () => Response.json({ isValid: false, invalidReason: '<html>Oops</html>' })
    const before = paymentRefusals.labels('invalid_payment').value
    const result = await t.gate.admit(v1Request(await v1Payload()), RESOURCE)
    expect(!result.ok && ((await result.response.json()) as any).error).toBe('invalid_payment')
    // The facilitator's words never become a label value.
    expect(paymentRefusals.labels('invalid_payment').value - before).toBe(1)
  })

  test('local checks run first: a replay or a bad signature never reaches the facilitator', async () => {
    const payload = await v1Payload()
    await admitted(v1Request(payload))
    f.calls.length = 0
    expect((await t.gate.admit(v1Request(payload), RESOURCE)).ok).toBe(false)
    const tampered = await v1Payload()
    tampered.payload.authorization.value = '5000'
    expect((await t.gate.admit(v1Request(tampered), RESOURCE)).ok).toBe(false)
    expect(f.calls).toEqual([])
  })

  test('settle answers success:false: the body is withheld with a 402, row settle_failed, the failure in the receipt header', async () => {
    f.answers.settle = () => Response.json({ success: false, errorReason: 'invalid_transaction_state', transaction: '', network: 'base-sepolia', payer: payer.address })
    const payment = await admitted(v1Request(await v1Payload()))
    const before = payments.labels('settle_failed').value
    const settled = await t.gate.settle(payment, true)
    expect(payments.labels('settle_failed').value - before).toBe(1)
    if (!('response' in settled)) throw new Error('released')
    const { response } = settled
    expect(response.status).toBe(402)
    const body = (await response.json()) as any
    expect(body).toMatchObject({ x402Version: 1, error: 'invalid_transaction_state', accepts: [expect.objectContaining({ resource: RESOURCE })] })
    expect(response.headers.get('payment-required')).toBeTruthy()
    expect(unb64(response.headers.get('x-payment-response')!)).toEqual({ success: false, errorReason: 'invalid_transaction_state', transaction: '', network: 'base-sepolia', payer: payer.address })
    expect(t.ledger.get(payment.key)).toMatchObject({ status: 'settle_failed', settle_tx: null, settle_error: 'invalid_transaction_state' })
  })

  test('settle answers HTTP 500, or 200 without a transaction: settle_failed', async () => {
    f.answers.settle = () => Response.json({ error: 'boom' }, { status: 500 })
    const a = await admitted(v2Request(await v2Payload()))
    const r1 = await t.gate.settle(a, true)
    expect('response' in r1 && r1.response.status).toBe(402)
    expect('response' in r1 && unb64(r1.response.headers.get('payment-response')!)).toMatchObject({ success: false, errorReason: 'unexpected_settle_error' })
    expect(t.ledger.get(a.key)!.status).toBe('settle_failed')

    f.answers.settle = () => Response.json({ success: true })
    const b = await admitted(v1Request(await v1Payload()))
    const r2 = await t.gate.settle(b, true)
    expect('response' in r2 && ((await r2.response.json()) as any).error).toBe('unexpected_settle_error')
    expect(t.ledger.get(b.key)!.status).toBe('settle_failed')
  })

  test('a facilitator too slow to answer: settle_failed', async () => {
    f.answers.settle = async () => {
      await Bun.sleep(2000)
      return Response.json({ success: true, transaction: TX })
    }
    const payment = await admitted(v1Request(await v1Payload()))
    const started = performance.now()
    const settled = await t.gate.settle(payment, true)
    expect(performance.now() - started).toBeLessThan(1500)
    expect('response' in settled).toBe(true)
    expect(t.ledger.get(payment.key)!.status).toBe('settle_failed')
    expect(t.logs.some((l) => l.includes('facilitator settle failed') && l.includes('no answer within 500 ms'))).toBe(true)
  })

  test('a failed scrape is never settled', async () => {
    const payment = await admitted(v1Request(await v1Payload()))
    expect(await t.gate.settle(payment, false)).toEqual({ headers: {} })
    expect(f.paths()).toEqual(['/verify'])
    expect(t.ledger.get(payment.key)!.status).toBe('handler_failed')
  })

  test('describe names the facilitator, without credentials', () => {
    const c = testGate({ TRAWL_FACILITATOR_URL: 'https://key:secret@facilitator.example/x402' })
    try {
      expect(c.gate.describe()).toBe(`paid: $0.001 per request on base-sepolia to ${PAY_TO}, settled through https://facilitator.example/x402`)
    } finally {
      c.close()
    }
  })
})

describe('facilitator down', () => {
  const down = loopbackFacilitator()
  down.server.stop(true)
  const d = testGate({ TRAWL_FACILITATOR_URL: down.url }, { facilitatorTimeoutMs: 500 })
  afterAll(() => d.close())

  test('at verify: 402 unexpected_verify_error, the authorization released for a retry', async () => {
    const payload = await v1Payload()
    const result = await d.gate.admit(v1Request(payload), RESOURCE)
    if (result.ok) throw new Error('admitted')
    expect(((await result.response.json()) as any).error).toBe('unexpected_verify_error')
    expect(d.rows()).toEqual([])
    expect(d.logs.some((l) => l.includes('facilitator verify failed') && !l.includes('    at '))).toBe(true)
  })

  test('at settle (it went down after verifying): the body withheld, row settle_failed', async () => {
    const g = loopbackFacilitator()
    const gg = testGate({ TRAWL_FACILITATOR_URL: g.url }, { facilitatorTimeoutMs: 500 })
    try {
      const result = await gg.gate.admit(v1Request(await v1Payload()), RESOURCE)
      if (!result.ok) throw new Error('refused')
      g.server.stop(true)
      const settled = await gg.gate.settle(result.payment, true)
      if (!('response' in settled)) throw new Error('released')
      expect(settled.response.status).toBe(402)
      expect(((await settled.response.json()) as any).error).toBe('unexpected_settle_error')
      expect(unb64(settled.response.headers.get('x-payment-response')!)).toMatchObject({ success: false, errorReason: 'unexpected_settle_error', transaction: '' })
      expect(gg.ledger.get(result.payment.key)).toMatchObject({ status: 'settle_failed', settle_error: 'unexpected_settle_error' })
    } finally {
      gg.close()
    }
  })
})
