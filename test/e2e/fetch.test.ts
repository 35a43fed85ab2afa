// End-to-end: /v1/fetch on the compiled binary over real HTTP, configured only through the
// settings design.md §1 names. What this guards: the address guard's default (off unless
// TRAWL_ALLOW_PRIVATE_NETWORKS=true), TRAWL_PROXIES, TRAWL_MAX_BODY_BYTES, node:zlib and
// node:dns in the compiled binary, and the browser client (Chromium over CDP) from the binary.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { gzipSync } from 'node:zlib'
import { cleanup, ensureBinary, startTrawl, type Trawl } from '../helpers/binary'

type Seen = { method: string; path: string; headers: Record<string, string>; via: string | null }
const seen: Seen[] = []
let site: ReturnType<typeof Bun.serve>
let proxy: ReturnType<typeof Bun.serve>
let proxied = 0
let guarded: Trawl
let open: Trawl
const b64 = (s: string | Uint8Array) => Buffer.from(s).toString('base64')
const unb64 = (s: string) => Buffer.from(s, 'base64').toString()

beforeAll(async () => {
  site = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    async fetch(req) {
      const url = new URL(req.url)
      seen.push({ method: req.method, path: url.pathname, headers: Object.fromEntries(req.headers), via: req.headers.get('x-via') })
      if (url.pathname === '/login') return new Response(null, { status: 302, headers: { location: '/home', 'set-cookie': 'sid=s3cret; Path=/; HttpOnly' } })
      if (url.pathname === '/home') {
        return new Response(gzipSync(Buffer.from(`<h1>home</h1><p>cookie: ${req.headers.get('cookie')}</p>`)), {
          headers: { 'content-type': 'text/html; charset=utf-8', 'content-encoding': 'gzip' },
        })
      }
      if (url.pathname === '/big') return new Response('x'.repeat(5000))
      if (url.pathname === '/js')
        return new Response('<html><body><div id="out">static</div><script>document.getElementById("out").textContent = "rendered by " + "script"</script></body></html>', {
          headers: { 'content-type': 'text/html' },
        })
      if (url.pathname === '/echo') return Response.json({ method: req.method, body: await req.text(), ua: req.headers.get('user-agent') })
      return new Response('not here', { status: 404 })
    },
  })
  // A forwarding proxy: plain-http requests arrive in absolute form and are passed on.
  proxy = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    async fetch(req) {
      proxied++
      const headers = new Headers(req.headers)
      headers.set('x-via', 'test-proxy')
      return fetch(req.url, { method: req.method, headers, body: req.body, redirect: 'manual', proxy: false } as RequestInit)
    },
  })
  await ensureBinary()
  ;[guarded, open] = await Promise.all([startTrawl(), startTrawl({ env: { TRAWL_ALLOW_PRIVATE_NETWORKS: 'true', TRAWL_PROXIES: `isp=http://127.0.0.1:${proxy.port}`, TRAWL_MAX_BODY_BYTES: '4096' } })])
}, 120_000)
afterAll(async () => {
  await Promise.all([guarded?.stop(), open?.stop()])
  site?.stop(true)
  proxy?.stop(true)
  await cleanup()
})

describe('the address guard by default', () => {
  test.each(['http://127.0.0.1:PORT/echo', 'http://localhost:PORT/echo', 'http://169.254.169.254/latest/meta-data/', 'http://[::ffff:127.0.0.1]:PORT/echo', 'http://2130706433:PORT/echo'])(
    '%s is refused before anything is sent',
    async (raw) => {
      const before = seen.length
      const r = await guarded.api.post('/v1/fetch', { url: raw.replace('PORT', String(site.port)) })
      expect(r.status).toBe(403)
      expect(r.body.error).toBe('blocked_address')
      expect(r.body.message).toContain('TRAWL_ALLOW_PRIVATE_NETWORKS=true')
      expect(Object.keys(r.body).sort()).toEqual(['error', 'message'])
      expect(seen.length).toBe(before)
    },
  )
})

describe('with TRAWL_ALLOW_PRIVATE_NETWORKS=true', () => {
  test('a redirect chain with a cookie set on the way and a gzip body', async () => {
    const r = await open.api.post('/v1/fetch', { url: `http://localhost:${site.port}/login`, max_redirects: 3 })
    expect(r.status).toBe(200)
    expect(r.body.status).toBe(200)
    expect(r.body.final_url).toBe(`http://localhost:${site.port}/home`)
    expect(r.body.redirects).toEqual([{ url: `http://localhost:${site.port}/login`, location: `http://localhost:${site.port}/home`, side: 'server', type: 'temporary' }])
    expect(r.body.cookies).toEqual([{ name: 'sid', value: 's3cret', domain: 'localhost', path: '/', http_only: true }])
    expect(unb64(r.body.body)).toBe('<h1>home</h1><p>cookie: sid=s3cret</p>')
    expect(r.body.content_type).toBe('text/html; charset=utf-8')
  })

  test('method, body and user agent arrive; the body cap is TRAWL_MAX_BODY_BYTES', async () => {
    const r = await open.api.post('/v1/fetch', { url: `http://127.0.0.1:${site.port}/echo`, method: 'PATCH', body: b64('payload'), user_agent: 'firefox' })
    const echoed = JSON.parse(unb64(r.body.body))
    expect(echoed.method).toBe('PATCH')
    expect(echoed.body).toBe('payload')
    expect(echoed.ua).toMatch(/Firefox\/\d+\.0$/)
    const big = await open.api.post('/v1/fetch', { url: `http://127.0.0.1:${site.port}/big` })
    expect(big.status).toBe(502)
    expect(big.body).toEqual({ error: 'too_large', message: expect.stringContaining('4096-byte limit') })
  })

  test('a named proxy from TRAWL_PROXIES carries the request', async () => {
    const before = proxied
    const r = await open.api.post('/v1/fetch', { url: `http://127.0.0.1:${site.port}/echo`, proxies: ['isp'] })
    expect(r.status).toBe(200)
    expect(proxied).toBe(before + 1)
    expect(seen.at(-1)!.via).toBe('test-proxy')
    const unknown = await open.api.post('/v1/fetch', { url: `http://127.0.0.1:${site.port}/echo`, proxies: ['dc'] })
    expect(unknown.status).toBe(422)
    expect(unknown.body.fields).toEqual([{ field: 'proxies[0]', errors: ['is not a configured proxy (TRAWL_PROXIES names: isp)'] }])
  })

  test('a batch keeps item order and reports failures as items', async () => {
    const r = await open.api.post('/v1/fetch/batch', {
      items: [{ url: `http://127.0.0.1:${site.port}/echo` }, { url: `http://127.0.0.1:${site.port}/missing` }, { url: 'http://127.0.0.1:1/' }, { url: `http://127.0.0.1:${site.port}/big` }],
    })
    expect(r.status).toBe(200)
    expect(r.body.results.map((x: any) => (x.ok ? `ok ${x.status}` : `error ${x.error.error}`))).toEqual(['ok 200', 'ok 404', 'error connect', 'error too_large'])
    expect(r.body.results[2].url).toBe('http://127.0.0.1:1/')
  })

  test('the browser client renders what only script writes', async () => {
    const standard = await open.api.post('/v1/fetch', { url: `http://127.0.0.1:${site.port}/js` })
    expect(unb64(standard.body.body)).toContain('>static<')
    const r = await open.api.post('/v1/fetch', { url: `http://127.0.0.1:${site.port}/js`, client: { kind: 'browser' } })
    expect(r.status).toBe(200)
    expect(r.body.status).toBe(200)
    expect(unb64(r.body.body)).toContain('<div id="out">rendered by script</div>')
  }, 60_000)
})
