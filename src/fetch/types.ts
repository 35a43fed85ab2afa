import type { Static } from '@sinclair/typebox'
import type { Client, Cookie, Middleware, Redirect } from './options-schema'

export type Cookie = Static<typeof Cookie>
export type Redirect = Static<typeof Redirect>
export type Middleware = Static<typeof Middleware>
export type ClientOptions = Static<typeof Client>
export type HeaderPair = [string, string]

export const METHODS = ['GET', 'POST', 'PUT', 'DELETE', 'HEAD', 'OPTIONS', 'PATCH', 'TRACE', 'CONNECT'] as const
export type Method = (typeof METHODS)[number]

/** One fetch as a caller asks for it (SPEC Fetch), with defaults applied and the body decoded. */
export type FetchRequest = {
  url: string
  method: Method
  body?: Uint8Array
  client: ClientOptions
  middleware: Middleware[]
  /** A keyword (`trawl`, `chrome`, `firefox`, `safari`, `random`) or a user-agent string. */
  user_agent: string
  referrer?: string
  headers: HeaderPair[]
  cookies: Cookie[]
  /** Names from TRAWL_PROXIES; tried in turn, one per attempt. */
  proxies: string[]
  timeout_ms: number
  max_redirects: number
  max_retries: number
  /** Overrides TRAWL_MAX_BODY_BYTES (a crawl's `store.max_body_bytes`). */
  max_body_bytes?: number
  /**
   * False: a 429 or 503 is answered at once, not retried here (a crawl requeues the URL and backs
   * the whole host off instead of holding a slot through Retry-After).
   */
  retry_throttled?: boolean
}

/** The target's answer (design.md §6 fetch response, with the body as bytes). */
export type FetchResult = {
  url: string
  final_url: string
  status: number
  headers: HeaderPair[]
  cookies: Cookie[]
  content_type: string | null
  /** Decoded from any Content-Encoding; the headers are left as the server sent them. */
  body: Uint8Array
  redirects: Redirect[]
  timing: { total_ms: number }
}
