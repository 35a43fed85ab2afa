/**
 * The line reader of robots.txt: from a body to its directives, the way Google's parser reads
 * lines (robots.ts applies them). Bounds are counted in UTF-8 bytes, as the file has them on the
 * wire and as Google counts them, not in UTF-16 units.
 */

/** Google reads the first 500 KiB and ignores the rest; RFC 9309 §2.5 asks for at least that. */
export const MAX_ROBOTS_BYTES = 500 * 1024
/**
 * Bytes of a line kept, as Google keeps them: its line buffer is 2083 × 8 bytes (its bound on a
 * URL it will consider, with room to spare), one of them the terminating NUL. The rest is cut.
 */
export const MAX_LINE_BYTES = 2083 * 8 - 1

export type Key = 'user-agent' | 'allow' | 'disallow' | 'sitemap' | 'crawl-delay'

// Google's parser takes a key by its beginning (`Disallowed:` is a Disallow, `User-agents:` a
// User-agent), in this order, with the misspellings it accepts; sites rely on both.
const PREFIXES: [string, Key][] = [
  ['user-agent', 'user-agent'],
  ['useragent', 'user-agent'],
  ['user agent', 'user-agent'],
  ['allow', 'allow'],
  ['disallow', 'disallow'],
  ['dissallow', 'disallow'],
  ['dissalow', 'disallow'],
  ['disalow', 'disallow'],
  ['diasllow', 'disallow'],
  ['disallaw', 'disallow'],
  ['sitemap', 'sitemap'],
  ['site-map', 'sitemap'],
]
// Crawl-delay is not Google's (it ignores the line): taken as written, with the same misspellings.
const EXACT: Record<string, Key> = { 'crawl-delay': 'crawl-delay', crawldelay: 'crawl-delay', 'crawl delay': 'crawl-delay' }

function keyOf(written: string): Key | undefined {
  const key = written.toLowerCase()
  return EXACT[key] ?? PREFIXES.find(([prefix]) => key.startsWith(prefix))?.[1]
}

const ENCODER = new TextEncoder()

/** The file's lines within MAX_ROBOTS_BYTES, a cut last line dropped rather than half read. */
export function robotsLines(text: string): string[] {
  let body = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text
  if (body.length > MAX_ROBOTS_BYTES / 3) {
    const bytes = ENCODER.encode(body.length > MAX_ROBOTS_BYTES ? body.slice(0, MAX_ROBOTS_BYTES + 1) : body)
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
  let line = cutLine(raw)
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
  const known = keyOf(key)
  return known === undefined ? null : { key: known, value }
}

/** The line's first MAX_LINE_BYTES bytes of UTF-8. */
function cutLine(line: string): string {
  // A UTF-16 unit is at most 3 bytes of UTF-8, so a shorter line needs no count.
  if (line.length * 3 <= MAX_LINE_BYTES) return line
  let bytes = 0
  for (let i = 0; i < line.length; i++) {
    const c = line.charCodeAt(i)
    const pair = c >= 0xd800 && c < 0xdc00 && (line.charCodeAt(i + 1) & 0xfc00) === 0xdc00
    const size = c < 0x80 ? 1 : c < 0x800 ? 2 : pair ? 4 : 3
    if (bytes + size > MAX_LINE_BYTES) {
      // Google cuts through a character too, and matches the bytes it keeps as their escapes:
      // keeping them escaped makes a cut rule match the same URLs here.
      const kept = ENCODER.encode(line.slice(i, pair ? i + 2 : i + 1)).subarray(0, MAX_LINE_BYTES - bytes)
      return line.slice(0, i) + Array.from(kept, (b) => `%${b.toString(16).toUpperCase()}`).join('')
    }
    bytes += size
    if (pair) i++
  }
  return line
}
