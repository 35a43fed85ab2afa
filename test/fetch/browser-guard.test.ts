// The address guard of the browser client at the network level, against real Chromium: with
// private networks refused, nothing a page does may open a connection to a loopback listener,
// counted by the listeners themselves as accepted TCP connections.
//
// Every server a test can run is on loopback, so a page "on the internet" is served the way
// fetch-guard.test.ts does it: the fetch names a public address (93.184.216.34) and goes through
// a named test proxy that delivers it to a loopback fixture. The guard checks the public name
// and lets it pass; everything the page then asks of loopback must get no connection at all.
import { afterAll, beforeAll, beforeEach, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { lookup as dnsLookup } from 'node:dns/promises'
import type { Socket } from 'node:net'
import type { Lookup, Resolved } from '../../src/fetch/address-guard'
import { type BrowserFetch, BrowserClient } from '../../src/fetch/browser'
import { createLogger } from '../../src/log'
import { forwardProxy, type ForwardProxy } from '../helpers/forward-proxy'
import { tcpListener, type TcpListener } from '../helpers/tcp-listener'
import { fetchFailure as failure } from './support'

const CHROMIUM = process.env.TRAWL_CHROMIUM ?? 'chromium'
const quiet = process.env.BROWSER_TEST_LOG ? createLogger('debug') : createLogger('error', () => {})
setDefaultTimeout(30_000)
const PUBLIC = 'http://93.184.216.34'

let v4: TcpListener
let v6: TcpListener
let site: ReturnType<typeof Bun.serve>
let proxy: ForwardProxy
let guarded: BrowserClient
let open: BrowserClient
let rebindLooks = 0

/**
 * `rebind.test` answers a public address to its first look (the request interceptor's) and
 * loopback to every later one (the proxy's), as a DNS server rebinding with a zero TTL would.
 */
const lookup: Lookup = async (host) => {
  if (host === 'rebind.test') return [{ address: rebindLooks++ === 0 ? '93.184.216.34' : '127.0.0.1', family: 4 }]
  return (await dnsLookup(host, { all: true, verbatim: true })) as Resolved[]
}

/** Every way a page can reach for a network address, each aimed at a loopback listener. */
function attackPage(): string {
  const a = `127.0.0.1:${v4.port}`
  const b = `[::1]:${v6.port}`
  const l = `localhost:${v4.port}`
  return `<!DOCTYPE html><html><head><title>attack</title>
<link rel="preconnect" href="http://${a}/"><link rel="preconnect" href="https://${a}/">
<link rel="preconnect" href="http://${b}/"><link rel="preconnect" href="http://${l}/" crossorigin>
<link rel="dns-prefetch" href="http://${l}/"><link rel="prefetch" href="http://${a}/prefetch">
<link rel="stylesheet" href="http://${b}/style.css">
</head><body><p id="done">page</p>
<img src="http://${a}/img.png"><img src="${PUBLIC}/to-private"><img src="http://rebind.test:${v4.port}/rebound.png">
<iframe src="http://${l}/frame"></iframe><iframe src="http://${b}/frame"></iframe><iframe src="https://${a}/frame"></iframe>
<script>
  const tries = []
  tries.push(fetch('http://${a}/fetch', { mode: 'no-cors' }).then(() => 'loaded', () => 'refused'))
  tries.push(fetch('http://${b}/fetch', { mode: 'no-cors' }).then(() => 'loaded', () => 'refused'))
  for (const u of ['ws://${a}/ws', 'wss://${l}/ws', 'ws://${b}/ws']) {
    try { new WebSocket(u) } catch (e) {}
  }
  navigator.sendBeacon('http://${a}/beacon', 'x')
  try { new EventSource('http://${l}/events') } catch (e) {}
  Promise.all(tries).then((r) => { document.body.dataset.fetches = r.join(',') })
</script></body></html>`
}

const request = (url: string, extra: Partial<BrowserFetch> = {}): BrowserFetch => ({ url, method: 'GET', headers: [], cookies: [], proxy: null, waitUntil: 'networkidle', maxRedirects: 5, ...extra })

/** Connections made after a fetch returns (a late pre-connect, a WebSocket) count too. */
const settle = () => Bun.sleep(800)

beforeAll(async () => {
  // They answer HTTP, so a connection that got through would load.
  const ok = (_: string, socket: Socket) => socket.end('HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok')
  v4 = await tcpListener('127.0.0.1', ok)
  v6 = await tcpListener('::1', ok)
  site = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    fetch(req) {
      const path = new URL(req.url).pathname
      const html = (body: string) => new Response(body, { headers: { 'content-type': 'text/html; charset=utf-8' } })
      if (path === '/attack') return html(attackPage())
      if (path === '/to-private') return new Response(null, { status: 302, headers: { location: `http://127.0.0.1:${v4.port}/redirected` } })
      if (path === '/plain') return html('<!DOCTYPE html><html><body><p>plain</p></body></html>')
      return new Response('not found', { status: 404 })
    },
  })
  proxy = await forwardProxy({ map: (u) => (u.hostname === '93.184.216.34' ? `http://127.0.0.1:${site.port}${u.pathname}${u.search}` : u) })
  guarded = new BrowserClient({ chromium: CHROMIUM, allowPrivate: false, maxBodyBytes: 5_000_000, log: quiet, lookup })
  open = new BrowserClient({ chromium: CHROMIUM, allowPrivate: true, maxBodyBytes: 5_000_000, log: quiet, lookup })
})
afterAll(async () => {
  await Promise.all([guarded.close(), open.close()])
  await Promise.all([v4.close(), v6.close(), proxy.close(), site.stop(true)])
})
beforeEach(() => {
  v4.accepted = v6.accepted = 0
  rebindLooks = 0
  proxy.reset()
})

describe('with private networks refused', () => {
  test('a loopback start URL is blocked_address and no listener accepts a connection', async () => {
    for (const url of [`http://127.0.0.1:${v4.port}/`, `http://[::1]:${v6.port}/`, `http://localhost:${v4.port}/`, `https://127.0.0.1:${v4.port}/`]) {
      const err = await failure(guarded.fetch(request(url, { waitUntil: 'load' }), AbortSignal.timeout(10_000)))
      expect(err.code).toBe('blocked_address')
    }
    await settle()
    expect({ v4: v4.accepted, v6: v6.accepted }).toEqual({ v4: 0, v6: 0 })
  })

  test('a public page’s iframes, WebSockets, fetches, images, pre-connects and redirects reach no loopback listener', async () => {
    const r = await guarded.fetch(request(`${PUBLIC}/attack`, { proxy: proxy.url }), AbortSignal.timeout(20_000))
    const body = new TextDecoder().decode(r.body)
    expect(body).toContain('<p id="done">page</p>')
    // The page's scripts saw their requests fail, as network errors.
    expect(body).toContain('data-fetches="refused,refused"')
    await settle()
    expect({ v4: v4.accepted, v6: v6.accepted }).toEqual({ v4: 0, v6: 0 })
    // Only the public address went on through the named proxy: the page and its redirecting image.
    expect(new Set(proxy.requests.map((q) => q.target))).toEqual(new Set([`${PUBLIC}/attack`, `${PUBLIC}/to-private`]))
    expect(proxy.connects).toEqual([])
  })

  test('a redirect of the page itself to a private address is blocked_address, with no connection', async () => {
    const err = await failure(guarded.fetch(request(`${PUBLIC}/to-private`, { proxy: proxy.url }), AbortSignal.timeout(10_000)))
    expect(err.code).toBe('blocked_address')
    await settle()
    expect(v4.accepted).toBe(0)
  })

  test('a name that rebinds to loopback after the first check is refused where the connection is made', async () => {
    const err = await failure(guarded.fetch(request(`http://rebind.test:${v4.port}/`, { waitUntil: 'load' }), AbortSignal.timeout(10_000)))
    // The interceptor saw a public address and let the request go; the proxy looked again, saw
    // loopback, and connected nowhere. The page reports the proxy's reason. Chromium may send the
    // request to the proxy once more after the refusal (a third look, seen once in a full run of
    // the suite), which sees loopback too; what counts is that no look let a connection through.
    expect(rebindLooks).toBeGreaterThanOrEqual(2)
    expect(err.code).toBe('blocked_address')
    expect(err.message).toContain('127.0.0.1')
    await settle()
    expect(v4.accepted).toBe(0)
  })
})

describe('with private networks allowed', () => {
  // The same page through a client that may reach loopback: the listeners do count what Chromium
  // opens, so the zeros above are the guard's doing.
  test('the same page reaches the listeners', async () => {
    const attack = site.url.href.replace(/\/$/, '') + '/attack'
    const r = await open.fetch(request(attack), AbortSignal.timeout(20_000))
    expect(new TextDecoder().decode(r.body)).toContain('data-fetches="loaded,loaded"')
    await settle()
    expect(v4.accepted).toBeGreaterThan(3)
    expect(v6.accepted).toBeGreaterThan(1)
  })

  test('pages load through the proxy, by name and by address', async () => {
    const r = await open.fetch(request(`http://localhost:${site.port}/plain`, { waitUntil: 'load' }), AbortSignal.timeout(10_000))
    expect(new TextDecoder().decode(r.body)).toContain('<p>plain</p>')
    expect(r.status).toBe(200)
  })
})
