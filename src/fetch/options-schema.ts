import { Type, type Static, type TObject } from '@sinclair/typebox'
import { parseDuration } from '../util/duration'
import type { FetchRequest } from './types'
import { BROWSER_KEYWORDS } from './user-agents'
import { DateTime, Duration, StringEnum } from '../core/schemas'

const closed = { additionalProperties: false } as const
const HeaderName = Type.String({ minLength: 1, maxLength: 256, pattern: "^[!#$%&'*+.^_`|~0-9A-Za-z-]+$", patternHint: 'an HTTP header name' })
// What an HTTP header can carry: Latin-1 text without control characters (a tab is allowed).
const ONE_LINE = { pattern: '^[\\t\\u0020-\\u007e\\u0080-\\u00ff]*$', patternHint: 'Latin-1 text without line breaks or control characters' } as const
const HeaderValue = Type.String({ maxLength: 8192, ...ONE_LINE })
export const HeaderPairs = Type.Array(Type.Tuple([HeaderName, HeaderValue]), { maxItems: 100, description: 'name and value pairs' })

export const Cookie = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 256, pattern: "^[!#$%&'*+.^_`|~0-9A-Za-z-]+$", patternHint: 'a cookie name (an HTTP token)' }),
    value: Type.String({ maxLength: 4096, pattern: '^[\\t\\u0020-\\u003a\\u003c-\\u007e\\u0080-\\u00ff]*$', patternHint: 'a cookie value: Latin-1 text without ; or line breaks' }),
    domain: Type.Optional(Type.String({ maxLength: 253 })),
    path: Type.Optional(Type.String({ maxLength: 1024 })),
    expires: Type.Optional(DateTime),
    http_only: Type.Optional(Type.Boolean()),
    secure: Type.Optional(Type.Boolean()),
    same_site: Type.Optional(StringEnum(['Lax', 'Strict', 'None'])),
  },
  closed,
)

export const Client = Type.Union([
  Type.Object({ kind: Type.Literal('standard') }, closed),
  Type.Object({ kind: Type.Literal('browser'), wait_until: Type.Optional(StringEnum(['load', 'networkidle'], { default: 'load' })) }, closed),
])

const Status = Type.Integer({ minimum: 100, maximum: 599 })
/** Request and response middleware kinds; each is documented in docs/api.md. */
export const Middleware = Type.Union([
  Type.Object({ kind: Type.Literal('set_headers'), headers: HeaderPairs }, closed),
  Type.Object({ kind: Type.Literal('remove_headers'), names: Type.Array(HeaderName, { minItems: 1, maxItems: 100 }) }, closed),
  Type.Object(
    {
      kind: Type.Literal('basic_auth'),
      username: Type.String({ maxLength: 1024, pattern: '^[\\t\\u0020-\\u0039\\u003b-\\u007e\\u0080-\\u00ff]*$', patternHint: 'Latin-1 text without colons or line breaks' }),
      password: Type.String({ maxLength: 1024, ...ONE_LINE }),
    },
    closed,
  ),
  Type.Object({ kind: Type.Literal('bearer_auth'), token: Type.String({ minLength: 1, maxLength: 8192, ...ONE_LINE }) }, closed),
  Type.Object({ kind: Type.Literal('rate_limit'), per_second: Type.Number({ minimum: 0.001, maximum: 10000 }) }, closed),
  Type.Object(
    { kind: Type.Literal('retry_on_status'), statuses: Type.Array(Status, { minItems: 1, maxItems: 50 }), max_retries: Type.Optional(Type.Integer({ minimum: 0, maximum: 10, default: 2 })) },
    closed,
  ),
  Type.Object(
    {
      kind: Type.Literal('response_guard'),
      statuses: Type.Optional(Type.Array(Status, { maxItems: 100, description: 'allowed statuses' })),
      content_types: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 255 }), { maxItems: 50, description: 'allowed content types' })),
    },
    closed,
  ),
])

export const USER_AGENT_KEYWORDS = ['trawl', ...BROWSER_KEYWORDS] as const

/** What a fetch option left out means, everywhere (the schemas document these). */
const FETCH_DEFAULTS = { client: { kind: 'standard' } as const, user_agent: 'trawl', timeout: '30s' }
/** Redirects and retries differ by caller: none for POST /v1/fetch, some for a crawl. */
type RedirectRetryDefaults = { max_redirects: number; max_retries: number }

/**
 * The fetch options every fetching surface shares (SPEC Fetch, minus url, method and body).
 * `defaults` differ: /v1/fetch keeps SPEC's (0 redirects, 0 retries), crawls are friendlier.
 */
export function fetchOptions(defaults: RedirectRetryDefaults) {
  return {
    client: Type.Optional({ ...Client, default: FETCH_DEFAULTS.client }),
    middleware: Type.Optional(Type.Array(Middleware, { maxItems: 32, default: [] })),
    user_agent: Type.Optional(Type.String({ minLength: 1, maxLength: 1024, ...ONE_LINE, default: FETCH_DEFAULTS.user_agent, description: `${USER_AGENT_KEYWORDS.join(', ')} or a user-agent string` })),
    referrer: Type.Optional(Type.String({ maxLength: 8192, ...ONE_LINE })),
    headers: Type.Optional({ ...HeaderPairs, default: [] }),
    cookies: Type.Optional(Type.Array(Cookie, { maxItems: 100, default: [] })),
    proxies: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 64 }), { maxItems: 16, default: [], description: 'names from TRAWL_PROXIES' })),
    timeout: Type.Optional({ ...Duration, default: FETCH_DEFAULTS.timeout, description: 'whole-request timeout, 10ms to 300s' }),
    max_redirects: Type.Optional(Type.Integer({ minimum: 0, maximum: 20, default: defaults.max_redirects })),
    max_retries: Type.Optional(Type.Integer({ minimum: 0, maximum: 10, default: defaults.max_retries })),
  }
}
/** Fetch options as validated against `fetchOptions` (every one optional). */
type FetchOptions = Static<TObject<ReturnType<typeof fetchOptions>>>

/** Validated options with every default filled in, as the fetcher takes them. */
export function requestOptions(o: FetchOptions, defaults: RedirectRetryDefaults): Omit<FetchRequest, 'url' | 'method' | 'body'> {
  return {
    client: o.client ?? FETCH_DEFAULTS.client,
    middleware: o.middleware ?? [],
    user_agent: o.user_agent ?? FETCH_DEFAULTS.user_agent,
    referrer: o.referrer,
    headers: o.headers ?? [],
    cookies: o.cookies ?? [],
    proxies: o.proxies ?? [],
    timeout_ms: parseDuration(o.timeout ?? FETCH_DEFAULTS.timeout)!,
    max_redirects: o.max_redirects ?? defaults.max_redirects,
    max_retries: o.max_retries ?? defaults.max_retries,
  }
}
export const FETCH_TIMEOUT_MS = { min: 10, max: 300_000 }

/** One hop of a redirect chain (SPEC Redirect): a Location header (server side) or a meta refresh (client side). */
export const Redirect = Type.Object(
  {
    url: Type.String({ minLength: 1, maxLength: 8192, description: 'the URL that issued the redirect' }),
    location: Type.String({ minLength: 1, maxLength: 8192, description: 'the URL it points to (relative to `url` when not absolute)' }),
    side: Type.Optional(StringEnum(['server', 'client'])),
    type: Type.Optional(StringEnum(['permanent', 'temporary'])),
  },
  closed,
)
