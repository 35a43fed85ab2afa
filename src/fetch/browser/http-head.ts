import type { Socket } from 'node:net'

/**
 * HTTP/1.1 message heads as the browser's guarding proxy (guard-proxy.ts) reads and rewrites
 * them. Only heads: bodies pass through as bytes, framed by the two ends themselves.
 */

export type Head = { start: string; headers: [string, string][] }

/** A head that could not be read: what the proxy answers (431, 400) or that the peer went away. */
export class HeadError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message)
  }
}

const END = Buffer.from('\r\n\r\n')

/**
 * Reads from `socket` until the blank line that ends a head, at most `maxBytes` of it, within
 * `timeoutMs` (0: no limit). Resolves with the head's text and the bytes read past it, with the
 * socket paused so nothing more is lost before the caller pipes it. `initial` is what was read
 * past an earlier head of the same socket.
 */
export function readHead(socket: Socket, maxBytes: number, timeoutMs: number, initial?: Buffer): Promise<{ head: string; rest: Buffer }> {
  return new Promise((resolve, reject) => {
    let buffered = initial ?? Buffer.alloc(0)
    let timer: ReturnType<typeof setTimeout> | null = null
    const done = () => {
      socket.off('data', onData)
      socket.off('end', onGone)
      socket.off('close', onGone)
      socket.off('error', onGone)
      if (timer) clearTimeout(timer)
      socket.pause()
    }
    const scan = (from: number): boolean => {
      const end = buffered.indexOf(END, Math.max(0, from - 3))
      if ((end < 0 ? buffered.length : end) > maxBytes) {
        done()
        reject(new HeadError(431, `the head is longer than ${maxBytes} bytes`))
        return true
      }
      if (end < 0) return false
      done()
      resolve({ head: buffered.subarray(0, end).toString('latin1'), rest: buffered.subarray(end + END.length) })
      return true
    }
    function onData(chunk: Buffer) {
      const from = buffered.length
      buffered = buffered.length ? Buffer.concat([buffered, chunk]) : chunk
      scan(from)
    }
    function onGone() {
      done()
      reject(new HeadError(0, 'the connection ended before a complete head'))
    }
    if (scan(0)) return
    socket.on('data', onData)
    socket.once('end', onGone)
    socket.once('close', onGone)
    socket.once('error', onGone)
    if (timeoutMs > 0) {
      timer = setTimeout(() => {
        done()
        reject(new HeadError(408, `no complete head within ${timeoutMs} ms`))
      }, timeoutMs)
    }
    socket.resume()
  })
}

/** The start line and header fields of a head; a folded or nameless line is a 400. */
export function parseHead(text: string): Head {
  const lines = text.split('\r\n')
  const start = lines[0] ?? ''
  const headers: [string, string][] = []
  for (let i = 1; i < lines.length; i++) {
    const line = lines[i]!
    const colon = line.indexOf(':')
    // Obsolete line folding (a leading blank) and a missing name are refused, as RFC 9112 allows.
    if (colon <= 0 || line[0] === ' ' || line[0] === '\t') throw new HeadError(400, 'a malformed header line')
    headers.push([line.slice(0, colon).trim(), line.slice(colon + 1).trim()])
  }
  return { start, headers }
}

export function serializeHead(start: string, headers: [string, string][]): string {
  let out = start + '\r\n'
  for (const [name, value] of headers) out += `${name}: ${value}\r\n`
  return out + '\r\n'
}

/** Connection-scoped fields: they describe one hop, so the proxy never passes them on. */
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'proxy-authorization', 'proxy-authenticate', 'te', 'trailer'])

/**
 * `headers` without the hop-by-hop fields (and those the Connection field names), followed by
 * `Connection: close`: every exchange through the proxy is one request on one connection, so a
 * client never sends its next request, meant for another host, down this host's connection.
 */
export function closingHeaders(headers: [string, string][]): [string, string][] {
  const named = new Set<string>()
  for (const [name, value] of headers) {
    if (name.toLowerCase() === 'connection') for (const token of value.split(',')) named.add(token.trim().toLowerCase())
  }
  const out = headers.filter(([name]) => {
    const lower = name.toLowerCase()
    return !(HOP_BY_HOP.has(lower) || named.has(lower))
  })
  out.push(['Connection', 'close'])
  return out
}

/** The status code of a response start line, or null when it is not one. */
export function statusOf(start: string): number | null {
  const m = /^HTTP\/1\.[01] (\d{3})(?: |$)/.exec(start)
  return m ? Number(m[1]) : null
}

/** A complete response the proxy writes itself, then closes the connection. */
export function replyHead(status: number, reason: string, headers: [string, string][], body = ''): string {
  const bytes = Buffer.byteLength(body)
  return (
    serializeHead(`HTTP/1.1 ${status} ${reason}`, [
      ...headers,
      ['Content-Type', 'text/plain; charset=utf-8'],
      ['Content-Length', String(bytes)],
      ['Connection', 'close'],
      ['Proxy-Connection', 'close'],
    ]) + body
  )
}
