// The native checker's two functions against the JavaScript implementations they replace
// (viem's Keccak-256, noble's secp256k1), and the signatures it must refuse without crashing.
import { describe, expect, test } from 'bun:test'
import { secp256k1 } from '@noble/curves/secp256k1'
import { keccak256 } from 'viem'
import { nativeSigner, nativeSignerStatus } from '../../src/payment/native'
import { buildNative } from '../../scripts/native'

// The library under test is the one these sources build (a no-op when it is current).
buildNative()

const native = nativeSigner()!
const hex = (bytes: Uint8Array | null) => (bytes ? Buffer.from(bytes).toString('hex') : null)
const N = secp256k1.CURVE.n
const word = (n: bigint) => Buffer.from(n.toString(16).padStart(64, '0'), 'hex')

test('it loads, and the start-up status says so', () => {
  expect(native).not.toBeNull()
  expect(nativeSignerStatus()).toBe('signatures checked by libsecp256k1')
})

describe('keccak256', () => {
  test("equals viem's on every length around the 136-byte rate, and on 1 MiB", () => {
    const lengths = [...Array.from({ length: 300 }, (_, i) => i), 543, 544, 545, 1 << 20]
    for (const length of lengths) {
      const data = crypto.getRandomValues(new Uint8Array(Math.min(length, 65536)))
      const input = length > 65536 ? new Uint8Array(length).map((_, i) => data[i % 65536]!) : data
      expect([length, hex(native.keccak256(input))]).toEqual([length, hex(keccak256(input, 'bytes'))])
    }
  })

  test('returns a fresh array each call', () => {
    const a = native.keccak256(new Uint8Array([1]))
    const b = native.keccak256(new Uint8Array([2]))
    expect(hex(a)).not.toBe(hex(b))
    expect(hex(a)).toBe(hex(keccak256(new Uint8Array([1]), 'bytes')))
  })
})

describe('ecrecover', () => {
  const addressOf = (priv: Uint8Array) => keccak256(secp256k1.getPublicKey(priv, false).subarray(1), 'bytes').subarray(12)

  test("recovers the signer's address of 200 random signatures, and another address with the other recovery id", () => {
    for (let i = 0; i < 200; i++) {
      const priv = secp256k1.utils.randomPrivateKey()
      const digest = crypto.getRandomValues(new Uint8Array(32))
      const sig = secp256k1.sign(digest, priv)
      const rs = sig.toCompactRawBytes()
      expect(hex(native.ecrecover(digest, rs, sig.recovery))).toBe(hex(addressOf(priv)))
      const other = native.ecrecover(digest, rs, 1 - sig.recovery)
      const expected = (() => {
        try {
          const key = sig.addRecoveryBit(1 - sig.recovery).recoverPublicKey(digest)
          return hex(keccak256(key.toRawBytes(false).subarray(1), 'bytes').subarray(12))
        } catch {
          return null
        }
      })()
      expect(hex(other)).toBe(expected)
      expect(hex(other)).not.toBe(hex(addressOf(priv)))
    }
  })

  test('r or s zero or at least n, r not on the curve, a recovery id other than 0 or 1: null', () => {
    const digest = crypto.getRandomValues(new Uint8Array(32))
    const good = secp256k1.sign(digest, secp256k1.utils.randomPrivateKey())
    const r = word(good.r)
    const s = word(good.s)
    const cases: [string, Uint8Array, number][] = [
      ['r = 0', Buffer.concat([word(0n), s]), good.recovery],
      ['s = 0', Buffer.concat([r, word(0n)]), good.recovery],
      ['r = n', Buffer.concat([word(N), s]), good.recovery],
      ['s = n', Buffer.concat([r, word(N)]), good.recovery],
      ['r = 2^256 - 1', Buffer.concat([word(2n ** 256n - 1n), s]), good.recovery],
      // x = 5 has no point on secp256k1 (5³ + 7 = 132 is not a square mod p).
      ['r not an x coordinate', Buffer.concat([word(5n), s]), 0],
      ['recovery id 2', Buffer.concat([r, s]), 2],
      ['recovery id -1', Buffer.concat([r, s]), -1],
    ]
    for (const [name, rs, v] of cases) expect([name, native.ecrecover(digest, rs, v)]).toEqual([name, null])
    expect(native.ecrecover(digest, Buffer.concat([r, s]), good.recovery)).not.toBeNull()
  })

  test('buffers of the wrong size are refused before they reach C', () => {
    expect(() => native.ecrecover(new Uint8Array(31), new Uint8Array(64), 0)).toThrow(RangeError)
    expect(() => native.ecrecover(new Uint8Array(32), new Uint8Array(65), 0)).toThrow(RangeError)
  })
})
