// POST /v1/fetch/batch: validation with item paths, results in item order, per-item errors,
// concurrency seen from the fixture.
import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'bun:test'
import { testApi, type TestApi } from '../helpers/api'
import { fixtureSite, pageHtml, unusedPort } from '../helpers/fixture-site'
import { RESULT_KEYS, expectInvalid, unb64Text } from './support'

const site = fixtureSite()
let api: TestApi
let guarded: TestApi
beforeAll(() => {
  api = testApi({ TRAWL_ALLOW_PRIVATE_NETWORKS: 'true' })
  guarded = testApi({ TRAWL_ALLOW_PRIVATE_NETWORKS: 'false' })
})
afterAll(async () => {
  api.close()
  guarded.close()
  await site.close()
})
beforeEach(() => site.reset())

const batch = (items: unknown[], a = api) => a.post('/v1/fetch/batch', { items })
const errorItem = (url: string, code: string) => ({ ok: false, url, error: { error: code, message: expect.any(String) } })

describe('POST /v1/fetch/batch validation', () => {
  test('0 items → 422 on items', async () => {
    expectInvalid(await batch([]), ['items'])
  })

  test('65 items → 422 on items, nothing fetched', async () => {
    expectInvalid(await batch(Array.from({ length: 65 }, (_, i) => ({ url: site.url(`/page/${i}`) }))), ['items'])
    expect(site.requests).toEqual([])
  })

  test('items missing → 422 on items', async () => {
    const r = await api.post('/v1/fetch/batch', {})
    expectInvalid(r, ['items'])
  })

  test('a schema error inside an item → 422 with its item path; nothing is fetched', async () => {
    const items = [{ url: site.url('/page/0') }, { url: site.url('/page/1') }, { url: site.url('/page/2') }, { url: 'ftp://example.com/' }]
    expectInvalid(await batch(items), ['items[3].url'])
    expect(site.requests).toEqual([])
  })

  test('several bad items report each path', async () => {
    const r = await batch([{ url: site.url('/page/0'), max_retries: 99 }, { url: site.url('/page/1') }, { url: site.url('/page/2'), proxies: ['nope'] }])
    expect(r.status).toBe(422)
    expect(r.body.fields.map((f: any) => f.field).sort()).toEqual(['items[0].max_retries', 'items[2].proxies[0]'])
  })

  test('64 items are fine', async () => {
    const r = await batch(Array.from({ length: 64 }, (_, i) => ({ url: site.url(`/page/${i}`) })))
    expect(r.status).toBe(200)
    expect(r.body.results).toHaveLength(64)
    expect(r.body.results.map((x: any) => unb64Text(x.body))).toEqual(Array.from({ length: 64 }, (_, i) => pageHtml(String(i))))
  })

  test('a missing X-Tenant-Id is 400', async () => {
    const r = await api.post('/v1/fetch/batch', { items: [{ url: site.url('/page/t') }] }, { tenant: null })
    expect(r.status).toBe(400)
    expect(r.body.error).toBe('tenant_required')
  })
})

describe('POST /v1/fetch/batch results', () => {
  test('mixed successes and failures keep item order; each item has its exact shape', async () => {
    const refused = `http://127.0.0.1:${unusedPort()}/`
    const items = [
      { url: site.url('/page/first') },
      { url: site.url('/status/404') },
      { url: refused },
      { url: site.url('/slow-headers?ms=3000'), timeout: '200ms' },
      { url: 'http://nonexistent.invalid/' },
      { url: site.url('/chain/3'), max_redirects: 1 },
      { url: site.url('/page/last') },
    ]
    const r = await batch(items)
    expect(r.status).toBe(200)
    expect(Object.keys(r.body)).toEqual(['results'])
    const [first, notFound, ...rest] = r.body.results
    expect(Object.keys(first).sort()).toEqual(['ok', ...RESULT_KEYS].sort())
    expect(first).toMatchObject({ ok: true, url: site.url('/page/first'), final_url: site.url('/page/first'), status: 200, redirects: [] })
    expect(unb64Text(first.body)).toBe(pageHtml('first'))
    expect(notFound).toMatchObject({ ok: true, url: site.url('/status/404'), status: 404 })
    expect(rest.slice(0, 4)).toEqual([
      errorItem(refused, 'connect'),
      errorItem(site.url('/slow-headers?ms=3000'), 'timeout'),
      errorItem('http://nonexistent.invalid/', 'dns'),
      errorItem(site.url('/chain/3'), 'redirect_limit'),
    ])
    for (const e of rest.slice(0, 4)) expect(Object.keys(e.error).sort()).toEqual(['error', 'message'])
    expect(rest[4]).toMatchObject({ ok: true, url: site.url('/page/last'), status: 200 })
  })

  test('blocked addresses are error items when private networks are not allowed', async () => {
    const r = await batch([{ url: site.url('/page/a') }, { url: 'http://10.0.0.1/' }, { url: 'http://nonexistent.invalid/' }], guarded)
    expect(r.status).toBe(200)
    expect(r.body.results).toEqual([errorItem(site.url('/page/a'), 'blocked_address'), errorItem('http://10.0.0.1/', 'blocked_address'), errorItem('http://nonexistent.invalid/', 'dns')])
    expect(site.requests).toEqual([])
  })

  test('items run concurrently: 8 × 300 ms finish in well under 2.4 s', async () => {
    const t = performance.now()
    const r = await batch(Array.from({ length: 8 }, (_, i) => ({ url: site.url(`/slow-headers?ms=300&i=${i}`) })))
    const ms = performance.now() - t
    expect(r.status).toBe(200)
    expect(r.body.results.map((x: any) => [x.ok, x.status])).toEqual(Array.from({ length: 8 }, () => [true, 200]))
    expect(ms).toBeLessThan(1200)
    expect(site.maxInFlight).toBeGreaterThan(1)
    expect(site.requests).toHaveLength(8)
  })

  test('each item keeps its own options (method, headers, redirects)', async () => {
    const r = await batch([
      { url: site.url('/echo'), method: 'PUT', body: Buffer.from('one').toString('base64') },
      { url: site.url('/echo'), headers: [['X-Item', 'two']] },
      { url: site.url('/redirect/302?to=/page/three'), max_redirects: 1 },
      { url: site.url('/redirect/302?to=/page/three') },
    ])
    const [a, b, c, d] = r.body.results
    expect(JSON.parse(unb64Text(a.body))).toMatchObject({ method: 'PUT', body_text: 'one' })
    expect(JSON.parse(unb64Text(b.body)).headers).toContainEqual(['x-item', 'two'])
    expect([c.status, c.final_url]).toEqual([200, site.url('/page/three')])
    expect([d.status, d.redirects]).toEqual([302, []])
  })
})
