/**
 * Raw source strings to values. The scan's walk (and HTMLRewriter, for navigators) hands out text
 * and attribute values exactly as written in the source, entities included (`&amp;` stays
 * `&amp;`), so every value a parse step returns goes through here.
 */
import { decodeHTML, decodeHTMLAttribute } from 'entities/decode'

/** Text content with character references decoded (`&amp;` → `&`, `&nbsp;` → U+00A0). */
export const decodeText = (raw: string): string => (raw.includes('&') ? decodeHTML(raw) : raw)

/** Attribute value with character references decoded, by the attribute rules of HTML. */
export const decodeAttr = (raw: string): string => (raw.includes('&') ? decodeHTMLAttribute(raw) : raw)

// Most texts need no change; testing first is several times cheaper than always replacing.
const NEEDS_COLLAPSE = /\s\s|[^\S ]|^ | $/

/** Runs of whitespace (no-break space included) become one space; ends trimmed. */
export const collapse = (text: string): string => (NEEDS_COLLAPSE.test(text) ? text.replace(/\s+/g, ' ').trim() : text)

/** Decoded, whitespace-collapsed attribute value, or null when nothing is left. */
export function attrOrNull(raw: string | null | undefined): string | null {
  if (raw == null) return null
  return collapse(decodeAttr(raw)) || null
}

/** Tokens of a raw space-separated attribute (rel), decoded, lowercased, each once. */
export const tokens = (raw: string | null): string[] => (raw ? splitTokens(decodeAttr(raw)) : [])

/** Tokens of a decoded space-separated attribute value, lowercased, each once. */
export function splitTokens(value: string | null): string[] {
  if (!value) return []
  const out: string[] = []
  for (const token of value.toLowerCase().split(/\s+/)) {
    if (token && !out.includes(token)) out.push(token)
  }
  return out
}

// Hrefs made only of characters the URL parser keeps as they are (no '&' of a character
// reference, no backslash), without dot segments but leading `./` and `../`, need no parse once
// their fragment is dropped (nothing before it depends on it):
// - a root-relative one is origin + href;
// - a path-relative one is origin + the base's directory, less a segment per `../`, + href;
// - an absolute or protocol-relative one is itself when its host is a plain lowercase name
//   (last label starting with a letter; no xn-- label, so no IDNA check) or an IPv4 address as
//   the parser writes it, it has no user, and any port is one the parser keeps as written.
// Most links of most sites are one of these; test/parse/scan.test.ts checks that the shortcuts
// answer what the parser does.
const KEPT = String.raw`[\w\-.~!$()*+,;=:@%/?]`
const PLAIN_ROOT_RELATIVE = new RegExp(String.raw`^/(?![/\\])${KEPT}*$`)
// The host is checked apart (plainHost): the nested `(?:[a-z0-9-]+\.)*` of a one-regex check
// backtracked through every label, 0.4 µs per character on hrefs like `//a.a.a.…a!`.
const PLAIN_ABSOLUTE = new RegExp(String.raw`^(https?:)?//([a-z0-9.-]+)(?::([1-9][0-9]{0,4}))?(/${KEPT}*)?$`)
// An IPv4 address as the parser writes it: four decimal parts, no leading zeros.
const CANONICAL_IPV4 = /^(?:(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.){3}(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)$/
// Leading `./` and `../` (group 1), then a path whose first segment is not empty, starts with
// no dot and has no colon (it would be a scheme): `?x` and `/x` would not start from the directory.
const SEGMENT = String.raw`[\w\-.~!$()*+,;=@%]`
const PLAIN_RELATIVE = new RegExp(String.raw`^((?:\.\.?/)*)(?:(?!\.|%2[eE])${SEGMENT}+(?:[/?]${KEPT}*)?)?$`)
const DOT_SEGMENT = /\/(?:\.|%2e)/i

// A port the parser writes as it is: not the scheme's default, within 16 bits (no leading zero: the regex).
const keptPort = (port: string, scheme: string) => +port <= 65535 && port !== (scheme === 'https:' ? '443' : '80')

// Labels of [a-z0-9-] joined by single dots, the last one starting with a letter.
function plainHost(host: string): boolean {
  if (host.charCodeAt(0) === 46 || host.charCodeAt(host.length - 1) === 46 || host.includes('..')) return false
  const c = host.charCodeAt(host.lastIndexOf('.') + 1)
  return c >= 97 && c <= 122
}

/**
 * Resolves raw href/src values against one base URL to absolute http(s) URLs without fragment.
 * Pages repeat the same href (menus in header and footer), so answers are cached per raw value.
 */
export class Resolver {
  private readonly cache = new Map<string, string | null>()
  private readonly origin: string | null
  private readonly protocol: string
  /** The base's path up to its last slash (a path-relative href's start). */
  private readonly directory: string
  // URL.parse takes the base as text faster than as a URL object (which it serializes anyway).
  private readonly href: string
  constructor(base: URL) {
    const plain = (base.protocol === 'https:' || base.protocol === 'http:') && !base.username && !base.password
    this.origin = plain ? base.origin : null
    this.protocol = base.protocol
    this.directory = base.pathname.slice(0, base.pathname.lastIndexOf('/') + 1)
    this.href = base.href
  }

  /** Absolute http(s) URL without fragment, or null for other schemes and unparsable values. */
  resolve(raw: string): string | null {
    if (this.origin !== null) {
      const hash = raw.indexOf('#')
      const href = hash < 0 ? raw : raw.slice(0, hash)
      if (href && !DOT_SEGMENT.test(href)) {
        if (PLAIN_ROOT_RELATIVE.test(href)) return this.origin + href
        const absolute = PLAIN_ABSOLUTE.exec(href)
        if (absolute) {
          const [, scheme = this.protocol, host, port, path] = absolute
          if ((plainHost(host!) ? !href.includes('xn--') : CANONICAL_IPV4.test(host!)) && (port === undefined || keptPort(port, scheme))) {
            const url = absolute[1] ? href : this.protocol + href
            return path ? url : `${url}/`
          }
        } else {
          const relative = PLAIN_RELATIVE.exec(href)
          if (relative) return this.origin + this.up(relative[1]!) + href.slice(relative[1]!.length)
        }
      }
    }
    let url = this.cache.get(raw)
    if (url === undefined) {
      url = absoluteHttp(decodeAttr(raw), this.href)
      this.cache.set(raw, url)
    }
    return url
  }

  /** The base's directory after the leading `./` and `../` segments of an href (`../` stops at the root). */
  private up(dots: string): string {
    let dir = this.directory
    for (let i = 0; i < dots.length; i += 2) {
      if (dots.charCodeAt(i + 1) === 47) continue // ./
      if (dir.length > 1) dir = dir.slice(0, dir.lastIndexOf('/', dir.length - 2) + 1)
      i++
    }
    return dir
  }
}

/** `value` resolved against `base`: absolute http(s), fragment dropped; null otherwise. */
export function absoluteHttp(value: string, base: string): string | null {
  const url = URL.parse(value, base)
  if (!url) return null
  const href = url.href
  if (!href.startsWith('https:') && !href.startsWith('http:')) return null
  const hash = href.indexOf('#')
  return hash < 0 ? href : href.slice(0, hash)
}

// A document without this text has no <base> element; most pages have none, and the test costs
// far less than an HTMLRewriter pass.
const MAY_HAVE_BASE = /<base[\s/>]/i
const FOUND = new Error('base found')

/**
 * The base URL of an HTML document at `documentUrl` (absolute, no fragment): its first
 * `<base href>` anywhere, resolved against `documentUrl`, when that is http(s); else
 * `documentUrl`. For passes that need the base before they meet any URL; the scan, which
 * resolves after its pass, finds the same element itself.
 */
export function documentBase(html: string, documentUrl: string): string {
  if (!MAY_HAVE_BASE.test(html)) return documentUrl
  let href = null as string | null
  try {
    // HTMLRewriter knows which <base> is an element (not in a comment, script or attribute).
    // Throwing from the handler ends the pass at the first one, usually early in <head>.
    new HTMLRewriter()
      .on('base[href]', {
        element: (el) => {
          href = el.getAttribute('href')
          throw FOUND
        },
      })
      .transform(html)
  } catch (error) {
    if (error !== FOUND) throw error
  }
  return href === null ? documentUrl : (absoluteHttp(decodeAttr(href), documentUrl) ?? documentUrl)
}
