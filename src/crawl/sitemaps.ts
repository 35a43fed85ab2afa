/**
 * Sitemaps (sitemaps.org protocol): XML urlsets, sitemap indexes and plain-text lists, gzipped
 * or not. A sitemap is hostile input that may be huge, so this scans text with indexOf instead
 * of building a DOM, and bounds both the decompressed size and the number of URLs.
 */
import { gunzip } from 'node:zlib'
import { promisify } from 'node:util'

const gunzipAsync = promisify(gunzip)

/** The protocol's own limits for one sitemap file. */
export const MAX_SITEMAP_URLS = 50_000
export const MAX_SITEMAP_BYTES = 50 * 1024 * 1024

export interface SitemapOptions {
  /** URLs kept; the rest are dropped. */
  maxUrls?: number
  /** Bytes of (decompressed) sitemap read; a larger one is refused. */
  maxBytes?: number
}

export interface Sitemap {
  /** `index` lists child sitemaps; `urlset` and `text` list pages. */
  kind: 'urlset' | 'index' | 'text'
  /** Absolute http(s) URLs as written (the crawl normalizes them when it enqueues them). */
  urls: string[]
}

/** Thrown for a sitemap larger than `maxBytes`, gzipped or not. */
export class SitemapTooLarge extends Error {}

/**
 * Parses one sitemap file. Throws SitemapTooLarge past `maxBytes`, and a plain Error for broken
 * gzip or an XML document that is no sitemap (a soft-404 HTML page served as /sitemap.xml).
 */
export async function parseSitemap(bytes: Uint8Array, opts: SitemapOptions = {}): Promise<Sitemap> {
  const maxUrls = opts.maxUrls ?? MAX_SITEMAP_URLS
  const maxBytes = opts.maxBytes ?? MAX_SITEMAP_BYTES
  const text = new TextDecoder().decode(await decompress(bytes, maxBytes))
  const start = skipBlanks(text, text.charCodeAt(0) === 0xfeff ? 1 : 0)
  if (text[start] !== '<') return { kind: 'text', urls: textUrls(text, maxUrls) }
  const root = rootElement(text, start)
  if (!root) throw new Error('not a sitemap: no root element')
  const colon = root.name.indexOf(':')
  const local = root.name.slice(colon + 1)
  if (local !== 'urlset' && local !== 'sitemapindex') throw new Error(`not a sitemap: the root element is <${root.name}>`)
  // <loc> in the root's namespace prefix only: an image sitemap's <image:loc> names an image,
  // not a page.
  const loc = colon < 0 ? 'loc' : `${root.name.slice(0, colon)}:loc`
  return { kind: local === 'urlset' ? 'urlset' : 'index', urls: locUrls(text, root.end, loc, maxUrls) }
}

async function decompress(bytes: Uint8Array, maxBytes: number): Promise<Uint8Array> {
  const gzipped = bytes.length >= 2 && bytes[0] === 0x1f && bytes[1] === 0x8b
  if (!gzipped) {
    if (bytes.length > maxBytes) throw tooLarge(maxBytes)
    return bytes
  }
  try {
    // maxOutputLength stops inflating at the bound, so a gzip bomb costs maxBytes, not its size.
    return await gunzipAsync(bytes, { maxOutputLength: maxBytes })
  } catch (err) {
    if ((err as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE') throw tooLarge(maxBytes)
    throw new Error(`sitemap is not valid gzip: ${(err as Error).message}`)
  }
}

const tooLarge = (maxBytes: number) => new SitemapTooLarge(`sitemap is larger than ${maxBytes} bytes (decompressed); refused`)

function textUrls(text: string, maxUrls: number): string[] {
  const urls: string[] = []
  for (const line of text.split(/\r\n|\r|\n/)) {
    if (urls.length >= maxUrls) break
    const url = httpUrl(line.trim())
    if (url) urls.push(url)
  }
  return urls
}

/** Name and end of the first element, past the XML declaration, comments and a doctype. */
function rootElement(text: string, from: number): { name: string; end: number } | null {
  let at = from
  for (;;) {
    at = text.indexOf('<', at)
    if (at < 0) return null
    const next = skipMarkup(text, at)
    if (next !== null) {
      at = next
      continue
    }
    const name = tagName(text, at + 1)
    const end = text.indexOf('>', at)
    return name && end >= 0 ? { name, end: end + 1 } : null
  }
}

/**
 * The text content of every `<loc>` element (entities decoded, CDATA kept) that is a URL. Jumps
 * from one `<loc` to the next rather than visiting every tag (a urlset has eight tags per URL),
 * stepping over comments and CDATA sections that lie in between, where a `<loc` is no element.
 */
function locUrls(text: string, from: number, loc: string, maxUrls: number): string[] {
  const urls: string[] = []
  const open = `<${loc}`
  let at = from
  // The next comment and CDATA section at or after `at`; -1 once there are none left.
  let comment = text.indexOf('<!--', at)
  let cdata = text.indexOf('<![CDATA[', at)
  while (urls.length < maxUrls) {
    const found = text.indexOf(open, at)
    if (found < 0) break
    if (comment >= 0 && comment < at) comment = text.indexOf('<!--', at)
    if (cdata >= 0 && cdata < at) cdata = text.indexOf('<![CDATA[', at)
    const hidden = Math.min(comment < 0 ? Infinity : comment, cdata < 0 ? Infinity : cdata)
    if (hidden < found) {
      at = hidden === comment ? closeAfter(text, '-->', hidden + 4) : closeAfter(text, ']]>', hidden + 9)
      continue
    }
    const gt = text.indexOf('>', found)
    if (gt < 0) break
    at = gt + 1
    const next = text.charCodeAt(found + open.length)
    // `<location>` is another element; `<loc/>` is an empty one.
    if (!(next === 0x3e || next <= 0x20) || text[gt - 1] === '/') continue
    const content = elementText(text, at)
    at = content.end
    const url = httpUrl(content.text.trim())
    if (url) urls.push(url)
  }
  return urls
}

/** Text of an element whose content starts at `from`, up to its first closing tag. */
function elementText(text: string, from: number): { text: string; end: number } {
  let out = ''
  let at = from
  for (;;) {
    const lt = text.indexOf('<', at)
    if (lt < 0) return { text: out + decodeEntities(text.slice(at)), end: text.length }
    out += decodeEntities(text.slice(at, lt))
    if (text.startsWith('<![CDATA[', lt)) {
      const close = text.indexOf(']]>', lt + 9)
      const end = close < 0 ? text.length : close
      out += text.slice(lt + 9, end)
      at = close < 0 ? end : close + 3
    } else if (text.startsWith('<!--', lt)) {
      const close = text.indexOf('-->', lt + 4)
      at = close < 0 ? text.length : close + 3
    } else if (text[lt + 1] === '/') {
      const close = text.indexOf('>', lt)
      return { text: out, end: close < 0 ? text.length : close + 1 }
    } else {
      // A child element inside <loc> is not in the protocol: stop at it and keep what came before.
      return { text: out, end: lt }
    }
  }
}

/** Where a comment, CDATA, doctype, processing instruction or closing tag at `at` ends; null for a start tag. */
function skipMarkup(text: string, at: number): number | null {
  const c = text[at + 1]
  if (c === '/') return closeAfter(text, '>', at)
  if (c === '?') return closeAfter(text, '?>', at)
  if (c !== '!') return null
  if (text.startsWith('<!--', at)) return closeAfter(text, '-->', at + 4)
  if (text.startsWith('<![CDATA[', at)) return closeAfter(text, ']]>', at + 9)
  // A doctype may hold an internal subset in brackets; sitemaps have none worth reading.
  const gt = closeAfter(text, '>', at)
  const bracket = text.slice(at, gt).indexOf('[')
  return bracket < 0 ? gt : closeAfter(text, ']>', at + bracket)
}

function closeAfter(text: string, close: string, from: number): number {
  const i = text.indexOf(close, from)
  return i < 0 ? text.length : i + close.length
}

function tagName(text: string, from: number): string {
  let end = from
  for (; end < text.length; end++) {
    const c = text.charCodeAt(end)
    if (c === 0x3e || c === 0x2f || c <= 0x20) break // `>`, `/`, blanks
  }
  return text.slice(from, end)
}

function skipBlanks(text: string, from: number): number {
  let at = from
  while (at < text.length && /\s/.test(text[at]!)) at++
  return at
}

const NAMED: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" }

/** The five XML entities and numeric references; anything else stays as written. */
function decodeEntities(text: string): string {
  if (!text.includes('&')) return text
  return text.replace(/&(#[xX][0-9a-fA-F]{1,6}|#[0-9]{1,7}|amp|lt|gt|quot|apos);/g, (whole, ref: string) => {
    if (ref[0] !== '#') return NAMED[ref]!
    const cp = ref[1] === 'x' || ref[1] === 'X' ? parseInt(ref.slice(2), 16) : parseInt(ref.slice(1), 10)
    return cp > 0 && cp <= 0x10ffff ? String.fromCodePoint(cp) : whole
  })
}

/** The input when it is an absolute http(s) URL, else null. */
function httpUrl(text: string): string | null {
  if (!/^https?:\/\//i.test(text)) return null
  try {
    const url = new URL(text)
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.hostname ? text : null
  } catch {
    return null
  }
}
