// POST /v1/fetch through the API against real fixture servers: validation, the response
// envelope, methods and bodies, user agents, headers, cookies, encodings, redirects and the
// error bodies of a target that did not answer. Retries, middleware, the address guard and the
// batch route have their own files beside this one.
import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'bun:test'
import { VERSION } from '../../src/version'
import { testApi, type TestApi } from '../helpers/api'
import { ENCODED_PAGE, JSON_BODY, LATIN1_BYTES, PNG_BYTES, SELF_SIGNED, SET_COOKIE_LINES, fixtureSite, pageHtml, patternBytes, rawServer, unusedPort } from '../helpers/fixture-site'
import { forwardProxy, type ForwardProxy } from '../helpers/forward-proxy'
import { RESULT_KEYS, b64, echoOf, expectError, expectInvalid, expectInvalidUnder, fetchOk, fetchTimed, headerOf, unb64, unb64Text } from './support'

const site = fixtureSite()
const other = fixtureSite({ hostname: '127.0.0.2' })
const secure = fixtureSite({ tls: true })
let proxy: ForwardProxy
let api: TestApi
let small: TestApi
let trusting: TestApi
beforeAll(async () => {
  proxy = await forwardProxy()
  api = testApi({
    TRAWL_ALLOW_PRIVATE_NETWORKS: 'true',
    TRAWL_PROXIES: `fwd=${proxy.url},dead=http://127.0.0.1:${unusedPort()}`,
    TRAWL_CHROMIUM: '/nonexistent/chromium',
  })
  small = testApi({ TRAWL_ALLOW_PRIVATE_NETWORKS: 'true', TRAWL_MAX_BODY_BYTES: '100000' })
  // Trusts the fixtures' self-signed certificate, to show https itself works.
  trusting = testApi({ TRAWL_ALLOW_PRIVATE_NETWORKS: 'true', TRAWL_PROXIES: `fwd=${proxy.url}` }, {}, SELF_SIGNED.cert)
})
afterAll(async () => {
  api.close()
  small.close()
  trusting.close()
  await Promise.all([site.close(), other.close(), secure.close(), proxy.close()])
})
beforeEach(() => {
  site.reset()
  other.reset()
  secure.reset()
  proxy.reset()
})

const fetchOne = (body: unknown, a = api) => a.post('/v1/fetch', body)
/** The echo the fixture sent back for a fetch of /echo with these options. */
const echo = async (over: Record<string, unknown> = {}, path = '/echo') => echoOf(await fetchOk(api, { url: site.url(path), ...over }))

describe('POST /v1/fetch validation', () => {
  const bad: [string, Record<string, unknown>, string[]][] = [
    ['url missing', { url: undefined }, ['url']],
    ['url not a URL', { url: 'not a url' }, ['url']],
    ['url relative', { url: '/page/a' }, ['url']],
    ['url ftp:', { url: 'ftp://example.com/file' }, ['url']],
    ['url file:', { url: 'file:///etc/passwd' }, ['url']],
    ['url data:', { url: 'data:text/plain,hello' }, ['url']],
    ['url javascript:', { url: 'javascript:alert(1)' }, ['url']],
    ['method unknown', { method: 'FETCH' }, ['method']],
    ['body not base64', { method: 'POST', body: 'not base64!!' }, ['body']],
    ['timeout below 10ms', { timeout: '9ms' }, ['timeout']],
    ['timeout above 300s', { timeout: '301s' }, ['timeout']],
    ['timeout 6m', { timeout: '6m' }, ['timeout']],
    ['timeout not a duration', { timeout: 'soon' }, ['timeout']],
    ['timeout a number', { timeout: 30 }, ['timeout']],
    ['max_redirects 21', { max_redirects: 21 }, ['max_redirects']],
    ['max_redirects -1', { max_redirects: -1 }, ['max_redirects']],
    ['max_redirects 1.5', { max_redirects: 1.5 }, ['max_redirects']],
    ['max_retries 11', { max_retries: 11 }, ['max_retries']],
    ['unknown proxy name', { proxies: ['nope'] }, ['proxies[0]']],
    ['second proxy unknown', { proxies: ['fwd', 'nope'] }, ['proxies[1]']],
  ]
  for (const [name, over, fields] of bad) {
    test(`${name} → 422 on ${fields.join(', ')}`, async () => {
      const r = await fetchOne({ url: site.url('/page/v'), ...over })
      expectInvalid(r, fields)
      expect(site.requests).toEqual([])
    })
  }

  const under: [string, Record<string, unknown>, string][] = [
    ['unknown client kind', { client: { kind: 'curl' } }, 'client'],
    ['unknown middleware kind', { middleware: [{ kind: 'teleport' }] }, 'middleware[0]'],
    ['middleware missing its fields', { middleware: [{ kind: 'set_headers', headers: [['A', '1']] }, { kind: 'basic_auth' }] }, 'middleware[1]'],
    ['cookie without a name', { cookies: [{ value: '1' }] }, 'cookies[0]'],
    ['headers not pairs', { headers: [['X-One']] }, 'headers[0]'],
    ['a header value with CR LF (header injection)', { headers: [['X-A', 'b\r\nX-Injected: 1']] }, 'headers[0]'],
    ['a set_headers value with CR LF', { middleware: [{ kind: 'set_headers', headers: [['X-A', 'b\r\nX-Injected: 1']] }] }, 'middleware[0]'],
    ['a user_agent with CR LF', { user_agent: 'ua\r\nX-Injected: 1' }, 'user_agent'],
    ['a referrer with CR LF', { referrer: 'https://a.example/\r\nX-Injected: 1' }, 'referrer'],
    ['a cookie value with ; (cookie injection)', { cookies: [{ name: 'a', value: 'x; admin=1' }] }, 'cookies[0]'],
  ]
  for (const [name, over, prefix] of under) {
    test(`${name} → 422 under ${prefix}`, async () => {
      expectInvalidUnder(await fetchOne({ url: site.url('/page/v'), ...over }), prefix)
      expect(site.requests).toEqual([])
    })
  }

  test('an unknown body key is a 422', async () => {
    const r = await fetchOne({ url: site.url('/page/v'), follow: true })
    expect(r.status).toBe(422)
    expect(r.body.error).toBe('validation')
    expect(site.requests).toEqual([])
  })

  test('malformed JSON is a 422 on body', async () => {
    const r = await api.call('POST', '/v1/fetch', { raw: '{"url":', headers: { 'content-type': 'application/json' } })
    expectInvalid(r, ['body'])
  })

  test('the timeout bounds themselves are accepted: 10ms, 300s, 5m', async () => {
    for (const timeout of ['300s', '5m', '1m30s']) {
      const res = await fetchOk(api, { url: site.url('/page/t'), timeout })
      expect(res.status).toBe(200)
    }
    // 10ms may well time out against a real server, but it is a valid value.
    const r = await fetchOne({ url: site.url('/page/t'), timeout: '10ms' })
    expect([200, 504]).toContain(r.status)
  })

  test('a missing X-Tenant-Id is 400 tenant_required, before validation', async () => {
    const r = await api.post('/v1/fetch', { url: 'nope' }, { tenant: null })
    expect(r.status).toBe(400)
    expect(r.body.error).toBe('tenant_required')
    expect(site.requests).toEqual([])
  })
})

describe('POST /v1/fetch response envelope', () => {
  test('a page: url, final_url, status, headers as sent, content_type, body bytes, no redirects, timing', async () => {
    const url = site.url('/page/alpha')
    const res = await fetchOk(api, { url })
    expect(res.url).toBe(url)
    expect(res.final_url).toBe(url)
    expect(res.status).toBe(200)
    expect(unb64Text(res.body)).toBe(pageHtml('alpha'))
    expect(res.redirects).toEqual([])
    expect(res.cookies).toEqual([])
    expect(res.content_type.split(';')[0]).toBe('text/html')
    expect(headerOf(res.headers, 'content-type')).toBe('text/html; charset=utf-8')
    expect(headerOf(res.headers, 'content-length')).toBe(String(Buffer.byteLength(pageHtml('alpha'))))
    for (const pair of res.headers) {
      expect(pair).toHaveLength(2)
      expect(typeof pair[0]).toBe('string')
      expect(typeof pair[1]).toBe('string')
    }
    expect(Object.keys(res.timing)).toEqual(['total_ms'])
    expect(res.timing.total_ms).toBeGreaterThanOrEqual(0)
    expect(site.requests.map((r) => [r.method, r.path])).toEqual([['GET', '/page/alpha']])
  })

  test('a target 404 or 500 is a 200 envelope carrying that status and body (no retries by default)', async () => {
    for (const code of [404, 500, 418]) {
      site.reset()
      const res = await fetchOk(api, { url: site.url(`/status/${code}`) })
      expect(res.status).toBe(code)
      expect(unb64Text(res.body)).toBe(`status ${code}`)
      expect(site.requests).toHaveLength(1)
    }
  })

  test('binary bodies come back byte for byte', async () => {
    const res = await fetchOk(api, { url: site.url('/bytes/70000') })
    expect(unb64(res.body)).toEqual(patternBytes(70000))
    expect(res.content_type).toBe('application/octet-stream')
    const png = await fetchOk(api, { url: site.url('/content/png') })
    expect(unb64(png.body)).toEqual(PNG_BYTES)
    expect(png.content_type).toBe('image/png')
  })

  test('a windows-1252 page is returned as its bytes, not transcoded', async () => {
    const res = await fetchOk(api, { url: site.url('/content/latin1') })
    expect(unb64(res.body)).toEqual(LATIN1_BYTES)
    expect(res.content_type.split(';')[0]).toBe('text/html')
    expect(headerOf(res.headers, 'content-type')).toBe('text/html; charset=windows-1252')
  })

  test('JSON content', async () => {
    const res = await fetchOk(api, { url: site.url('/content/json') })
    expect(unb64Text(res.body)).toBe(JSON_BODY)
    expect(res.content_type).toBe('application/json')
  })

  test('timing.total_ms covers a slow answer', async () => {
    const res = await fetchOk(api, { url: site.url('/slow-headers?ms=200') })
    expect(res.timing.total_ms).toBeGreaterThanOrEqual(190)
    expect(res.timing.total_ms).toBeLessThan(2000)
  })

  for (const enc of ['gzip', 'deflate', 'br', 'zstd']) {
    test(`a ${enc} body is decoded; the headers stay as sent`, async () => {
      const res = await fetchOk(api, { url: site.url(`/encoded/${enc}`) })
      expect(unb64Text(res.body)).toBe(ENCODED_PAGE)
      expect(headerOf(res.headers, 'content-encoding')).toBe(enc)
    })
  }

  test('Set-Cookie lines come back as separate header pairs, in order, and parsed in cookies', async () => {
    const before = Date.now()
    const res = await fetchOk(api, { url: site.url('/set-cookie') })
    expect(res.headers.filter(([n]: [string, string]) => n.toLowerCase() === 'set-cookie').map(([, v]: [string, string]) => v)).toEqual(SET_COOKIE_LINES)
    const byName = Object.fromEntries(res.cookies.map((c: any) => [c.name, c]))
    expect(res.cookies.map((c: any) => c.name)).toEqual(['session', 'theme', 'token', 'lang'])
    expect(byName.session).toMatchObject({ name: 'session', value: 'abc123', path: '/', http_only: true })
    expect(byName.session.secure ?? false).toBe(false)
    expect(byName.theme).toMatchObject({ name: 'theme', value: 'dark', domain: '127.0.0.1', path: '/app', same_site: 'Lax' })
    const themeExpires = Date.parse(byName.theme.expires)
    expect(themeExpires).toBeGreaterThanOrEqual(before + 3600_000 - 2000)
    expect(themeExpires).toBeLessThanOrEqual(Date.now() + 3600_000 + 2000)
    expect(byName.token).toMatchObject({ name: 'token', value: 'xyz', secure: true, same_site: 'None' })
    expect(Date.parse(byName.token.expires)).toBe(Date.parse('2037-10-21T07:28:00Z'))
    expect(byName.token.http_only ?? false).toBe(false)
    expect(byName.lang).toMatchObject({ name: 'lang', value: 'en-US', same_site: 'Strict' })
    expect(byName.lang.expires).toBeUndefined()
    for (const c of res.cookies) for (const k of Object.keys(c)) expect(['name', 'value', 'domain', 'path', 'expires', 'http_only', 'secure', 'same_site']).toContain(k)
  })
})

describe('POST /v1/fetch methods and bodies', () => {
  test('GET is the default', async () => {
    expect((await echo()).method).toBe('GET')
  })

  for (const method of ['POST', 'PUT', 'PATCH', 'DELETE']) {
    test(`${method} sends the decoded body bytes`, async () => {
      const bytes = Uint8Array.from([0, 1, 2, 255, 254, 10, 13, 0x22])
      const e = await echo({ method, body: b64(bytes) })
      expect(e.method).toBe(method)
      expect(e.body_base64).toBe(b64(bytes))
      expect(site.requests[0]!.body).toEqual(bytes)
      expect(headerOf(site.requests[0]!.headers, 'content-length')).toBe('8')
    })
  }

  test('OPTIONS reaches the server', async () => {
    expect((await echo({ method: 'OPTIONS' })).method).toBe('OPTIONS')
  })

  test('HEAD: the server sees HEAD, the envelope has the headers and an empty body', async () => {
    const res = await fetchOk(api, { url: site.url('/page/head'), method: 'HEAD' })
    expect(res.status).toBe(200)
    expect(res.body).toBe('')
    expect(headerOf(res.headers, 'content-type')).toBe('text/html; charset=utf-8')
    expect(site.requests.map((r) => r.method)).toEqual(['HEAD'])
  })

  test('HEAD of a body larger than TRAWL_MAX_BODY_BYTES is fine: no body is read', async () => {
    const res = await fetchOk(small, { url: site.url('/bytes/200000'), method: 'HEAD' })
    expect(res.status).toBe(200)
    expect(res.body).toBe('')
    expect(headerOf(res.headers, 'content-length')).toBe('200000')
  })

  for (const method of ['TRACE', 'CONNECT']) {
    test(`${method} is an accepted method`, async () => {
      const r = await fetchOne({ url: site.url('/echo'), method, timeout: '2s' })
      expect(r.status).not.toBe(422)
    })
  }
})

describe('POST /v1/fetch user agents, referrer and headers', () => {
  const ua = async (over: Record<string, unknown>) => headerOf((await echo(over)).headers, 'user-agent')

  test('the default is trawl/<version>', async () => {
    expect(await ua({})).toStartWith(`trawl/${VERSION}`)
    expect(await ua({ user_agent: 'trawl' })).toStartWith(`trawl/${VERSION}`)
  })

  test('chrome, firefox and safari are realistic browser user agents', async () => {
    const chrome = (await ua({ user_agent: 'chrome' }))!
    const firefox = (await ua({ user_agent: 'firefox' }))!
    const safari = (await ua({ user_agent: 'safari' }))!
    for (const s of [chrome, firefox, safari]) {
      expect(s).toStartWith('Mozilla/5.0 (')
      expect(s).not.toContain('trawl')
    }
    expect(chrome).toMatch(/Chrome\/\d+/)
    expect(firefox).toMatch(/Firefox\/\d+/)
    expect(firefox).not.toContain('Chrome/')
    expect(safari).toMatch(/Version\/\d+.* Safari\/\d+/)
    expect(safari).not.toContain('Chrome/')
  })

  test('random picks one of the browser user agents', async () => {
    const families = { chrome: /^Mozilla\/5\.0 \(.*Chrome\/\d+/, firefox: /^Mozilla\/5\.0 \(.*Firefox\/\d+/, safari: /^Mozilla\/5\.0 \(.*Version\/\d+.* Safari\/\d+/ }
    for (let i = 0; i < 8; i++) {
      const s = (await ua({ user_agent: 'random' }))!
      expect(s).not.toContain('trawl')
      expect(Object.values(families).some((re) => re.test(s))).toBe(true)
    }
  })

  test('any other string is sent verbatim', async () => {
    expect(await ua({ user_agent: 'MyCrawler/2.1 (+https://example.com/bot)' })).toBe('MyCrawler/2.1 (+https://example.com/bot)')
  })

  test('an explicit User-Agent header wins over user_agent', async () => {
    expect(await ua({ user_agent: 'chrome', headers: [['User-Agent', 'explicit/1.0']] })).toBe('explicit/1.0')
  })

  test('referrer is sent as Referer', async () => {
    const e = await echo({ referrer: 'https://origin.example/list?page=2' })
    expect(headerOf(e.headers, 'referer')).toBe('https://origin.example/list?page=2')
  })

  test('headers are sent, and override the defaults (one value, not merged)', async () => {
    const e = await echo({
      headers: [
        ['X-One', '1'],
        ['Accept-Language', 'de-CH'],
        ['Accept', 'application/json'],
      ],
    })
    expect(headerOf(e.headers, 'x-one')).toBe('1')
    expect(headerOf(e.headers, 'accept-language')).toBe('de-CH')
    expect(headerOf(e.headers, 'accept')).toBe('application/json')
    expect(site.requests[0]!.headers.filter(([n]) => n === 'accept')).toHaveLength(1)
  })
})

describe('POST /v1/fetch cookies', () => {
  test('cookies go out as one Cookie header, name=value joined by "; "', async () => {
    const e = await echo({
      cookies: [
        { name: 'a', value: '1' },
        { name: 'b', value: '2' },
      ],
    })
    expect(e.cookie_header).toBe('a=1; b=2')
    expect(site.requests[0]!.headers.filter(([n]) => n === 'cookie')).toHaveLength(1)
  })

  test('only cookies whose domain matches the host are sent; no domain means the request host', async () => {
    const e = await echo({
      cookies: [
        { name: 'nodomain', value: '1' },
        { name: 'samehost', value: '2', domain: '127.0.0.1' },
        { name: 'otherip', value: '3', domain: '127.0.0.2' },
        { name: 'elsewhere', value: '4', domain: 'example.com' },
      ],
    })
    expect(e.cookies).toEqual({ nodomain: '1', samehost: '2' })
  })

  test('only cookies whose path matches the request path are sent', async () => {
    const e = await echo({
      cookies: [
        { name: 'root', value: '1', path: '/' },
        { name: 'exact', value: '2', path: '/echo' },
        { name: 'other', value: '3', path: '/admin' },
        { name: 'deeper', value: '4', path: '/echo/deeper' },
      ],
    })
    expect(e.cookies).toEqual({ root: '1', exact: '2' })
  })

  test('path matching respects segment boundaries (RFC 6265 path-match: /ec does not match /echo)', async () => {
    const e = await echo({
      cookies: [
        { name: 'partial', value: '1', path: '/ec' },
        { name: 'ok', value: '2', path: '/' },
      ],
    })
    expect(e.cookies).toEqual({ ok: '2' })
  })

  test('cookies in the response come from Set-Cookie only, not from the request', async () => {
    const res = await fetchOk(api, { url: site.url('/page/c'), cookies: [{ name: 'a', value: '1' }] })
    expect(res.cookies).toEqual([])
  })

  test('with no cookies no Cookie header is sent', async () => {
    expect((await echo()).cookie_header).toBeNull()
  })
})

describe('POST /v1/fetch redirects', () => {
  test('with max_redirects 0 (the default) a 302 is returned as such', async () => {
    const url = site.url('/redirect/302?to=/page/b')
    const res = await fetchOk(api, { url })
    expect(res.status).toBe(302)
    expect(res.final_url).toBe(url)
    expect(res.redirects).toEqual([])
    expect(headerOf(res.headers, 'location')).toBe('/page/b')
    expect(unb64Text(res.body)).toBe('redirect 302')
    expect(site.requests.map((r) => r.pathname)).toEqual(['/redirect/302'])
  })

  const kinds: [number, string][] = [
    [301, 'permanent'],
    [302, 'temporary'],
    [303, 'temporary'],
    [307, 'temporary'],
    [308, 'permanent'],
  ]
  for (const [code, type] of kinds) {
    test(`a ${code} is followed and recorded as a server ${type} redirect with an absolute location`, async () => {
      const url = site.url(`/redirect/${code}?to=/page/b`)
      const res = await fetchOk(api, { url, max_redirects: 1 })
      expect(res.status).toBe(200)
      expect(res.url).toBe(url)
      expect(res.final_url).toBe(site.url('/page/b'))
      expect(unb64Text(res.body)).toBe(pageHtml('b'))
      expect(res.redirects).toEqual([{ url, location: site.url('/page/b'), side: 'server', type }])
      expect(site.requests.map((r) => [r.method, r.path])).toEqual([
        ['GET', `/redirect/${code}?to=/page/b`],
        ['GET', '/page/b'],
      ])
    })
  }

  test('a chain of 3 within max_redirects 3: every hop in order', async () => {
    const res = await fetchOk(api, { url: site.url('/chain/3'), max_redirects: 3 })
    expect(res.status).toBe(200)
    expect(res.final_url).toBe(site.url('/chain/0'))
    expect(unb64Text(res.body)).toBe(pageHtml('chain end'))
    expect(res.redirects).toEqual([
      { url: site.url('/chain/3'), location: site.url('/chain/2'), side: 'server', type: 'temporary' },
      { url: site.url('/chain/2'), location: site.url('/chain/1'), side: 'server', type: 'temporary' },
      { url: site.url('/chain/1'), location: site.url('/chain/0'), side: 'server', type: 'temporary' },
    ])
  })

  test('more hops than max_redirects → 502 redirect_limit; the hop past the limit is not fetched', async () => {
    const r = await fetchOne({ url: site.url('/chain/3'), max_redirects: 2 })
    expectError(r, 502, 'redirect_limit')
    expect(site.requestsTo('/chain/0')).toEqual([])
    expect(site.requests.length).toBeLessThanOrEqual(3)
  })

  test('a redirect loop → 502 redirect_limit after at most max_redirects + 1 requests', async () => {
    const { r, ms } = await fetchTimed(api, { url: site.url('/loop/a'), max_redirects: 5 })
    expectError(r, 502, 'redirect_limit')
    expect(site.requests.length).toBeLessThanOrEqual(6)
    expect(ms).toBeLessThan(2000)
  })

  test('a redirect to another origin is followed', async () => {
    const url = site.url(`/redirect/301?to=${encodeURIComponent(other.url('/page/far'))}`)
    const res = await fetchOk(api, { url, max_redirects: 2 })
    expect(res.final_url).toBe(other.url('/page/far'))
    expect(res.redirects).toEqual([{ url, location: other.url('/page/far'), side: 'server', type: 'permanent' }])
    expect(other.requests.map((r) => r.path)).toEqual(['/page/far'])
  })

  for (const code of [301, 302, 303]) {
    test(`POST then ${code} continues as GET without a body`, async () => {
      const res = await fetchOk(api, { url: site.url(`/redirect/${code}?to=/echo`), method: 'POST', body: b64('hello'), max_redirects: 1 })
      const e = echoOf(res)
      expect(e.method).toBe('GET')
      expect(e.body_base64).toBe('')
      const hop = site.requestsTo('/echo')[0]!
      expect(hop.body.length).toBe(0)
      expect(headerOf(hop.headers, 'content-length') ?? '0').toBe('0')
      expect(site.requestsTo(`/redirect/${code}`)[0]!.method).toBe('POST')
    })
  }

  test('PUT then 303 continues as GET', async () => {
    const e = echoOf(await fetchOk(api, { url: site.url('/redirect/303?to=/echo'), method: 'PUT', body: b64('x'), max_redirects: 1 }))
    expect([e.method, e.body_base64]).toEqual(['GET', ''])
  })

  for (const code of [307, 308]) {
    test(`POST then ${code} keeps the method and the body`, async () => {
      const bytes = Uint8Array.from([104, 105, 0, 255])
      const res = await fetchOk(api, { url: site.url(`/redirect/${code}?to=/echo`), method: 'POST', body: b64(bytes), max_redirects: 1 })
      const e = echoOf(res)
      expect(e.method).toBe('POST')
      expect(e.body_base64).toBe(b64(bytes))
      expect(site.requestsTo('/echo')[0]!.body).toEqual(bytes)
    })
  }

  test('a meta refresh with delay 0 is followed as a client-side permanent redirect', async () => {
    const url = site.url('/meta-refresh?to=/page/next&delay=0')
    const res = await fetchOk(api, { url, max_redirects: 1 })
    expect(res.status).toBe(200)
    expect(res.final_url).toBe(site.url('/page/next'))
    expect(unb64Text(res.body)).toBe(pageHtml('next'))
    expect(res.redirects).toEqual([{ url, location: site.url('/page/next'), side: 'client', type: 'permanent' }])
  })

  test('a meta refresh with a delay is a client-side temporary redirect', async () => {
    const url = site.url('/meta-refresh?to=/page/later&delay=1')
    const res = await fetchOk(api, { url, max_redirects: 1 })
    expect(res.final_url).toBe(site.url('/page/later'))
    expect(res.redirects).toEqual([{ url, location: site.url('/page/later'), side: 'client', type: 'temporary' }])
  })

  test('a meta refresh is not followed with max_redirects 0', async () => {
    const url = site.url('/meta-refresh?to=/page/next&delay=0')
    const res = await fetchOk(api, { url })
    expect(res.final_url).toBe(url)
    expect(res.redirects).toEqual([])
    expect(unb64Text(res.body)).toContain('http-equiv="refresh"')
    expect(site.requestsTo('/page/next')).toEqual([])
  })

  test('a meta refresh in a non-HTML response is not a redirect', async () => {
    const url = site.url('/meta-refresh?to=/page/next&delay=0&content_type=text/plain')
    const res = await fetchOk(api, { url, max_redirects: 3 })
    expect(res.final_url).toBe(url)
    expect(res.redirects).toEqual([])
    expect(site.requestsTo('/page/next')).toEqual([])
  })

  test('meta refreshes count against max_redirects together with server redirects', async () => {
    const start = site.url(`/redirect/302?to=${encodeURIComponent('/meta-refresh?to=/page/m&delay=0')}`)
    expectError(await fetchOne({ url: start, max_redirects: 1 }), 502, 'redirect_limit')
    expect(site.requestsTo('/page/m')).toEqual([])
    const res = await fetchOk(api, { url: start, max_redirects: 2 })
    expect(res.final_url).toBe(site.url('/page/m'))
    expect(res.redirects).toEqual([
      { url: start, location: site.url('/meta-refresh?to=/page/m&delay=0'), side: 'server', type: 'temporary' },
      { url: site.url('/meta-refresh?to=/page/m&delay=0'), location: site.url('/page/m'), side: 'client', type: 'permanent' },
    ])
  })

  test('a 3xx without Location is returned as it is', async () => {
    const res = await fetchOk(api, { url: site.url('/status/302'), max_redirects: 3 })
    expect([res.status, res.final_url, res.redirects]).toEqual([302, site.url('/status/302'), []])
  })

  test('a protocol-relative Location is recorded as an absolute URL', async () => {
    const url = site.url(`/redirect/302?to=${encodeURIComponent(`//127.0.0.2:${other.port}/page/pr`)}`)
    const res = await fetchOk(api, { url, max_redirects: 1 })
    expect(res.redirects).toEqual([{ url, location: other.url('/page/pr'), side: 'server', type: 'temporary' }])
    expect(res.final_url).toBe(other.url('/page/pr'))
  })

  test('a cookie set on a 302 is sent on the next hop and returned in cookies', async () => {
    const url = site.url(`/redirect/302?to=/echo&set_cookie=${encodeURIComponent('sid=abc; Path=/')}`)
    const res = await fetchOk(api, { url, max_redirects: 1, cookies: [{ name: 'given', value: 'g' }] })
    expect(site.requestsTo('/redirect/302')[0]!.cookies).toEqual({ given: 'g' })
    expect(echoOf(res).cookies).toEqual({ given: 'g', sid: 'abc' })
    expect(res.cookies.map((c: any) => [c.name, c.value])).toContainEqual(['sid', 'abc'])
  })

  test('a Set-Cookie for a foreign domain or another path is not sent on', async () => {
    const set = [`x=1; Domain=example.com; Path=/`, 'y=2; Path=/other', 'z=3; Path=/'].map((c) => `set_cookie=${encodeURIComponent(c)}`).join('&')
    const res = await fetchOk(api, { url: site.url(`/redirect/302?to=/echo&${set}`), max_redirects: 1 })
    expect(echoOf(res).cookies).toEqual({ z: '3' })
  })

  test('a Set-Cookie with Max-Age=0 on a hop deletes the cookie for the next hop', async () => {
    const set = encodeURIComponent('a=; Max-Age=0; Path=/')
    const res = await fetchOk(api, {
      url: site.url(`/redirect/302?to=/echo&set_cookie=${set}`),
      max_redirects: 1,
      cookies: [
        { name: 'a', value: '1' },
        { name: 'b', value: '2' },
      ],
    })
    expect(site.requests[0]!.cookies).toEqual({ a: '1', b: '2' })
    expect(echoOf(res).cookies).toEqual({ b: '2' })
  })

  test('cookies stay with their host across a redirect to another host', async () => {
    const url = site.url(`/redirect/302?to=${encodeURIComponent(other.url('/echo'))}&set_cookie=${encodeURIComponent('hop=1; Path=/')}`)
    const res = await fetchOk(api, {
      url,
      max_redirects: 1,
      cookies: [
        { name: 'hostonly', value: 'a' },
        { name: 'forother', value: 'b', domain: '127.0.0.2' },
      ],
    })
    expect(site.requests[0]!.cookies).toEqual({ hostonly: 'a' })
    expect(echoOf(res).cookies).toEqual({ forother: 'b' })
  })
})

describe('POST /v1/fetch when the target does not answer', () => {
  test('slow headers past the timeout → 504 timeout, promptly', async () => {
    const { r, ms } = await fetchTimed(api, { url: site.url('/slow-headers?ms=5000'), timeout: '300ms' })
    expectError(r, 504, 'timeout')
    expect(ms).toBeGreaterThanOrEqual(280)
    expect(ms).toBeLessThan(1300)
    expect(site.requests).toHaveLength(1)
  })

  test('a body that stalls past the timeout → 504 timeout, promptly', async () => {
    const { r, ms } = await fetchTimed(api, { url: site.url('/slow-body?ms=5000'), timeout: '300ms' })
    expectError(r, 504, 'timeout')
    expect(ms).toBeGreaterThanOrEqual(280)
    expect(ms).toBeLessThan(1300)
  })

  test('one deadline covers every redirect hop', async () => {
    // 5 hops of 150 ms each: every hop is quick, all of them together are not.
    const { r, ms } = await fetchTimed(api, { url: site.url('/chain/5?delay=150'), max_redirects: 5, timeout: '400ms' })
    expectError(r, 504, 'timeout')
    expect(ms).toBeLessThan(1400)
    expect(site.requests.length).toBeLessThanOrEqual(4)
  })

  test('an unknown host → 502 dns', async () => {
    expectError(await fetchOne({ url: 'http://nonexistent.invalid/page' }), 502, 'dns')
  })

  test('a port nothing listens on → 502 connect', async () => {
    expectError(await fetchOne({ url: `http://127.0.0.1:${unusedPort()}/` }), 502, 'connect')
  })

  test('https to a plain-http server → 502 tls', async () => {
    const { r, ms } = await fetchTimed(api, { url: `https://127.0.0.1:${site.port}/page/x`, timeout: '3s' })
    expectError(r, 502, 'tls')
    expect(ms).toBeLessThan(2000)
  })

  test('https with a trusted certificate works (the same server the next test refuses)', async () => {
    const res = await fetchOk(trusting, { url: secure.url('/page/s') })
    expect(unb64Text(res.body)).toBe(pageHtml('s'))
  })

  test('https to a self-signed server → 502 tls; the server gets no HTTP request', async () => {
    expectError(await fetchOne({ url: secure.url('/page/s'), timeout: '3s' }), 502, 'tls')
    expect(secure.requests).toEqual([])
  })

  test('a body over TRAWL_MAX_BODY_BYTES → 502 too_large; exactly the cap is fine', async () => {
    const ok = await fetchOk(small, { url: site.url('/bytes/100000') })
    expect(unb64(ok.body)).toEqual(patternBytes(100000))
    expectError(await fetchOne({ url: site.url('/bytes/100001') }, small), 502, 'too_large')
  })

  test('a chunked body (no Content-Length) over the cap → 502 too_large', async () => {
    expectError(await fetchOne({ url: site.url('/bytes/300000?chunked=1') }, small), 502, 'too_large')
  })

  test('the cap applies to the decoded body: a gzip bomb → 502 too_large, promptly (default 10 MiB cap)', async () => {
    const { r, ms } = await fetchTimed(api, { url: site.url('/gzip-bomb') })
    expectError(r, 502, 'too_large')
    expect(ms).toBeLessThan(5000)
    expectError(await fetchOne({ url: site.url('/gzip-bomb') }, small), 502, 'too_large')
  })

  test('a 1 MB response header → 502 too_large, not a hang or a crash', async () => {
    const raw = rawServer(`HTTP/1.1 200 OK\r\nX-Big: ${'x'.repeat(1024 * 1024)}\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok`)
    try {
      const { r, ms } = await fetchTimed(api, { url: raw.url('/'), timeout: '5s' })
      expect(r.status).toBe(502)
      expectError(r, 502, 'too_large')
      expect(r.body.message).toContain('262144-byte limit')
      expect(ms).toBeLessThan(3000)
    } finally {
      raw.close()
    }
  })

  test('20000 response header lines → a clear 502 bad_response', async () => {
    const many = Array.from({ length: 20000 }, (_, i) => `X-H${i}: v`).join('\r\n')
    const raw = rawServer(`HTTP/1.1 200 OK\r\n${many}\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok`)
    try {
      const { r, ms } = await fetchTimed(api, { url: raw.url('/'), timeout: '5s' })
      expect(r.status).toBe(502)
      // Bun reports too many header lines as a malformed response (decision 41).
      expect(r.body.error).toBe('bad_response')
      expect(ms).toBeLessThan(3000)
    } finally {
      raw.close()
    }
  })

  test('the service still answers after all of the above', async () => {
    expect((await fetchOk(api, { url: site.url('/page/alive') })).status).toBe(200)
  })
})

describe('POST /v1/fetch proxies', () => {
  test('a named proxy carries the request (absolute form) to the target', async () => {
    const res = await fetchOk(api, { url: site.url('/echo?via=proxy'), proxies: ['fwd'] })
    expect(headerOf(echoOf(res).headers, 'via')).toBe('1.1 trawl-test-proxy')
    expect(proxy.requests.map((p) => [p.method, p.target])).toEqual([['GET', site.url('/echo?via=proxy')]])
  })

  test('redirect hops go through the proxy too', async () => {
    const res = await fetchOk(api, { url: site.url('/redirect/302?to=/page/p'), proxies: ['fwd'], max_redirects: 1 })
    expect(res.final_url).toBe(site.url('/page/p'))
    expect(proxy.requests.map((p) => p.target)).toEqual([site.url('/redirect/302?to=/page/p'), site.url('/page/p')])
  })

  test('https through a proxy is tunnelled with CONNECT', async () => {
    const res = await fetchOk(trusting, { url: secure.url('/page/tunnel'), proxies: ['fwd'] })
    expect(unb64Text(res.body)).toBe(pageHtml('tunnel'))
    expect(proxy.connects).toEqual([`127.0.0.1:${secure.port}`])
  })

  test('a proxy that refuses connections → 502 proxy, and the target is never reached', async () => {
    expectError(await fetchOne({ url: site.url('/page/x'), proxies: ['dead'] }), 502, 'proxy')
    expect(site.requests).toEqual([])
  })
})

describe('POST /v1/fetch browser client', () => {
  test('without Chromium → 503 browser_unavailable', async () => {
    expectError(await fetchOne({ url: site.url('/page/b'), client: { kind: 'browser' } }), 503, 'browser_unavailable')
  })

  test('the standard client is the explicit default', async () => {
    const res = await fetchOk(api, { url: site.url('/page/std'), client: { kind: 'standard' } })
    expect(Object.keys(res).sort()).toEqual(RESULT_KEYS)
  })
})
