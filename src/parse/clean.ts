/**
 * Cleaned HTML (the `html` step), in one streaming HTMLRewriter pass: what runs or styles the
 * page goes, the content stays, and every URL in it becomes absolute so the HTML can be read
 * away from its site.
 */
import { decodeAttr, tokens } from './html-values'

// Elements removed with their content: code, styles, embedded documents and plugins.
const REMOVED = 'script, style, noscript, template, iframe, frame, frameset, object, embed, applet'
// <link> types that only load resources for rendering; others (canonical, alternate) stay.
const RESOURCE_LINKS = ['stylesheet', 'preload', 'modulepreload', 'prefetch', 'dns-prefetch', 'preconnect']
// Attributes holding one URL, on whichever element carries them.
const URL_ATTRIBUTES = new Set('href src poster action formaction cite background longdesc manifest'.split(' '))
const SCHEME = /^([a-z][a-z0-9+.-]*):/i
// The URL parser drops tabs and newlines anywhere and spaces and controls at the ends.
const IGNORED_BY_URL_PARSER = /[\t\n\r]|^[\x00-\x20]+|[\x00-\x20]+$/g

/**
 * `html` with scripts, styles, noscript, templates, frames, plugins, resource links, comments
 * and on* attributes removed, javascript: URLs dropped, and URL attributes (srcset included)
 * absolute against `baseUrl` or the document's first <base href>.
 */
export async function cleanHtml(html: string, baseUrl: string): Promise<string> {
  let base = baseUrl
  let baseSeen = false
  return new HTMLRewriter()
    .on(REMOVED, { element: (el) => void el.remove() })
    .on('*', {
      element: (el) => {
        if (el.tagName === 'link' && tokens(el.getAttribute('rel')).some((rel) => RESOURCE_LINKS.includes(rel))) {
          el.remove()
          return
        }
        const isBase = el.tagName === 'base'
        for (const [name, raw] of [...el.attributes]) {
          if (name.startsWith('on')) el.removeAttribute(name)
          else if (name === 'srcset') el.setAttribute(name, escapeAttr(absoluteSrcset(decodeAttr(raw), base)))
          else if (URL_ATTRIBUTES.has(name)) {
            const url = absolute(decodeAttr(raw), isBase && !baseSeen ? baseUrl : base)
            if (url === null) el.removeAttribute(name)
            else el.setAttribute(name, escapeAttr(url))
            // The first <base href> sets the base of the URLs after it (HTML).
            if (isBase && name === 'href' && !baseSeen && url !== null) base = url
          }
        }
        if (isBase) baseSeen ||= el.hasAttribute('href')
      },
    })
    .onDocument({ comments: (comment) => void comment.remove() })
    .transform(html)
}

/** `value` absolute against `base`; null for script URLs; unchanged when not a URL or not http(s). */
function absolute(value: string, base: string): string | null {
  const scheme = SCHEME.exec(value.replace(IGNORED_BY_URL_PARSER, ''))?.[1]?.toLowerCase()
  if (scheme === 'javascript' || scheme === 'vbscript') return null
  if (scheme !== undefined && scheme !== 'http' && scheme !== 'https') return value
  return URL.parse(value, base)?.href ?? value
}

/** Every URL of a srcset absolute, descriptors kept ("a.jpg 1x, b.jpg 2x"). */
function absoluteSrcset(srcset: string, base: string): string {
  const candidates: string[] = []
  // The candidate grammar of HTML: a URL without spaces, then descriptors up to a comma.
  const candidate = /[\s,]*([^\s,][^\s]*)([^,]*)/y
  let match: RegExpExecArray | null
  while ((match = candidate.exec(srcset)) !== null && match[0]) {
    let url = match[1]!
    let descriptors = match[2]!.trim()
    // A URL ending in commas has no descriptors; the commas separate candidates.
    if (url.endsWith(',')) {
      candidate.lastIndex -= match[2]!.length
      url = url.replace(/,+$/, '')
      descriptors = ''
    }
    const resolved = absolute(url, base)
    if (resolved !== null) candidates.push(descriptors ? `${resolved} ${descriptors}` : resolved)
  }
  return candidates.join(', ')
}

// setAttribute escapes only the quote; an ampersand must not start a character reference.
const escapeAttr = (value: string) => value.replaceAll('&', '&amp;')
