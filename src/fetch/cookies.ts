import { isIP } from 'node:net'
import { getPublicSuffix } from 'tldts'
import type { Cookie } from './types'

/**
 * Cookies of one fetch (RFC 6265, the parts a single request chain needs): the caller's cookies
 * plus every Set-Cookie along the redirect chain, sent to each hop they match.
 */
export class CookieJar {
  private cookies: Cookie[]
  /** Cookies the target set, in the order it set them (the fetch result's `cookies`). */
  readonly received: Cookie[] = []

  /** `origin` is the host a cookie without a domain belongs to. */
  constructor(initial: Cookie[], origin: URL) {
    this.cookies = initial.map((c) => (c.domain ? c : { ...c, domain: origin.hostname, hostOnly: true }) as Cookie)
  }

  /** The Cookie header for a URL, or null when no cookie matches. */
  headerFor(url: URL, now = Date.now()): string | null {
    if (!this.cookies.length) return null
    const matching = this.cookies.filter((c) => matches(c, url, now))
    // Longer paths first, as browsers send them.
    matching.sort((a, b) => (b.path ?? '/').length - (a.path ?? '/').length)
    return matching.length ? matching.map((c) => `${c.name}=${c.value}`).join('; ') : null
  }

  /** Takes a response's Set-Cookie lines; malformed lines and cookies for other domains are ignored. */
  receive(setCookies: string[], url: URL) {
    for (const line of setCookies) {
      const cookie = parseSetCookie(line, url)
      if (!cookie) continue
      this.received.push(publicCookie(cookie))
      if (!jarMayKeep(cookie, url)) continue
      this.cookies = this.cookies.filter((c) => !(c.name === cookie.name && normDomain(c.domain) === normDomain(cookie.domain) && (c.path ?? '/') === (cookie.path ?? '/')))
      this.cookies.push(cookie)
    }
  }
}

type JarCookie = Cookie & { hostOnly?: boolean }

/**
 * Whether a received cookie may be sent on, as a browser decides (RFC 6265bis): not a Secure
 * cookie that came over plain http, not one for a public suffix (`com`, `co.uk`, `github.io`)
 * or for part of an IP address. Such cookies are still reported in `cookies`.
 */
function jarMayKeep(c: JarCookie, url: URL): boolean {
  if (c.secure && url.protocol !== 'https:') return false
  const host = url.hostname.toLowerCase()
  if (c.hostOnly || c.domain === host) return true
  return !isIP(host.replace(/^\[|\]$/g, '')) && getPublicSuffix(c.domain!, { allowPrivateDomains: true }) !== c.domain
}
const publicCookie = ({ hostOnly: _, ...c }: JarCookie): Cookie => c
const normDomain = (d: string | undefined) => (d ?? '').replace(/^\./, '').toLowerCase()

function matches(c: JarCookie, url: URL, now: number): boolean {
  const host = url.hostname.toLowerCase()
  const domain = normDomain(c.domain)
  if (c.hostOnly ? host !== domain : host !== domain && !host.endsWith(`.${domain}`)) return false
  const path = c.path ?? '/'
  if (!(url.pathname === path || (url.pathname.startsWith(path) && (path.endsWith('/') || url.pathname[path.length] === '/')))) return false
  if (c.secure && url.protocol !== 'https:') return false
  return !(c.expires && Date.parse(c.expires) <= now)
}

/** RFC 6265 §5.1.4 default-path: the request path up to its last slash. */
const defaultPath = (url: URL) => {
  const p = url.pathname
  const slash = p.lastIndexOf('/')
  return slash <= 0 ? '/' : p.slice(0, slash)
}

/** One Set-Cookie line as a Cookie, or null when it is malformed or names another site. */
export function parseSetCookie(line: string, url: URL, now = Date.now()): JarCookie | null {
  const [pair, ...attrs] = line.split(';')
  const eq = pair!.indexOf('=')
  if (eq < 1) return null
  const name = pair!.slice(0, eq).trim()
  const value = pair!
    .slice(eq + 1)
    .trim()
    .replace(/^"(.*)"$/, '$1')
  if (!name || name.length > 256 || value.length > 4096) return null
  const cookie: JarCookie = { name, value }
  let maxAge: number | null = null
  for (const attr of attrs) {
    const i = attr.indexOf('=')
    const key = (i < 0 ? attr : attr.slice(0, i)).trim().toLowerCase()
    const val = i < 0 ? '' : attr.slice(i + 1).trim()
    if (key === 'domain' && val) cookie.domain = val.replace(/^\./, '').toLowerCase()
    else if (key === 'path' && val.startsWith('/')) cookie.path = val
    else if (key === 'expires') {
      const t = Date.parse(val)
      if (!Number.isNaN(t)) cookie.expires = new Date(t).toISOString()
    } else if (key === 'max-age' && /^-?\d+$/.test(val)) maxAge = Number(val)
    else if (key === 'httponly') cookie.http_only = true
    else if (key === 'secure') cookie.secure = true
    else if (key === 'samesite') {
      const s = val.toLowerCase()
      if (s === 'lax' || s === 'strict' || s === 'none') cookie.same_site = (s[0]!.toUpperCase() + s.slice(1)) as Cookie['same_site']
    }
  }
  // Max-Age wins over Expires (RFC 6265 §5.3 step 3).
  if (maxAge !== null) cookie.expires = new Date(now + Math.max(maxAge, -1) * 1000).toISOString()
  const host = url.hostname.toLowerCase()
  if (cookie.domain) {
    // A site may only set cookies for itself or a parent domain of itself.
    if (host !== cookie.domain && !host.endsWith(`.${cookie.domain}`)) return null
  } else {
    cookie.domain = host
    cookie.hostOnly = true
  }
  cookie.path ??= defaultPath(url)
  return cookie
}
