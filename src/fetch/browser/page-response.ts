import { FetchError } from '../errors'
import type { HeaderPair } from '../types'
import { headerValue, splitHeaders } from './shapes'

// What the page answered: the main document's response with its headers as they came over the
// wire, and its body within the limit, as the server sent it or as the page rendered it.

export type FinalResponse = { url: string; status: number; headers: HeaderPair[]; contentType: string | null; networkId: string | undefined }

/** Types Chromium renders: their body is the serialized document, anything else comes back as sent. */
export const RENDERED_TYPES = new Set(['text/html', 'application/xhtml+xml'])

/** Whether two header lists of one response agree where it matters (redirect, type, length). */
const agreeOnFraming = (a: HeaderPair[], b: HeaderPair[]) => ['location', 'content-type', 'content-length'].every((n) => headerValue(a, n) === headerValue(b, n))

/**
 * The raw headers of main-document responses (Set-Cookie included, which the interceptor never
 * sees), from Network.responseReceivedExtraInfo, which comes before the interceptor's pause of
 * the same response or after it.
 */
export class WireHeaders {
  private latest: { id: string; status: number; headers: HeaderPair[] } | null = null

  /** An extra-info event of the document on its way (`expecting`) or of the current one (`final`). */
  received(params: { requestId: string; statusCode: number; headers: Record<string, string> }, final: FinalResponse | null, expecting: boolean): void {
    const raw = { id: params.requestId, status: params.statusCode, headers: splitHeaders(params.headers) }
    // Behind the pause of its response: the answer's headers are improved in place.
    if (final && final.networkId === raw.id && final.status === raw.status && !expecting) {
      if (agreeOnFraming(raw.headers, final.headers)) final.headers = raw.headers
    } else this.latest = raw
  }

  /**
   * The raw headers for this pause, taken once. A redirect chain keeps one request id, so they
   * must also agree with what the interceptor saw, or a late copy could speak for the next hop.
   */
  take(id: string | undefined, status: number, seen: HeaderPair[]): HeaderPair[] | null {
    const raw = this.latest
    this.latest = null
    if (!raw || raw.id !== id || raw.status !== status) return null
    const agree = agreeOnFraming(raw.headers, seen)
    return agree ? raw.headers : null
  }
}

// The doctype serializer keeps legacy doctypes intact; `<!DOCTYPE html>` for HTML5 pages.
const SERIALIZE = `(() => {
  const d = document, t = d.doctype
  return (t ? new XMLSerializer().serializeToString(t) : '') + (d.documentElement ? d.documentElement.outerHTML : '')
})()`

/** A protocol command on the fetch's page, or (onPage false) on the browser. */
type Send = <T = any>(method: string, params: Record<string, unknown>, onPage?: boolean) => Promise<T>

/** Reads a page's body within `limit` bytes; `tooLarge` makes the error for one over it. */
export class BodyReader {
  constructor(
    private readonly send: Send,
    private readonly limit: number,
    private readonly tooLarge: (what: string) => FetchError,
  ) {}

  /** The body of a paused response, as the server sent it. */
  async sent(requestId: string): Promise<Uint8Array> {
    const { stream } = await this.send<{ stream: string }>('Fetch.takeResponseBodyAsStream', { requestId }, false)
    const parts: Uint8Array[] = []
    let size = 0
    try {
      for (;;) {
        const chunk = await this.send<{ data: string; base64Encoded?: boolean; eof: boolean }>('IO.read', { handle: stream, size: 1 << 20 }, false)
        const bytes = chunk.base64Encoded ? Buffer.from(chunk.data, 'base64') : Buffer.from(chunk.data, 'utf8')
        size += bytes.length
        if (size > this.limit) throw this.tooLarge(`sent more than ${this.limit} bytes`)
        if (bytes.length) parts.push(bytes)
        if (chunk.eof) break
      }
    } finally {
      this.send('IO.close', { handle: stream }, false).catch(() => {})
    }
    return Buffer.concat(parts)
  }

  /** The document the page shows, serialized; `frameMime` is the type Chromium gave the frame. */
  async rendered(url: string, networkId: string | undefined, frameMime: string | null): Promise<Uint8Array> {
    // A document Chromium sniffed into something that is not HTML is better returned as sent.
    if (frameMime && !RENDERED_TYPES.has(frameMime) && networkId) {
      const raw = await this.send<{ body: string; base64Encoded: boolean }>('Network.getResponseBody', { requestId: networkId }).catch(() => null)
      if (raw) return this.bounded(raw.base64Encoded ? Buffer.from(raw.body, 'base64') : raw.body)
    }
    const r = await this.send<{ result: { value?: unknown }; exceptionDetails?: { text: string } }>('Runtime.evaluate', { expression: SERIALIZE, returnByValue: true })
    if (r.exceptionDetails || typeof r.result.value !== 'string') throw new FetchError('connect', `reading the rendered page of ${url} failed: ${r.exceptionDetails?.text ?? 'no document'}`)
    return this.bounded(r.result.value)
  }

  private bounded(body: string | Uint8Array): Uint8Array {
    // UTF-8 never has fewer bytes than UTF-16 code units, so a long string fails before encoding.
    if (body.length > this.limit) throw this.tooLarge(`renders to more than ${this.limit} bytes`)
    const bytes = typeof body === 'string' ? new TextEncoder().encode(body) : body
    if (bytes.length > this.limit) throw this.tooLarge(`renders to ${bytes.length} bytes`)
    return bytes
  }
}
