/**
 * Payment test kit: a gate over a fresh temp data dir, and real EIP-3009 authorizations signed
 * with viem by the well-known anvil test keys, shaped as x402 v1 (X-PAYMENT) and v2
 * (PAYMENT-SIGNATURE) payloads, with every knob a rejection test needs to turn.
 */
import type { Database } from 'bun:sqlite'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { TRANSFER_WITH_AUTHORIZATION } from '../../src/payment/signature'
import { privateKeyToAccount } from 'viem/accounts'
import { loadConfig, type Config } from '../../src/config'
import { createLogger } from '../../src/log'
import { createPaymentGate, type PaymentGate, type PaymentGateOptions } from '../../src/payment'
import { createStore } from '../../src/store'
import { openDatabase } from '../../src/store/db'
import { paymentRepository } from '../../src/store/payments'

const ROOT = join(import.meta.dir, '..', '..')

/** `trawl ARGS…` run from source in the repository, with no TRAWL_* setting inherited. */
export async function trawl(...args: string[]) {
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('TRAWL_')))
  const proc = Bun.spawn([process.execPath, 'src/main.ts', ...args], { cwd: ROOT, env, stdout: 'pipe', stderr: 'pipe' })
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited])
  return { stdout, stderr, code }
}

// anvil's accounts 1, 2 and 3 (public test keys; never funded anywhere that matters).
export const PAY_TO = '0x70997970C51812dc3A010C7d01b50e0d17dc79C8'
export const payer = privateKeyToAccount('0x5de4111afa1a4b94908f83103eb1f1706367c2e68ca870fc3fb9a804cdab365a')
export const otherPayer = privateKeyToAccount('0x7c852118294e51e653712a81e05800f419141751be58f605c371e15141b007a6')
export const OTHER_ADDRESS = '0x90F79bf6EB2c4f870365E785982E1f101E93b906'

export const NETWORKS = {
  'base-sepolia': { caip: 'eip155:84532', chainId: 84532, asset: '0x036CbD53842c5426634e7929541eC2318f3dCF7e', name: 'USDC', version: '2' },
  base: { caip: 'eip155:8453', chainId: 8453, asset: '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913', name: 'USD Coin', version: '2' },
} as const

export const RESOURCE = 'http://127.0.0.1:8081/v1/scrape'

/** A gate, its ledger and its log lines over a fresh data dir. */
export function testGate(env: Record<string, string> = {}, opts: PaymentGateOptions = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'trawl-pay-'))
  const config: Config = loadConfig(['--data-dir', dir], { TRAWL_PAY_TO: PAY_TO, ...env }).config
  const db: Database = openDatabase(dir)
  const logs: string[] = []
  const store = createStore(db)
  const gate = createPaymentGate(
    config,
    store.payments,
    createLogger('debug', (l) => logs.push(l)),
    opts,
  ) as PaymentGate
  const ledger = paymentRepository(db)
  return {
    gate,
    ledger,
    store,
    db,
    dir,
    config,
    logs,
    rows: () => [...ledger.list()],
    close() {
      db.close()
      rmSync(dir, { recursive: true, force: true })
    },
  }
}

export type Authorization = { from: `0x${string}`; to: `0x${string}`; value: string; validAfter: string; validBefore: string; nonce: `0x${string}` }

export type SignOptions = {
  account?: typeof payer
  /** Network whose domain signs (chainId, asset, name). */
  network?: keyof typeof NETWORKS
  /** Domain overrides, to sign for another token or chain than the payload claims. */
  domain?: Partial<{ name: string; version: string; chainId: number; verifyingContract: `0x${string}` }>
  authorization?: Partial<Authorization>
  /** seconds */
  now?: number
}

export const randomNonce = (): `0x${string}` => `0x${Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString('hex')}`

/** A signed authorization: what a client puts in `payload`. */
export async function signAuthorization(o: SignOptions = {}) {
  const account = o.account ?? payer
  const net = NETWORKS[o.network ?? 'base-sepolia']
  const now = o.now ?? Math.floor(Date.now() / 1000)
  const authorization: Authorization = {
    from: account.address,
    to: PAY_TO,
    value: '1000',
    validAfter: String(now - 600),
    validBefore: String(now + 300),
    nonce: randomNonce(),
    ...o.authorization,
  }
  const signature = await account.signTypedData({
    domain: { name: net.name, version: net.version, chainId: net.chainId, verifyingContract: net.asset, ...o.domain },
    types: TRANSFER_WITH_AUTHORIZATION,
    primaryType: 'TransferWithAuthorization',
    message: {
      ...authorization,
      value: BigInt(authorization.value),
      validAfter: BigInt(authorization.validAfter),
      validBefore: BigInt(authorization.validBefore),
    },
  })
  return { signature: signature as string, authorization: authorization as Record<string, string> }
}

/** A v1 payment payload (X-PAYMENT). */
export async function v1Payload(o: SignOptions & { payloadNetwork?: string } = {}) {
  return { x402Version: 1, scheme: 'exact', network: o.payloadNetwork ?? o.network ?? 'base-sepolia', payload: await signAuthorization(o) }
}

/** A v2 payment payload (PAYMENT-SIGNATURE), echoing the requirements a v2 client would have chosen. */
export async function v2Payload(o: SignOptions & { accepted?: Record<string, unknown> } = {}) {
  const net = NETWORKS[o.network ?? 'base-sepolia']
  return {
    x402Version: 2,
    payload: await signAuthorization({ ...o, now: o.now ?? Math.floor(Date.now() / 1000), authorization: { validAfter: '0', ...o.authorization } }),
    resource: { url: RESOURCE, description: 'Scrape one URL', mimeType: 'application/json' },
    accepted: {
      scheme: 'exact',
      network: net.caip,
      amount: '1000',
      asset: net.asset,
      payTo: PAY_TO,
      maxTimeoutSeconds: 300,
      extra: { name: net.name, version: net.version },
      ...o.accepted,
    },
  }
}

export const b64 = (value: unknown) => Buffer.from(typeof value === 'string' ? value : JSON.stringify(value)).toString('base64')
export const unb64 = (text: string) => JSON.parse(Buffer.from(text, 'base64').toString('utf8'))

/** A request carrying a payment header. */
export const paid = (header: 'X-PAYMENT' | 'PAYMENT-SIGNATURE', value: unknown) => new Request(RESOURCE, { method: 'POST', headers: { [header]: typeof value === 'string' ? value : b64(value) } })
export const v1Request = (payload: unknown) => paid('X-PAYMENT', payload)
export const v2Request = (payload: unknown) => paid('PAYMENT-SIGNATURE', payload)

/** secp256k1's group order, to forge the high-s twin of a signature. */
export const SECP256K1_N = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n

/** The malleated twin of a 65-byte signature: s' = n − s, v flipped. Same signer, high s. */
export function highS(signature: string): string {
  const r = signature.slice(2, 66)
  const s = BigInt(`0x${signature.slice(66, 130)}`)
  const v = Number.parseInt(signature.slice(130, 132), 16)
  return `0x${r}${(SECP256K1_N - s).toString(16).padStart(64, '0')}${(v === 27 ? 28 : 27).toString(16)}`
}

export const TX = `0x${'ab'.repeat(32)}`

/** A facilitator on loopback that records what it is sent and answers what the test sets. */
export function loopbackFacilitator() {
  const calls: { path: string; body: any }[] = []
  const answers = {
    verify: (): Response | Promise<Response> => Response.json({ isValid: true, payer: payer.address }),
    settle: (): Response | Promise<Response> => Response.json({ success: true, transaction: TX, network: 'base-sepolia', payer: payer.address }),
  }
  const server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    async fetch(req) {
      const path = new URL(req.url).pathname
      calls.push({ path, body: await req.json() })
      if (path === '/facilitator/verify') return answers.verify()
      if (path === '/facilitator/settle') return answers.settle()
      return new Response('not found', { status: 404 })
    },
  })
  return { url: `http://127.0.0.1:${server.port}/facilitator`, calls, answers, server, paths: () => calls.map((c) => c.path.replace('/facilitator', '')) }
}
