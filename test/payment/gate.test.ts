import { afterAll, describe, expect, test } from 'bun:test'
import { verifyTypedData } from 'viem'
import { PaymentRequirementsSchema, x402ResponseSchema } from 'x402/types'
import { PaymentRequiredV1Schema, PaymentRequiredV2Schema } from '@x402/core/schemas'
import { ConfigError, loadConfig } from '../../src/config'
import { createLogger } from '../../src/log'
import { paymentRefusals, payments } from '../../src/metrics'
import { createPaymentGate, type PaymentGate } from '../../src/payment'
import { atomicToUsd, usdToAtomic } from '../../src/payment/money'
import { createStore } from '../../src/store'
import { openDatabase } from '../../src/store/db'
import { b64, highS, NETWORKS, OTHER_ADDRESS, otherPayer, PAY_TO, payer, RESOURCE, signAuthorization, testGate, unb64, v1Payload, v1Request, v2Payload, v2Request } from './helpers'

const t = testGate()
afterAll(() => t.close())
const { gate } = t

async function refused(request: Request) {
  const before = t.rows()
  const result = await gate.admit(request, RESOURCE)
  expect(result.ok).toBe(false)
  if (result.ok) throw new Error('admitted')
  const { response } = result
  expect(response.status).toBe(402)
  expect(response.headers.get('cache-control')).toBe('no-store')
  const body = (await response.json()) as { error: string; message: string; accepts: unknown[]; [field: string]: unknown }
  expect(typeof body.message).toBe('string')
  // A refusal leaves the ledger as it was.
  expect(t.rows()).toEqual(before)
  return { body, response }
}

/** The process's payment counters (tests compare their moves): outcomes, and refusals by reason. */
const counted = () => ({
  accepted: payments.labels('accepted').value,
  served: payments.labels('served').value,
  handler_failed: payments.labels('handler_failed').value,
  payment_required: paymentRefusals.labels('payment_required').value,
  duplicate_settlement: paymentRefusals.labels('duplicate_settlement').value,
})
const movedSince = (before: ReturnType<typeof counted>) => {
  const now = counted()
  return Object.fromEntries(Object.entries(now).map(([k, v]) => [k, v - before[k as keyof typeof before]]))
}

async function expectRefusal(request: Request, reason: string) {
  const { body } = await refused(request)
  expect(body.error).toBe(reason)
  // Every reason we give in the v1 body is one of x402@1.2.0's own.
  expect(x402ResponseSchema.safeParse(body).success).toBe(true)
}

describe('the challenge', () => {
  test('an unpaid request gets 402 with the v1 body and the v2 PAYMENT-REQUIRED header', async () => {
    const before = counted()
    const { body, response } = await refused(new Request(RESOURCE))
    expect(movedSince(before)).toEqual({ accepted: 0, served: 0, handler_failed: 0, payment_required: 1, duplicate_settlement: 0 })
    expect(body).toEqual({
      x402Version: 1,
      error: 'X-PAYMENT header is required',
      message: expect.any(String),
      accepts: [
        {
          scheme: 'exact',
          network: 'base-sepolia',
          maxAmountRequired: '1000',
          resource: RESOURCE,
          description: 'Scrape one URL',
          mimeType: 'application/json',
          payTo: PAY_TO,
          maxTimeoutSeconds: 300,
          asset: NETWORKS['base-sepolia'].asset,
          extra: { name: 'USDC', version: '2' },
        },
      ],
    })
    // x402-fetch 1.2.0 parses each entry with this schema; @x402/core with the v1 envelope's.
    for (const entry of body.accepts) expect(PaymentRequirementsSchema.safeParse(entry).success).toBe(true)
    expect(PaymentRequiredV1Schema.safeParse(body).success).toBe(true)

    const v2 = unb64(response.headers.get('payment-required')!)
    expect(PaymentRequiredV2Schema.safeParse(v2).success).toBe(true)
    expect(v2).toEqual({
      x402Version: 2,
      error: 'Payment required',
      resource: { url: RESOURCE, description: 'Scrape one URL', mimeType: 'application/json' },
      accepts: [{ scheme: 'exact', network: 'eip155:84532', amount: '1000', asset: NETWORKS['base-sepolia'].asset, payTo: PAY_TO, maxTimeoutSeconds: 300, extra: { name: 'USDC', version: '2' } }],
      extensions: {},
    })
  })

  test('base mainnet: its USDC, its domain name, its ids', async () => {
    const m = testGate({ TRAWL_PAY_NETWORK: 'base', TRAWL_PRICE: '0.25', TRAWL_PAY_MAX_TIMEOUT: '2h' })
    try {
      const result = await m.gate.admit(new Request(RESOURCE), RESOURCE)
      if (result.ok) throw new Error('admitted')
      const body = (await result.response.json()) as any
      expect(body.accepts[0]).toMatchObject({ network: 'base', maxAmountRequired: '250000', asset: NETWORKS.base.asset, maxTimeoutSeconds: 7200, extra: { name: 'USD Coin', version: '2' } })
      expect(PaymentRequirementsSchema.safeParse(body.accepts[0]).success).toBe(true)
      expect(unb64(result.response.headers.get('payment-required')!).accepts[0]).toMatchObject({ network: 'eip155:8453', amount: '250000' })
      expect(m.gate.describe()).toBe(`paid: $0.25 per request on base to ${PAY_TO}, verified locally, authorizations wait in the ledger (trawl payments)`)
    } finally {
      m.close()
    }
  })

  test('prices are read exactly, in integers', () => {
    expect(usdToAtomic('0.001')).toBe('1000')
    expect(usdToAtomic('$0.001')).toBe('1000')
    expect(usdToAtomic('0.000001')).toBe('1')
    expect(usdToAtomic('.5')).toBe('500000')
    expect(usdToAtomic('12')).toBe('12000000')
    expect(usdToAtomic('0.29')).toBe('290000') // 0.29 * 1e6 is 289999.99999999994 in floats
    expect(atomicToUsd('1000')).toBe('$0.001')
    expect(atomicToUsd('12000000')).toBe('$12')
    expect(atomicToUsd('1')).toBe('$0.000001')
  })

  test('no pay-to address: no gate, the surface is free', () => {
    const config = loadConfig(['--data-dir', t.dir], {}).config
    expect(config.payTo).toBeNull()
    expect(createPaymentGate(config, t.store.payments, createLogger('error'))).toBeNull()
  })

  test('a pay-to address with a broken checksum is a config error; lower case is fine', () => {
    const bad = loadConfig(['--data-dir', t.dir], { TRAWL_PAY_TO: '0x70997970c51812dc3a010c7d01b50e0d17dc79C8' }).config
    expect(() => createPaymentGate(bad, t.store.payments, createLogger('error'))).toThrow(ConfigError)
    const lower = loadConfig(['--data-dir', t.dir], { TRAWL_PAY_TO: PAY_TO.toLowerCase() }).config
    expect(createPaymentGate(lower, t.store.payments, createLogger('error'))!.describe()).toContain(PAY_TO)
  })
})

describe('accepted payments', () => {
  test('v1 in X-PAYMENT: admitted, one accepted ledger row with the signed payload', async () => {
    const payload = await v1Payload()
    const result = await gate.admit(v1Request(payload), RESOURCE)
    if (!result.ok) throw new Error(await result.response.text())
    const { payment } = result
    expect(payment).toMatchObject({ version: 1, payer: payer.address, amount: '1000', resource: RESOURCE })
    const row = t.ledger.get(payment.key)!
    expect(row).toMatchObject({ status: 'accepted', payer: payer.address, amount: '1000', network: 'base-sepolia', version: 1, resource: RESOURCE, settle_tx: null })
    expect(row.payload).toEqual(payload)
    expect(row.requirements).toMatchObject({ scheme: 'exact', network: 'base-sepolia', maxAmountRequired: '1000', resource: RESOURCE })
    expect(row.valid_before).toBe(new Date(Number(payload.payload.authorization.validBefore) * 1000).toISOString())
    expect(payment.key).toBe(`84532:${NETWORKS['base-sepolia'].asset}:${payer.address}:${payload.payload.authorization.nonce}`)
  })

  test('v2 in PAYMENT-SIGNATURE: admitted', async () => {
    const payload = await v2Payload()
    const result = await gate.admit(v2Request(payload), RESOURCE)
    if (!result.ok) throw new Error(await result.response.text())
    expect(result.payment).toMatchObject({ version: 2, payer: payer.address, amount: '1000' })
    expect(t.ledger.get(result.payment.key)).toMatchObject({ status: 'accepted', version: 2, requirements: { network: 'eip155:84532', amount: '1000' } })
  })

  test('v1 may pay more than the price; the ledger keeps what was authorized', async () => {
    const result = await gate.admit(v1Request(await v1Payload({ authorization: { value: '1500' } })), RESOURCE)
    expect(result.ok && result.payment.amount).toBe('1500')
  })

  test('v as 0/1 (yParity) is accepted like 27/28', async () => {
    const payload = await v1Payload()
    const sig = payload.payload.signature
    payload.payload.signature = sig.slice(0, 130) + (Number.parseInt(sig.slice(130), 16) - 27).toString(16).padStart(2, '0')
    expect((await gate.admit(v1Request(payload), RESOURCE)).ok).toBe(true)
  })

  test('PAYMENT-SIGNATURE wins when both headers are sent', async () => {
    const request = new Request(RESOURCE, { headers: { 'X-PAYMENT': 'garbage', 'PAYMENT-SIGNATURE': b64(await v2Payload()) } })
    const result = await gate.admit(request, RESOURCE)
    expect(result.ok && result.payment.version).toBe(2)
  })

  test('check has no side effect and names the verified payer; a forged one is refused, not named', async () => {
    const before = t.rows().length
    const ok = await gate.check(v1Request(await v1Payload({ account: otherPayer })), RESOURCE)
    expect(ok.ok && ok.checked.payer).toBe(otherPayer.address)
    expect(t.rows().length).toBe(before)
    const forged = await v1Payload({ account: otherPayer })
    forged.payload.signature = (await v1Payload()).payload.signature
    const refused = await gate.check(v1Request(forged), RESOURCE)
    expect(refused.ok).toBe(false)
    // Recorded once; the same checked payment again is a replay.
    if (!ok.ok) throw new Error('unreachable')
    expect((await gate.record(ok.checked)).ok).toBe(true)
    const again = await gate.record(ok.checked)
    expect(again.ok).toBe(false)
    expect(t.rows().length).toBe(before + 1)
  })
})

describe('refused payments: 402, the reason in `error`, the ledger untouched', () => {
  test('replayed', async () => {
    const payload = await v1Payload()
    const before = counted()
    expect((await gate.admit(v1Request(payload), RESOURCE)).ok).toBe(true)
    await expectRefusal(v1Request(payload), 'duplicate_settlement')
    expect(movedSince(before)).toEqual({ accepted: 1, served: 0, handler_failed: 0, payment_required: 0, duplicate_settlement: 1 })
  })

  test('replayed with the nonce re-cased, or in the other version', async () => {
    const payload = await v1Payload()
    expect((await gate.admit(v1Request(payload), RESOURCE)).ok).toBe(true)
    const recased = structuredClone(payload)
    recased.payload.authorization.nonce = '0x' + payload.payload.authorization.nonce!.slice(2).toUpperCase()
    expect(recased.payload.authorization.nonce).not.toBe(payload.payload.authorization.nonce)
    await expectRefusal(v1Request(recased), 'duplicate_settlement')
    // The same authorization re-wrapped as v2 is still the same nonce of the same payer.
    const v2 = await v2Payload()
    v2.payload = { ...payload.payload, authorization: { ...payload.payload.authorization } }
    const { body, response } = await refused(v2Request(v2))
    expect(body.error).toBe('duplicate_settlement')
    expect(unb64(response.headers.get('payment-required')!).error).toBe('invalid_exact_evm_nonce_already_used')
  })

  test('tampered after signing: value raised, recipient swapped in', async () => {
    const value = await v1Payload()
    value.payload.authorization.value = '2000'
    await expectRefusal(v1Request(value), 'invalid_exact_evm_payload_signature')
    const to = await v1Payload({ authorization: { to: OTHER_ADDRESS } })
    to.payload.authorization.to = PAY_TO
    await expectRefusal(v1Request(to), 'invalid_exact_evm_payload_signature')
    const from = await v1Payload()
    from.payload.authorization.from = otherPayer.address
    await expectRefusal(v1Request(from), 'invalid_exact_evm_payload_signature')
  })

  test('under-priced (v1 below the price; v2 not exactly the price)', async () => {
    await expectRefusal(v1Request(await v1Payload({ authorization: { value: '999' } })), 'invalid_exact_evm_payload_authorization_value')
    const { response } = await refused(v2Request(await v2Payload({ authorization: { value: '1001' } })))
    expect(unb64(response.headers.get('payment-required')!).error).toBe('invalid_exact_evm_payload_authorization_value_mismatch')
    await expectRefusal(v2Request(await v2Payload({ authorization: { value: '999' } })), 'invalid_exact_evm_payload_authorization_value')
  })

  test('v2 echoing other requirements than ours', async () => {
    await expectRefusal(v2Request(await v2Payload({ accepted: { amount: '1' }, authorization: { value: '1' } })), 'invalid_payment_requirements')
    await expectRefusal(v2Request(await v2Payload({ accepted: { payTo: OTHER_ADDRESS } })), 'invalid_payment_requirements')
    await expectRefusal(v2Request(await v2Payload({ accepted: { asset: NETWORKS.base.asset } })), 'invalid_payment_requirements')
  })

  test('wrong recipient', async () => {
    await expectRefusal(v1Request(await v1Payload({ authorization: { to: OTHER_ADDRESS } })), 'invalid_exact_evm_payload_recipient_mismatch')
  })

  test('wrong network: named in the payload, or only in the signed domain', async () => {
    // Signed for base mainnet and saying so.
    await expectRefusal(v1Request(await v1Payload({ network: 'base' })), 'invalid_network')
    await expectRefusal(v2Request(await v2Payload({ network: 'base' })), 'invalid_network')
    // Signed for base mainnet (chainId 8453) while claiming base-sepolia: the domain is ours, so the signature fails.
    await expectRefusal(v1Request(await v1Payload({ domain: { chainId: 8453 } })), 'invalid_exact_evm_payload_signature')
    await expectRefusal(v1Request(await v1Payload({ network: 'base', payloadNetwork: 'base-sepolia' })), 'invalid_exact_evm_payload_signature')
    // Another token, or USDC's mainnet domain name on Sepolia.
    await expectRefusal(v1Request(await v1Payload({ domain: { verifyingContract: NETWORKS.base.asset } })), 'invalid_exact_evm_payload_signature')
    await expectRefusal(v1Request(await v1Payload({ domain: { name: 'USD Coin' } })), 'invalid_exact_evm_payload_signature')
    await expectRefusal(v1Request(await v1Payload({ payloadNetwork: 'polygon' })), 'invalid_network')
  })

  test('expired, or expiring before half of maxTimeoutSeconds (300 s here) has passed: it could not be settled', async () => {
    const now = Math.floor(Date.now() / 1000)
    await expectRefusal(v1Request(await v1Payload({ authorization: { validBefore: String(now - 1) } })), 'invalid_exact_evm_payload_authorization_valid_before')
    await expectRefusal(v1Request(await v1Payload({ authorization: { validBefore: String(now + 4) } })), 'invalid_exact_evm_payload_authorization_valid_before')
    await expectRefusal(v1Request(await v1Payload({ authorization: { validBefore: String(now + 140) } })), 'invalid_exact_evm_payload_authorization_valid_before')
    const enough = await gate.admit(v1Request(await v1Payload({ authorization: { validBefore: String(now + 160) } })), RESOURCE)
    expect(enough.ok).toBe(true)
  })

  test('not valid yet', async () => {
    const now = Math.floor(Date.now() / 1000)
    await expectRefusal(v1Request(await v1Payload({ authorization: { validAfter: String(now + 60) } })), 'invalid_exact_evm_payload_authorization_valid_after')
  })

  test('malformed: not base64, not JSON, not an object, over 16 KiB', async () => {
    await expectRefusal(v1Request('%%%not base64%%%'), 'invalid_payload')
    await expectRefusal(v1Request(b64('{"x402Version":1,')), 'invalid_payload')
    await expectRefusal(v1Request(b64('[1,2]')), 'invalid_payload')
    await expectRefusal(v1Request(Buffer.from([0xff, 0xfe, 0x7b]).toString('base64')), 'invalid_payload')
    await expectRefusal(v1Request(''), 'invalid_payload')
    const big = await v1Payload()
    ;(big as any).padding = 'x'.repeat(16 * 1024)
    await expectRefusal(v1Request(big), 'invalid_payload')
  })

  test('malformed: the version does not match the header that carried it', async () => {
    await expectRefusal(v2Request(await v1Payload()), 'invalid_x402_version')
    await expectRefusal(v1Request(await v2Payload()), 'invalid_x402_version')
    await expectRefusal(v1Request({ ...(await v1Payload()), x402Version: '1' }), 'invalid_x402_version')
  })

  test('malformed: scheme, shapes', async () => {
    await expectRefusal(v1Request({ ...(await v1Payload()), scheme: 'upto' }), 'unsupported_scheme')
    await expectRefusal(v2Request(await v2Payload({ accepted: { scheme: 'upto' } })), 'unsupported_scheme')
    const cases: [string, (a: Record<string, string>) => void][] = [
      ['short nonce', (a) => (a.nonce = '0x1234')],
      ['no nonce', (a) => delete a.nonce],
      ['numeric value', (a) => ((a as any).value = 1000)],
      ['negative value', (a) => (a.value = '-1000')],
      ['hex value', (a) => (a.value = '0x3e8')],
      ['value past uint256', (a) => (a.value = (2n ** 256n).toString())],
      ['short address', (a) => (a.from = '0x1234')],
    ]
    for (const [, spoil] of cases) {
      const p = await v1Payload()
      spoil(p.payload.authorization)
      await expectRefusal(v1Request(p), 'invalid_payload')
    }
    await expectRefusal(v1Request({ ...(await v1Payload()), payload: 'x' }), 'invalid_payload')
  })

  test('signatures: 66 bytes, high s, bad v', async () => {
    const long = await v1Payload()
    long.payload.signature += '00'
    await expectRefusal(v1Request(long), 'invalid_exact_evm_payload_signature')
    const malleated = await v1Payload()
    malleated.payload.signature = highS(malleated.payload.signature)
    await expectRefusal(v1Request(malleated), 'invalid_exact_evm_payload_signature')
    const badV = await v1Payload()
    badV.payload.signature = badV.payload.signature.slice(0, 130) + '1d'
    await expectRefusal(v1Request(badV), 'invalid_exact_evm_payload_signature')
  })

  test('the high-s twin does verify in viem, which is why low s is checked on its own', async () => {
    const { signature, authorization } = await signAuthorization()
    const net = NETWORKS['base-sepolia']
    const ok = await verifyTypedData({
      address: payer.address,
      domain: { name: net.name, version: net.version, chainId: net.chainId, verifyingContract: net.asset },
      types: {
        TransferWithAuthorization: [
          { name: 'from', type: 'address' },
          { name: 'to', type: 'address' },
          { name: 'value', type: 'uint256' },
          { name: 'validAfter', type: 'uint256' },
          { name: 'validBefore', type: 'uint256' },
          { name: 'nonce', type: 'bytes32' },
        ],
      },
      primaryType: 'TransferWithAuthorization',
      message: { ...(authorization as any), value: BigInt(authorization.value!), validAfter: BigInt(authorization.validAfter!), validBefore: BigInt(authorization.validBefore!) },
      signature: highS(signature) as `0x${string}`,
    })
    expect(ok).toBe(true)
  })

  test('a refused payment can still be paid with a fresh authorization', async () => {
    await expectRefusal(v1Request(await v1Payload({ authorization: { value: '1' } })), 'invalid_exact_evm_payload_authorization_value')
    expect((await gate.admit(v1Request(await v1Payload()), RESOURCE)).ok).toBe(true)
  })
})

describe('replay under concurrency', () => {
  test('20 concurrent copies of one payment: exactly one admitted, one ledger row', async () => {
    const payload = await v1Payload()
    const results = await Promise.all(Array.from({ length: 20 }, () => gate.admit(v1Request(payload), RESOURCE)))
    expect(results.filter((r) => r.ok).length).toBe(1)
    for (const r of results) if (!r.ok) expect(((await r.response.json()) as any).error).toBe('duplicate_settlement')
    expect(t.rows().filter((row) => row.payload.payload && (row.payload as any).payload.authorization.nonce === payload.payload.authorization.nonce).length).toBe(1)
  })

  test('16 different payments at once: each admitted, each its own row, each served', async () => {
    const payloads = await Promise.all(Array.from({ length: 16 }, () => v1Payload()))
    const before = counted()
    const admitted = await Promise.all(payloads.map((p) => gate.admit(v1Request(p), RESOURCE)))
    expect(admitted.map((r) => r.ok)).toEqual(payloads.map(() => true))
    const keys = admitted.map((r) => (r.ok ? r.payment.key : ''))
    expect(new Set(keys).size).toBe(16)
    for (const key of keys) expect(t.ledger.get(key)!.status).toBe('accepted')
    await Promise.all(admitted.map((r, i) => (r.ok ? gate.settle(r.payment, i % 2 === 0) : null)))
    expect(keys.map((key) => t.ledger.get(key)!.status)).toEqual(keys.map((_, i) => (i % 2 === 0 ? 'served' : 'handler_failed')))
    expect(movedSince(before)).toEqual({ accepted: 16, served: 8, handler_failed: 8, payment_required: 0, duplicate_settlement: 0 })
  })

  test('a ledger write that fails fails only its own request, not the others committed with it', async () => {
    t.db.exec(`CREATE TEMP TRIGGER refuse_other BEFORE INSERT ON payments WHEN NEW.payer = '${otherPayer.address}' BEGIN SELECT RAISE(ABORT, 'refused by the test'); END`)
    try {
      const payloads = [await v1Payload(), await v1Payload({ account: otherPayer }), await v1Payload()]
      const results = await Promise.allSettled(payloads.map((p) => gate.admit(v1Request(p), RESOURCE)))
      expect(results.map((r) => (r.status === 'fulfilled' ? r.value.ok : String(r.reason)))).toEqual([true, expect.stringContaining('refused by the test'), true])
      const nonces = new Set(t.rows().map((row) => (row.payload as any).payload.authorization.nonce))
      expect(payloads.map((p) => nonces.has(p.payload.authorization.nonce))).toEqual([true, false, true])
    } finally {
      t.db.exec('DROP TRIGGER temp.refuse_other')
    }
  })

  test('a status move that fails is logged and the row stays accepted; the scrape is still answered', async () => {
    const admitted = await gate.admit(v1Request(await v1Payload()), RESOURCE)
    if (!admitted.ok) throw new Error('refused')
    t.db.exec(`CREATE TEMP TRIGGER refuse_served BEFORE UPDATE ON payments WHEN NEW.status = 'served' BEGIN SELECT RAISE(ABORT, 'refused by the test'); END`)
    try {
      const settled = await gate.settle(admitted.payment, true)
      expect('headers' in settled && Object.keys(settled.headers).sort()).toEqual(['Cache-Control', 'X-PAYMENT-RESPONSE'])
      expect(t.ledger.get(admitted.payment.key)!.status).toBe('accepted')
      expect(t.logs.some((l) => l.includes('payment ledger update failed') && l.includes('refused by the test'))).toBe(true)
    } finally {
      t.db.exec('DROP TRIGGER temp.refuse_served')
    }
  })

  test('two gates on one data dir (two processes) share the replay guard', async () => {
    const db2 = openDatabase(t.dir)
    const gate2 = createPaymentGate(t.config, createStore(db2).payments, createLogger('error')) as PaymentGate
    const payload = await v2Payload()
    const results = await Promise.all([gate.admit(v2Request(payload), RESOURCE), gate2.admit(v2Request(payload), RESOURCE)])
    expect(results.filter((r) => r.ok).length).toBe(1)
    db2.close()
  })
})

describe('after the scrape (local mode)', () => {
  test('succeeded: row served, receipt in X-PAYMENT-RESPONSE for v1, Cache-Control private', async () => {
    const result = await gate.admit(v1Request(await v1Payload()), RESOURCE)
    if (!result.ok) throw new Error('refused')
    const settled = await gate.settle(result.payment, true)
    if (!('headers' in settled)) throw new Error('withheld')
    expect(Object.keys(settled.headers).sort()).toEqual(['Cache-Control', 'X-PAYMENT-RESPONSE'])
    expect(settled.headers['Cache-Control']).toBe('private')
    expect(unb64(settled.headers['X-PAYMENT-RESPONSE']!)).toEqual({ success: true, transaction: '', network: 'base-sepolia', payer: payer.address })
    expect(t.ledger.get(result.payment.key)!.status).toBe('served')
  })

  test('succeeded, v2: receipt in PAYMENT-RESPONSE with the CAIP-2 network', async () => {
    const result = await gate.admit(v2Request(await v2Payload()), RESOURCE)
    if (!result.ok) throw new Error('refused')
    const settled = await gate.settle(result.payment, true)
    if (!('headers' in settled)) throw new Error('withheld')
    expect(unb64(settled.headers['PAYMENT-RESPONSE']!)).toEqual({ success: true, transaction: '', network: 'eip155:84532', payer: payer.address })
    expect(settled.headers['X-PAYMENT-RESPONSE']).toBeUndefined()
  })

  test('failed scrape: row handler_failed, no receipt, and the authorization stays spent', async () => {
    const payload = await v1Payload()
    const result = await gate.admit(v1Request(payload), RESOURCE)
    if (!result.ok) throw new Error('refused')
    expect(await gate.settle(result.payment, false)).toEqual({ headers: {} })
    expect(t.ledger.get(result.payment.key)!.status).toBe('handler_failed')
    await expectRefusal(v1Request(payload), 'duplicate_settlement')
  })

  test('settling twice moves the row once', async () => {
    const result = await gate.admit(v1Request(await v1Payload()), RESOURCE)
    if (!result.ok) throw new Error('refused')
    await gate.settle(result.payment, false)
    await gate.settle(result.payment, true)
    expect(t.ledger.get(result.payment.key)!.status).toBe('handler_failed')
  })
})

describe('the clock', () => {
  test('validBefore and validAfter are judged by the injected clock', async () => {
    const now = Math.floor(Date.now() / 1000)
    let clock = now * 1000
    const c = testGate({}, { now: () => clock })
    try {
      const p1 = await v1Payload({ authorization: { validAfter: String(now + 100), validBefore: String(now + 400) } })
      await expect(c.gate.admit(v1Request(p1), RESOURCE).then((r) => r.ok)).resolves.toBe(false)
      clock = (now + 100) * 1000
      await expect(c.gate.admit(v1Request(p1), RESOURCE).then((r) => r.ok)).resolves.toBe(true)
      const p2 = await v1Payload({ authorization: { validBefore: String(now + 300) } })
      clock = (now + 295) * 1000
      await expect(c.gate.admit(v1Request(p2), RESOURCE).then((r) => r.ok)).resolves.toBe(false)
    } finally {
      c.close()
    }
  })
})
