/** What kind of document a Content-Type names, for the parse pipeline. */

export type DocumentKind = 'html' | 'text'

/** The MIME type without parameters, lowercased (`Text/HTML; charset=x` → `text/html`). */
export function mimeEssence(contentType: string): string {
  const semi = contentType.indexOf(';')
  return (semi === -1 ? contentType : contentType.slice(0, semi)).trim().toLowerCase()
}

/**
 * HTML and XHTML are parsed fully; plain text and JSON are kept as text (their markdown and
 * text are the text itself). Anything else (images, PDFs, archives) answers null: the caller
 * reports `unsupported_content_type`.
 */
export function documentKind(contentType: string): DocumentKind | null {
  const mime = mimeEssence(contentType)
  if (mime === 'text/html' || mime === 'application/xhtml+xml') return 'html'
  if (mime === 'text/plain' || mime === 'application/json' || mime === 'text/json' || (mime.startsWith('application/') && mime.endsWith('+json'))) return 'text'
  return null
}

/** Whether a document's MIME type is one of `values` (`type/*` matches the whole type). */
export function contentTypeMatches(contentType: string, values: readonly string[]): boolean {
  const mime = mimeEssence(contentType)
  return values.some((v) => {
    const want = mimeEssence(v)
    return want === mime || (want.endsWith('/*') && mime.startsWith(want.slice(0, -1))) || want === '*/*'
  })
}

const escapes: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' }
/** Text shown as HTML: escaped inside <pre>, so the `html` step of a text document is safe to embed. */
export const textAsHtml = (text: string) => `<pre>${text.replace(/[&<>"]/g, (c) => escapes[c]!)}</pre>`

// A bare URL in plain text ends at whitespace, quotes or brackets; trailing sentence punctuation is not part of it.
const BARE_URL = /\bhttps?:\/\/[^\s"'<>()[\]{}`\\]+/g
const PUNCTUATION = '.,;:!?'

// `url` without trailing punctuation. A loop: the regex /[.,;:!?]+$/ tries every character of
// a punctuation run that does not end the URL, n² steps for a run of n.
function withoutTrailingPunctuation(url: string): string {
  let end = url.length
  while (end > 0 && PUNCTUATION.includes(url[end - 1]!)) end--
  return url.slice(0, end)
}

/** The absolute http(s) URLs written in a text document, in order, without duplicates. */
export function urlsInText(text: string): string[] {
  const seen = new Set<string>()
  for (const m of text.matchAll(BARE_URL)) {
    const raw = withoutTrailingPunctuation(m[0])
    try {
      const url = new URL(raw)
      url.hash = ''
      seen.add(url.href)
    } catch {
      // not a URL after all
    }
  }
  return [...seen]
}
