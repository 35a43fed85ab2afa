// The browser fetch client against a real Chromium and fixture servers on 127.0.0.1.
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { type BrowserFetch, BrowserClient } from '../../src/fetch/browser'
import type { FetchResult } from '../../src/fetch/types'
import { netError } from '../../src/fetch/browser/net-errors'
import { splitHeaders, toCookie } from '../../src/fetch/browser/shapes'
import { createLogger } from '../../src/log'
import { fetchFailure as failure } from './support'
import { type ForwardProxy, forwardProxy } from '../helpers/forward-proxy'

const CHROMIUM = process.env.TRAWL_CHROMIUM ?? 'chromium'
const quiet = process.env.BROWSER_TEST_LOG ? createLogger('debug') : createLogger('error', () => {})
// A browser start is ~1 s alone and several on a busy 2-core machine.
setDefaultTimeout(30_000)
const text = (b: Uint8Array) => new TextDecoder().decode(b)
const utf8 = (s: string) => new TextEncoder().encode(s)

const JS_PAGE = `<!DOCTYPE html><html><head><title>js</title></head><body><p id="static">static text</p><div id="out"></div>
<script>document.getElementById('out').textContent = ['written', 'by', 'script'].join(' ')</script></body></html>`
const LATE_PAGE = `<!DOCTYPE html><html><body><div id="late">pending</div>
<script>setTimeout(() => fetch('/late-data').then((r) => r.text()).then((t) => { document.getElementById('late').textContent = t }), 50)</script></body></html>`
const JSON_BYTES = utf8('{"ok":true,"city":"Zürich ✓","n":[1,2,3]}')
const PNG = Uint8Array.from({ length: 2048 }, (_, i) => (i < 8 ? [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a][i]! : (i * 37 + 11) % 256))

/** What /echo saw, carried base64 in the page so HTML escaping cannot blur it. */
type Echo = { method: string; cookie: string | null; ua: string | null; custom: string | null; lang: string | null; via: string | null; body: string }
const echoOf = (r: FetchResult): Echo => JSON.parse(Buffer.from(/<pre id="echo">([^<]*)<\/pre>/.exec(text(r.body))![1]!, 'base64').toString('utf8'))

let server: ReturnType<typeof Bun.serve>
let base = ''
const hits = new Map<string, number>()
let neverCanceled = 0
/** The Authorization header each /auth-probe request arrived with, by its query. */
const authSeen = new Map<string, string | null>()

function route(req: Request): Response | Promise<Response> {
  const url = new URL(req.url)
  const path = url.pathname
  hits.set(path, (hits.get(path) ?? 0) + 1)
  const html = (body: string, init: ResponseInit = {}) => new Response(body, { ...init, headers: { 'content-type': 'text/html; charset=utf-8', ...init.headers } })
  if (path === '/js') return html(JS_PAGE)
  if (path === '/late') return html(LATE_PAGE)
  if (path === '/late-data') return Bun.sleep(400).then(() => new Response('LATE CONTENT ünï', { headers: { 'content-type': 'text/plain; charset=utf-8' } }))
  if (path === '/r301') return new Response(null, { status: 301, headers: { location: '/r302' } })
  if (path === '/r302') return new Response(null, { status: 302, headers: { location: `${base}/final` } })
  if (path === '/final') {
    const headers = new Headers({ 'content-type': 'text/html; charset=utf-8', 'x-fixture': 'final' })
    headers.append('set-cookie', 'one=1; Path=/')
    headers.append('set-cookie', 'two=2; Path=/; HttpOnly')
    return new Response('<!DOCTYPE html><html><head><title>gone</title></head><body><h1>not here</h1></body></html>', { status: 404, headers })
  }
  if (path === '/meta') return html('<!DOCTYPE html><html><head><meta http-equiv="refresh" content="0; url=/after-meta"></head><body>before</body></html>')
  if (path === '/refresh-later') return html('<!DOCTYPE html><html><body>wait</body></html>', { headers: { refresh: '20; url=/after-meta' } })
  if (path === '/js-location') return html('<!DOCTYPE html><html><body><script>location.replace("/after-meta")</script></body></html>')
  if (path === '/after-meta') return html('<!DOCTYPE html><html><body><p>arrived by meta refresh</p></body></html>')
  if (path.startsWith('/loop/')) return new Response(null, { status: 302, headers: { location: `/loop/${Number(path.slice(6)) + 1}` } })
  if (path === '/echo') {
    return req.text().then((body) => {
      const echo: Echo = {
        method: req.method,
        cookie: req.headers.get('cookie'),
        ua: req.headers.get('user-agent'),
        custom: req.headers.get('x-custom'),
        lang: req.headers.get('accept-language'),
        via: req.headers.get('via'),
        body,
      }
      const encoded = Buffer.from(JSON.stringify(echo)).toString('base64')
      return html(`<!DOCTYPE html><html><body><pre id="echo">${encoded}</pre></body></html>`, {
        headers: { 'set-cookie': 'srv=from-server; Path=/; Max-Age=3600; HttpOnly; SameSite=Strict' },
      })
    })
  }
  if (path === '/public-page') {
    // Served as if from a public address; everything it asks for from loopback must be refused.
    return html(`<!DOCTYPE html><html><body><p>public page</p><img src="${base}/pixel.png">
<script>fetch('${base}/xhr').then(() => { document.body.dataset.xhr = 'loaded' }, () => { document.body.dataset.xhr = 'refused' })</script></body></html>`)
  }
  if (path === '/auth-page') {
    authSeen.set('page', req.headers.get('authorization'))
    const other = base.replace('127.0.0.1', 'localhost')
    return html(`<!DOCTYPE html><html><body><img src="/auth-probe?same"><img src="${other}/auth-probe?cross"></body></html>`)
  }
  if (path === '/auth-probe') {
    authSeen.set(url.search.slice(1), req.headers.get('authorization'))
    return new Response(PNG, { headers: { 'content-type': 'image/png' } })
  }
  if (path === '/data.json') return new Response(JSON_BYTES, { headers: { 'content-type': 'application/json' } })
  if (path === '/image.png') return new Response(PNG, { headers: { 'content-type': 'image/png' } })
  if (path === '/grows') return html(`<!DOCTYPE html><html><body><script>document.body.append('x'.repeat(30000))</script></body></html>`)
  if (path === '/stream.json') {
    // Chunked, no Content-Length: the size is only known by reading.
    let sent = 0
    const stream = new ReadableStream({
      pull(c) {
        if (sent >= 40) return c.close()
        sent++
        c.enqueue(utf8(`"${'y'.repeat(1000)}",`))
      },
    })
    return new Response(stream, { headers: { 'content-type': 'application/json' } })
  }
  if (path === '/never') {
    // Headers and the start of a page, then nothing: load never fires.
    const stream = new ReadableStream({
      start(c) {
        c.enqueue(utf8('<!DOCTYPE html><html><body><p>partial'))
      },
      cancel() {
        neverCanceled++
      },
    })
    return new Response(stream, { headers: { 'content-type': 'text/html' } })
  }
  return new Response('not found', { status: 404 })
}

const request = (path: string, extra: Partial<BrowserFetch> = {}): BrowserFetch => ({
  url: /^[a-z]+:/.test(path) ? path : base + path,
  method: 'GET',
  headers: [],
  cookies: [],
  proxy: null,
  waitUntil: 'load',
  maxRedirects: 5,
  ...extra,
})

/** Processes (zombies aside) whose command line names this directory. */
function processesUsing(dir: string): number[] {
  const out: number[] = []
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    try {
      if (readFileSync(`/proc/${entry}/cmdline`, 'utf8').includes(dir)) out.push(Number(entry))
    } catch {
      // exited meanwhile
    }
  }
  return out
}

const userDataDirOf = (pid: number) => /--user-data-dir=([^\0]+)/.exec(readFileSync(`/proc/${pid}/cmdline`, 'utf8'))![1]!

let client: BrowserClient
let small: BrowserClient
let guarded: BrowserClient

beforeAll(() => {
  server = Bun.serve({ hostname: '127.0.0.1', port: 0, idleTimeout: 0, fetch: route })
  base = `http://127.0.0.1:${server.port}`
  client = new BrowserClient({ chromium: CHROMIUM, allowPrivate: true, maxBodyBytes: 5_000_000, log: quiet })
  small = new BrowserClient({ chromium: CHROMIUM, allowPrivate: true, maxBodyBytes: 20_000, log: quiet, maxPages: 1 })
  guarded = new BrowserClient({ chromium: CHROMIUM, allowPrivate: false, maxBodyBytes: 5_000_000, log: quiet })
})

afterAll(async () => {
  await Promise.all([client.close(), small.close(), guarded.close()])
  server.stop(true)
})

const go = (path: string, extra: Partial<BrowserFetch> = {}, ms = 10_000) => client.fetch(request(path, extra), AbortSignal.timeout(ms))

describe('rendering', () => {
  test('content written by JavaScript is in the browser body and not in the raw HTML', async () => {
    const raw = await (await fetch(`${base}/js`)).text()
    expect(raw).not.toContain('written by script')
    const r = await go('/js')
    const body = text(r.body)
    expect(body.startsWith('<!DOCTYPE html><html><head><title>js</title></head>')).toBe(true)
    expect(body).toContain('<div id="out">written by script</div>')
    expect(body).toContain('<p id="static">static text</p>')
    expect(r).toMatchObject({ url: `${base}/js`, final_url: `${base}/js`, status: 200, content_type: 'text/html; charset=utf-8', redirects: [] })
    expect(r.timing.total_ms).toBeGreaterThan(0)
  })

  test('networkidle waits for content a script fetches late; load returns before it', async () => {
    const [atLoad, atIdle] = [await go('/late', { waitUntil: 'load' }), await go('/late', { waitUntil: 'networkidle' })]
    expect(text(atLoad.body)).toContain('<div id="late">pending</div>')
    expect(text(atIdle.body)).toContain('<div id="late">LATE CONTENT ünï</div>')
    // The data alone takes 450 ms, and idle means 500 ms more of quiet.
    expect(atIdle.timing.total_ms).toBeGreaterThanOrEqual(900)
    expect(atLoad.timing.total_ms).toBeLessThan(atIdle.timing.total_ms)
  })

  test('a JSON body comes back as the server sent it, not as the page Chromium shows', async () => {
    const r = await go('/data.json')
    expect(r.content_type).toBe('application/json')
    expect(r.status).toBe(200)
    expect(r.body).toEqual(JSON_BYTES)
  })

  test('an image comes back byte for byte', async () => {
    const r = await go('/image.png')
    expect(r.content_type).toBe('image/png')
    expect(r.body.length).toBe(PNG.length)
    expect(Buffer.from(r.body).equals(Buffer.from(PNG))).toBe(true)
  })
})

describe('redirects', () => {
  test('a 301 then a 302: the chain, and the final status, headers and content type', async () => {
    const r = await go('/r301')
    expect(r.redirects).toEqual([
      { url: `${base}/r301`, location: `${base}/r302`, side: 'server', type: 'permanent' },
      { url: `${base}/r302`, location: `${base}/final`, side: 'server', type: 'temporary' },
    ])
    expect(r.url).toBe(`${base}/r301`)
    expect(r.final_url).toBe(`${base}/final`)
    expect(r.status).toBe(404)
    expect(r.content_type).toBe('text/html; charset=utf-8')
    const lower = r.headers.map(([n, v]) => [n.toLowerCase(), v])
    expect(lower).toContainEqual(['x-fixture', 'final'])
    // Two Set-Cookie headers stay two pairs.
    expect(lower.filter(([n]) => n === 'set-cookie').map(([, v]) => v)).toEqual(['one=1; Path=/', 'two=2; Path=/; HttpOnly'])
    expect(text(r.body)).toContain('<h1>not here</h1>')
  })

  test('a meta refresh is a client-side hop', async () => {
    const r = await go('/meta')
    expect(r.redirects).toEqual([{ url: `${base}/meta`, location: `${base}/after-meta`, side: 'client', type: 'temporary' }])
    expect(r.final_url).toBe(`${base}/after-meta`)
    expect(text(r.body)).toContain('<p>arrived by meta refresh</p>')
  })

  test('a Refresh header with a delay is followed without sitting out the delay, and so is a script redirect', async () => {
    const r = await go('/refresh-later')
    expect(r.redirects).toEqual([{ url: `${base}/refresh-later`, location: `${base}/after-meta`, side: 'client', type: 'temporary' }])
    expect(text(r.body)).toContain('<p>arrived by meta refresh</p>')
    expect(r.timing.total_ms).toBeLessThan(5000)
    const s = await go('/js-location')
    expect(s.redirects).toEqual([{ url: `${base}/js-location`, location: `${base}/after-meta`, side: 'client', type: 'temporary' }])
    expect(s.final_url).toBe(`${base}/after-meta`)
  })

  test('more hops than max_redirects is redirect_limit', async () => {
    const err = await failure(go('/loop/0', { maxRedirects: 3 }))
    expect(err.code).toBe('redirect_limit')
    expect(err.message).toContain('3')
    // Client hops count too.
    expect((await failure(go('/r301', { maxRedirects: 1 }))).code).toBe('redirect_limit')
  })

  test('with max_redirects 0 a 3xx is the answer and a meta refresh is not followed', async () => {
    const r = await go('/r301', { maxRedirects: 0 })
    expect(r).toMatchObject({ status: 301, final_url: `${base}/r301`, redirects: [] })
    expect(r.headers.map(([n, v]) => [n.toLowerCase(), v])).toContainEqual(['location', '/r302'])
    expect(r.body.length).toBe(0)
    const m = await go('/meta', { maxRedirects: 0 })
    expect(m.final_url).toBe(`${base}/meta`)
    expect(text(m.body)).toContain('before')
  })
})

describe('request shape', () => {
  test('cookies go to the server, and Set-Cookie cookies come back', async () => {
    const r = await go('/echo', {
      cookies: [
        { name: 'sid', value: 'abc123' },
        { name: 'pref', value: 'dark', domain: '127.0.0.1', path: '/' },
      ],
    })
    const sent = echoOf(r).cookie!.split('; ').sort()
    expect(sent).toEqual(['pref=dark', 'sid=abc123'])
    const byName = Object.fromEntries(r.cookies.map((c) => [c.name, c]))
    expect(Object.keys(byName).sort()).toEqual(['pref', 'sid', 'srv'])
    expect(byName.srv).toMatchObject({ value: 'from-server', domain: '127.0.0.1', path: '/', http_only: true, secure: false, same_site: 'Strict' })
    const expires = Date.parse(byName.srv!.expires!)
    expect(Math.abs(expires - (Date.now() + 3600_000))).toBeLessThan(60_000)
    expect(byName.sid!.expires).toBeUndefined() // a session cookie
  })

  test('custom headers, the user agent and Accept-Language reach the server', async () => {
    const r = await go('/echo', {
      headers: [
        ['User-Agent', 'trawl-test/1.0 (+https://example.test/bot)'],
        ['X-Custom', 'custom-value'],
        ['Accept-Language', 'de-CH'],
      ],
    })
    expect(echoOf(r)).toMatchObject({ method: 'GET', ua: 'trawl-test/1.0 (+https://example.test/bot)', custom: 'custom-value', lang: 'de-CH' })
  })

  test('an Authorization header goes to the page’s origin only, not to other hosts it loads from', async () => {
    authSeen.clear()
    await go('/auth-page', {
      headers: [
        ['Authorization', 'Bearer secret-token'],
        ['X-Custom', 'everywhere'],
      ],
      waitUntil: 'networkidle',
    })
    expect(Object.fromEntries(authSeen)).toEqual({ page: 'Bearer secret-token', same: 'Bearer secret-token', cross: null })
  })

  test('a POST carries its method and body to the first request', async () => {
    const r = await go('/echo', { method: 'POST', body: utf8('a=1&b=zwei'), headers: [['Content-Type', 'application/x-www-form-urlencoded']] })
    expect(echoOf(r)).toMatchObject({ method: 'POST', body: 'a=1&b=zwei' })
  })

  test('two fetches at once do not see each other’s cookies', async () => {
    const [a, b] = await Promise.all([
      go('/echo', { cookies: [{ name: 'tenant', value: 'A' }] }),
      go('/echo', {
        cookies: [
          { name: 'tenant', value: 'B' },
          { name: 'only_b', value: '1' },
        ],
      }),
    ])
    expect(echoOf(a!).cookie).toBe('tenant=A')
    expect(echoOf(b!).cookie!.split('; ').sort()).toEqual(['only_b=1', 'tenant=B'])
    expect(a!.cookies.map((c) => `${c.name}=${c.value}`).sort()).toEqual(['srv=from-server', 'tenant=A'])
    expect(b!.cookies.map((c) => `${c.name}=${c.value}`).sort()).toEqual(['only_b=1', 'srv=from-server', 'tenant=B'])
  })

  test('a proxy is used for the page, loopback included', async () => {
    let proxy: ForwardProxy | null = null
    try {
      proxy = await forwardProxy()
      const r = await go('/echo', { proxy: proxy.url })
      expect(echoOf(r).via).toBe('1.1 trawl-test-proxy')
      expect(proxy.requests.map((q) => q.target)).toContain(`${base}/echo`)
    } finally {
      await proxy?.close()
    }
  })
})

describe('failures', () => {
  test('a body over max_body_bytes is too_large, rendered or raw', async () => {
    // 30 000 characters written by script into a page of 100 bytes.
    expect((await failure(small.fetch(request('/grows'), AbortSignal.timeout(10_000)))).code).toBe('too_large')
    // 40 KB streamed without a Content-Length.
    const err = await failure(small.fetch(request('/stream.json'), AbortSignal.timeout(10_000)))
    expect(err.code).toBe('too_large')
    expect(err.message).toContain('20000')
    // Under the limit the same client answers.
    expect(text((await small.fetch(request('/js'), AbortSignal.timeout(10_000))).body)).toContain('written by script')
  })

  test('with every page busy a fetch waits its turn, and gives up at its deadline', async () => {
    const busy = small.fetch(request('/never'), AbortSignal.timeout(2500))
    const waiting = failure(small.fetch(request('/js'), AbortSignal.timeout(800)))
    const err = await waiting
    expect(err.code).toBe('timeout')
    expect(err.message).toContain('no browser page became free')
    expect((await failure(busy)).code).toBe('timeout')
    // The slot is free again.
    expect(text((await small.fetch(request('/js'), AbortSignal.timeout(10_000))).body)).toContain('written by script')
  })

  test('an aborted page load is a timeout, its page is closed, and the next fetch works', async () => {
    const canceledBefore = neverCanceled
    const started = performance.now()
    const err = await failure(go('/never', {}, 800))
    expect(err.code).toBe('timeout')
    expect(err.retryable).toBe(true)
    expect(performance.now() - started).toBeLessThan(3000)
    // Closing the page drops the connection the server was still writing to.
    for (let i = 0; i < 250 && neverCanceled === canceledBefore; i++) await Bun.sleep(20)
    expect(neverCanceled).toBe(canceledBefore + 1)
    expect(text((await go('/js')).body)).toContain('written by script')
  })

  test('network errors of the main document map to fetch error codes', async () => {
    const closed = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: () => new Response('') })
    const port = closed.port
    closed.stop(true)
    const refused = await failure(go(`http://127.0.0.1:${port}/`))
    expect(refused.code).toBe('connect')
    expect(refused.retryable).toBe(true)
    expect(refused.message).toContain('ERR_CONNECTION_REFUSED')
    expect((await failure(go('http://no-such-host.invalid/'))).code).toBe('dns')
  })

  test('without private networks a loopback page is blocked_address and never requested', async () => {
    const before = hits.get('/js') ?? 0
    const err = await failure(guarded.fetch(request('/js'), AbortSignal.timeout(10_000)))
    expect(err.code).toBe('blocked_address')
    expect(err.message).toContain('127.0.0.1')
    expect(hits.get('/js') ?? 0).toBe(before)
    // Schemes other than http(s) are refused before Chromium sees them.
    expect((await failure(guarded.fetch(request('file:///etc/passwd'), AbortSignal.timeout(5000)))).code).toBe('blocked_address')
  })

  test('without private networks, a public page’s requests to loopback are refused', async () => {
    // 93.184.216.34 passes the guard without DNS; the proxy delivers it to the fixture.
    const proxy = await forwardProxy({ map: (u) => (u.hostname === '93.184.216.34' ? `${base}${u.pathname}` : u) })
    try {
      const r = await guarded.fetch(request('http://93.184.216.34/public-page', { proxy: proxy.url, waitUntil: 'networkidle' }), AbortSignal.timeout(10_000))
      const body = text(r.body)
      expect(body).toContain('<p>public page</p>')
      expect(body).toContain('data-xhr="refused"')
      expect(hits.get('/pixel.png') ?? 0).toBe(0)
      expect(hits.get('/xhr') ?? 0).toBe(0)
      // Only the page went out (Chromium's favicon fetch is not sent either).
      expect(proxy.requests.map((q) => q.target)).toEqual(['http://93.184.216.34/public-page'])
    } finally {
      await proxy.close()
    }
  })

  test('a missing Chromium is browser_unavailable, naming the path and TRAWL_CHROMIUM', async () => {
    const missing = new BrowserClient({ chromium: '/nonexistent/chromium', allowPrivate: true, maxBodyBytes: 1000, log: quiet })
    const err = await failure(missing.fetch(request('/js'), AbortSignal.timeout(5000)))
    expect(err.code).toBe('browser_unavailable')
    expect(err.message).toContain('/nonexistent/chromium')
    expect(err.message).toContain('TRAWL_CHROMIUM')
    expect(await missing.available()).toBe(false)
    await missing.close()
  })
})

describe('process', () => {
  test('a killed Chromium fails the fetch in flight, and the next fetch starts a new one', async () => {
    expect(await client.available()).toBe(true)
    const pid = client.pid!
    expect(pid).toBeGreaterThan(0)
    const before = hits.get('/never') ?? 0
    const inflight = failure(go('/never', {}, 10_000))
    for (let i = 0; i < 200 && (hits.get('/never') ?? 0) === before; i++) await Bun.sleep(10)
    process.kill(pid, 'SIGKILL')
    const err = await inflight
    expect(err.code).toBe('browser_unavailable')
    expect(err.message).toContain('Chromium exited')
    const r = await go('/js')
    expect(text(r.body)).toContain('written by script')
    expect(client.pid).not.toBe(pid)
    expect(client.pid).toBeGreaterThan(0)
  })

  test('close() leaves no Chromium process and no profile behind', async () => {
    await small.fetch(request('/js'), AbortSignal.timeout(10_000))
    const pid = small.pid!
    const dir = userDataDirOf(pid)
    expect(processesUsing(dir).length).toBeGreaterThan(1) // the browser and its helpers
    await small.close()
    expect(processesUsing(dir)).toEqual([])
    expect(existsSync(dir)).toBe(false)
    expect(small.pid).toBeNull()
    expect((await failure(small.fetch(request('/js'), AbortSignal.timeout(1000)))).code).toBe('browser_unavailable')
  })
})

describe('shapes', () => {
  test('Chromium’s newline-joined headers become one pair per line', () => {
    expect(splitHeaders({ 'Set-Cookie': 'a=1\nb=2', 'Content-Type': 'text/html' })).toEqual([
      ['Set-Cookie', 'a=1'],
      ['Set-Cookie', 'b=2'],
      ['Content-Type', 'text/html'],
    ])
    expect(splitHeaders([{ name: 'X', value: 'y' }])).toEqual([['X', 'y']])
  })

  test('a Chromium cookie in the service’s shape', () => {
    const base = { name: 'n', value: 'v', path: '/', httpOnly: false, secure: true }
    expect(toCookie({ ...base, domain: '.example.com', expires: 1_800_000_000.5, session: false, sameSite: 'Lax' })).toEqual({
      name: 'n',
      value: 'v',
      domain: 'example.com',
      path: '/',
      http_only: false,
      secure: true,
      expires: '2027-01-15T08:00:00.500Z',
      same_site: 'Lax',
    })
    expect(toCookie({ ...base, domain: 'host.test', expires: -1, session: true })).toEqual({ name: 'n', value: 'v', domain: 'host.test', path: '/', http_only: false, secure: true })
  })

  test('Chrome net errors map to fetch error codes', () => {
    const code = (e: string) => [netError(e, 'https://a.test/').code, netError(e, 'https://a.test/').retryable]
    expect(code('net::ERR_NAME_NOT_RESOLVED')).toEqual(['dns', false])
    expect(code('net::ERR_CONNECTION_RESET')).toEqual(['connect', true])
    expect(code('net::ERR_ADDRESS_UNREACHABLE')).toEqual(['connect', true])
    expect(code('net::ERR_CERT_AUTHORITY_INVALID')).toEqual(['tls', false])
    expect(code('net::ERR_SSL_PROTOCOL_ERROR')).toEqual(['tls', false])
    expect(code('net::ERR_PROXY_CONNECTION_FAILED')).toEqual(['proxy', true])
    expect(code('net::ERR_TUNNEL_CONNECTION_FAILED')).toEqual(['proxy', true])
    expect(code('net::ERR_TIMED_OUT')).toEqual(['timeout', true])
    expect(code('net::ERR_BLOCKED_BY_RESPONSE')).toEqual(['connect', false])
    expect(netError('net::ERR_BLOCKED_BY_RESPONSE', 'https://a.test/').message).toContain('ERR_BLOCKED_BY_RESPONSE')
  })
})
