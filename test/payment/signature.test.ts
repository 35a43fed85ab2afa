// The hand-encoded EIP-712 digest and the signature check, checked against viem's own encoder and
// signatures made by viem accounts, for both implementations: the native one (libsecp256k1's
// ecrecover) and the JavaScript one (recovery for a payer's first payment, verification against a
// cached key after).
import { describe, expect, test } from 'bun:test'
import { hashTypedData } from 'viem'
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import { payNetwork } from '../../src/payment/networks'
import { nativeSigner, type NativeSigner } from '../../src/payment/native'
import { buildNative } from '../../scripts/native'
import { AuthorizationVerifier, parseSignature, TRANSFER_WITH_AUTHORIZATION, type Authorization } from '../../src/payment/signature'
import { otherPayer, payer, PAY_TO, randomNonce } from './helpers'

// The library under test is the one these sources build (a no-op when it is current).
buildNative()

const TYPES = TRANSFER_WITH_AUTHORIZATION

const domainOf = (network: ReturnType<typeof payNetwork>) => ({ name: network.name, version: network.version, chainId: network.chainId, verifyingContract: network.asset })

async function signed(account: typeof payer, network = payNetwork('base-sepolia'), over: Partial<Authorization> = {}) {
  const a: Authorization = { from: account.address, to: PAY_TO, value: 1000n, validAfter: 0n, validBefore: 2_000_000_000n, nonce: randomNonce(), ...over }
  const message = { ...a, from: a.from as `0x${string}`, to: a.to as `0x${string}`, nonce: a.nonce as `0x${string}` }
  const signature = await account.signTypedData({ domain: domainOf(network), types: TYPES, primaryType: 'TransferWithAuthorization', message })
  return { a, signature, viemDigest: hashTypedData({ domain: domainOf(network), types: TYPES, primaryType: 'TransferWithAuthorization', message }) }
}

/** The check as verifyPayment makes it: the signature parsed (and refused when not canonical), then verified. */
const signedBy = (v: AuthorizationVerifier, digest: Uint8Array, signature: string, from: string) => {
  const parsed = parseSignature(signature)
  return parsed !== null && v.signedBy(digest, parsed, from)
}
const hex = (bytes: Uint8Array) => `0x${Buffer.from(bytes).toString('hex')}`
/** The same signature with v pointing at the other recovery candidate. */
const flipV = (sig: string) => sig.slice(0, 130) + (sig.endsWith('1b') ? '1c' : '1b')

test('the native checker is built and loads (scripts/native.ts; it needs a C compiler)', () => {
  expect(nativeSigner()).not.toBeNull()
})

const IMPLEMENTATIONS: [string, NativeSigner | null][] = [
  ['libsecp256k1', nativeSigner()],
  ['JavaScript', null],
]

for (const [implementation, native] of IMPLEMENTATIONS) {
  const verifier = (network: ReturnType<typeof payNetwork>) => new AuthorizationVerifier(network, native)

  describe(`digest (${implementation})`, () => {
    test("equals viem's hashTypedData on both networks, for values up to uint256's edge", async () => {
      for (const name of ['base-sepolia', 'base'] as const) {
        const network = payNetwork(name)
        const v = verifier(network)
        for (const over of [{}, { value: 2n ** 256n - 1n, validAfter: 1n, validBefore: 0n }, { value: 0n }]) {
          const { a, viemDigest } = await signed(payer, network, over)
          expect(hex(v.digest(a))).toBe(viemDigest)
        }
      }
    })
  })

  describe(`signedBy (${implementation})`, () => {
    test("a payer's signatures verify on the first (recovery) and later (cached key) payments", async () => {
      const v = verifier(payNetwork('base-sepolia'))
      for (let i = 0; i < 4; i++) {
        const { a, signature } = await signed(payer)
        expect(signedBy(v, v.digest(a), signature, payer.address)).toBe(true)
      }
    })

    test("another key's signature, a flipped v, another message: refused on both paths", async () => {
      for (const warm of [false, true]) {
        const v = verifier(payNetwork('base-sepolia'))
        if (warm) {
          const first = await signed(payer)
          expect(signedBy(v, v.digest(first.a), first.signature, payer.address)).toBe(true)
        }
        const byOther = await signed(otherPayer, undefined, { from: payer.address })
        expect([warm, signedBy(v, v.digest(byOther.a), byOther.signature, payer.address)]).toEqual([warm, false])
        const mine = await signed(payer)
        expect([warm, signedBy(v, v.digest(mine.a), flipV(mine.signature), payer.address)]).toEqual([warm, false])
        expect([warm, signedBy(v, v.digest({ ...mine.a, value: 1001n }), mine.signature, payer.address)]).toEqual([warm, false])
        // Signed for the other chain's domain: our digest differs.
        const base = await signed(payer, payNetwork('base'))
        expect([warm, signedBy(v, v.digest(base.a), base.signature, payer.address)]).toEqual([warm, false])
        // And the genuine one still passes afterwards.
        expect(signedBy(v, v.digest(mine.a), mine.signature, payer.address)).toBe(true)
      }
    })

    test('r or s out of range is refused without an exception', async () => {
      const v = verifier(payNetwork('base-sepolia'))
      const { a } = await signed(payer)
      const n = 'fffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141'
      expect(signedBy(v, v.digest(a), `0x${n}${'01'.padStart(64, '0')}1b`, payer.address)).toBe(false)
      expect(signedBy(v, v.digest(a), `0x${'01'.padStart(64, '0')}${n}1b`, payer.address)).toBe(false)
      expect(signedBy(v, v.digest(a), `0x${'00'.repeat(32)}${'01'.padStart(64, '0')}1b`, payer.address)).toBe(false)
    })

    test('more payers than the cache holds all verify, again and again', async () => {
      const v = verifier(payNetwork('base-sepolia'))
      const accounts = Array.from({ length: 70 }, () => privateKeyToAccount(generatePrivateKey()))
      for (let round = 0; round < 2; round++) {
        for (const account of accounts) {
          const { a, signature } = await signed(account)
          expect(signedBy(v, v.digest(a), signature, account.address)).toBe(true)
        }
      }
    }, 60_000)
  })
}
