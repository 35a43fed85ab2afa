// POST /v1/fetch middleware: header edits, auth (kept to the request's origin), rate limits,
// retry_on_status and response_guard, observed from the fixture's side.
import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'bun:test'
import { testApi, type TestApi } from '../helpers/api'
import { gapFloor } from '../helpers/arrivals'
import { fixtureSite } from '../helpers/fixture-site'
import { b64, echoOf, expectError, fetchOk, gaps, headerOf, unb64Text } from './support'

const site = fixtureSite()
const other = fixtureSite({ hostname: '127.0.0.2' })
let api: TestApi
beforeAll(() => {
  api = testApi({ TRAWL_ALLOW_PRIVATE_NETWORKS: 'true' })
})
afterAll(async () => {
  api.close()
  await Promise.all([site.close(), other.close()])
})
beforeEach(() => {
  site.reset()
  other.reset()
})

const echo = async (middleware: unknown[], over: Record<string, unknown> = {}) => echoOf(await fetchOk(api, { url: site.url('/echo'), middleware, ...over }))
const sent = (e: { headers: [string, string][] }, name: string) => headerOf(e.headers, name)

describe('request middleware', () => {
  test('set_headers sets headers and replaces the same header from `headers` (one value)', async () => {
    const e = await echo(
      [
        {
          kind: 'set_headers',
          headers: [
            ['X-Custom', 'mw'],
            ['X-Shared', 'from-middleware'],
          ],
        },
      ],
      { headers: [['X-Shared', 'from-body']] },
    )
    expect(sent(e, 'x-custom')).toBe('mw')
    expect(sent(e, 'x-shared')).toBe('from-middleware')
    expect(site.requests[0]!.headers.filter(([n]) => n === 'x-shared')).toHaveLength(1)
  })

  test('set_headers can replace the User-Agent', async () => {
    const e = await echo([{ kind: 'set_headers', headers: [['User-Agent', 'mw-agent/1']] }])
    expect(sent(e, 'user-agent')).toBe('mw-agent/1')
  })

  test('remove_headers removes a header from `headers`, by name in any case', async () => {
    const e = await echo([{ kind: 'remove_headers', names: ['x-remove-me'] }], {
      headers: [
        ['X-Remove-Me', '1'],
        ['X-Keep', '2'],
      ],
    })
    expect(sent(e, 'x-remove-me')).toBeNull()
    expect(sent(e, 'x-keep')).toBe('2')
  })

  test('remove_headers User-Agent: the trawl user agent is not sent', async () => {
    const e = await echo([{ kind: 'remove_headers', names: ['User-Agent'] }])
    expect(sent(e, 'user-agent') ?? '').not.toStartWith('trawl/')
  })

  test('remove_headers Referer drops the referrer', async () => {
    const e = await echo([{ kind: 'remove_headers', names: ['Referer'] }], { referrer: 'https://from.example/' })
    expect(sent(e, 'referer')).toBeNull()
  })

  test('middleware runs in order: set then remove leaves nothing, remove then set leaves the value', async () => {
    const a = await echo([
      { kind: 'set_headers', headers: [['X-Order', 'set']] },
      { kind: 'remove_headers', names: ['X-Order'] },
    ])
    expect(sent(a, 'x-order')).toBeNull()
    const b = await echo([
      { kind: 'remove_headers', names: ['X-Order'] },
      { kind: 'set_headers', headers: [['X-Order', 'set']] },
    ])
    expect(sent(b, 'x-order')).toBe('set')
  })

  test('basic_auth sends Authorization: Basic base64(username:password)', async () => {
    const e = await echo([{ kind: 'basic_auth', username: 'alice', password: 'pa:ss wörd' }])
    expect(sent(e, 'authorization')).toBe(`Basic ${b64('alice:pa:ss wörd')}`)
  })

  test('bearer_auth sends Authorization: Bearer <token>', async () => {
    const e = await echo([{ kind: 'bearer_auth', token: 'tok.en-123' }])
    expect(sent(e, 'authorization')).toBe('Bearer tok.en-123')
  })

  for (const [kind, mw, expected] of [
    ['basic_auth', { kind: 'basic_auth', username: 'u', password: 'p' }, `Basic ${b64('u:p')}`],
    ['bearer_auth', { kind: 'bearer_auth', token: 't' }, 'Bearer t'],
  ] as const) {
    test(`${kind} is kept on a same-origin redirect`, async () => {
      const res = await fetchOk(api, { url: site.url('/redirect/302?to=/echo'), max_redirects: 1, middleware: [mw] })
      expect(headerOf(site.requests[0]!.headers, 'authorization')).toBe(expected)
      expect(sent(echoOf(res), 'authorization')).toBe(expected)
    })

    test(`${kind} is not sent after a redirect to another origin`, async () => {
      const res = await fetchOk(api, { url: site.url(`/redirect/302?to=${encodeURIComponent(other.url('/echo'))}`), max_redirects: 1, middleware: [mw] })
      expect(headerOf(site.requests[0]!.headers, 'authorization')).toBe(expected)
      expect(sent(echoOf(res), 'authorization')).toBeNull()
      expect(other.requests).toHaveLength(1)
    })

    test(`${kind} is not sent to another port of the same host (another origin)`, async () => {
      const third = fixtureSite()
      try {
        const res = await fetchOk(api, { url: site.url(`/redirect/307?to=${encodeURIComponent(third.url('/echo'))}`), max_redirects: 1, middleware: [mw] })
        expect(sent(echoOf(res), 'authorization')).toBeNull()
      } finally {
        await third.close()
      }
    })
  }
})

describe('rate_limit', () => {
  test('per_second 5: a batch of 4 requests to one host arrives ≥ 200 ms apart', async () => {
    const item = (i: number) => ({ url: site.url(`/echo?i=${i}`), middleware: [{ kind: 'rate_limit', per_second: 5 }] })
    const r = await api.post('/v1/fetch/batch', { items: [0, 1, 2, 3].map(item) })
    expect(r.status).toBe(200)
    expect(r.body.results.map((x: any) => [x.ok, x.status])).toEqual([
      [true, 200],
      [true, 200],
      [true, 200],
      [true, 200],
    ])
    const times = site.requests.map((q) => q.at).sort((a, b) => a - b)
    expect(times).toHaveLength(4)
    // On arrival (gapFloor says why not 200 ms itself); unlimited, they arrive within a few ms.
    for (const g of gaps(times)) expect(g).toBeGreaterThanOrEqual(gapFloor(200))
    // One late arrival shortens the whole span by one gap's slack at most.
    expect(times[3]! - times[0]!).toBeGreaterThanOrEqual(3 * 200 - gapFloor(200))
  })

  test('per_second 5 across two single fetches in a row: the second waits', async () => {
    const body = { url: site.url('/echo?x=1'), middleware: [{ kind: 'rate_limit', per_second: 5 }] }
    await fetchOk(api, body)
    await fetchOk(api, body)
    const [g] = gaps(site.requests.map((q) => q.at))
    expect(g!).toBeGreaterThanOrEqual(gapFloor(200))
  })

  test('the limit is per host: two hosts are not spaced against each other', async () => {
    // Spaced against each other, the second would wait 2 s.
    const mw = [{ kind: 'rate_limit', per_second: 0.5 }]
    const t = performance.now()
    const r = await api.post('/v1/fetch/batch', { items: [site.url('/echo?h=1'), other.url('/echo?h=1')].map((url) => ({ url, middleware: mw })) })
    expect(r.body.results.map((x: any) => x.status)).toEqual([200, 200])
    expect(performance.now() - t).toBeLessThan(1000)
  })

  test('a high rate does not slow anything down', async () => {
    // Its own tenant: a slower limit the tests above left on this host does not apply to it.
    const t = performance.now()
    const r = await api.post('/v1/fetch/batch', { items: [0, 1, 2, 3].map((i) => ({ url: site.url(`/echo?fast=${i}`), middleware: [{ kind: 'rate_limit', per_second: 1000 }] })) }, { tenant: 'fast' })
    expect(r.status).toBe(200)
    expect(performance.now() - t).toBeLessThan(400)
  })

  test("one tenant's slow limit does not hold back another tenant's requests to the host", async () => {
    await api.post('/v1/fetch', { url: site.url('/echo?t=slow'), middleware: [{ kind: 'rate_limit', per_second: 0.5 }] }, { tenant: 'slow-a' })
    const t = performance.now()
    const r = await api.post('/v1/fetch', { url: site.url('/echo?t=fast'), middleware: [{ kind: 'rate_limit', per_second: 1000 }] }, { tenant: 'fast-b' })
    expect(r.status).toBe(200)
    // Held back, it would wait 2 s.
    expect(performance.now() - t).toBeLessThan(1000)
  })
})

describe('retry_on_status', () => {
  test('a listed status (404) is retried max_retries times (default 2), then returned', async () => {
    const res = await fetchOk(api, { url: site.url('/flaky/nf?fail=100&status=404'), middleware: [{ kind: 'retry_on_status', statuses: [404] }] })
    expect(res.status).toBe(404)
    expect(site.hits('nf')).toBe(3)
  })

  test('max_retries of the middleware sets the count', async () => {
    const res = await fetchOk(api, { url: site.url('/flaky/nf1?fail=100&status=404'), middleware: [{ kind: 'retry_on_status', statuses: [404], max_retries: 1 }] })
    expect(res.status).toBe(404)
    expect(site.hits('nf1')).toBe(2)
  })

  test('a listed status that clears: 404 once, then 200', async () => {
    const res = await fetchOk(api, { url: site.url('/flaky/nfok?fail=1&status=404'), middleware: [{ kind: 'retry_on_status', statuses: [404, 410] }] })
    expect(res.status).toBe(200)
    expect(unb64Text(res.body)).toContain('nfok')
    expect(site.hits('nfok')).toBe(2)
  })

  test('a status that is not listed is not retried', async () => {
    const res = await fetchOk(api, { url: site.url('/flaky/gone?fail=100&status=410'), middleware: [{ kind: 'retry_on_status', statuses: [404] }] })
    expect(res.status).toBe(410)
    expect(site.hits('gone')).toBe(1)
  })
})

describe('response_guard', () => {
  test('a status outside `statuses` → 502 rejected naming the status', async () => {
    const r = await api.post('/v1/fetch', { url: site.url('/status/404'), middleware: [{ kind: 'response_guard', statuses: [200] }] })
    expectError(r, 502, 'rejected')
    expect(r.body.message).toContain('404')
  })

  test('a status inside `statuses` passes', async () => {
    const res = await fetchOk(api, { url: site.url('/status/404'), middleware: [{ kind: 'response_guard', statuses: [200, 404] }] })
    expect(res.status).toBe(404)
  })

  test('a content type outside `content_types` → 502 rejected naming the type', async () => {
    const r = await api.post('/v1/fetch', { url: site.url('/content/json'), middleware: [{ kind: 'response_guard', content_types: ['text/html'] }] })
    expectError(r, 502, 'rejected')
    expect(r.body.message).toContain('application/json')
  })

  test('content types match on the media type: parameters are ignored', async () => {
    const res = await fetchOk(api, { url: site.url('/content/latin1'), middleware: [{ kind: 'response_guard', content_types: ['text/html'] }] })
    expect(res.status).toBe(200)
  })

  test('`type/*` allows every subtype', async () => {
    expect((await fetchOk(api, { url: site.url('/content/png'), middleware: [{ kind: 'response_guard', content_types: ['image/*'] }] })).status).toBe(200)
    expectError(await api.post('/v1/fetch', { url: site.url('/page/x'), middleware: [{ kind: 'response_guard', content_types: ['image/*'] }] }), 502, 'rejected')
  })

  test('the guard judges the final response after redirects, not the 3xx', async () => {
    const res = await fetchOk(api, { url: site.url('/redirect/301?to=/page/g'), max_redirects: 1, middleware: [{ kind: 'response_guard', statuses: [200], content_types: ['text/html'] }] })
    expect(res.final_url).toBe(site.url('/page/g'))
  })

  test('both sets must pass', async () => {
    const r = await api.post('/v1/fetch', { url: site.url('/status/200?content_type=text/plain'), middleware: [{ kind: 'response_guard', statuses: [200], content_types: ['text/html'] }] })
    expectError(r, 502, 'rejected')
    expect(r.body.message).toContain('text/plain')
  })
})
