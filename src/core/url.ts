/**
 * URL normalization and hashing (design.md §3; the rules and test vectors are in docs/api.md).
 * Every part of trawl that stores, dedupes or looks up a URL goes through here, so two
 * spellings of one resource always meet on one hash.
 */

const UNRESERVED = /[A-Za-z0-9\-._~]/

/** Normalized absolute http(s) URL, or null when the input is not one. */
export function normalizeUrl(input: string, base?: string): string | null {
  let url: URL
  try {
    url = base === undefined ? new URL(input) : new URL(input, base)
  } catch {
    return null
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return null
  if (!url.hostname) return null
  url.hash = ''
  if (url.hostname.endsWith('.')) url.hostname = url.hostname.replace(/\.+$/, '')
  if (!url.hostname) return null
  const search = url.search === '?' ? '' : normalizeEscapes(url.search)
  const path = normalizeEscapes(url.pathname || '/')
  const port = url.port ? `:${url.port}` : ''
  const auth = url.username ? `${url.username}${url.password ? `:${url.password}` : ''}@` : ''
  return `${url.protocol}//${auth}${url.hostname}${port}${path}${search}`
}

/** Uppercase %xx escapes and decode the ones that stand for unreserved characters. */
function normalizeEscapes(part: string): string {
  return part.replace(/%([0-9a-fA-F]{2})/g, (_, hex: string) => {
    const char = String.fromCharCode(parseInt(hex, 16))
    return UNRESERVED.test(char) ? char : `%${hex.toUpperCase()}`
  })
}

/** Lowercase punycode host name with no trailing dot, or null when it is not a valid host. */
export function normalizeHost(input: string): string | null {
  const trimmed = input.trim()
  if (!trimmed || /[\s/?#@\\]/.test(trimmed) || trimmed.length > 253) return null
  // A port is not part of a host; only a bracketed IPv6 literal may hold colons. (URL would
  // silently drop a default port like :80, so check the text.)
  if (trimmed.includes(':') && !/^\[[0-9a-fA-F:.]+\]$/.test(trimmed)) return null
  let host: string
  try {
    const url = new URL(`http://${trimmed}/`)
    if (url.port || url.username || url.password) return null
    host = url.hostname
  } catch {
    return null
  }
  host = host.replace(/\.+$/, '')
  if (!host || host.length > 253) return null
  return host
}

/** First 32 hex characters of SHA-256: the id of a normalized URL or host name. */
export function hash32(text: string): string {
  // One-shot hashing: a CryptoHasher object per URL cost the crawl more than the hash itself.
  return (Bun.SHA256.hash(text, 'hex') as string).slice(0, 32)
}

export const linkHash = (normalizedUrl: string) => hash32(normalizedUrl)
export const hostHash = (normalizedHost: string) => hash32(normalizedHost)

/** Host name of a normalized URL (no port), as hosts are keyed. */
export function hostOf(normalizedUrl: string): string {
  const authority = authorityOf(normalizedUrl)
  if (authority === null) return new URL(normalizedUrl).hostname
  if (authority.startsWith('[')) return authority.slice(0, authority.indexOf(']') + 1)
  const colon = authority.indexOf(':')
  return colon < 0 ? authority : authority.slice(0, colon)
}

/** Host and port of a normalized URL, as URL's `host` spells them (the politeness queues' key). */
export function hostPortOf(normalizedUrl: string): string {
  return authorityOf(normalizedUrl) ?? new URL(normalizedUrl).host
}

// Read from the text (the crawl asks for every link and log entry): normalizeUrl wrote it as
// scheme://host[:port]/path, the host already in URL's own spelling. Null when the text has
// user info or escapes, which only URL itself reads right.
function authorityOf(normalizedUrl: string): string | null {
  const start = normalizedUrl.indexOf('//') + 2
  const slash = normalizedUrl.indexOf('/', start)
  const authority = normalizedUrl.slice(start, slash < 0 ? undefined : slash)
  if (start < 2 || authority.includes('@') || authority.includes('%')) return null
  return authority
}
