import type { Cookie, HeaderPair } from '../types'

/** Conversions between Chromium's shapes (headers, cookies) and the service's. */

export const headerValue = (headers: HeaderPair[], name: string) => headers.find(([n]) => n.toLowerCase() === name)?.[1]
/** Whether two URLs name the same document (a refresh to the page itself is a reload, not a redirect). */
export const sameDocument = (a: string, b: string) => a.replace(/#.*$/s, '') === b.replace(/#.*$/s, '')

/** Chromium joins repeated headers (Set-Cookie above all) with a newline: one pair per line instead. */
export function splitHeaders(raw: { name: string; value: string }[] | Record<string, string> | undefined): HeaderPair[] {
  const entries = Array.isArray(raw) ? raw.map((h) => [h.name, h.value] as const) : Object.entries(raw ?? {})
  const out: HeaderPair[] = []
  for (const [name, value] of entries) for (const line of String(value).split('\n')) out.push([name, line])
  return out
}

/** Chromium's cookie as the service's Cookie shape (the domain without its leading dot, as the standard client gives it). */
export function toCookie(c: { name: string; value: string; domain: string; path: string; expires: number; session?: boolean; httpOnly: boolean; secure: boolean; sameSite?: string }): Cookie {
  const cookie: Cookie = { name: c.name, value: c.value, domain: c.domain.replace(/^\./, ''), path: c.path, http_only: c.httpOnly, secure: c.secure }
  if (!c.session && c.expires > 0) cookie.expires = new Date(Math.round(c.expires * 1000)).toISOString()
  if (c.sameSite === 'Lax' || c.sameSite === 'Strict' || c.sameSite === 'None') cookie.same_site = c.sameSite
  return cookie
}

export function toCookieParam(c: Cookie, url: string) {
  return {
    name: c.name,
    value: c.value,
    // Without a domain the cookie is host-only for the request URL, as a Set-Cookie without Domain would be.
    ...(c.domain ? { domain: c.domain } : { url }),
    path: c.path ?? '/',
    ...(c.secure !== undefined && { secure: c.secure }),
    ...(c.http_only !== undefined && { httpOnly: c.http_only }),
    ...(c.same_site && { sameSite: c.same_site }),
    ...(c.expires && { expires: Date.parse(c.expires) / 1000 }),
  }
}
