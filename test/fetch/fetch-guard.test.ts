// The address guard on POST /v1/fetch: with TRAWL_ALLOW_PRIVATE_NETWORKS unset, loopback,
// private, link-local and metadata addresses in every spelling are refused with 403
// blocked_address before any byte is sent, and so is a redirect hop to one.
//
// Limitation: every server a test can run is on loopback, so without private networks no
// start URL can reach a fixture directly. Redirect hops are checked in two ways: (1) a start URL
// on a fixture is refused at the first hop already (the fixture sees nothing), and (2) through a
// forward proxy: the start URL names a public address (93.184.216.34), which the guard lets
// through, and the test proxy delivers it to the loopback fixture, whose redirect to a private
// address must then be refused without the proxy or the fixture seeing that second request.
import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'bun:test'
import { testApi, type TestApi } from '../helpers/api'
import { fixtureSite, pageHtml } from '../helpers/fixture-site'
import { forwardProxy, type ForwardProxy } from '../helpers/forward-proxy'
import { echoOf, expectError, expectInvalid, fetchOk, fetchTimed, unb64Text } from './support'

const PUBLIC = 'http://93.184.216.34'
const site = fixtureSite()
let proxy: ForwardProxy
let guarded: TestApi
let open: TestApi
beforeAll(async () => {
  // Delivers every request for the public address to the fixture (same path and query).
  proxy = await forwardProxy({ map: (u) => (u.hostname === '93.184.216.34' ? site.url(u.pathname + u.search) : u) })
  guarded = testApi({ TRAWL_ALLOW_PRIVATE_NETWORKS: 'false', TRAWL_PROXIES: `public=${proxy.url}` })
  open = testApi({ TRAWL_ALLOW_PRIVATE_NETWORKS: 'true' })
})
afterAll(async () => {
  guarded.close()
  open.close()
  await Promise.all([site.close(), proxy.close()])
})
beforeEach(() => {
  site.reset()
  proxy.reset()
})

describe('blocked start URLs (TRAWL_ALLOW_PRIVATE_NETWORKS=false)', () => {
  const p = () => site.port
  const targets: [string, () => string][] = [
    ['127.0.0.1', () => `http://127.0.0.1:${p()}/page/x`],
    ['localhost', () => `http://localhost:${p()}/page/x`],
    ['[::1]', () => `http://[::1]:${p()}/page/x`],
    ['169.254.169.254 (metadata)', () => 'http://169.254.169.254/latest/meta-data/'],
    ['10.0.0.1', () => 'http://10.0.0.1/'],
    ['192.168.1.1', () => 'http://192.168.1.1/'],
    ['172.16.0.1', () => 'http://172.16.0.1/'],
    ['100.64.0.1 (CGNAT)', () => 'http://100.64.0.1/'],
    ['0.0.0.0', () => `http://0.0.0.0:${p()}/`],
    ['decimal 2130706433', () => `http://2130706433:${p()}/page/x`],
    ['hex-octet 0x7f.0.0.1', () => `http://0x7f.0.0.1:${p()}/page/x`],
    ['octal 0177.0.0.1', () => `http://0177.0.0.1:${p()}/page/x`],
    ['short 127.1', () => `http://127.1:${p()}/page/x`],
    ['IPv4-mapped [::ffff:127.0.0.1]', () => `http://[::ffff:127.0.0.1]:${p()}/page/x`],
    ['IPv4-mapped metadata [::ffff:a9fe:a9fe]', () => 'http://[::ffff:a9fe:a9fe]/'],
    ['IPv6 unique-local [fd00::1]', () => 'http://[fd00::1]/'],
    ['IPv6 link-local [fe80::1]', () => 'http://[fe80::1]/'],
    ['https on loopback', () => `https://127.0.0.1:${p()}/`],
  ]
  for (const [name, url] of targets) {
    test(`${name} → 403 blocked_address, promptly, nothing sent`, async () => {
      const { r, ms } = await fetchTimed(guarded, { url: url(), timeout: '5s' })
      expectError(r, 403, 'blocked_address')
      expect(ms).toBeLessThan(1000)
      expect(site.requests).toEqual([])
    })
  }

  test('a blocked address is refused before retries: no backoff, no request', async () => {
    const { r, ms } = await fetchTimed(guarded, { url: site.url('/flaky/g?fail=100'), max_retries: 5 })
    expectError(r, 403, 'blocked_address')
    // Retried, the backoff alone would take seconds.
    expect(ms).toBeLessThan(700)
    expect(site.requests).toEqual([])
  })

  test('a start URL on the fixture that redirects to the metadata address is refused at its first hop', async () => {
    // See the file comment: the start URL itself is loopback, so this is all a direct test can show.
    const r = await guarded.post('/v1/fetch', { url: site.url('/redirect-to-metadata'), max_redirects: 3 })
    expectError(r, 403, 'blocked_address')
    expect(site.requests).toEqual([])
  })

  test('schemes other than http and https stay a 422 on url', async () => {
    for (const url of ['ftp://127.0.0.1/', 'file:///etc/passwd', 'data:text/html,<p>x</p>', 'gopher://127.0.0.1:70/']) {
      expectInvalid(await guarded.post('/v1/fetch', { url }), ['url'])
    }
  })
})

describe('redirect hops are checked too (through the mapping proxy)', () => {
  test('sanity: a public start URL goes through the proxy and the guard lets it pass', async () => {
    const res = await fetchOk(guarded, { url: `${PUBLIC}/page/pub`, proxies: ['public'] })
    expect(res.status).toBe(200)
    expect(unb64Text(res.body)).toBe(pageHtml('pub'))
    expect(proxy.requests.map((q) => q.target)).toEqual([`${PUBLIC}/page/pub`])
  })

  test('a redirect to the metadata address → 403 blocked_address; nothing goes to it', async () => {
    const r = await guarded.post('/v1/fetch', { url: `${PUBLIC}/redirect-to-metadata`, proxies: ['public'], max_redirects: 3 })
    expectError(r, 403, 'blocked_address')
    expect(proxy.requests.map((q) => q.target)).toEqual([`${PUBLIC}/redirect-to-metadata`])
    expect(site.requests.map((q) => q.pathname)).toEqual(['/redirect-to-metadata'])
  })

  const hops: [string, () => string][] = [
    ['127.0.0.1 (the fixture itself)', () => `http://127.0.0.1:${site.port}/page/inside`],
    ['localhost', () => `http://localhost:${site.port}/page/inside`],
    ['decimal 2130706433', () => `http://2130706433:${site.port}/page/inside`],
    ['[::ffff:127.0.0.1]', () => `http://[::ffff:127.0.0.1]:${site.port}/page/inside`],
    ['10.0.0.1', () => 'http://10.0.0.1/'],
  ]
  for (const [name, to] of hops) {
    test(`a redirect to ${name} → 403 blocked_address; the private target is never asked`, async () => {
      const r = await guarded.post('/v1/fetch', { url: `${PUBLIC}/redirect/302?to=${encodeURIComponent(to())}`, proxies: ['public'], max_redirects: 3 })
      expectError(r, 403, 'blocked_address')
      expect(proxy.requests).toHaveLength(1)
      expect(site.requestsTo('/page/inside')).toEqual([])
    })
  }

  test('a meta refresh to a private address is refused too', async () => {
    const to = encodeURIComponent(`http://127.0.0.1:${site.port}/page/inside`)
    const r = await guarded.post('/v1/fetch', { url: `${PUBLIC}/meta-refresh?to=${to}&delay=0`, proxies: ['public'], max_redirects: 3 })
    expectError(r, 403, 'blocked_address')
    expect(site.requestsTo('/page/inside')).toEqual([])
  })

  test('the same redirect is followed while it stays public', async () => {
    const res = await fetchOk(guarded, { url: `${PUBLIC}/redirect/302?to=/echo`, proxies: ['public'], max_redirects: 1 })
    expect(res.final_url).toBe(`${PUBLIC}/echo`)
    expect(echoOf(res).method).toBe('GET')
  })
})

describe('TRAWL_ALLOW_PRIVATE_NETWORKS=true', () => {
  test('loopback fixtures are reachable, in the spellings that mean 127.0.0.1', async () => {
    for (const host of ['127.0.0.1', '2130706433', '0x7f.0.0.1']) {
      const res = await fetchOk(open, { url: `http://${host}:${site.port}/page/open` })
      expect(res.status).toBe(200)
    }
    expect(site.requests).toHaveLength(3)
  })

  // No test follows a redirect to 169.254.169.254 with private networks allowed: on a cloud
  // machine a real metadata service may answer there, and tests must not talk to it.
  test('a redirect from the fixture to 127.0.0.1 is followed', async () => {
    const res = await fetchOk(open, { url: site.url('/redirect-to-loopback'), max_redirects: 1 })
    expect(res.final_url).toBe(site.url('/page/loopback'))
  })
})
