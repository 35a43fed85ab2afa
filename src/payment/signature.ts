import { invert } from '@noble/curves/abstract/modular'
import { secp256k1 } from '@noble/curves/secp256k1'
import { hashDomain, keccak256, toBytes } from 'viem'
import { nativeSigner, type NativeSigner } from './native'
import type { PayNetwork } from './networks'

/**
 * The signature check of an EIP-3009 TransferWithAuthorization (step 5 of docs/payments.md,
 * "Why a payment is refused"), made cheaper than viem's verifyTypedData, which costs about
 * 2.6 ms a payment on this kind of machine and was most of what payment added to a scrape:
 * - the EIP-712 digest is encoded by hand (one fixed type, the domain hashed once per network),
 *   not through viem's generic typed-data encoder;
 * - with the native checker (./native.ts), every payment is ecrecover'd in libsecp256k1, about
 *   0.1 ms, and the address compared;
 * - without it, in JavaScript: the first payment of a payer recovers its public key from the
 *   signature (what ecrecover does) and compares the address; later payments of a payer whose
 *   key is cached are checked by ECDSA verification against that key with a precomputed window,
 *   three times faster, and the recovery bit `v` is checked against the point the verification
 *   computes, so a signature ecrecover would read as someone else's never passes.
 */

const N = secp256k1.CURVE.n
const G = secp256k1.ProjectivePoint.BASE
type Point = InstanceType<typeof secp256k1.ProjectivePoint>

/** EIP-3009's typed-data type, as clients sign it (the digest below encodes exactly this). */
export const TRANSFER_WITH_AUTHORIZATION = {
  TransferWithAuthorization: [
    { name: 'from', type: 'address' },
    { name: 'to', type: 'address' },
    { name: 'value', type: 'uint256' },
    { name: 'validAfter', type: 'uint256' },
    { name: 'validBefore', type: 'uint256' },
    { name: 'nonce', type: 'bytes32' },
  ],
} as const

const TYPE_HASH = keccak256(toBytes('TransferWithAuthorization(address from,address to,uint256 value,uint256 validAfter,uint256 validBefore,bytes32 nonce)'), 'bytes')

/** A signature's parts: r and s in range, s low, v the recovery bit (0 or 1); `rs` is r‖s as bytes. */
export type Signature = { r: bigint; s: bigint; v: number; rs: Uint8Array }

const SIGNATURE = /^0x[0-9a-fA-F]{130}$/

/**
 * The parts of a 0x r‖s‖v signature, or null unless it is what USDC's ecrecover takes: exactly
 * 65 bytes (longer ones are smart-wallet signatures, which need a chain), 0 < r < n, 0 < s ≤ n/2
 * (the high-s twin of a signature verifies but ecrecover refuses it), v ∈ {27, 28, 0, 1}.
 */
export function parseSignature(signature: string): Signature | null {
  if (!SIGNATURE.test(signature)) return null
  const r = BigInt(`0x${signature.slice(2, 66)}`)
  const s = BigInt(`0x${signature.slice(66, 130)}`)
  const v = Number.parseInt(signature.slice(130, 132), 16)
  if (!(r > 0n && r < N && s > 0n && s <= N / 2n) || !(v === 27 || v === 28 || v === 0 || v === 1)) return null
  return { r, s, v: v % 27, rs: Buffer.from(signature.slice(2, 130), 'hex') }
}

/** The authorization as the payload carries it (already shape-checked). */
export type Authorization = { from: string; to: string; value: bigint; validAfter: bigint; validBefore: bigint; nonce: string }

/** Payers whose key is cached; each costs about 100 KB (its window), so the cache is small and LRU. */
const MAX_CACHED_PAYERS = 64
// 4-bit windows: 0.6-0.8 ms a check against 1.6 ms without, for about 3 ms of precomputation on a payer's second payment.
const WINDOW = 4

export class AuthorizationVerifier {
  private readonly domain: Uint8Array
  private readonly hash: (bytes: Uint8Array) => Uint8Array
  private readonly keys = new Map<string, Point>()

  /** `native`: the libsecp256k1 checker when it is available; null checks in JavaScript. */
  constructor(
    network: PayNetwork,
    private readonly native: NativeSigner | null = nativeSigner(),
  ) {
    this.hash = native ? native.keccak256 : (bytes) => keccak256(bytes, 'bytes')
    this.domain = toBytes(
      hashDomain({ domain: { name: network.name, version: network.version, chainId: BigInt(network.chainId), verifyingContract: network.asset }, types: { EIP712Domain: EIP712_DOMAIN } }),
    )
  }

  /** The EIP-712 digest of `a` under our domain. */
  digest(a: Authorization): Uint8Array {
    const struct = new Uint8Array(7 * 32)
    struct.set(TYPE_HASH, 0)
    struct.set(hexWord(a.from), 32)
    struct.set(hexWord(a.to), 64)
    struct.set(word(a.value), 96)
    struct.set(word(a.validAfter), 128)
    struct.set(word(a.validBefore), 160)
    struct.set(hexWord(a.nonce), 192)
    const message = new Uint8Array(2 + 64)
    message[0] = 0x19
    message[1] = 0x01
    message.set(this.domain, 2)
    message.set(this.hash(struct), 34)
    return this.hash(message)
  }

  /** Whether `signature` (from parseSignature) is `from`'s (checksummed) over `digest`. */
  signedBy(digest: Uint8Array, { r, s, v, rs }: Signature, from: string): boolean {
    if (this.native) {
      const signer = this.native.ecrecover(digest, rs, v)
      return signer !== null && `0x${Buffer.from(signer).toString('hex')}` === from.toLowerCase()
    }
    const cached = this.keys.get(from)
    if (cached) {
      this.keys.delete(from)
      this.keys.set(from, cached)
      return verifiesAgainst(cached, digest, r, s, v)
    }
    let key: Point
    try {
      key = new secp256k1.Signature(r, s).addRecoveryBit(v).recoverPublicKey(digest) as unknown as Point
    } catch {
      return false
    }
    if (addressOf(key) !== from.toLowerCase()) return false
    this.remember(from, key)
    return true
  }

  private remember(from: string, key: Point) {
    if (this.keys.size >= MAX_CACHED_PAYERS) this.keys.delete(this.keys.keys().next().value!)
    const point = secp256k1.ProjectivePoint.fromAffine(key.toAffine())
    point._setWindowSize(WINDOW)
    this.keys.set(from, point)
  }
}

/**
 * ECDSA verification of (r, s) over `digest` against `key`, and `v` against the parity of the
 * point it computes (what ecrecover would use to pick the key). The constant-time multiply is
 * the one that uses the key's window (noble's unsafe multiply gave wrong results with it).
 */
function verifiesAgainst(key: Point, digest: Uint8Array, r: bigint, s: bigint, v: number): boolean {
  const h = BigInt(`0x${Buffer.from(digest).toString('hex')}`) % N
  const w = invert(s, N)
  const point = G.multiply((h * w) % N).add(key.multiply((r * w) % N))
  if (point.equals(secp256k1.ProjectivePoint.ZERO)) return false
  const { x, y } = point.toAffine()
  // x ≥ n would need recovery ids 2 and 3, which a 65-byte Ethereum signature cannot say.
  return x === r && Number(y & 1n) === v
}

function addressOf(key: Point): string {
  const raw = key.toRawBytes(false)
  return `0x${Buffer.from(keccak256(raw.subarray(1), 'bytes').subarray(12)).toString('hex')}`
}

/** A uint256 (below 2^256, as verify.ts checks) as its 32-byte big-endian word. */
const word = (n: bigint) => Buffer.from(n.toString(16).padStart(64, '0'), 'hex')
/** A 0x hex value of at most 32 bytes (an address, a nonce; verify.ts checks the shapes) as its word. */
const hexWord = (hex: string) => Buffer.from(hex.slice(2).padStart(64, '0'), 'hex')

const EIP712_DOMAIN = [
  { name: 'name', type: 'string' },
  { name: 'version', type: 'string' },
  { name: 'chainId', type: 'uint256' },
  { name: 'verifyingContract', type: 'address' },
] as const
