/**
 * Decodes base64 strictly enough to catch what is not base64 (a 422, never garbage bytes):
 * the standard alphabet, or base64url; ASCII whitespace and missing padding are forgiven,
 * as the WHATWG forgiving-base64 decode does. Answers null for anything else.
 */
export function decodeBase64(text: string): Uint8Array | null {
  for (const alphabet of ['base64', 'base64url'] as const) {
    try {
      return Uint8Array.fromBase64(text, { alphabet, lastChunkHandling: 'loose' })
    } catch {
      // try the other alphabet
    }
  }
  return null
}

/** The message every "not base64" 422 uses. */
export const NOT_BASE64 = 'must be base64-encoded'
