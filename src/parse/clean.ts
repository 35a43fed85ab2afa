/**
 * Cleaned HTML (the `html` step), in one streaming HTMLRewriter pass: what runs or styles the
 * page goes, the content stays, and every URL in it becomes absolute so the HTML can be read
 * away from its site.
 */
import { decodeAttr, documentBase, tokens } from './html-values'

// Elements removed with their content: code, styles, embedded documents and plugins.
const REMOVED = 'script, style, noscript, template, iframe, frame, frameset, object, embed, applet'
// <link> types that only load resources for rendering; others (canonical, alternate) stay.
const RESOURCE_LINKS = ['stylesheet', 'preload', 'modulepreload', 'prefetch', 'dns-prefetch', 'preconnect']
// Attributes holding one URL, on whichever element carries them. Any other attribute whose name
// ends in `href` (xlink:href of SVG and other namespaced hrefs) is one too, except data-*.
const URL_ATTRIBUTES = new Set('href src poster action formaction cite background longdesc manifest'.split(' '))
const isUrlAttribute = (name: string) => URL_ATTRIBUTES.has(name) || (name.endsWith('href') && !name.startsWith('data-'))
const SCHEME = /^([a-z][a-z0-9+.-]*):/i
const TABS_AND_NEWLINES = /[\t\n\r]/g

/**
 * `html` with scripts, styles, noscript, templates, frames, plugins, resource links, meta
 * refreshes, comments and on* attributes removed, javascript: URLs dropped, and URL attributes (srcset included)
 * absolute against the document's base: its first <base href> anywhere, resolved against
 * `baseUrl`, when that is http(s); else `baseUrl` (the rule of every parse step).
 */
export async function cleanHtml(html: string, baseUrl: string): Promise<string> {
  const base = documentBase(html, baseUrl)
  return new HTMLRewriter()
    .on(REMOVED, { element: (el) => void el.remove() })
    .on('*', {
      element: (el) => {
        if (el.tagName === 'link' && tokens(el.getAttribute('rel')).some((rel) => RESOURCE_LINKS.includes(rel))) {
          el.remove()
          return
        }
        // A refresh is navigation: cleaned HTML shown elsewhere must not send its reader away.
        if (el.tagName === 'meta' && el.getAttribute('http-equiv')?.trim().toLowerCase() === 'refresh') {
          el.remove()
          return
        }
        // A <base> element's own href is relative to the document URL, like the base it sets.
        const against = el.tagName === 'base' ? baseUrl : base
        for (const [name, raw] of [...el.attributes]) {
          if (name.startsWith('on')) el.removeAttribute(name)
          else if (name === 'srcset') el.setAttribute(name, escapeAttr(absoluteSrcset(decodeAttr(raw), against)))
          else if (isUrlAttribute(name)) {
            const url = absolute(decodeAttr(raw), against)
            if (url === null) el.removeAttribute(name)
            else el.setAttribute(name, escapeAttr(url))
          }
        }
      },
    })
    .onDocument({ comments: (comment) => void comment.remove() })
    .transform(html)
}

// The scheme the URL parser reads: it skips C0 controls and spaces at the start and drops tabs
// and newlines anywhere. (No regex anchored at the end: /[\x00-\x20]+$/ on a value with a long
// inner run of spaces takes n² steps.)
function schemeOf(value: string): string | undefined {
  let start = 0
  while (start < value.length && value.charCodeAt(start) <= 0x20) start++
  return SCHEME.exec(value.slice(start).replace(TABS_AND_NEWLINES, ''))?.[1]?.toLowerCase()
}

/** `value` absolute against `base`; null for script URLs; unchanged when not a URL or not http(s). */
function absolute(value: string, base: string): string | null {
  const scheme = schemeOf(value)
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
    // A URL ending in commas has no descriptors; the commas separate candidates. (A loop, not
    // /,+$/: that regex takes n² steps on a long run of commas inside the URL.)
    if (url.endsWith(',')) {
      candidate.lastIndex -= match[2]!.length
      let end = url.length
      while (url.charCodeAt(end - 1) === 44) end--
      url = url.slice(0, end)
      descriptors = ''
    }
    const resolved = absolute(url, base)
    if (resolved !== null) candidates.push(descriptors ? `${resolved} ${descriptors}` : resolved)
  }
  return candidates.join(', ')
}

// setAttribute escapes only the quote; an ampersand must not start a character reference.
const escapeAttr = (value: string) => value.replaceAll('&', '&amp;')
