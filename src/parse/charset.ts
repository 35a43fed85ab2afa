/**
 * Turning document bytes into text. Bun's Response.text() and HTMLRewriter always decode as
 * UTF-8, so a windows-1252 or Shift_JIS page would come out garbled: we pick the encoding the
 * way browsers do (WHATWG "encoding sniffing", simplified) and decode with TextDecoder.
 */
import { documentKind } from './document'

const PRESCAN_BYTES = 1024

/** The charset parameter of a Content-Type header value, or null. */
export function charsetParam(contentType: string | undefined): string | null {
  if (!contentType) return null
  const m = /;\s*charset\s*=\s*["']?([^"';\s]+)/i.exec(contentType)
  return m ? m[1]! : null
}

function bomCharset(bytes: Uint8Array): string | null {
  if (bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) return 'utf-8'
  if (bytes[0] === 0xfe && bytes[1] === 0xff) return 'utf-16be'
  if (bytes[0] === 0xff && bytes[1] === 0xfe) return 'utf-16le'
  return null
}

// Labels that name an encoding, normalized, and the encoding's name. WHATWG defines a fixed set
// of some 220 labels, so this stays small whatever documents say; labels that name nothing are
// not kept.
const encodings = new Map<string, string>()

/** The WHATWG name of the encoding a label names ("latin1" → "windows-1252"), or null. */
function encodingOf(label: string): string | null {
  const key = label.trim().toLowerCase()
  const known = encodings.get(key)
  if (known !== undefined) return known
  try {
    const encoding = new TextDecoder(key as 'utf-8').encoding // any WHATWG label is valid at run time; bun-types lists only a few
    encodings.set(key, encoding)
    return encoding
  } catch {
    return null
  }
}

// Our own fixed pattern, anchored, over at most 1 KiB: no user input in it.
const XML_ENCODING = /^<\?xml\s[^>]*?encoding\s*=\s*["']([A-Za-z0-9_.:-]+)["']/

/**
 * The encoding a document declares in its first KiB, by the WHATWG prescan: the first
 * `<meta charset>`, or `<meta http-equiv="content-type" content="…charset=…">`, naming a known
 * encoding, outside comments and other tags' attributes; else an XML declaration. Answers the
 * WHATWG encoding name; a document cannot be UTF-16 by its own ASCII-compatible declaration
 * (UTF-8 then), and x-user-defined there means windows-1252.
 */
export function declaredCharset(bytes: Uint8Array): string | null {
  // windows-1252 maps each byte to one character: indexes in `head` are byte offsets.
  const head = decoderOf('windows-1252').decode(bytes.subarray(0, PRESCAN_BYTES))
  const xml = XML_ENCODING.exec(head)?.[1]
  // Only a meta tag declares an encoding to the prescan: most heads have none, and skipping
  // the walk then saves a crawl tens of microseconds a page.
  const encoding = (META.test(head) ? prescan(head) : null) ?? (xml === undefined ? null : encodingOf(xml))
  if (encoding === 'utf-16le' || encoding === 'utf-16be') return 'utf-8'
  if (encoding === 'x-user-defined') return 'windows-1252'
  return encoding
}

const META = /meta/i

// TextDecoders without `stream` keep no state between calls: one per encoding serves every document.
const decoders = new Map<string, TextDecoder>()
/** The shared decoder of a WHATWG encoding name (a label as TextDecoder takes it). */
export function decoderOf(encoding: string): TextDecoder {
  let d = decoders.get(encoding)
  if (!d) decoders.set(encoding, (d = new TextDecoder(encoding as 'utf-8')))
  return d
}

const isSpace = (c: number) => c === 0x09 || c === 0x0a || c === 0x0c || c === 0x0d || c === 0x20
const isAlpha = (c: number) => (c >= 0x61 && c <= 0x7a) || (c >= 0x41 && c <= 0x5a)

// "Prescan a byte stream to determine its encoding" (HTML), over `s`. Every step moves forward.
function prescan(s: string): string | null {
  const n = s.length
  let i = 0
  while (i < n) {
    if (s.charCodeAt(i) !== 0x3c) {
      i = s.indexOf('<', i)
      if (i < 0) return null
      continue
    }
    if (s.startsWith('<!--', i)) {
      // Ends at the first `-->` after `<!` (`<!-->` is a whole comment).
      const close = s.indexOf('-->', i + 2)
      if (close < 0) return null
      i = close + 3
    } else if (s.slice(i + 1, i + 5).toLowerCase() === 'meta' && (isSpace(s.charCodeAt(i + 5)) || s.charCodeAt(i + 5) === 0x2f)) {
      const meta = metaCharset(s, i + 6)
      if (meta === undefined) return null
      if (meta.encoding !== null) return meta.encoding
      i = meta.end
    } else if (isAlpha(s.charCodeAt(i + 1)) || (s.charCodeAt(i + 1) === 0x2f && isAlpha(s.charCodeAt(i + 2)))) {
      // Another tag: its attributes are read past, so a value holding `<meta` is no meta.
      i += 2
      while (i < n && !isSpace(s.charCodeAt(i)) && s.charCodeAt(i) !== 0x3e) i++
      for (;;) {
        const attribute = readAttribute(s, i)
        if (attribute === undefined) return null
        i = attribute.end
        if (attribute.name === null) break
      }
    } else if (s.startsWith('<!', i) || s.startsWith('</', i) || s.startsWith('<?', i)) {
      const close = s.indexOf('>', i)
      if (close < 0) return null
      i = close + 1
    } else i++
  }
  return null
}

type Attribute = { name: string | null; value: string; end: number }

/**
 * The meta tag whose attributes start at `at`: the encoding it declares (null for none) and
 * where to go on. undefined when the text ends inside the tag.
 */
function metaCharset(s: string, at: number): { encoding: string | null; end: number } | undefined {
  const seen = new Set<string>()
  let gotPragma = false
  let needPragma: boolean | null = null
  let charset: string | null | false = null // false: a charset attribute naming no known encoding
  let i = at
  for (;;) {
    const attribute = readAttribute(s, i)
    if (attribute === undefined) return undefined
    i = attribute.end
    const { name, value } = attribute
    if (name === null) break
    if (seen.has(name)) continue
    seen.add(name)
    if (name === 'http-equiv') gotPragma ||= value === 'content-type'
    else if (name === 'content' && charset === null) {
      const label = charsetInContent(value)
      const encoding = label === null ? null : encodingOf(label)
      if (encoding !== null) {
        charset = encoding
        needPragma = true
      }
    } else if (name === 'charset') {
      charset = encodingOf(value) ?? false
      needPragma = false
    }
  }
  const declared = needPragma === null || (needPragma && !gotPragma) || !charset ? null : charset
  return { encoding: declared, end: i }
}

/**
 * "Get an attribute" (HTML prescan) at `at`: name and value lowercased; name null when the tag
 * ends there (then `end` is just after its `>`). undefined when the text ends first.
 */
function readAttribute(s: string, at: number): Attribute | undefined {
  const n = s.length
  let i = at
  let c = s.charCodeAt(i)
  while (isSpace(c) || c === 0x2f) c = s.charCodeAt(++i)
  if (i >= n) return undefined
  if (c === 0x3e) return { name: null, value: '', end: i + 1 }
  let name = ''
  for (;;) {
    if (i >= n) return undefined
    c = s.charCodeAt(i)
    if (c === 0x3d && name) break
    if (isSpace(c)) {
      while (isSpace(s.charCodeAt(i))) i++
      if (i >= n) return undefined
      if (s.charCodeAt(i) !== 0x3d) return { name, value: '', end: i }
      break
    }
    if (c === 0x2f || c === 0x3e) return { name, value: '', end: i }
    name += s[i]!.toLowerCase()
    i++
  }
  i++ // the '='
  while (isSpace(s.charCodeAt(i))) i++
  if (i >= n) return undefined
  c = s.charCodeAt(i)
  if (c === 0x22 || c === 0x27) {
    const close = s.indexOf(s[i]!, i + 1)
    if (close < 0) return undefined
    return { name, value: s.slice(i + 1, close).toLowerCase(), end: close + 1 }
  }
  if (c === 0x3e) return { name, value: '', end: i }
  const from = i
  while (i < n && !isSpace((c = s.charCodeAt(i))) && c !== 0x3e) i++
  if (i >= n) return undefined
  return { name, value: s.slice(from, i).toLowerCase(), end: i }
}

/** "Extract a character encoding from a meta element": the label after `charset=` in `content`. */
function charsetInContent(content: string): string | null {
  let i = 0
  for (;;) {
    const at = content.indexOf('charset', i)
    if (at < 0) return null
    i = at + 7
    while (isSpace(content.charCodeAt(i))) i++
    if (content.charCodeAt(i) !== 0x3d) continue
    i++
    while (isSpace(content.charCodeAt(i))) i++
    const c = content.charCodeAt(i)
    if (c === 0x22 || c === 0x27) {
      const close = content.indexOf(content[i]!, i + 1)
      return close < 0 ? null : content.slice(i + 1, close)
    }
    let end = i
    while (end < content.length && !isSpace(content.charCodeAt(end)) && content.charCodeAt(end) !== 0x3b) end++
    return end > i ? content.slice(i, end) : null
  }
}

/** A TextDecoder for a label, or null when the label names no encoding we know. */
function decoderFor(label: string | null): TextDecoder | null {
  const encoding = label === null ? null : encodingOf(label)
  return encoding === null ? null : decoderOf(encoding)
}

/**
 * Decodes document bytes: a BOM wins, then the Content-Type charset, then (for HTML, or when
 * the type is not known) what the document declares in its first KiB, else UTF-8. Plain text
 * and JSON are not prescanned: markup written in them declares nothing. Answers the text and
 * the WHATWG encoding name. Invalid sequences become U+FFFD rather than failing the parse.
 */
export function decodeDocument(bytes: Uint8Array, contentType: string | undefined): { text: string; charset: string } {
  const markup = contentType === undefined || documentKind(contentType) !== 'text'
  const decoder = decoderFor(bomCharset(bytes)) ?? decoderFor(charsetParam(contentType)) ?? (markup ? decoderFor(declaredCharset(bytes)) : null) ?? decoderOf('utf-8')
  return { text: decoder.decode(bytes), charset: decoder.encoding }
}
