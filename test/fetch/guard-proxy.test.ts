// The browser's guarding proxy on its own, spoken to over raw sockets: who may use it, what the
// address guard lets through, and what reaches the target byte for byte.
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'bun:test'
import { connect, type Socket } from 'node:net'
import { lookup as dnsLookup } from 'node:dns/promises'
import type { Lookup, Resolved } from '../../src/fetch/address-guard'
import { GuardProxies } from '../../src/fetch/browser/guard-proxy'
import { createLogger } from '../../src/log'
import { forwardProxy, type ForwardProxy } from '../helpers/forward-proxy'
import { tcpListener, type TcpListener } from '../helpers/tcp-listener'

const quiet = createLogger('error', () => {})

/** Sends `data` on a fresh connection to `port` and reads until the other side closes (or `ms`). */
async function exchange(port: number, data: string | Buffer, ms = 3000, onData?: (all: string, s: Socket) => void): Promise<{ text: string; closedByPeer: boolean }> {
  return new Promise((resolve) => {
    const s = connect(port, '127.0.0.1')
    let text = ''
    const done = (closedByPeer: boolean) => {
      clearTimeout(timer)
      s.destroy()
      resolve({ text, closedByPeer })
    }
    const timer = setTimeout(() => done(false), ms)
    s.on('connect', () => s.write(data))
    s.on('data', (d) => {
      text += d.toString('latin1')
      onData?.(text, s)
    })
    s.on('close', () => done(true))
    s.on('error', () => {})
  })
}

/** Opens a tunnel through `port` to the target, sends `line`, and reads until the target echoes it. */
function tunnelEcho(port: number, authorization: string, line: string) {
  let sent = false
  return exchange(port, `CONNECT 127.0.0.1:${target.port} HTTP/1.1\r\n${authorization}\r\n`, 3000, (all, s) => {
    if (!sent && all.includes('\r\n\r\n')) {
      sent = true
      s.write(`TUNNEL ${line}\n`)
    }
    if (all.includes('echo:')) s.end()
  })
}

let open: GuardProxies
let guarded: GuardProxies
let target: TcpListener
let lookups: string[] = []
/** Names of the test's own: `rebind.test` is public to the interceptor's look and private to the proxy's. */
const lookup: Lookup = async (host) => {
  lookups.push(host)
  if (host === 'private.test') return [{ address: '127.0.0.1', family: 4 }]
  if (host === 'two.test') return [{ address: '93.184.216.34', family: 4 }, { address: '10.1.2.3', family: 4 }]
  if (host === 'localhost') return (await dnsLookup(host, { all: true })) as Resolved[]
  throw Object.assign(new Error('not found'), { code: 'ENOTFOUND' })
}
let auth = ''
const portOf = (url: string) => Number(new URL(url).port)

beforeAll(async () => {
  open = new GuardProxies({ allowPrivate: true, log: quiet, lookup })
  guarded = new GuardProxies({ allowPrivate: false, log: quiet, lookup })
  auth = `Proxy-Authorization: Basic ${Buffer.from(`${open.username}:${open.password}`).toString('base64')}\r\n`
  target = await tcpListener('127.0.0.1', (data, socket) => {
    if (data.includes('\r\n\r\n') && !data.startsWith('TUNNEL')) socket.end('HTTP/1.1 200 OK\r\nContent-Length: 5\r\nConnection: keep-alive\r\nKeep-Alive: timeout=5\r\n\r\nhello')
    else if (data.startsWith('TUNNEL') && data.endsWith('\n')) socket.write(`echo:${data}`)
  })
})
afterAll(async () => {
  await Promise.all([open.close(), guarded.close(), target.close()])
})
afterEach(() => {
  target.accepted = 0
  target.received.length = 0
  lookups = []
})

const guardedAuth = () => `Proxy-Authorization: Basic ${Buffer.from(`${guarded.username}:${guarded.password}`).toString('base64')}\r\n`

describe('who may use it', () => {
  test('without the password: 407 and no connection anywhere', async () => {
    const port = portOf(await open.url(null))
    const r = await exchange(port, `GET http://127.0.0.1:${target.port}/ HTTP/1.1\r\nHost: 127.0.0.1:${target.port}\r\n\r\n`)
    expect(r.text).toStartWith('HTTP/1.1 407 ')
    expect(r.text).toContain('Proxy-Authenticate: Basic realm="trawl"')
    const wrong = await exchange(port, `CONNECT 127.0.0.1:${target.port} HTTP/1.1\r\nProxy-Authorization: Basic ${Buffer.from('trawl:guess').toString('base64')}\r\n\r\n`)
    expect(wrong.text).toStartWith('HTTP/1.1 407 ')
    expect(target.accepted).toBe(0)
  })

  test('the password is this process’s own, and each session has another', () => {
    expect(open.password).not.toBe(guarded.password)
    expect(open.password.length).toBeGreaterThanOrEqual(20)
  })

  test('a head that never ends, or is too long, is refused', async () => {
    const port = portOf(await open.url(null))
    const long = await exchange(port, `GET http://127.0.0.1:${target.port}/ HTTP/1.1\r\nX: ${'a'.repeat(300 * 1024)}`)
    expect(long.text).toStartWith('HTTP/1.1 431 ')
    const origin = await exchange(port, `GET / HTTP/1.1\r\n${auth}\r\n`)
    expect(origin.text).toStartWith('HTTP/1.1 400 ')
    expect(target.accepted).toBe(0)
  })

  test('a request for the proxy itself is refused, even with private networks allowed', async () => {
    const port = portOf(await open.url(null))
    const r = await exchange(port, `CONNECT 127.0.0.1:${port} HTTP/1.1\r\n${auth}\r\n`)
    expect(r.text).toStartWith('HTTP/1.1 403 ')
    expect(open.failureFor(`https://127.0.0.1:${port}/`, 0)?.error?.code).toBe('blocked_address')
  })
})

describe('the address guard at connect time', () => {
  test('CONNECT to loopback: 403, the reason kept, and no connection', async () => {
    const port = portOf(await guarded.url(null))
    for (const authority of [`127.0.0.1:${target.port}`, `[::1]:${target.port}`, `localhost:${target.port}`, `private.test:${target.port}`]) {
      const before = performance.now()
      const r = await exchange(port, `CONNECT ${authority} HTTP/1.1\r\n${guardedAuth()}\r\n`)
      expect(r.text).toStartWith('HTTP/1.1 403 ')
      expect(r.closedByPeer).toBe(true)
      const failure = guarded.failureFor(`https://${authority}/`, before)
      expect(failure?.error?.code).toBe('blocked_address')
    }
    expect(target.accepted).toBe(0)
  })

  test('an absolute-form request to a private address: the connection closes unanswered', async () => {
    const port = portOf(await guarded.url(null))
    const before = performance.now()
    const r = await exchange(port, `GET http://private.test:${target.port}/x HTTP/1.1\r\nHost: private.test:${target.port}\r\n${guardedAuth()}\r\n`)
    expect(r.text).toBe('')
    expect(r.closedByPeer).toBe(true)
    expect(guarded.failureFor(`http://private.test:${target.port}/x`, before)?.error?.message).toContain('127.0.0.1')
    // One look, by the proxy: what it checked is what it would have connected to.
    expect(lookups).toEqual(['private.test'])
    expect(target.accepted).toBe(0)
  })

  test('a name with any private address is refused as a whole', async () => {
    const port = portOf(await guarded.url(null))
    const r = await exchange(port, `CONNECT two.test:443 HTTP/1.1\r\n${guardedAuth()}\r\n`)
    expect(r.text).toStartWith('HTTP/1.1 403 ')
    expect(guarded.failureFor('https://two.test/', 0)?.error?.message).toContain('10.1.2.3')
  })

  test('a name that does not resolve is a dns failure, answered 502', async () => {
    const port = portOf(await guarded.url(null))
    const r = await exchange(port, `CONNECT nowhere.test:443 HTTP/1.1\r\n${guardedAuth()}\r\n`)
    expect(r.text).toStartWith('HTTP/1.1 502 ')
    expect(guarded.failureFor('https://nowhere.test/', 0)?.error?.code).toBe('dns')
  })
})

describe('what passes, with private networks allowed', () => {
  test('an absolute-form GET goes out in origin form, one exchange, Connection: close both ways', async () => {
    const port = portOf(await open.url(null))
    const r = await exchange(
      port,
      `GET http://127.0.0.1:${target.port}/a/%7Eb?c=1 HTTP/1.1\r\nHost: 127.0.0.1:${target.port}\r\nProxy-Connection: keep-alive\r\nConnection: keep-alive, X-Hop\r\nX-Hop: 1\r\nX-Kept: 2\r\n${auth}\r\n`,
    )
    expect(target.accepted).toBe(1)
    const sent = target.received[0]!
    expect(sent).toStartWith(`GET /a/%7Eb?c=1 HTTP/1.1\r\n`)
    expect(sent).toContain('X-Kept: 2\r\n')
    expect(sent).toContain('Connection: close\r\n')
    for (const gone of ['Proxy-Authorization', 'Proxy-Connection', 'X-Hop', 'keep-alive']) expect(sent).not.toContain(gone)
    expect(r.text).toStartWith('HTTP/1.1 200 OK\r\n')
    expect(r.text).toContain('Connection: close\r\n')
    expect(r.text).not.toContain('Keep-Alive')
    expect(r.text.endsWith('\r\n\r\nhello')).toBe(true)
  })

  test('a POST body arrives whole', async () => {
    const port = portOf(await open.url(null))
    const body = 'x'.repeat(200_000)
    await exchange(port, `POST http://127.0.0.1:${target.port}/p HTTP/1.1\r\nHost: h\r\nContent-Length: ${body.length}\r\n${auth}\r\n${body}`)
    expect(target.received[0]!.endsWith(`\r\n\r\n${body}`)).toBe(true)
  })

  test('a CONNECT tunnel carries bytes both ways', async () => {
    const r = await tunnelEcho(portOf(await open.url(null)), auth, 'ping')
    expect(r.text).toStartWith('HTTP/1.1 200 Connection Established\r\n\r\n')
    expect(r.text).toContain('echo:TUNNEL ping\n')
    expect(target.accepted).toBe(1)
  })

  test('a refused connection is remembered as the net error a browser would show', async () => {
    const gone = await tcpListener()
    await gone.close()
    const port = portOf(await open.url(null))
    const before = performance.now()
    const r = await exchange(port, `GET http://127.0.0.1:${gone.port}/ HTTP/1.1\r\nHost: x\r\n${auth}\r\n`)
    expect(r.text).toBe('')
    expect(open.failureFor(`http://127.0.0.1:${gone.port}/`, before)).toEqual({ net: 'ERR_CONNECTION_REFUSED', detail: expect.any(String) })
    // Remembered failures are for the document that follows them, not for later ones.
    expect(open.failureFor(`http://127.0.0.1:${gone.port}/`, performance.now())).toBeNull()
  })
})

describe('through a named proxy', () => {
  let upstream: ForwardProxy
  beforeAll(async () => {
    upstream = await forwardProxy()
  })
  afterAll(() => upstream.close())

  test('the target is checked, then the request goes on to the named proxy with its credentials', async () => {
    const named = `http://user:p%40ss@127.0.0.1:${upstream.port}`
    const port = portOf(await open.url(named))
    expect(port).not.toBe(portOf(await open.url(null)))
    const r = await exchange(port, `GET http://127.0.0.1:${target.port}/via HTTP/1.1\r\nHost: 127.0.0.1:${target.port}\r\n${auth}\r\n`)
    expect(r.text).toStartWith('HTTP/1.1 200 OK')
    expect(r.text.endsWith('hello')).toBe(true)
    expect(upstream.requests.map((q) => q.target)).toEqual([`http://127.0.0.1:${target.port}/via`])
    const credentials = upstream.requests[0]!.headers.find(([n]) => n === 'proxy-authorization')?.[1]
    expect(credentials).toBe(`Basic ${Buffer.from('user:p@ss').toString('base64')}`)
    // The browser's password for this proxy never travels on.
    expect(JSON.stringify(upstream.requests[0]!.headers)).not.toContain(open.password)
  })

  test('a refused target never reaches the named proxy', async () => {
    const port = portOf(await guarded.url(`http://127.0.0.1:${upstream.port}`))
    upstream.reset()
    const r = await exchange(port, `CONNECT 127.0.0.1:${target.port} HTTP/1.1\r\n${guardedAuth()}\r\n`)
    expect(r.text).toStartWith('HTTP/1.1 403 ')
    const plain = await exchange(port, `GET http://[::1]:${target.port}/ HTTP/1.1\r\nHost: x\r\n${guardedAuth()}\r\n`)
    expect(plain.text).toBe('')
    expect(upstream.requests).toEqual([])
    expect(upstream.connects).toEqual([])
    expect(target.accepted).toBe(0)
  })

  test('CONNECT is chained through the named proxy', async () => {
    const port = portOf(await open.url(`http://127.0.0.1:${upstream.port}`))
    upstream.reset()
    const r = await tunnelEcho(port, auth, 'via')
    expect(r.text).toStartWith('HTTP/1.1 200 Connection Established\r\n\r\n')
    expect(r.text).toContain('echo:TUNNEL via\n')
    expect(upstream.connects).toEqual([`127.0.0.1:${target.port}`])
  })
})
