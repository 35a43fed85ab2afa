import { decodeBase64 } from '../util/base64'

/** The request header of each protocol version, and the receipt header that answers it (docs/payments.md, "Paying"). */
export const HEADERS = {
  1: { payment: 'X-PAYMENT', receipt: 'X-PAYMENT-RESPONSE' },
  2: { payment: 'PAYMENT-SIGNATURE', receipt: 'PAYMENT-RESPONSE' },
} as const
export type Version = keyof typeof HEADERS

/** A payment header is a few hundred bytes to about 1 KiB; anything past this is not a payment. */
const MAX_PAYMENT_HEADER = 16 * 1024

/** The payment header of a request: PAYMENT-SIGNATURE (v2) first, else X-PAYMENT (v1); null when neither is there. */
export function paymentHeader(headers: Headers): { version: Version; text: string } | null {
  const v2 = headers.get(HEADERS[2].payment)
  if (v2 !== null) return { version: 2, text: v2 }
  const v1 = headers.get(HEADERS[1].payment)
  return v1 !== null ? { version: 1, text: v1 } : null
}

const utf8 = new TextDecoder('utf-8', { fatal: true })

/** base64 → UTF-8 → JSON object, within the size cap; null for anything else. */
export function decodeJsonHeader(text: string): Record<string, unknown> | null {
  if (text.length > MAX_PAYMENT_HEADER) return null
  const bytes = decodeBase64(text.trim())
  if (!bytes) return null
  try {
    const value: unknown = JSON.parse(utf8.decode(bytes))
    return isObject(value) ? value : null
  } catch {
    return null
  }
}

/** JSON → UTF-8 → base64, as @x402/core encodes headers. */
export const encodeJsonHeader = (value: unknown): string => Buffer.from(JSON.stringify(value), 'utf8').toString('base64')

export const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)
