/** Retry policy of one fetch: which answers are retried and how long to wait before the next try. */

const BASE_DELAY_MS = 200
/** Longest Retry-After trawl waits; a server asking for more gets this much. */
export const RETRY_AFTER_CAP_MS = 10_000

/** 429 and every 5xx are worth another try; everything else is the answer. */
export const retryableStatus = (status: number) => status === 429 || (status >= 500 && status <= 599)

/** Exponential backoff with "equal jitter": between half and all of 200 ms · 2^retry. */
export function backoffMs(retry: number, random = Math.random): number {
  const full = BASE_DELAY_MS * 2 ** Math.min(retry, 10)
  return Math.round(full / 2 + random() * (full / 2))
}

/** Retry-After as milliseconds from now (delta-seconds or an HTTP date), capped; null when absent or unreadable. */
export function retryAfterMs(header: string | null | undefined, now = Date.now(), cap = RETRY_AFTER_CAP_MS): number | null {
  if (!header) return null
  const text = header.trim()
  let ms: number
  if (/^\d+$/.test(text)) ms = Number(text) * 1000
  else {
    const at = Date.parse(text)
    if (Number.isNaN(at)) return null
    ms = at - now
  }
  return Math.min(Math.max(ms, 0), cap)
}
