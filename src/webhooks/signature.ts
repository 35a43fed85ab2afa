import { createHmac, randomBytes } from 'node:crypto'

/**
 * Standard Webhooks signatures (docs/webhooks.md): a secret is `whsec_` and the standard base64
 * of its key; a request is signed with `v1,` and the base64 HMAC-SHA256, under that key, of
 * `${webhook-id}.${webhook-timestamp}.${body}`.
 */
export const SECRET_PREFIX = 'whsec_'
const KEY_BYTES = { min: 24, max: 64, generated: 32 }
const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/

/** A new secret: 32 random bytes. */
export const generateSecret = (): string => SECRET_PREFIX + randomBytes(KEY_BYTES.generated).toString('base64')

/** Why a secret is not one (a 422 message), or null. Padded standard base64, as receivers' libraries decode it. */
export function secretError(secret: string): string | null {
  const encoded = secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : null
  if (encoded === null || !BASE64.test(encoded) || encoded.length % 4 !== 0) return `must be ${SECRET_PREFIX} followed by standard base64 (with its padding)`
  const bytes = Buffer.from(encoded, 'base64').length
  if (bytes < KEY_BYTES.min || bytes > KEY_BYTES.max) return `must encode ${KEY_BYTES.min} to ${KEY_BYTES.max} bytes (this one ${bytes})`
  return null
}

/** The webhook-signature header of one request. `timestamp` is in seconds, as webhook-timestamp sends it. */
export function sign(secret: string, id: string, timestamp: number, body: string): string {
  const key = Buffer.from(secret.slice(SECRET_PREFIX.length), 'base64')
  return `v1,${createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64')}`
}

/** The three Standard Webhooks headers and the content type of one attempt. */
export function signedHeaders(secret: string, id: string, body: string, nowMs: number): Record<string, string> {
  const timestamp = Math.floor(nowMs / 1000)
  return {
    'content-type': 'application/json',
    'webhook-id': id,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': sign(secret, id, timestamp, body),
  }
}
