// The browser's guarding proxy on its own, spoken to over raw sockets: the direct route's SOCKS5,
// a named proxy's HTTP route and its password, what the address guard lets through, and what
// reaches the target byte for byte.
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'bun:test'
import { lookup as dnsLookup } from 'node:dns/promises'
import { connect, type Socket } from 'node:net'
import type { Lookup, Resolved } from '../../src/fetch/address-guard'
import { GuardProxies } from '../../src/fetch/browser/guard-proxy'
import { createLogger } from '../../src/log'
import { forwardProxy, type ForwardProxy } from '../helpers/forward-proxy'
import { tcpListener, type TcpListener } from '../helpers/tcp-listener'

const quiet = createLogger('error', () => {})

/** Sends `data` on a fresh connection to `port` and reads until the other side closes (or `ms`). */
async function exchange(port: number, data: string | Buffer | Buffer[], ms = 3000, onData?: (all: Buffer, s: Socket) => void): Promise<{ bytes: Buffer; text: string; closedByPeer: boolean }> {
  return new Promise((resolve) => {
    const s = connect(port, '127.0.0.1')
    let bytes = Buffer.alloc(0)
    const done = (closedByPeer: boolean) => {
      clearTimeout(timer)
      s.destroy()
      resolve({ bytes, text: bytes.toString('latin1'), closedByPeer })
    }
    const timer = setTimeout(() => done(false), ms)
    const parts: (string | Buffer)[] = Array.isArray(data) ? [...data] : [data]
    s.on('connect', () => s.write(parts.shift()!))
    s.on('data', (d: Buffer) => {
      bytes = Buffer.concat([bytes, d])
      // SOCKS: the method reply comes before the request may be sent.
      if (parts.length) s.write(parts.shift()!)
      onData?.(bytes, s)
    })
    s.on('close', () => done(true))
    s.on('error', () => {})
  })
}

/** A SOCKS5 greeting (no authentication) and a CONNECT to `host` (a name, or an IPv4 address) and `port`. */
function socks(host: string, port: number): Buffer[] {
  const v4 = /^\d+\.\d+\.\d+\.\d+$/.test(host)
  const address = v4 ? Buffer.from([1, ...host.split('.').map(Number)]) : Buffer.concat([Buffer.from([3, host.length]), Buffer.from(host, 'latin1')])
  const p = Buffer.alloc(2)
  p.writeUInt16BE(port)
  return [Buffer.from([5, 1, 0]), Buffer.concat([Buffer.from([5, 1, 0]), address, p])]
}
/** The proxy's answer to the CONNECT: the byte after the method reply's two. */
const replyCode = (r: { bytes: Buffer }) => r.bytes[3]

let open: GuardProxies
let guarded: GuardProxies
let target: TcpListener
let upstream: ForwardProxy
let lookups: string[] = []
/** Names of the test's own, each with the addresses a DNS server would answer. */
const lookup: Lookup = async (host) => {
  lookups.push(host)
  if (host === 'private.test') return [{ address: '127.0.0.1', family: 4 }]
  if (host === 'two.test')
    return [
      { address: '93.184.216.34', family: 4 },
      { address: '10.1.2.3', family: 4 },
    ]
  if (host === 'localhost') return (await dnsLookup(host, { all: true })) as Resolved[]
  throw Object.assign(new Error('not found'), { code: 'ENOTFOUND' })
}
const portOf = (url: string) => Number(new URL(url).port)
const authOf = (p: GuardProxies) => `Proxy-Authorization: Basic ${Buffer.from(`${p.username}:${p.password}`).toString('base64')}\r\n`

/** Through `port`, sends `line` into the tunnel and reads until the target echoes it. */
function tunnelEcho(port: number, opening: Buffer[] | string, line: string) {
  let sent = false
  return exchange(port, opening, 3000, (all, s) => {
    const text = all.toString('latin1')
    const ready = typeof opening === 'string' ? text.includes('\r\n\r\n') : all.length >= 12
    if (!sent && ready) {
      sent = true
      s.write(`TUNNEL ${line}\n`)
    }
    if (text.includes('echo:')) s.end()
  })
}

beforeAll(async () => {
  open = new GuardProxies({ allowPrivate: true, log: quiet, lookup })
  guarded = new GuardProxies({ allowPrivate: false, log: quiet, lookup })
  target = await tcpListener('127.0.0.1', (data, socket) => {
    if (data.startsWith('TUNNEL')) {
      if (data.endsWith('\n')) socket.write(`echo:${data}`)
    } else if (data.includes('\r\n\r\n')) {
      // Answered once the whole request is in (its Content-Length counted).
      const end = data.indexOf('\r\n\r\n') + 4
      const length = Number(/\r\ncontent-length: *(\d+)/i.exec(data.slice(0, end))?.[1] ?? 0)
      if (data.length - end >= length) socket.end('HTTP/1.1 200 OK\r\nContent-Length: 5\r\nConnection: keep-alive\r\nKeep-Alive: timeout=5\r\n\r\nhello')
    }
  })
  upstream = await forwardProxy()
})
afterAll(async () => {
  await Promise.all([open.close(), guarded.close(), target.close(), upstream.close()])
})
afterEach(() => {
  target.accepted = 0
  target.received.length = 0
  lookups = []
  upstream.reset()
})

describe('the direct route: SOCKS5', () => {
  test('its URL is socks5 on loopback; a named proxy gets an http listener of its own', async () => {
    expect(await open.url(null)).toMatch(/^socks5:\/\/127\.0\.0\.1:\d+$/)
    const named = await open.url(`http://127.0.0.1:${upstream.port}`)
    expect(named).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/)
    expect(portOf(named)).not.toBe(portOf(await open.url(null)))
    expect(await open.url(`http://127.0.0.1:${upstream.port}`)).toBe(named)
  })

  test('a CONNECT is a tunnel to the target, bytes both ways, by name or by address', async () => {
    const port = portOf(await open.url(null))
    const r = await tunnelEcho(port, socks('127.0.0.1', target.port), 'ping')
    expect([...r.bytes.subarray(0, 2)]).toEqual([5, 0])
    expect(replyCode(r)).toBe(0)
    expect(r.text).toContain('echo:TUNNEL ping\n')
    const byName = await tunnelEcho(port, socks('localhost', target.port), 'named')
    expect(byName.text).toContain('echo:TUNNEL named\n')
    expect(target.accepted).toBe(2)
  })

  test('an IPv6 target sent as a name, as Chromium sends it, is read as an address', async () => {
    const v6 = await tcpListener('::1')
    try {
      const r = await exchange(portOf(await guarded.url(null)), socks('::1', v6.port))
      expect(replyCode(r)).toBe(2)
      expect(guarded.failureFor(`http://[::1]:${v6.port}/`, 0)?.error?.code).toBe('blocked_address')
      expect(v6.accepted).toBe(0)
    } finally {
      await v6.close()
    }
  })

  test('what the protocol does not take is refused: no method without authentication, another command', async () => {
    const port = portOf(await open.url(null))
    const auth = await exchange(port, Buffer.from([5, 1, 2]))
    expect([...auth.bytes]).toEqual([5, 0xff])
    const bind = await exchange(port, [Buffer.from([5, 1, 0]), Buffer.from([5, 2, 0, 1, 127, 0, 0, 1, 0, 80])])
    expect(replyCode(bind)).toBe(7)
    const socks4 = await exchange(port, Buffer.from([4, 1, 0, 80, 127, 0, 0, 1, 0]))
    expect(socks4.text).toBe('')
    expect(socks4.closedByPeer).toBe(true)
    expect(target.accepted).toBe(0)
  })

  test('a request for the proxy itself is refused, even with private networks allowed', async () => {
    const port = portOf(await open.url(null))
    const r = await exchange(port, socks('127.0.0.1', port))
    expect(replyCode(r)).toBe(2)
    expect(open.failureFor(`http://127.0.0.1:${port}/`, 0)?.error?.code).toBe('blocked_address')
  })

  test('the proxy itself in other spellings of this machine is refused too', async () => {
    const port = portOf(await open.url(null))
    for (const host of ['::ffff:127.0.0.1', '::ffff:7f00:1', '0.0.0.0', '127.1', 'localhost']) {
      const r = await exchange(port, socks(host, port))
      expect(replyCode(r), host).toBe(2)
      expect(r.closedByPeer, host).toBe(true)
    }
  })

  test('a refused connection is answered 5 and remembered as the net error a browser would show', async () => {
    const gone = await tcpListener()
    await gone.close()
    const before = performance.now()
    const r = await exchange(portOf(await open.url(null)), socks('127.0.0.1', gone.port))
    expect(replyCode(r)).toBe(5)
    expect(open.failureFor(`http://127.0.0.1:${gone.port}/`, before)).toEqual({ net: 'ERR_CONNECTION_REFUSED', detail: expect.any(String) })
    // Remembered failures are for the document that follows them, not for later ones.
    expect(open.failureFor(`http://127.0.0.1:${gone.port}/`, performance.now())).toBeNull()
  })
})

describe('the address guard at connect time', () => {
  test('loopback in every form and a name that resolves to it: refused (2), the reason kept, no connection', async () => {
    const port = portOf(await guarded.url(null))
    for (const host of ['127.0.0.1', 'localhost', 'private.test', '2130706433']) {
      const before = performance.now()
      const r = await exchange(port, socks(host, target.port))
      expect(replyCode(r)).toBe(2)
      expect(r.closedByPeer).toBe(true)
      const as = host === '2130706433' ? '127.0.0.1' : host
      expect(guarded.failureFor(`http://${as}:${target.port}/`, before)?.error?.code).toBe('blocked_address')
    }
    // One look each, by the proxy: what it checked is what it would have connected to.
    expect(lookups).toEqual(['localhost', 'private.test'])
    expect(target.accepted).toBe(0)
  })

  test('a name with any private address is refused as a whole', async () => {
    const r = await exchange(portOf(await guarded.url(null)), socks('two.test', 443))
    expect(replyCode(r)).toBe(2)
    expect(guarded.failureFor('https://two.test/', 0)?.error?.message).toContain('10.1.2.3')
  })

  test('a name that does not resolve is a dns failure, answered 4', async () => {
    const r = await exchange(portOf(await guarded.url(null)), socks('nowhere.test', 443))
    expect(replyCode(r)).toBe(4)
    expect(guarded.failureFor('https://nowhere.test/', 0)?.error?.code).toBe('dns')
  })
})

describe('a named proxy’s route', () => {
  const named = () => `http://user:p%40ss@127.0.0.1:${upstream.port}`

  test('without the password: 407 and no connection anywhere', async () => {
    const port = portOf(await open.url(named()))
    const r = await exchange(port, `GET http://127.0.0.1:${target.port}/ HTTP/1.1\r\nHost: 127.0.0.1:${target.port}\r\n\r\n`)
    expect(r.text).toStartWith('HTTP/1.1 407 ')
    expect(r.text).toContain('Proxy-Authenticate: Basic realm="trawl"')
    const wrong = await exchange(port, `CONNECT 127.0.0.1:${target.port} HTTP/1.1\r\nProxy-Authorization: Basic ${Buffer.from('trawl:guess').toString('base64')}\r\n\r\n`)
    expect(wrong.text).toStartWith('HTTP/1.1 407 ')
    expect(upstream.requests).toEqual([])
    expect(upstream.connects).toEqual([])
    expect(target.accepted).toBe(0)
    // Each browser start has a password of its own.
    expect(open.password).not.toBe(guarded.password)
    expect(open.password.length).toBeGreaterThanOrEqual(20)
  })

  test('a head too long, or not for a proxy, is refused', async () => {
    const port = portOf(await open.url(named()))
    const long = await exchange(port, `GET http://127.0.0.1:${target.port}/ HTTP/1.1\r\nX: ${'a'.repeat(300 * 1024)}`)
    expect(long.text).toStartWith('HTTP/1.1 431 ')
    const origin = await exchange(port, `GET / HTTP/1.1\r\n${authOf(open)}\r\n`)
    expect(origin.text).toStartWith('HTTP/1.1 400 ')
    expect(upstream.requests).toEqual([])
  })

  test('plain http: checked, then sent on in absolute form with the named proxy’s credentials, Connection: close both ways', async () => {
    const port = portOf(await open.url(named()))
    const body = 'x'.repeat(200_000)
    const r = await exchange(
      port,
      `POST http://127.0.0.1:${target.port}/via HTTP/1.1\r\nHost: 127.0.0.1:${target.port}\r\nProxy-Connection: keep-alive\r\nConnection: keep-alive, X-Hop\r\nX-Hop: 1\r\nX-Kept: 2\r\nContent-Length: ${body.length}\r\n${authOf(open)}\r\n${body}`,
    )
    expect(r.text).toStartWith('HTTP/1.1 200 OK')
    expect(r.text).toContain('Connection: close\r\n')
    expect(r.text.endsWith('hello')).toBe(true)
    expect(upstream.requests.map((q) => q.target)).toEqual([`http://127.0.0.1:${target.port}/via`])
    const headers = upstream.requests[0]!.headers
    expect(headers.find(([n]) => n === 'proxy-authorization')?.[1]).toBe(`Basic ${Buffer.from('user:p@ss').toString('base64')}`)
    expect(headers.find(([n]) => n === 'x-kept')?.[1]).toBe('2')
    expect(headers.find(([n]) => n === 'x-hop')).toBeUndefined()
    expect(headers.find(([n]) => n === 'connection')?.[1]).toBe('close')
    // The browser's password for this proxy never travels on.
    expect(JSON.stringify(headers)).not.toContain(open.password)
    // The body arrived whole at the target.
    expect(target.received[0]!.endsWith(`\r\n\r\n${body}`)).toBe(true)
  })

  test('CONNECT is chained through the named proxy', async () => {
    const port = portOf(await open.url(named()))
    const r = await tunnelEcho(port, `CONNECT 127.0.0.1:${target.port} HTTP/1.1\r\n${authOf(open)}\r\n`, 'via')
    expect(r.text).toStartWith('HTTP/1.1 200 Connection Established\r\n\r\n')
    expect(r.text).toContain('echo:TUNNEL via\n')
    expect(upstream.connects).toEqual([`127.0.0.1:${target.port}`])
  })

  test('a refused target never reaches the named proxy', async () => {
    const port = portOf(await guarded.url(named()))
    const r = await exchange(port, `CONNECT 127.0.0.1:${target.port} HTTP/1.1\r\n${authOf(guarded)}\r\n`)
    expect(r.text).toStartWith('HTTP/1.1 403 ')
    const plain = await exchange(port, `GET http://[::1]:${target.port}/ HTTP/1.1\r\nHost: x\r\n${authOf(guarded)}\r\n`)
    // Closed unanswered: a page's script sees a network error, not a response.
    expect(plain.text).toBe('')
    expect(plain.closedByPeer).toBe(true)
    expect(upstream.requests).toEqual([])
    expect(upstream.connects).toEqual([])
    expect(target.accepted).toBe(0)
  })
})
