import { fetchableScheme, literalChecked, resolveNameChecked, type Resolved } from './address-guard'
import { FetchError } from './errors'
import { untilAborted } from '../util/abort'

export type { Resolved }
export type Exchange = {
  url: URL
  method: string
  headers: Headers
  body?: Uint8Array
  /** A proxy URL, or null to connect directly. */
  proxy: string | null
  allowPrivate: boolean
  signal: AbortSignal
  /** Extra trust roots (tests with their own CA); production uses the system's. */
  ca?: string
  /** Which try this is: a name's addresses are taken in turn, so a retry tries the next one. */
  attempt?: number
}

/**
 * One HTTP request and its response headers: the only place trawl calls fetch(). Redirects are
 * not followed and bodies not decoded here; the caller does both by hand, so each hop is checked
 * and recorded and each body bounded.
 *
 * Directly, the hostname is resolved and checked by the address guard, and the request goes to
 * that checked address (Host header and TLS server name keep the name), so a DNS answer that
 * changes between check and connect cannot reach a private address. Through a proxy the proxy
 * resolves, so the target is checked before sending and the proxy trusted with the rest.
 */
export async function exchange(x: Exchange): Promise<{ response: Response; headers: [string, string][] }> {
  if (!fetchableScheme(x.url)) throw new FetchError('blocked_address', `${x.url.protocol} URLs cannot be fetched, only http and https`)
  const literal = literalChecked(x.url.hostname, x.allowPrivate)
  const addresses = literal ?? (await untilAborted(resolveNameChecked(x.url.hostname, x.allowPrivate), x.signal))
  const resolved = addresses[(x.attempt ?? 0) % addresses.length]!
  // The caller's per-hop copy: adding Host to it here saves a copy per request.
  const requestHeaders = x.headers
  let target = x.url
  const init: Record<string, unknown> = {}
  if (x.proxy) {
    init.proxy = x.proxy
    // The proxy routes by what it is told; it must be told the host the guard checked.
    requestHeaders.set('host', x.url.host)
  } else {
    // An explicit `proxy: false`: otherwise HTTP_PROXY/HTTPS_PROXY from the environment apply.
    init.proxy = false
    if (!literal) {
      target = new URL(x.url.href)
      target.hostname = resolved.family === 6 ? `[${resolved.address}]` : resolved.address
      if (!requestHeaders.has('host')) requestHeaders.set('host', x.url.host)
      if (x.url.protocol === 'https:') init.tls = { serverName: x.url.hostname, ...(x.ca ? { ca: x.ca } : {}) }
    }
  }
  if (x.ca && !init.tls) init.tls = { ca: x.ca }
  let response: Response
  try {
    response = await fetch(target.href, {
      method: x.method,
      headers: requestHeaders,
      body: x.body && x.method !== 'GET' && x.method !== 'HEAD' ? x.body : undefined,
      redirect: 'manual',
      decompress: false,
      signal: x.signal,
      ...init,
    } as RequestInit)
  } catch (err) {
    throw fetchFailure(err, x)
  }
  let headerBytes = 0
  const headers = [...response.headers] as [string, string][]
  for (const [name, value] of headers) headerBytes += name.length + value.length + 4
  if (headerBytes > MAX_RESPONSE_HEADER_BYTES) {
    void response.body?.cancel().catch(() => {})
    throw new FetchError('too_large', `the response headers from ${x.url.host} are ${headerBytes} bytes, over the ${MAX_RESPONSE_HEADER_BYTES}-byte limit`)
  }
  return { response, headers }
}

/**
 * Largest response header block accepted, as Chromium's. Bun's own limit sits between 1 and 2 MiB,
 * and a megabyte of headers would otherwise come back inside every fetch result and log line.
 */
export const MAX_RESPONSE_HEADER_BYTES = 256 * 1024

/** What went wrong, in the codes of design.md §6, from the error Bun's fetch threw. */
export function fetchFailure(err: unknown, x: Pick<Exchange, 'signal' | 'proxy' | 'url'>): unknown {
  if (x.signal.aborted) return x.signal.reason
  if (err instanceof FetchError) return err
  const code = String((err as { code?: string }).code ?? (err as Error).name ?? '')
  const text = (err as Error).message?.split(' For more information')[0] ?? String(err)
  const where = x.url.host
  if (code === 'ResponseHeadersTooLarge') return new FetchError('too_large', `the response headers from ${where} are too large`)
  if (code === 'Malformed_HTTP_Response' || code === 'InvalidHTTPResponse' || code === 'InvalidContentLength' || code === 'InvalidChunkedEncoding') {
    return new FetchError('bad_response', `${where} sent a malformed HTTP response (${code}; more than about 255 header lines reads as one too)`)
  }
  if (x.proxy && (/proxy/i.test(code) || code === 'ECONNREFUSED' || code === 'ConnectionRefused' || code === 'ECONNRESET' || code === 'FailedToOpenSocket')) {
    return new FetchError('proxy', `the proxy could not be used: ${text}`, true)
  }
  if (/CERT|TLS|SSL|EPROTO|HANDSHAKE/i.test(code)) return new FetchError('tls', `TLS with ${where} failed: ${text}`)
  if (code === 'ENOTFOUND' || code === 'DNSException' || code === 'EAI_AGAIN') return new FetchError('dns', `${x.url.hostname} could not be resolved`, code === 'EAI_AGAIN')
  if (code === 'TimeoutError' || code === 'ETIMEDOUT') return new FetchError('timeout', `${where} did not answer in time`)
  return new FetchError('connect', `could not fetch from ${where}: ${text}`, NETWORK_CODES.has(code))
}

/** Failures of the connection itself, worth another try; anything else would fail the same way again. */
const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ConnectionRefused',
  'ECONNRESET',
  'ConnectionClosed',
  'EPIPE',
  'FailedToOpenSocket',
  'ENETUNREACH',
  'EHOSTUNREACH',
  'ECONNABORTED',
  'UND_ERR_SOCKET',
  'ConnectionTimedOut',
])
