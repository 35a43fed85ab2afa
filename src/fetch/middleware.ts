import { contentTypeMatches } from '../parse/document'
import { FetchError } from './errors'
import type { HeaderPair, Middleware } from './types'

/**
 * Middleware kinds (documented in docs/api.md). Request kinds change the headers of every hop;
 * `rate_limit` spaces requests per host; `retry_on_status` widens the retry policy; the
 * `response_guard` judges the final response.
 */
export type MiddlewarePlan = {
  /** Applied in order to the request headers; auth headers are marked to stay on the first origin. */
  editHeaders: (headers: Headers) => void
  /** Requests per second per host, the strictest of the rate_limit entries. */
  perSecond: number | null
  /** Statuses to retry beside 429/5xx, with how many retries each gets. */
  retryStatuses: Map<number, number>
  guard: (status: number, contentType: string | null) => void
}

/**
 * Sets header pairs: the first pair of a name replaces that header, later pairs of the same name
 * add to it (so repeated headers stay possible).
 */
export function applyHeaderPairs(h: Headers, pairs: readonly HeaderPair[]) {
  const names = new Set<string>()
  for (const [name, value] of pairs) {
    const key = name.toLowerCase()
    if (names.has(key)) h.append(name, value)
    else h.set(name, value)
    names.add(key)
  }
}

/** The plan of a request without middleware (most of them): shared, never changed. */
const NO_MIDDLEWARE: MiddlewarePlan = Object.freeze({ editHeaders: () => {}, perSecond: null, retryStatuses: new Map(), guard: () => {} })

export function planMiddleware(list: Middleware[]): MiddlewarePlan {
  if (!list.length) return NO_MIDDLEWARE
  const edits: ((h: Headers) => void)[] = []
  let perSecond: number | null = null
  const retryStatuses = new Map<number, number>()
  const guards: ((status: number, contentType: string | null) => void)[] = []
  for (const mw of list) {
    switch (mw.kind) {
      case 'set_headers':
        edits.push((h) => applyHeaderPairs(h, mw.headers))
        break
      case 'remove_headers':
        edits.push((h) => mw.names.forEach((n) => h.delete(n)))
        break
      case 'basic_auth':
        edits.push((h) => h.set('Authorization', `Basic ${Buffer.from(`${mw.username}:${mw.password}`).toString('base64')}`))
        break
      case 'bearer_auth':
        edits.push((h) => h.set('Authorization', `Bearer ${mw.token}`))
        break
      case 'rate_limit':
        perSecond = perSecond === null ? mw.per_second : Math.min(perSecond, mw.per_second)
        break
      case 'retry_on_status':
        for (const s of mw.statuses) retryStatuses.set(s, Math.max(retryStatuses.get(s) ?? 0, mw.max_retries ?? 2))
        break
      case 'response_guard':
        guards.push((status, contentType) => {
          if (mw.statuses && !mw.statuses.includes(status)) throw new FetchError('rejected', `the response guard rejected status ${status} (allowed: ${mw.statuses.join(', ') || 'none'})`)
          if (mw.content_types && !(contentType && contentTypeMatches(contentType, mw.content_types))) {
            throw new FetchError('rejected', `the response guard rejected content type ${contentType ?? '(none)'} (allowed: ${mw.content_types.join(', ') || 'none'})`)
          }
        })
        break
    }
  }
  return { editHeaders: (h) => edits.forEach((e) => e(h)), perSecond, retryStatuses, guard: (s, ct) => guards.forEach((g) => g(s, ct)) }
}
