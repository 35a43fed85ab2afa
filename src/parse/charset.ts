/**
 * Turning document bytes into text. Bun's Response.text() and HTMLRewriter always decode as
 * UTF-8, so a windows-1252 or Shift_JIS page would come out garbled: we pick the encoding the
 * way browsers do (WHATWG "encoding sniffing", simplified) and decode with TextDecoder.
 */

const PRESCAN_BYTES = 1024

/** The charset parameter of a Content-Type header value, or null. */
export function charsetParam(contentType: string | undefined): string | null {
  if (!contentType) return null
  const m = /;\s*charset\s*=\s*"?([^";\s]+)/i.exec(contentType)
  return m ? m[1]! : null
}

function bomCharset(bytes: Uint8Array): string | null {
  if (bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) return 'utf-8'
  if (bytes[0] === 0xfe && bytes[1] === 0xff) return 'utf-16be'
  if (bytes[0] === 0xff && bytes[1] === 0xfe) return 'utf-16le'
  return null
}

// Our own fixed patterns over at most 1 KiB: linear, no user input in them.
const META_CHARSET = /<meta\s[^>]*?charset\s*=\s*["']?\s*([A-Za-z0-9_.:-]+)/i
const XML_ENCODING = /^<\?xml\s[^>]*?encoding\s*=\s*["']([A-Za-z0-9_.:-]+)["']/

/** The charset a document declares in its first KiB (meta charset, http-equiv, XML declaration). */
export function declaredCharset(bytes: Uint8Array): string | null {
  const head = new TextDecoder('windows-1252').decode(bytes.subarray(0, PRESCAN_BYTES))
  const m = META_CHARSET.exec(head) ?? XML_ENCODING.exec(head)
  return m ? m[1]! : null
}

/** A TextDecoder for a label, or null when the label names no encoding we know. */
function decoderFor(label: string | null, fromDocument: boolean): TextDecoder | null {
  if (!label) return null
  try {
    const decoder = new TextDecoder(label.trim().toLowerCase() as 'utf-8') // any WHATWG label is valid at run time; bun-types lists only a few
    // A document cannot be UTF-16 by its own ASCII-compatible meta tag (WHATWG prescan rule).
    if (fromDocument && decoder.encoding.startsWith('utf-16')) return new TextDecoder('utf-8')
    return decoder
  } catch {
    return null
  }
}

/**
 * Decodes document bytes: a BOM wins, then the Content-Type charset, then what the document
 * declares in its first KiB, else UTF-8. Answers the text and the canonical encoding name.
 * Invalid sequences become U+FFFD rather than failing the parse.
 */
export function decodeDocument(bytes: Uint8Array, contentType: string | undefined): { text: string; charset: string } {
  const decoder =
    decoderFor(bomCharset(bytes), false) ??
    decoderFor(charsetParam(contentType), false) ??
    decoderFor(declaredCharset(bytes), true) ??
    new TextDecoder('utf-8')
  return { text: decoder.decode(bytes), charset: decoder.encoding }
}
