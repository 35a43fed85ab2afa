import { decodeDocument, decoderOf } from '../parse/charset'
import { mimeEssence } from '../parse/document'
import { decodeAttr } from '../parse/html-values'
import type { Redirect } from './types'

/** Statuses followed as redirects, and what kind each is (SPEC Redirect). */
export const REDIRECT_TYPE: Record<number, Redirect['type']> = { 301: 'permanent', 308: 'permanent', 302: 'temporary', 303: 'temporary', 307: 'temporary' }

/** The method and whether the body is kept on the next hop (Fetch standard, §4.4 HTTP-redirect fetch). */
export function nextMethod(status: number, method: string): { method: string; keepBody: boolean } {
  if (status === 303 && method !== 'GET' && method !== 'HEAD') return { method: 'GET', keepBody: false }
  if ((status === 301 || status === 302) && method === 'POST') return { method: 'GET', keepBody: false }
  return { method, keepBody: true }
}

/** Longest wait a meta refresh may ask for and still count as a redirect rather than a reload timer. */
export const MAX_REFRESH_DELAY_S = 30
/** Only the head of a document is searched; a refresh further down is not a redirect a crawler should take. */
const HEAD_BYTES = 64 * 1024

/**
 * The client-side redirect a document asks for with `<meta http-equiv="refresh">`: its target
 * resolved against the document, or null. A refresh to the page itself is a reload, not a redirect.
 */
export async function metaRefresh(body: Uint8Array, contentType: string | null, url: string): Promise<{ location: string; delay: number } | null> {
  const essence = contentType ? mimeEssence(contentType) : ''
  if (essence !== 'text/html' && essence !== 'application/xhtml+xml') return null
  const head = body.subarray(0, HEAD_BYTES)
  // Cheap precheck: most pages have no refresh at all.
  if (!/http-equiv\s*=\s*["']?refresh/i.test(decoderOf('windows-1252').decode(head))) return null
  const { text } = decodeDocument(head, contentType ?? undefined)
  let content: string | null = null
  let inNoscript = 0
  await new HTMLRewriter()
    .on('noscript', {
      element(el) {
        // With scripting on (how pages are meant to be seen), a browser ignores a refresh inside <noscript>.
        inNoscript++
        el.onEndTag(() => void inNoscript--)
      },
    })
    .on('meta[http-equiv]', {
      element(el) {
        if (content === null && !inNoscript && el.getAttribute('http-equiv')!.trim().toLowerCase() === 'refresh') content = decodeAttr(el.getAttribute('content') ?? '')
      },
    })
    .transform(new Response(text))
    .arrayBuffer()
  if (content === null) return null
  const parsed = parseRefresh(content)
  if (!parsed || parsed.delay > MAX_REFRESH_DELAY_S) return null
  const target = URL.parse(parsed.url, url)
  if (!target || (target.protocol !== 'http:' && target.protocol !== 'https:')) return null
  const here = URL.parse(url)!
  target.hash = ''
  here.hash = ''
  return target.href === here.href ? null : { location: target.href, delay: parsed.delay }
}

/** The HTML standard's "shared declarative refresh steps": `5; url=/next`, `0;URL='x'`, `3 /next`. */
function parseRefresh(content: string): { delay: number; url: string } | null {
  const m = /^\s*(\d+)(?:\.[\d.]*)?\s*(?:[;,]\s*|\s+)?(.*)$/s.exec(content)
  if (!m) return null
  let rest = m[2]!.trim()
  const u = /^url\s*=\s*/i.exec(rest)
  if (u) rest = rest.slice(u[0].length)
  const quoted = /^(["'])(.*?)(\1|$)/s.exec(rest)
  const target = (quoted ? quoted[2]! : rest).trim()
  return target ? { delay: Number(m[1]), url: target } : null
}
