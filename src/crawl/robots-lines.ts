/**
 * The line reader of robots.txt: from a body to its directives, the way Google's parser reads
 * lines (robots.ts applies them).
 */

/** Google reads the first 500 KiB and ignores the rest; RFC 9309 §2.5 asks for at least that. */
export const MAX_ROBOTS_BYTES = 500 * 1024
/** Longer lines are cut, as Google does (2083 × 8, its bound on a URL it will consider). */
const MAX_LINE_CHARS = 2083 * 8

export type Key = 'user-agent' | 'allow' | 'disallow' | 'sitemap' | 'crawl-delay'

// Google's parser accepts these misspellings; sites rely on it.
const KEYS: Record<string, Key> = {
  'user-agent': 'user-agent',
  useragent: 'user-agent',
  'user agent': 'user-agent',
  allow: 'allow',
  disallow: 'disallow',
  dissallow: 'disallow',
  dissalow: 'disallow',
  disalow: 'disallow',
  diasllow: 'disallow',
  disallaw: 'disallow',
  sitemap: 'sitemap',
  'site-map': 'sitemap',
  'crawl-delay': 'crawl-delay',
  crawldelay: 'crawl-delay',
  'crawl delay': 'crawl-delay',
}

/** The file's lines within MAX_ROBOTS_BYTES, a cut last line dropped rather than half read. */
export function robotsLines(text: string): string[] {
  let body = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text
  if (body.length > MAX_ROBOTS_BYTES / 3) {
    const bytes = new TextEncoder().encode(body.length > MAX_ROBOTS_BYTES ? body.slice(0, MAX_ROBOTS_BYTES + 1) : body)
    if (bytes.length > MAX_ROBOTS_BYTES) {
      body = new TextDecoder().decode(bytes.subarray(0, MAX_ROBOTS_BYTES))
      // A cut `Allow: /public/x` would read as `Allow: /p`: drop the partial line.
      body = body.slice(0, Math.max(body.lastIndexOf('\n'), body.lastIndexOf('\r'), 0))
    }
  }
  return body.split(/\r\n|\r|\n/)
}

/** The directive a line holds, comments and surrounding blanks removed; null for any other line. */
export function directive(raw: string): { key: Key; value: string } | null {
  let line = raw.length > MAX_LINE_CHARS ? raw.slice(0, MAX_LINE_CHARS) : raw
  const hash = line.indexOf('#')
  if (hash >= 0) line = line.slice(0, hash)
  line = line.trim()
  if (!line) return null
  let key: string
  let value: string
  const colon = line.indexOf(':')
  if (colon >= 0) {
    key = line.slice(0, colon).trim()
    value = line.slice(colon + 1).trim()
  } else {
    // Like Google, accept `Disallow /x` with a blank for the colon, but only when exactly two
    // words remain: anything longer is more likely prose than a directive.
    const words = line.split(/[ \t]+/)
    if (words.length !== 2) return null
    ;[key, value] = words as [string, string]
  }
  const known = KEYS[key.toLowerCase()]
  return known === undefined ? null : { key: known, value }
}
