import { isIP, type Socket } from 'node:net'

/**
 * The server side of a SOCKS5 CONNECT (RFC 1928), as the browser's guarding proxy speaks it to
 * Chromium: no authentication (Chromium offers none), CONNECT only, the target as a name or an
 * address. Nothing else of the protocol is needed.
 */

/** Reply codes of RFC 1928 §6 that the proxy sends. */
export const SOCKS_REPLY = {
  succeeded: 0x00,
  failure: 0x01,
  notAllowed: 0x02,
  hostUnreachable: 0x04,
  refused: 0x05,
  timedOut: 0x06,
  commandNotSupported: 0x07,
  addressNotSupported: 0x08,
} as const

/** A request the proxy could not take: the reply code to send before closing (null: just close). */
export class SocksError extends Error {
  constructor(
    readonly reply: number | null,
    message: string,
  ) {
    super(message)
  }
}

const MAX_GREETING = 2 + 255
const MAX_REQUEST = 4 + 1 + 255 + 2

/**
 * Reads the greeting, answers it (no authentication), and reads the CONNECT request. Resolves
 * with the target, host as a URL has it (`[::1]` in brackets), and any bytes read past the
 * request, with the socket paused; rejects with a SocksError.
 */
export async function readSocksConnect(socket: Socket, timeoutMs: number): Promise<{ host: string; port: number; rest: Buffer }> {
  const reader = new Reader(socket, timeoutMs)
  try {
    const greeting = await reader.until((b) => (b.length >= 2 ? 2 + b[1]! : null), MAX_GREETING)
    if (greeting[0] !== 5) throw new SocksError(null, 'not a SOCKS5 greeting')
    if (!greeting.subarray(2).includes(0x00)) {
      socket.end(Buffer.from([5, 0xff]))
      throw new SocksError(null, 'the client offers no method without authentication')
    }
    socket.write(Buffer.from([5, 0x00]))
    const request = await reader.until(requestLength, MAX_REQUEST)
    if (request[0] !== 5) throw new SocksError(SOCKS_REPLY.failure, 'not a SOCKS5 request')
    if (request[1] !== 1) throw new SocksError(SOCKS_REPLY.commandNotSupported, `SOCKS command ${request[1]} is not CONNECT`)
    const host = hostOf(request)
    const port = request.readUInt16BE(request.length - 2)
    if (host === null) throw new SocksError(SOCKS_REPLY.addressNotSupported, 'a SOCKS target the proxy cannot read')
    if (port === 0) throw new SocksError(SOCKS_REPLY.failure, 'port 0')
    return { host, port, rest: reader.rest() }
  } finally {
    reader.done()
  }
}

/** A reply to a CONNECT: the code, and a bound address of 0.0.0.0:0 (Chromium does not read it). */
export function socksReply(code: number): Buffer {
  return Buffer.from([5, code, 0, 1, 0, 0, 0, 0, 0, 0])
}

/** The length of a CONNECT request once enough of it is in, else null. */
function requestLength(b: Buffer): number | null {
  if (b.length < 5) return null
  switch (b[3]) {
    case 1:
      return 4 + 4 + 2
    case 3:
      return 4 + 1 + b[4]! + 2
    case 4:
      return 4 + 16 + 2
    default:
      return 4 + 2 // read no further: the address type is refused
  }
}

function hostOf(request: Buffer): string | null {
  const type = request[3]
  if (type === 1) return [...request.subarray(4, 8)].join('.')
  if (type === 4) {
    const groups: string[] = []
    for (let i = 0; i < 8; i++) groups.push(request.readUInt16BE(4 + 2 * i).toString(16))
    return URL.parse(`http://[${groups.join(':')}]/`)?.hostname ?? null
  }
  if (type === 3) {
    const name = request.subarray(5, 5 + request[4]!).toString('latin1')
    // An IPv6 address may come as a name, bare (Chromium sends `::1` so) or in brackets.
    const bare = name.replace(/^\[(.*)\]$/, '$1')
    if (isIP(bare) === 6) return URL.parse(`http://[${bare}]/`)?.hostname || null
    if (!/^[^\s/?#@:[\]\\%]+$/.test(name)) return null
    // As a URL would have it: lowercase, IDNA, and an IPv4 address in its one spelling.
    return URL.parse(`http://${name}/`)?.hostname || null
  }
  return null
}

/** Bytes from a socket until a whole message is in, bounded in size and time. */
class Reader {
  private buffered: Buffer = Buffer.alloc(0)
  private wake: (() => void) | null = null
  private gone: SocksError | null = null
  private readonly timer: ReturnType<typeof setTimeout>

  constructor(
    private readonly socket: Socket,
    timeoutMs: number,
  ) {
    socket.on('data', this.onData)
    socket.on('end', this.onGone)
    socket.on('close', this.onGone)
    this.timer = setTimeout(() => this.fail(new SocksError(null, `no SOCKS request within ${timeoutMs} ms`)), timeoutMs)
    socket.resume()
  }

  /** The first `length(buffered)` bytes, once they are in; the rest stays buffered. */
  async until(length: (b: Buffer) => number | null, max: number): Promise<Buffer> {
    for (;;) {
      if (this.gone) throw this.gone
      const n = length(this.buffered)
      if (n !== null && this.buffered.length >= n) {
        const message = this.buffered.subarray(0, n)
        this.buffered = this.buffered.subarray(n)
        return message
      }
      if (this.buffered.length > max) throw new SocksError(null, 'a SOCKS message too long')
      await new Promise<void>((resolve) => (this.wake = resolve))
    }
  }

  rest(): Buffer {
    return this.buffered
  }

  done() {
    clearTimeout(this.timer)
    this.socket.off('data', this.onData)
    this.socket.off('end', this.onGone)
    this.socket.off('close', this.onGone)
    this.socket.pause()
  }

  private readonly onData = (chunk: Buffer) => {
    this.buffered = this.buffered.length ? Buffer.concat([this.buffered, chunk]) : chunk
    this.poke()
  }

  private readonly onGone = () => this.fail(new SocksError(null, 'the connection ended before a whole SOCKS request'))

  private fail(err: SocksError) {
    this.gone ??= err
    this.poke()
  }

  private poke() {
    const wake = this.wake
    this.wake = null
    wake?.()
  }
}
