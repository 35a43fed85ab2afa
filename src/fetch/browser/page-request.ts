import type { Logger } from '../../log'
import type { Cookie, HeaderPair, Method } from '../types'
import type { Continuation, Paused } from './session'
import { toCookieParam } from './shapes'

// What a browser fetch sends, and how Chromium is told: cookies in the fetch's browser context,
// headers on its page, credentials per request and only to the first URL's origin.

export type BrowserFetch = {
  /** Absolute http(s) URL. */
  url: string
  /** Applied to the first main-document request; later hops are the browser's own. */
  method: Method
  body?: Uint8Array
  /**
   * Final request headers. User-Agent goes through the user-agent override; Authorization, Cookie
   * and Proxy-Authorization only to the first URL's origin; the rest to every request as extra headers.
   */
  headers: HeaderPair[]
  /** Set in the page's fresh browser context before navigating; no domain means the URL's host. */
  cookies: Cookie[]
  /** An http(s) proxy URL, applied to this fetch's browser context only. */
  proxy: string | null
  /** networkidle: load fired and no request in flight for 500 ms. */
  waitUntil: 'load' | 'networkidle'
  /** Server and client hops of the main frame together. */
  maxRedirects: number
}

/** A protocol command on the fetch's page, or (onPage false) on the browser. */
type Send = (method: string, params: Record<string, unknown>, onPage?: boolean) => Promise<unknown>

/** Headers that stay with the origin they were given for, as the standard client keeps them. */
const CREDENTIALS = new Set(['authorization', 'cookie', 'proxy-authorization'])

/** The credentials among the request headers, and the one origin they go to. */
export type Credentials = { origin: string; headers: [string, string][] }

export function credentialsOf(req: BrowserFetch): Credentials {
  // Extra headers would go to every host the page loads from: scripts, CDNs, trackers.
  return { origin: new URL(req.url).origin, headers: req.headers.filter(([name]) => CREDENTIALS.has(name.toLowerCase())) }
}

/** The request's headers with the credentials for its origin, when there are credentials at all. */
export function withCredentials(p: Paused, credentials: Credentials): Continuation {
  if (!credentials.headers.length) return {}
  const headers = Object.entries(p.request.headers ?? {}).filter(([name]) => !CREDENTIALS.has(name.toLowerCase()))
  if (URL.parse(p.request.url)?.origin === credentials.origin) headers.push(...credentials.headers)
  return { headers: headers.map(([name, value]) => ({ name, value })) }
}

/** Sets the fetch's cookies in its browser context and its headers (credentials aside) on its page. */
export async function prepare(send: Send, req: BrowserFetch, contextId: string, log: Logger): Promise<void> {
  await Promise.all([setCookies(send, req, contextId, log), ...headerCommands(send, req.headers)])
}

async function setCookies(send: Send, req: BrowserFetch, contextId: string, log: Logger) {
  if (!req.cookies.length) return
  const cookies = req.cookies.map((c) => toCookieParam(c, req.url))
  try {
    await send('Storage.setCookies', { cookies, browserContextId: contextId }, false)
  } catch {
    // One cookie Chromium refuses (a Secure one for http, a bad domain) must not sink the rest.
    for (const c of cookies) {
      await send('Storage.setCookies', { cookies: [c], browserContextId: contextId }, false).catch((err) => log.debug('chromium refused a cookie', { name: c.name, error: String(err) }))
    }
  }
}

function headerCommands(send: Send, headers: HeaderPair[]): Promise<unknown>[] {
  const extra: Record<string, string> = {}
  const names = new Map<string, string>()
  let userAgent: string | undefined
  let acceptLanguage: string | undefined
  for (const [name, value] of headers) {
    const lower = name.toLowerCase()
    if (lower === 'user-agent') {
      userAgent = value
      continue
    }
    if (lower === 'accept-language') acceptLanguage = value
    if (CREDENTIALS.has(lower)) continue // sent per request (withCredentials)
    const key = names.get(lower)
    if (key) extra[key] = `${extra[key]}, ${value}`
    else (names.set(lower, name), (extra[name] = value))
  }
  const out: Promise<unknown>[] = []
  if (names.size) out.push(send('Network.setExtraHTTPHeaders', { headers: extra }))
  if (userAgent) out.push(send('Emulation.setUserAgentOverride', { userAgent, ...(acceptLanguage && { acceptLanguage }) }))
  return out
}
