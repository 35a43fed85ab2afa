import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { join } from 'node:path'
import { RESOURCE, otherPayer, payer, testGate, trawl, v1Payload, v1Request, v2Payload, v2Request } from './helpers'

const t = testGate()
afterAll(() => t.close())

// Seeded through the gate, oldest first: served (v1), handler_failed (v2, another payer), accepted (v1, $0.0015).
const keys: string[] = []
beforeAll(async () => {
  const seed = async (request: Request, succeeded: boolean | null) => {
    const r = await t.gate.admit(request, RESOURCE)
    if (!r.ok) throw new Error('refused')
    keys.push(r.payment.key)
    if (succeeded !== null) await t.gate.settle(r.payment, succeeded)
    await Bun.sleep(2) // distinct created_at
  }
  await seed(v1Request(await v1Payload()), true)
  await seed(v2Request(await v2Payload({ account: otherPayer })), false)
  await seed(v1Request(await v1Payload({ authorization: { value: '1500' } })), null)
})

describe('trawl payments', () => {
  test('a table, newest first, with a summary line', async () => {
    const { stdout, stderr, code } = await trawl('payments', '--data-dir', t.dir)
    expect(stderr).toBe('')
    expect(code).toBe(0)
    const lines = stdout.trimEnd().split('\n')
    expect(lines[0]).toMatch(/^TIME\s+STATUS\s+PAYER\s+AMOUNT\s+NETWORK\s+RESOURCE$/)
    expect(lines.slice(1, 4).map((l) => l.split(/\s+/)[1])).toEqual(['accepted', 'handler_failed', 'served'])
    expect(lines[1]).toContain(`${payer.address} $0.0015 (1500)`)
    expect(lines[2]).toContain(otherPayer.address)
    expect(lines[3]).toMatch(/^\d{4}-\d\d-\d\dT[\d:.]+Z\s+served\s+0x[0-9a-fA-F]{40}\s+\$0\.001 \(1000\)\s+base-sepolia\s+http:\/\/127\.0\.0\.1:8081\/v1\/scrape$/)
    expect(lines[4]).toBe('3 payments: accepted 1 ($0.0015), served 1 ($0.001), handler_failed 1 ($0.001)')
  })

  test('--json: one object per line, with the signed authorization to settle it later', async () => {
    const { stdout, code } = await trawl('payments', '--json', '--data-dir', t.dir)
    expect(code).toBe(0)
    const rows = stdout
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l))
    expect(rows.map((r) => r.key)).toEqual([...keys].reverse())
    const served = rows[2]
    expect(served).toMatchObject({ status: 'served', payer: payer.address, amount: '1000', amount_usd: '$0.001', network: 'base-sepolia', x402_version: 1, resource: RESOURCE, settle_tx: null })
    expect(served.authorization).toMatchObject({ from: payer.address, value: '1000', nonce: expect.stringMatching(/^0x[0-9a-f]{64}$/) })
    expect(served.signature).toMatch(/^0x[0-9a-f]{130}$/)
    expect(served.payload.payload.signature).toBe(served.signature)
    expect(served.requirements).toMatchObject({ maxAmountRequired: '1000', network: 'base-sepolia' })
    expect(rows[1]).toMatchObject({ status: 'handler_failed', x402_version: 2, requirements: { network: 'eip155:84532' } })
  })

  test('--status filters', async () => {
    const { stdout, code } = await trawl('payments', '--status', 'handler_failed', '--json', '--data-dir', t.dir)
    expect(code).toBe(0)
    const rows = stdout
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l))
    expect(rows.map((r) => r.status)).toEqual(['handler_failed'])
    const none = await trawl('payments', '--status', 'settled', '--data-dir', t.dir)
    expect(none.stdout.trimEnd().split('\n').at(-1)).toBe('no payments')
  })

  test('a bad --status exits 2 with one line', async () => {
    const { stdout, stderr, code } = await trawl('payments', '--status', 'paid', '--data-dir', t.dir)
    expect(code).toBe(2)
    expect(stdout).toBe('')
    expect(stderr).toBe('trawl: --status: must be one of accepted, served, handler_failed, settled, settle_failed, got "paid"\n')
  })

  test('a data dir without a database: nothing listed, nothing created', async () => {
    const missing = join(t.dir, 'nope')
    const { stdout, code } = await trawl('payments', '--data-dir', missing)
    expect(code).toBe(0)
    expect(stdout).toBe(`no payments: ${missing} has no trawl.db\n`)
    expect(await Bun.file(join(missing, 'trawl.db')).exists()).toBe(false)
  })
})
