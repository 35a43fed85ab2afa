/**
 * Why a payment was refused: the `error` of the 402. The v1 body carries x402@1.2.0's names
 * (its client schema holds them in a closed enum); the v2 PAYMENT-REQUIRED header carries the
 * v2 spelling where the v2 spec or @x402/evm renamed one (docs/payments.md, "Why a payment is refused").
 */
const REASONS = {
  // Not a refusal: the first challenge. Worded as the reference servers word it.
  payment_required: {
    v1: 'X-PAYMENT header is required',
    v2: 'Payment required',
    message: 'this request must be paid: sign the challenge in `accepts` and send it in X-PAYMENT (v1) or PAYMENT-SIGNATURE (v2)',
  },
  invalid_payload: { v2: 'invalid_payload', message: 'the payment header is not a well-formed x402 payment payload' },
  invalid_x402_version: { v2: 'invalid_x402_version', message: 'X-PAYMENT carries x402Version 1 and PAYMENT-SIGNATURE x402Version 2' },
  unsupported_scheme: { v2: 'unsupported_scheme', message: 'only the "exact" scheme is accepted' },
  invalid_network: { v2: 'invalid_network', message: 'the payment is for another network than the one in the challenge' },
  invalid_payment_requirements: { v2: 'invalid_payment_requirements', message: 'the echoed requirements (asset, payTo, amount) are not the ones in the challenge' },
  invalid_exact_evm_payload_signature: { v2: 'invalid_exact_evm_payload_signature', message: 'the signature is not a 65-byte low-s ECDSA signature of this authorization by its `from` address' },
  invalid_exact_evm_payload_recipient_mismatch: { v2: 'invalid_exact_evm_payload_recipient_mismatch', message: "the authorization pays another address than the challenge's payTo" },
  invalid_exact_evm_payload_authorization_value: { v2: 'invalid_exact_evm_payload_authorization_value_mismatch', message: 'the authorized value does not cover the price' },
  invalid_exact_evm_payload_authorization_valid_before: {
    v2: 'invalid_exact_evm_payload_authorization_valid_before',
    message: 'the authorization expires too soon (validBefore must be at least half of maxTimeoutSeconds, and 6 s, ahead)',
  },
  // x402 has no name of its own for it: both generations' closest is the valid_before reason.
  authorization_valid_too_long: {
    v1: 'invalid_exact_evm_payload_authorization_valid_before',
    v2: 'invalid_exact_evm_payload_authorization_valid_before',
    message: 'the authorization is valid for longer than the challenge allows (validBefore must be at most maxTimeoutSeconds, and half of it again for clock skew, ahead)',
  },
  invalid_exact_evm_payload_authorization_valid_after: { v2: 'invalid_exact_evm_payload_authorization_valid_after', message: 'the authorization is not valid yet (validAfter is in the future)' },
  duplicate_settlement: { v2: 'invalid_exact_evm_nonce_already_used', message: 'this authorization (payer and nonce) was already used' },
  invalid_payment: { v2: 'invalid_payment', message: 'the payment facilitator refused the payment' },
  unexpected_verify_error: { v2: 'unexpected_verify_error', message: 'the payment facilitator could not be asked; try again' },
  unexpected_settle_error: { v2: 'unexpected_settle_error', message: 'the payment could not be settled, so the result is withheld' },
} as const

/** A reason of our own checks. */
export type Reason = keyof typeof REASONS

/** What a 402 says: `error` in the v1 body, `error` in the v2 header, and the `message` beside them. */
export type Refusal = { v1: string; v2: string; message: string }

export function refusal(reason: Reason): Refusal {
  const r: { v1?: string; v2: string; message: string } = REASONS[reason]
  return { v1: r.v1 ?? reason, v2: r.v2, message: r.message }
}

/**
 * A facilitator's reason, passed on when it looks like a reason code (it may be one of the
 * 2.x names); anything else, such as free text or an HTML page, becomes `fallback`.
 */
export function foreignRefusal(raw: unknown, fallback: Reason): Refusal {
  if (typeof raw !== 'string' || !/^[a-z0-9_]{1,100}$/.test(raw)) return refusal(fallback)
  return { v1: raw, v2: raw, message: REASONS[fallback].message }
}
