import { Type, type Static } from '@sinclair/typebox'
import type { FieldErrors } from '../core/errors'
import { isHttpUrl } from '../core/formats'
import { StringEnum } from '../core/schemas'
import { decodeBase64, NOT_BASE64 } from '../util/base64'
import { parseDuration } from '../util/duration'
import { looseArray, looseObject } from '../util/loose'
import { FETCH_TIMEOUT_MS, fetchOptions, requestOptions } from './options-schema'
import { METHODS, type FetchRequest } from './types'

const closed = { additionalProperties: false } as const
const FETCH_BODY_DEFAULTS = { max_redirects: 0, max_retries: 0 }

/** The body of POST /v1/fetch (SPEC Fetch). */
export const FetchBody = Type.Object(
  {
    url: Type.String({ minLength: 1, maxLength: 8192, description: 'absolute http(s) URL' }),
    method: Type.Optional(StringEnum(METHODS, { default: 'GET' })),
    body: Type.Optional(Type.String({ description: 'request body, base64' })),
    ...fetchOptions(FETCH_BODY_DEFAULTS),
  },
  closed,
)
export type FetchBody = Static<typeof FetchBody>

/** Checks a schema cannot make: an http(s) URL, base64, the timeout's bounds, configured proxy names. */
export function checkFetchBody(raw: unknown, at: string, proxyNames: readonly string[], errors: FieldErrors) {
  const body = looseObject(raw)
  const path = (field: string) => (at ? `${at}.${field}` : field)
  if (typeof body.url === 'string' && !isHttpUrl(body.url)) errors.add(path('url'), 'must be an absolute http or https URL')
  if (typeof body.body === 'string' && decodeBase64(body.body) === null) errors.add(path('body'), NOT_BASE64)
  // Bun refuses a TRACE with a body before sending anything (RFC 9110 forbids one).
  if (body.method === 'TRACE' && typeof body.body === 'string' && body.body !== '') errors.add(path('body'), 'must be absent for TRACE')
  checkFetchOptions(body, at, proxyNames, errors)
}

/** The checks of the shared fetch options (fetch bodies and a job's `fetch`): the timeout's bounds and proxy names. */
export function checkFetchOptions(raw: unknown, at: string, proxyNames: readonly string[], errors: FieldErrors) {
  const options = looseObject(raw)
  const path = (field: string) => (at ? `${at}.${field}` : field)
  if (typeof options.timeout === 'string') {
    const ms = parseDuration(options.timeout)
    if (ms !== null && (ms < FETCH_TIMEOUT_MS.min || ms > FETCH_TIMEOUT_MS.max)) errors.add(path('timeout'), 'must be between 10ms and 300s')
  }
  looseArray(options.proxies).forEach((name, i) => {
    if (typeof name === 'string' && !proxyNames.includes(name)) {
      errors.add(path(`proxies[${i}]`), `is not a configured proxy (TRAWL_PROXIES names: ${proxyNames.join(', ') || 'none'})`)
    }
  })
}

/** A validated body as the fetcher takes it. */
export function fetchRequestOf(body: FetchBody): FetchRequest {
  return {
    url: body.url,
    method: body.method ?? 'GET',
    body: body.body === undefined ? undefined : decodeBase64(body.body)!,
    ...requestOptions(body, FETCH_BODY_DEFAULTS),
  }
}
