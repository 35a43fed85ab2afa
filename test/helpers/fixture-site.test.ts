// Self-check of the fetch fixtures: each route answers what the fetch and crawl tests rely on.
import { afterAll, beforeEach, describe, expect, test } from 'bun:test'
import { gunzipSync } from 'node:zlib'
import { ENCODED_PAGE, GZIP_BOMB_INFLATED_BYTES, LATIN1_BYTES, PNG_BYTES, SET_COOKIE_LINES, dropServer, fixtureSite, headerOf, pageHtml, patternBytes, rawServer, unusedPort } from './fixture-site'
import { forwardProxy } from './forward-proxy'

const site = fixtureSite()
afterAll(() => site.close())
beforeEach(() => site.reset())

const get = (path: string, init: RequestInit = {}) => fetch(site.url(path), { redirect: 'manual', ...init })

describe('fixtureSite', () => {
  test('pages and the request log', async () => {
    const r = await get('/page/one?x=1', { headers: { 'x-test': 'yes' } })
    expect(r.status).toBe(200)
    expect(await r.text()).toBe(pageHtml('one'))
    expect(site.requests).toHaveLength(1)
    const rec = site.requests[0]!
    expect(rec.method).toBe('GET')
    expect(rec.path).toBe('/page/one?x=1')
    expect(headerOf(rec.headers, 'X-Test')).toBe('yes')
    expect(site.requestsTo('/page/one')).toHaveLength(1)
    expect(site.requestsTo('/page/')).toHaveLength(1)
    expect(rec.at).toBeLessThanOrEqual(performance.now())
  })

  test('echo returns method, body bytes and cookies', async () => {
    const r = await get('/echo', { method: 'PUT', body: new Uint8Array([0, 255, 1]), headers: { cookie: 'a=1; b=2' } })
    const body = (await r.json()) as any
    expect(body.method).toBe('PUT')
    expect(body.body_base64).toBe('AP8B')
    expect(body.cookies).toEqual({ a: '1', b: '2' })
    expect(body.cookie_header).toBe('a=1; b=2')
    expect(Array.from(site.requests[0]!.body)).toEqual([0, 255, 1])
  })

  test('redirects of each status, chains, loops and meta refresh', async () => {
    for (const code of [301, 302, 303, 307, 308]) {
      const r = await get(`/redirect/${code}?to=/page/b&set_cookie=sid%3D1%3B%20Path%3D%2F`)
      expect(r.status).toBe(code)
      expect(r.headers.get('location')).toBe('/page/b')
      expect(r.headers.getSetCookie()).toEqual(['sid=1; Path=/'])
    }
    expect((await get('/chain/2?status=301')).headers.get('location')).toBe('/chain/1?status=301')
    expect(await (await get('/chain/0')).text()).toBe(pageHtml('chain end'))
    expect((await get('/loop/a')).headers.get('location')).toBe('/loop/b')
    expect((await get('/redirect-to-metadata')).headers.get('location')).toBe('http://169.254.169.254/latest/meta-data/')
    expect((await get('/redirect-to-loopback')).headers.get('location')).toBe(`http://127.0.0.1:${site.port}/page/loopback`)
    expect(await (await get('/meta-refresh?to=/page/x&delay=3')).text()).toContain('<meta http-equiv="refresh" content="3; url=/page/x">')
  })

  test('set-cookie sends one header per cookie', async () => {
    expect((await get('/set-cookie')).headers.getSetCookie()).toEqual(SET_COOKIE_LINES)
  })

  test('slow headers and a stalled body', async () => {
    let t = performance.now()
    await (await get('/slow-headers?ms=150')).text()
    expect(performance.now() - t).toBeGreaterThanOrEqual(140)
    t = performance.now()
    const r = await get('/slow-body?ms=600&first=abc')
    const reader = r.body!.getReader()
    const first = await reader.read()
    expect(new TextDecoder().decode(first.value)).toBe('abc')
    // Well before the stalled rest (600 ms), with room for a loaded machine.
    expect(performance.now() - t).toBeLessThan(450)
    let rest = ''
    for (;;) {
      const c = await reader.read()
      if (c.done) break
      rest += new TextDecoder().decode(c.value)
    }
    expect(rest).toBe('rest')
    expect(performance.now() - t).toBeGreaterThanOrEqual(590)
  })

  test('byte bodies, with and without Content-Length', async () => {
    const a = await get('/bytes/100000')
    expect(a.headers.get('content-length')).toBe('100000')
    expect(new Uint8Array(await a.arrayBuffer())).toEqual(patternBytes(100000))
    const b = await get('/bytes/100000?chunked=1')
    expect(b.headers.get('content-length')).toBeNull()
    expect(new Uint8Array(await b.arrayBuffer())).toEqual(patternBytes(100000))
  })

  test('encodings and the gzip bomb', async () => {
    for (const enc of ['gzip', 'deflate', 'br', 'zstd']) {
      const r = await get(`/encoded/${enc}`)
      expect(r.headers.get('content-encoding')).toBe(enc)
      expect(await r.text()).toBe(ENCODED_PAGE)
    }
    const bomb = await get('/gzip-bomb', { decompress: false } as RequestInit) // Bun's own fetch option, not in the DOM type
    const raw = new Uint8Array(await bomb.arrayBuffer())
    expect(raw.length).toBeLessThan(200_000)
    expect(gunzipSync(raw).length).toBe(GZIP_BOMB_INFLATED_BYTES)
  })

  test('flaky answers K failures per key, then 200', async () => {
    const statuses = []
    for (let i = 0; i < 4; i++) statuses.push((await get('/flaky/k?fail=2&status=429&retry_after=1')).status)
    expect(statuses).toEqual([429, 429, 200, 200])
    expect(site.hits('k')).toBe(4)
    expect(site.hits('other')).toBe(0)
    const dated = await get('/flaky/d?retry_after_date=5')
    expect(Date.parse(dated.headers.get('retry-after')!)).toBeGreaterThan(Date.now())
  })

  test('content types', async () => {
    expect((await get('/content/json')).headers.get('content-type')).toBe('application/json')
    expect(new Uint8Array(await (await get('/content/png')).arrayBuffer())).toEqual(PNG_BYTES)
    const l = await get('/content/latin1')
    expect(l.headers.get('content-type')).toBe('text/html; charset=windows-1252')
    expect(new Uint8Array(await l.arrayBuffer())).toEqual(LATIN1_BYTES)
  })

  test('counts requests in flight', async () => {
    await Promise.all(Array.from({ length: 4 }, () => get('/slow-headers?ms=100').then((r) => r.text())))
    expect(site.maxInFlight).toBe(4)
    expect(site.inFlight).toBe(0)
  })

  test('custom routes and a second host', async () => {
    const other = fixtureSite({ hostname: '127.0.0.2', routes: { '/robots.txt': () => new Response('User-agent: *') } })
    try {
      expect(other.origin).toBe(`http://127.0.0.2:${other.port}`)
      expect(await (await fetch(other.url('/robots.txt'))).text()).toBe('User-agent: *')
    } finally {
      await other.close()
    }
  })

  test('a self-signed https site is refused by default and readable when trusted', async () => {
    const secure = fixtureSite({ tls: true })
    try {
      expect(fetch(secure.url('/page/s'))).rejects.toThrow()
      const r = await fetch(secure.url('/page/s'), { tls: { rejectUnauthorized: false } })
      expect(await r.text()).toBe(pageHtml('s'))
    } finally {
      await secure.close()
    }
  })
})

describe('other servers', () => {
  test('dropServer closes every connection (a network error) and counts them', async () => {
    const drop = dropServer()
    try {
      await expect(fetch(drop.url())).rejects.toThrow()
      expect(drop.connections).toBe(1)
    } finally {
      drop.close()
    }
  })

  test('rawServer sends a 1 MB header; Bun fetch accepts it', async () => {
    const big = 'x'.repeat(1024 * 1024)
    const raw = rawServer(`HTTP/1.1 200 OK\r\nX-Big: ${big}\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok`)
    try {
      const r = await fetch(raw.url())
      expect(r.headers.get('x-big')!.length).toBe(1024 * 1024)
      expect(await r.text()).toBe('ok')
    } finally {
      raw.close()
    }
  })

  test('unusedPort refuses connections', async () => {
    await expect(fetch(`http://127.0.0.1:${unusedPort()}/`)).rejects.toThrow()
  })
})

describe('forwardProxy', () => {
  test('forwards an absolute-form request, records it and marks it with Via', async () => {
    const proxy = await forwardProxy()
    try {
      const r = await fetch(site.url('/echo?q=1'), { proxy: proxy.url })
      const body = (await r.json()) as any
      expect(headerOf(body.headers, 'via')).toBe('1.1 trawl-test-proxy')
      expect(proxy.requests.map((p) => [p.method, p.target])).toEqual([['GET', site.url('/echo?q=1')]])
      expect(headerOf(proxy.requests[0]!.headers, 'proxy-connection')).toBe('Keep-Alive')
    } finally {
      await proxy.close()
    }
  })

  test('passes encoded bodies and redirects through untouched', async () => {
    const proxy = await forwardProxy()
    try {
      const r = await fetch(site.url('/encoded/gzip'), { proxy: proxy.url })
      expect(await r.text()).toBe(ENCODED_PAGE)
      const red = await fetch(site.url('/redirect/302?to=/page/x'), { proxy: proxy.url, redirect: 'manual' })
      expect(red.status).toBe(302)
      expect(red.headers.get('location')).toBe('/page/x')
    } finally {
      await proxy.close()
    }
  })

  test('map delivers a public-looking target to a loopback fixture', async () => {
    const proxy = await forwardProxy({ map: (u) => site.url(u.pathname + u.search) })
    try {
      const r = await fetch('http://93.184.216.34/page/mapped', { proxy: proxy.url })
      expect(await r.text()).toBe(pageHtml('mapped'))
      expect(proxy.requests[0]!.target).toBe('http://93.184.216.34/page/mapped')
      expect(site.requestsTo('/page/mapped')).toHaveLength(1)
    } finally {
      await proxy.close()
    }
  })

  test('tunnels CONNECT for https', async () => {
    const secure = fixtureSite({ tls: true })
    const proxy = await forwardProxy()
    try {
      const r = await fetch(secure.url('/page/tunnel'), { proxy: proxy.url, tls: { rejectUnauthorized: false } })
      expect(await r.text()).toBe(pageHtml('tunnel'))
      expect(proxy.connects).toEqual([`127.0.0.1:${secure.port}`])
      expect(proxy.requests).toEqual([])
    } finally {
      await proxy.close()
      await secure.close()
    }
  })
})
