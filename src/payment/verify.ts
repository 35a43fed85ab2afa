import { getAddress } from 'viem'
import { networkName, type Terms } from './challenge'
import type { Reason } from './reasons'
import { parseSignature, type AuthorizationVerifier } from './signature'
import { decodeJsonHeader, isObject, type Version } from './wire'

/**
 * A payment that passed steps 1–5 of docs/payments.md, "Why a payment is refused"; the replay
 * check (step 6) is the ledger's insert.
 */
export type Verified = {
  version: Version
  /** `chainId:asset:checksummed(from):lower(nonce)`: EIP-3009's nonce space, case-proof. */
  key: string
  payer: `0x${string}`
  /** The authorized value, atomic units. */
  value: string
  validBefore: bigint
  /** The decoded payload as sent. */
  payload: Record<string, unknown>
}

const ADDRESS = /^0x[0-9a-fA-F]{40}$/
const UINT = /^\d{1,78}$/
const NONCE = /^0x[0-9a-fA-F]{64}$/
const UINT256_MAX = 2n ** 256n - 1n
// Both references leave at least this much of validBefore for the settlement to land.
const VALID_BEFORE_MARGIN = 6n

/**
 * How long an authorization must stay valid to be accepted: half the challenge's
 * maxTimeoutSeconds (clients sign now + maxTimeoutSeconds, so half of it tolerates that much
 * clock skew), at least the references' 6 s. An authorization that expires sooner could not be
 * settled later from the ledger, nor after a long scrape through a facilitator: accepting it
 * would serve a scrape nobody can be paid for.
 */
const validityMargin = (maxTimeoutSeconds: number) => BigInt(Math.max(Number(VALID_BEFORE_MARGIN), Math.floor(maxTimeoutSeconds / 2)))

/**
 * The latest validBefore accepted: clients sign now + maxTimeoutSeconds, so the same margin on
 * the other side tolerates a client clock that far ahead. Anything later was not signed for our
 * challenge, and a payer-chosen uint256 (2^256 - 1) must not reach the ledger, which keeps
 * seconds an operator can read and settle by.
 */
const latestValidBefore = (now: bigint, maxTimeoutSeconds: number) => now + BigInt(maxTimeoutSeconds) + validityMargin(maxTimeoutSeconds)

type Outcome = { ok: true; payment: Verified } | { ok: false; reason: Reason }
const refuse = (reason: Reason): Outcome => ({ ok: false, reason })

/**
 * Checks a payment header's text against our terms, in the order of docs/payments.md ("Why a
 * payment is refused") so the first failing step names the reason. The EIP-712 domain comes
 * from our config only: a signature for another chain or token never verifies against it.
 */
export function verifyPayment(version: Version, text: string, t: Terms, nowMs: number, verifier: AuthorizationVerifier): Outcome {
  // 1. Decode; the version must be the one of the header that carried it.
  const p = decodeJsonHeader(text)
  if (!p) return refuse('invalid_payload')
  if (p.x402Version !== version) return refuse('invalid_x402_version')

  // 2. Scheme and network; v2 echoes the requirements it chose, and they must be ours.
  const accepted = version === 2 ? p.accepted : p
  if (!isObject(accepted)) return refuse('invalid_payload')
  if (accepted.scheme !== 'exact') return refuse('unsupported_scheme')
  if (accepted.network !== networkName(version, t)) return refuse('invalid_network')
  if (version === 2 && !(sameAddress(accepted.asset, t.network.asset) && sameAddress(accepted.payTo, t.payTo) && accepted.amount === t.amount)) {
    return refuse('invalid_payment_requirements')
  }

  // 3. Shape.
  const body = p.payload
  if (!isObject(body) || !isObject(body.authorization)) return refuse('invalid_payload')
  const a = body.authorization
  const { signature } = body
  if (!isAddress(a.from) || !isAddress(a.to) || !isUint(a.value) || !isUint(a.validAfter) || !isUint(a.validBefore)) return refuse('invalid_payload')
  if (typeof a.nonce !== 'string' || !NONCE.test(a.nonce)) return refuse('invalid_payload')
  const sig = typeof signature === 'string' ? parseSignature(signature) : null
  if (!sig) return refuse('invalid_exact_evm_payload_signature')

  // 4. Amount and time.
  if (!sameAddress(a.to, t.payTo)) return refuse('invalid_exact_evm_payload_recipient_mismatch')
  const value = BigInt(a.value)
  const price = BigInt(t.amount)
  if (version === 1 ? value < price : value !== price) return refuse('invalid_exact_evm_payload_authorization_value')
  const now = BigInt(Math.floor(nowMs / 1000))
  const validBefore = BigInt(a.validBefore)
  if (validBefore < now + validityMargin(t.maxTimeoutSeconds)) return refuse('invalid_exact_evm_payload_authorization_valid_before')
  if (validBefore > latestValidBefore(now, t.maxTimeoutSeconds)) return refuse('authorization_valid_too_long')
  if (BigInt(a.validAfter) > now) return refuse('invalid_exact_evm_payload_authorization_valid_after')

  // 5. Signature, over a domain built from our terms.
  const from = getAddress(a.from.toLowerCase())
  const digest = verifier.digest({ from, to: a.to, value, validAfter: BigInt(a.validAfter), validBefore, nonce: a.nonce })
  const valid = verifier.signedBy(digest, sig, from)
  if (!valid) return refuse('invalid_exact_evm_payload_signature')

  return {
    ok: true,
    payment: { version, key: replayKey(t, from, a.nonce), payer: from, value: value.toString(), validBefore, payload: p },
  }
}

/** The ledger key of an authorization: the nonce space EIP-3009 itself enforces, one per authorizer and token. */
const replayKey = (t: Terms, from: `0x${string}`, nonce: string) => `${t.network.chainId}:${t.network.asset}:${from}:${nonce.toLowerCase()}`

const isAddress = (v: unknown): v is `0x${string}` => typeof v === 'string' && ADDRESS.test(v)
const isUint = (v: unknown): v is string => typeof v === 'string' && UINT.test(v) && BigInt(v) <= UINT256_MAX
const sameAddress = (v: unknown, ours: string) => typeof v === 'string' && v.toLowerCase() === ours.toLowerCase()
