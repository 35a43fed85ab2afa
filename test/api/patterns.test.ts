import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { categorize } from '../../src/extract/patterns'
import { qs, snapshot, testApi, type TestApi } from '../helpers/api'

let api: TestApi
const hosts: Record<string, { hash: string; domain: string }> = {}
beforeAll(async () => {
  api = testApi()
  for (const h of (await api.put('/v1/hosts', { hosts: ['a.example', 'b.example', 'c.example'] })).body.data) hosts[h.domain] = { hash: h.hash, domain: h.domain }
  const other = (await api.put('/v1/hosts', { hosts: ['a.example', 'z.example'] }, { tenant: 'globex' })).body.data
  hosts['z.example'] = { hash: other[1].hash, domain: 'z.example' }
})
afterAll(() => api.close())

const UUID = '00000000-0000-4000-8000-000000000000'
const regexDef = (...patterns: string[]) => ({ format: 'regex', patterns })
const urlDef = (...patterns: string[]) => ({ format: 'url_pattern', patterns })
const create = async (domain: string, body: Record<string, unknown>, tenant?: string) => {
  const r = await api.post(`/v1/hosts/${hosts[domain]!.hash}/patterns`, body, { tenant })
  expect(r.status).toBe(201)
  return r.body
}

describe('POST /v1/hosts/{host_hash}/patterns', () => {
  test('creates a set on a host of the catalogue and answers it as stored', async () => {
    const r = await api.post(`/v1/hosts/${hosts['a.example']!.hash}/patterns`, { category: 'products', patterns: urlDef('/p/:id', 'https://a.example/shop/*') })
    expect(r.status).toBe(201)
    expect(r.body).toEqual({
      id: expect.stringMatching(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/),
      category: 'products',
      patterns: { format: 'url_pattern', patterns: ['/p/:id', 'https://a.example/shop/*'] },
      host: hosts['a.example'],
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
    })
    expect((await api.get(`/v1/patterns/${r.body.id}`)).body).toEqual(r.body)
  })

  test('takes the id given; a second create with it is a 409 that changes nothing', async () => {
    const id = '11111111-1111-4111-8111-111111111111'
    const set = await create('b.example', { id, category: 'articles', patterns: regexDef('/news/') })
    expect(set.id).toBe(id)
    const before = await snapshot(api)
    const again = await api.post(`/v1/hosts/${hosts['a.example']!.hash}/patterns`, { id, category: 'blogs', patterns: regexDef('x') })
    expect(again.status).toBe(409)
    expect(again.body).toEqual({ error: 'conflict', message: `pattern set ${id} already exists` })
    expect(await snapshot(api)).toEqual(before)
    expect((await api.get(`/v1/patterns/${id}`)).body).toEqual(set)
  })

  test('a host missing from the catalogue (or only in another tenant) is a 404', async () => {
    const before = await snapshot(api)
    for (const hash of ['0'.repeat(32), hosts['z.example']!.hash]) {
      const r = await api.post(`/v1/hosts/${hash}/patterns`, { category: 'products', patterns: regexDef('x') })
      expect(r.status).toBe(404)
      expect(r.body).toEqual({ error: 'not_found', message: 'host not found' })
    }
    expect(await snapshot(api)).toEqual(before)
  })

  const long = 'a'.repeat(2049)
  test.each([
    [
      { category: 'products', patterns: regexDef('^/p/', '/x', '(', 'ok') },
      [{ field: 'patterns.patterns[2]', errors: ['is not a valid RE2 regular expression: error parsing regexp: missing closing ): `(`'] }],
    ],
    [
      { category: 'products', patterns: urlDef('/p/:id', 'a.example/*') },
      [
        {
          field: 'patterns.patterns[1]',
          errors: [
            'is not a valid URL pattern: Relative constructor string must have additional baseURL argument. (start with / for a path pattern, or write a full URL pattern such as https://example.com/products/:id)',
          ],
        },
      ],
    ],
    [{ category: 'products', patterns: urlDef('/p/(') }, [{ field: 'patterns.patterns[0]', errors: ['is not a valid URL pattern: Current open token does not have a corresponding close token.'] }]],
    [
      { category: 'products', patterns: regexDef('a(?=b)') },
      [{ field: 'patterns.patterns[0]', errors: ['is not a valid RE2 regular expression: error parsing regexp: invalid or unsupported Perl syntax: `(?=`'] }],
    ],
    // a size budget: matching costs the URL's length times the program's size
    [
      { category: 'products', patterns: regexDef('^/p/', '.{1000}'.repeat(292)) },
      [{ field: 'patterns.patterns[1]', errors: ['is too large: it compiles to about 292002 RE2 instructions, more than the 1000 a pattern may use (a repetition such as x{n} counts x n times)'] }],
    ],
    [
      { category: 'products', patterns: urlDef('/p/:id(\\d+)', '/:a(\\d{600})/:b(\\d{600})') },
      [{ field: 'patterns.patterns[1]', errors: ['is too large: it compiles to about 1206 RE2 instructions, more than the 1000 a pattern may use (a repetition such as x{n} counts x n times)'] }],
    ],
    [{ category: 'recipes', patterns: regexDef('x') }, [{ field: 'category', errors: ['must be one of "articles", "blogs", "products", "forums", "sections", "others"'] }]],
    [{ category: 'products', patterns: { format: 'glob', patterns: ['*'] } }, [{ field: 'patterns.format', errors: ['must be one of "regex", "url_pattern"'] }]],
    [{ category: 'products', patterns: regexDef() }, [{ field: 'patterns.patterns', errors: ['must have at least 1 item'] }]],
    [{ category: 'products', patterns: regexDef(...Array.from({ length: 101 }, (_, i) => `/p${i}`)) }, [{ field: 'patterns.patterns', errors: ['must have at most 100 items'] }]],
    [{ category: 'products', patterns: regexDef('ok', '') }, [{ field: 'patterns.patterns[1]', errors: ['must not be empty'] }]],
    [{ category: 'products', patterns: regexDef(long) }, [{ field: 'patterns.patterns[0]', errors: ['must be at most 2048 characters'] }]],
    [{ category: 'products', patterns: { format: 'regex', patterns: ['x'], flags: 'i' } }, [{ field: 'patterns.flags', errors: ['is not a known field'] }]],
    [{ category: 'products', patterns: regexDef('x'), host: 'a.example' }, [{ field: 'host', errors: ['is not a known field'] }]],
    [{ category: 'products', patterns: regexDef('x'), id: 'nope' }, [{ field: 'id', errors: ['must be a uuid'] }]],
    [{ patterns: regexDef('x') }, [{ field: 'category', errors: ['is required'] }]],
    [{ category: 'products' }, [{ field: 'patterns', errors: ['is required'] }]],
    // schema and compile errors land in one 422
    [
      { category: 'nope', patterns: regexDef('[', 'ok', ')') },
      [
        { field: 'category', errors: ['must be one of "articles", "blogs", "products", "forums", "sections", "others"'] },
        { field: 'patterns.patterns[0]', errors: ['is not a valid RE2 regular expression: error parsing regexp: missing closing ]: `[`'] },
        { field: 'patterns.patterns[2]', errors: ['is not a valid RE2 regular expression: error parsing regexp: unexpected ): `)`'] },
      ],
    ],
  ])('%j is a 422 with exactly these fields and changes nothing', async (body, fields) => {
    const before = await snapshot(api)
    const r = await api.post(`/v1/hosts/${hosts['a.example']!.hash}/patterns`, body)
    expect(r.status).toBe(422)
    expect(r.body).toEqual({ error: 'validation', fields })
    expect(await snapshot(api)).toEqual(before)
  })

  test('a bad host hash, malformed JSON and validation before existence', async () => {
    const before = await snapshot(api)
    const bad = await api.post('/v1/hosts/NOT-A-HASH/patterns', { category: 'products', patterns: regexDef('x') })
    expect(bad.body).toEqual({ error: 'validation', fields: [{ field: 'host_hash', errors: ['must be 32 lowercase hex characters'] }] })
    const json = await api.call('POST', `/v1/hosts/${hosts['a.example']!.hash}/patterns`, { raw: '{"category":', headers: { 'content-type': 'application/json' } })
    expect(json.status).toBe(422)
    expect(json.body.fields[0].field).toBe('body')
    // an unknown host with an invalid body: 422 first
    expect((await api.post(`/v1/hosts/${'0'.repeat(32)}/patterns`, { category: 'x', patterns: regexDef('x') })).status).toBe(422)
    expect(await snapshot(api)).toEqual(before)
  })
})

describe('GET, PUT and DELETE /v1/patterns/{patterns_id}', () => {
  test('PUT replaces the definition (format too) and keeps id, category, host and created_at', async () => {
    const set = await create('a.example', { category: 'forums', patterns: regexDef('/forum/') })
    const r = await api.put(`/v1/patterns/${set.id}`, { patterns: urlDef('/t/:topic', '/f/*') })
    expect(r.status).toBe(200)
    expect(r.body).toEqual({ ...set, patterns: { format: 'url_pattern', patterns: ['/t/:topic', '/f/*'] } })
    expect((await api.get(`/v1/patterns/${set.id}`)).body).toEqual(r.body)
    expect((await api.post(`/v1/patterns/${set.id}/match`, { paths: ['/forum/1', '/t/9'] })).body.results.map((x: { matched: boolean }) => x.matched)).toEqual([false, true])
  })

  test.each([
    [{}, [{ field: 'patterns', errors: ['is required'] }]],
    [{ patterns: regexDef('ok', '(') }, [{ field: 'patterns.patterns[1]', errors: ['is not a valid RE2 regular expression: error parsing regexp: missing closing ): `(`'] }]],
    [
      { patterns: regexDef('.{999}') },
      [{ field: 'patterns.patterns[0]', errors: ['is too large: it compiles to about 1001 RE2 instructions, more than the 1000 a pattern may use (a repetition such as x{n} counts x n times)'] }],
    ],
    [{ patterns: urlDef('/p/:id'), category: 'blogs' }, [{ field: 'category', errors: ['is not a known field'] }]],
    [{ patterns: { format: 'xpath', patterns: ['//a'] } }, [{ field: 'patterns.format', errors: ['must be one of "regex", "url_pattern"'] }]],
  ])('PUT %j is a 422 and changes nothing', async (body, fields) => {
    const set = await create('a.example', { category: 'others', patterns: regexDef('/o/') })
    const before = await snapshot(api)
    const r = await api.put(`/v1/patterns/${set.id}`, body)
    expect(r.status).toBe(422)
    expect(r.body).toEqual({ error: 'validation', fields })
    expect(await snapshot(api)).toEqual(before)
    expect((await api.get(`/v1/patterns/${set.id}`)).body).toEqual(set)
  })

  test('DELETE answers 204, then the set is gone', async () => {
    const set = await create('a.example', { category: 'others', patterns: regexDef('/gone/') })
    const before = (await snapshot(api)).pattern_sets
    const r = await api.del(`/v1/patterns/${set.id}`)
    expect(r.status).toBe(204)
    expect(r.text).toBe('')
    expect((await snapshot(api)).pattern_sets).toBe(before - 1)
    expect((await api.get(`/v1/patterns/${set.id}`)).status).toBe(404)
    expect((await api.del(`/v1/patterns/${set.id}`)).status).toBe(404)
  })

  test('an unknown id is a 404 on every route; a malformed one a 422 on patterns_id', async () => {
    const notFound = { error: 'not_found', message: 'pattern set not found' }
    expect(await api.get(`/v1/patterns/${UUID}`)).toMatchObject({ status: 404, body: notFound })
    expect(await api.put(`/v1/patterns/${UUID}`, { patterns: regexDef('x') })).toMatchObject({ status: 404, body: notFound })
    expect(await api.del(`/v1/patterns/${UUID}`)).toMatchObject({ status: 404, body: notFound })
    expect(await api.post(`/v1/patterns/${UUID}/match`, { paths: ['/'] })).toMatchObject({ status: 404, body: notFound })
    const invalid = { status: 422, body: { error: 'validation', fields: [{ field: 'patterns_id', errors: ['must be a uuid'] }] } }
    expect(await api.get('/v1/patterns/123')).toMatchObject(invalid)
    expect(await api.put('/v1/patterns/123', { patterns: regexDef('x') })).toMatchObject(invalid)
    expect(await api.del('/v1/patterns/123')).toMatchObject(invalid)
    expect(await api.post('/v1/patterns/123/match', { paths: ['/'] })).toMatchObject(invalid)
    // validation before existence
    expect((await api.put(`/v1/patterns/${UUID}`, { patterns: regexDef('(') })).status).toBe(422)
    expect((await api.post(`/v1/patterns/${UUID}/match`, { paths: [] })).status).toBe(422)
  })
})

describe('POST /v1/patterns/{patterns_id}/match', () => {
  test('url_pattern: resolves each path against the host and names the matching patterns', async () => {
    const set = await create('a.example', { category: 'products', patterns: urlDef('/p/:id', '/p/*', 'https://a.example/p/*\\?ref=:r', '/café') })
    const before = await snapshot(api)
    const r = await api.post(`/v1/patterns/${set.id}/match`, { paths: ['/p/1', 'p/1/', '/p/1?ref=mail', '/about', 'https://b.example/p/2', '/caf%C3%A9', 'http://a.example:8080/p/3#x'] })
    expect(r.status).toBe(200)
    expect(r.body).toEqual({
      results: [
        { path: '/p/1', url: 'https://a.example/p/1', matched: true, patterns: ['/p/:id', '/p/*'], category: 'products' },
        { path: 'p/1/', url: 'https://a.example/p/1/', matched: true, patterns: ['/p/*'], category: 'products' },
        { path: '/p/1?ref=mail', url: 'https://a.example/p/1?ref=mail', matched: true, patterns: ['/p/:id', '/p/*', 'https://a.example/p/*\\?ref=:r'], category: 'products' },
        { path: '/about', url: 'https://a.example/about', matched: false, patterns: [], category: null },
        { path: 'https://b.example/p/2', url: 'https://b.example/p/2', matched: true, patterns: ['/p/:id', '/p/*'], category: 'products' },
        { path: '/caf%C3%A9', url: 'https://a.example/caf%C3%A9', matched: true, patterns: ['/café'], category: 'products' },
        // the fragment is dropped, as parse's category guard drops it
        { path: 'http://a.example:8080/p/3#x', url: 'http://a.example:8080/p/3', matched: true, patterns: ['/p/:id', '/p/*'], category: 'products' },
      ],
    })
    expect(await snapshot(api)).toEqual(before)
  })

  test('regex: searched in the absolute URL', async () => {
    const set = await create('b.example', { category: 'articles', patterns: regexDef('^https://b\\.example/\\d{4}/', '[?&]amp=1', '/$') })
    const r = await api.post(`/v1/patterns/${set.id}/match`, { paths: ['/2024/05/slug', '/2024/?amp=1', '/about', '/tags/'] })
    expect(r.body.results).toEqual([
      { path: '/2024/05/slug', url: 'https://b.example/2024/05/slug', matched: true, patterns: ['^https://b\\.example/\\d{4}/'], category: 'articles' },
      { path: '/2024/?amp=1', url: 'https://b.example/2024/?amp=1', matched: true, patterns: ['^https://b\\.example/\\d{4}/', '[?&]amp=1'], category: 'articles' },
      { path: '/about', url: 'https://b.example/about', matched: false, patterns: [], category: null },
      { path: '/tags/', url: 'https://b.example/tags/', matched: true, patterns: ['/$'], category: 'articles' },
    ])
  })

  test('drops the fragment, as the category guard of parse does', async () => {
    const set = await create('c.example', { category: 'forums', patterns: regexDef('#reviews$', '/t/1$') })
    const r = await api.post(`/v1/patterns/${set.id}/match`, { paths: ['/t/1#reviews', '/t/1#'] })
    expect(r.body.results).toEqual([
      { path: '/t/1#reviews', url: 'https://c.example/t/1', matched: true, patterns: ['/t/1$'], category: 'forums' },
      { path: '/t/1#', url: 'https://c.example/t/1', matched: true, patterns: ['/t/1$'], category: 'forums' },
    ])
    const guarded = { guards: [{ kind: 'category', categories: ['forums'] }], steps: [{ kind: 'metadata' }] }
    const parsed = await api.post('/v1/parse', { url: 'https://c.example/t/1#reviews', body: btoa('<h1>x</h1>'), content_type: 'text/html', pipelines: [guarded] })
    expect(parsed.status).toBe(200)
    expect(parsed.body.pipelines[0].status).toBe('ran')
    await api.del(`/v1/patterns/${set.id}`)
  })

  test('255 paths are accepted', async () => {
    const set = await create('c.example', { category: 'sections', patterns: regexDef('/s/') })
    const paths = Array.from({ length: 255 }, (_, i) => (i % 2 ? `/s/${i}` : `/x/${i}`))
    const r = await api.post(`/v1/patterns/${set.id}/match`, { paths })
    expect(r.status).toBe(200)
    expect(r.body.results).toHaveLength(255)
    expect(r.body.results.filter((x: { matched: boolean }) => x.matched)).toHaveLength(127)
  })

  test.each([
    [{ paths: [] }, [{ field: 'paths', errors: ['must have at least 1 item'] }]],
    [{ paths: Array.from({ length: 256 }, (_, i) => `/${i}`) }, [{ field: 'paths', errors: ['must have at most 255 items'] }]],
    [
      { paths: ['/ok', 'mailto:a@b.example', '/fine', 'javascript:alert(1)'] },
      [
        { field: 'paths[1]', errors: ['must be a path or an absolute http(s) URL'] },
        { field: 'paths[3]', errors: ['must be a path or an absolute http(s) URL'] },
      ],
    ],
    [{ paths: ['https://'] }, [{ field: 'paths[0]', errors: ['must be a path or an absolute http(s) URL'] }]],
    [{ paths: [''] }, [{ field: 'paths[0]', errors: ['must not be empty'] }]],
    [{ paths: [7] }, [{ field: 'paths[0]', errors: ['must be a string'] }]],
    [{}, [{ field: 'paths', errors: ['is required'] }]],
    [{ paths: ['/'], urls: ['/'] }, [{ field: 'urls', errors: ['is not a known field'] }]],
  ])('%j is a 422', async (body, fields) => {
    const set = await create('c.example', { category: 'sections', patterns: regexDef('/s/') })
    const before = await snapshot(api)
    const r = await api.post(`/v1/patterns/${set.id}/match`, body)
    expect(r.status).toBe(422)
    expect(r.body).toEqual({ error: 'validation', fields })
    expect(await snapshot(api)).toEqual(before)
  })
})

describe('tenancy', () => {
  test("another tenant's sets answer 404 and never appear in its lists", async () => {
    const mine = await create('a.example', { category: 'blogs', patterns: regexDef('/mine/') })
    const theirs = await create('z.example', { category: 'blogs', patterns: regexDef('/theirs/') }, 'globex')
    // the same id in two tenants is two sets
    const twin = await create('z.example', { id: mine.id, category: 'others', patterns: regexDef('/twin/') }, 'globex')
    expect(twin.id).toBe(mine.id)
    expect((await api.get(`/v1/patterns/${mine.id}`)).body).toEqual(mine)
    expect((await api.get(`/v1/patterns/${mine.id}`, { tenant: 'globex' })).body).toEqual(twin)
    const before = await snapshot(api)
    expect((await api.get(`/v1/patterns/${theirs.id}`)).status).toBe(404)
    expect((await api.put(`/v1/patterns/${theirs.id}`, { patterns: regexDef('x') })).status).toBe(404)
    expect((await api.del(`/v1/patterns/${theirs.id}`)).status).toBe(404)
    expect((await api.post(`/v1/patterns/${theirs.id}/match`, { paths: ['/theirs/'] })).status).toBe(404)
    expect((await api.get(`/v1/hosts/${hosts['z.example']!.hash}/patterns`)).status).toBe(404)
    expect(await snapshot(api)).toEqual(before)
    const ids = (await api.get('/v1/patterns?per_page=100')).body.data.map((s: { id: string }) => s.id)
    expect(ids).toContain(mine.id)
    expect(ids).not.toContain(theirs.id)
    expect((await api.get('/v1/patterns?per_page=100', { tenant: 'globex' })).body.data).toEqual([twin, theirs])
    // a.example exists in both tenants: each sees only its own sets on it
    const aOther = (await api.get(`/v1/hosts/${hosts['a.example']!.hash}/patterns`, { tenant: 'globex' })).body
    expect(aOther).toEqual({ data: [], next_page: null })
  })
})

describe('store.patterns.forHost', () => {
  test("answers a host's sets oldest first, for categorize", async () => {
    const api2 = testApi()
    try {
      const [h] = (await api2.put('/v1/hosts', { hosts: ['shop.example'] })).body.data
      const post = (body: object) => api2.post(`/v1/hosts/${h.hash}/patterns`, body).then((r) => r.body)
      const first = await post({ category: 'products', patterns: urlDef('/p/:id') })
      const second = await post({ category: 'articles', patterns: regexDef('/p/', '/blog/') })
      const sets = await api2.store.patterns.forHost('acme', h.hash)
      expect(sets).toEqual([first, second])
      expect(categorize('https://shop.example/p/1', sets)).toBe('products')
      expect(categorize('https://shop.example/blog/x', sets)).toBe('articles')
      expect(categorize('https://shop.example/about', sets)).toBeNull()
      await api2.put(`/v1/patterns/${first.id}`, { patterns: urlDef('/item/:id') })
      expect(categorize('https://shop.example/p/1', await api2.store.patterns.forHost('acme', h.hash))).toBe('articles')
      expect(await api2.store.patterns.forHost('globex', h.hash)).toEqual([])
      expect(await api2.store.patterns.forHost('acme', '0'.repeat(32))).toEqual([])
    } finally {
      api2.close()
    }
  })
})

describe('GET /v1/patterns and /v1/hosts/{host_hash}/patterns', () => {
  // A tenant of its own, so the expected pages are exact.
  const T = 'lists'
  let sets: Record<string, any> = {}
  let h: Record<string, string> = {}
  const list = async (path: string, pairs: [string, string | number][] = []) => {
    const r = await api.get(`${path}${qs(pairs)}`, { tenant: T })
    expect(r.status).toBe(200)
    return r.body
  }
  const ids = async (path: string, pairs: [string, string | number][] = []) => (await list(path, [...pairs, ['per_page', 100]])).data.map((s: { id: string }) => s.id)
  const names = (...keys: string[]) => keys.map((k) => sets[k]!.id)

  beforeAll(async () => {
    for (const x of (await api.put('/v1/hosts', { hosts: ['one.example', 'two.example', 'three.example'] }, { tenant: T })).body.data) h[x.domain] = x.hash
    const plan: [string, string, string, object][] = [
      ['s1', 'one.example', 'products', urlDef('/p/:id')],
      ['s2', 'one.example', 'articles', regexDef('/a/')],
      ['s3', 'two.example', 'products', regexDef('/p/')],
      ['s4', 'two.example', 'forums', urlDef('/f/*')],
      ['s5', 'three.example', 'blogs', regexDef('/b/')],
    ]
    for (const [key, domain, category, patterns] of plan) {
      const r = await api.post(`/v1/hosts/${h[domain]}/patterns`, { category, patterns }, { tenant: T })
      sets[key] = r.body
      await Bun.sleep(3) // distinct created_at, for the time filters
    }
  })

  test('newest first, and keyset pages walk every set once', async () => {
    expect(await ids('/v1/patterns')).toEqual(names('s5', 's4', 's3', 's2', 's1'))
    const first = await list('/v1/patterns', [['per_page', 2]])
    expect(first.data).toEqual([sets.s5, sets.s4])
    const second = await list('/v1/patterns', [
      ['per_page', 2],
      ['page', first.next_page],
    ])
    expect(second.data).toEqual([sets.s3, sets.s2])
    const third = await list('/v1/patterns', [
      ['per_page', 2],
      ['page', second.next_page],
    ])
    expect(third).toEqual({ data: [sets.s1], next_page: null })
    expect((await list('/v1/patterns')).next_page).toBeNull()
  })

  test.each([
    [
      'include_ids',
      (): [string, string][] => [
        ['include_ids', sets.s1.id],
        ['include_ids', sets.s4.id],
      ],
      ['s4', 's1'],
    ],
    [
      'exclude_ids',
      (): [string, string][] => [
        ['exclude_ids', sets.s1.id],
        ['exclude_ids', sets.s4.id],
      ],
      ['s5', 's3', 's2'],
    ],
    [
      'categories',
      (): [string, string][] => [
        ['categories', 'products'],
        ['categories', 'blogs'],
      ],
      ['s5', 's3', 's1'],
    ],
    ['formats', (): [string, string][] => [['formats', 'url_pattern']], ['s4', 's1']],
    [
      'host_hashes',
      (): [string, string][] => [
        ['host_hashes', h['two.example']!],
        ['host_hashes', h['three.example']!],
      ],
      ['s5', 's4', 's3'],
    ],
    ['hosts (normalized like stored domains)', (): [string, string][] => [['hosts', 'ONE.Example.']], ['s2', 's1']],
    [
      'hosts and host_hashes together must both hold',
      (): [string, string][] => [
        ['hosts', 'one.example'],
        ['host_hashes', h['two.example']!],
      ],
      [],
    ],
    ['an unknown host', (): [string, string][] => [['hosts', 'nowhere.example']], []],
    ['created_after', (): [string, string][] => [['created_after', sets.s3.created_at]], ['s5', 's4']],
    ['created_before', (): [string, string][] => [['created_before', sets.s3.created_at]], ['s2', 's1']],
    [
      'several filters at once',
      (): [string, string][] => [
        ['categories', 'products'],
        ['formats', 'regex'],
        ['created_after', sets.s1.created_at],
      ],
      ['s3'],
    ],
  ])('GET /v1/patterns filter: %s', async (_, pairs, expected) => {
    expect(await ids('/v1/patterns', pairs())).toEqual(names(...expected))
  })

  test('the host route lists one host, with every filter but the host ones', async () => {
    const path = () => `/v1/hosts/${h['two.example']}/patterns`
    expect(await list(path())).toEqual({ data: [sets.s4, sets.s3], next_page: null })
    const page = await list(path(), [['per_page', 1]])
    expect(page.data).toEqual([sets.s4])
    expect(
      (
        await list(path(), [
          ['per_page', 1],
          ['page', page.next_page],
        ])
      ).data,
    ).toEqual([sets.s3])
    expect(
      await ids(path(), [
        ['include_ids', sets.s3.id],
        ['include_ids', sets.s1.id],
      ]),
    ).toEqual(names('s3'))
    expect(await ids(path(), [['exclude_ids', sets.s3.id]])).toEqual(names('s4'))
    expect(await ids(path(), [['categories', 'forums']])).toEqual(names('s4'))
    expect(await ids(path(), [['formats', 'regex']])).toEqual(names('s3'))
    expect(await ids(path(), [['created_before', sets.s4.created_at]])).toEqual(names('s3'))
    expect(await ids(path(), [['created_after', sets.s3.created_at]])).toEqual(names('s4'))
    const unknown = await api.get(`/v1/hosts/${'0'.repeat(32)}/patterns`, { tenant: T })
    expect(unknown).toMatchObject({ status: 404, body: { error: 'not_found', message: 'host not found' } })
    expect(await list(`/v1/hosts/${h['two.example']}/patterns`, [['categories', 'blogs']])).toEqual({ data: [], next_page: null })
  })

  const hostPath = () => `/v1/hosts/${h['one.example']}/patterns`
  test.each([
    ['/v1/patterns', [['per_page', 0]], 'per_page', 'must be >= 1'],
    ['/v1/patterns', [['per_page', 101]], 'per_page', 'must be <= 100'],
    ['/v1/patterns', [['page', 'garbage!']], 'page', 'is not a cursor this service issued'],
    ['/v1/patterns', [['include_ids', 'nope']], 'include_ids[0]', 'must be a uuid'],
    [
      '/v1/patterns',
      [
        ['exclude_ids', UUID],
        ['exclude_ids', 'nope'],
      ],
      'exclude_ids[1]',
      'must be a uuid',
    ],
    ['/v1/patterns', [['categories', 'recipes']], 'categories[0]', 'must be one of "articles", "blogs", "products", "forums", "sections", "others"'],
    ['/v1/patterns', [['formats', 'glob']], 'formats[0]', 'must be one of "regex", "url_pattern"'],
    ['/v1/patterns', [['host_hashes', 'ABC']], 'host_hashes[0]', 'must be 32 lowercase hex characters'],
    ['/v1/patterns', [['hosts', '']], 'hosts[0]', 'must not be empty'],
    ['/v1/patterns', [['created_before', 'yesterday']], 'created_before', 'must be an RFC 3339 date-time'],
    ['/v1/patterns', [['created_after', '2024-01-01']], 'created_after', 'must be an RFC 3339 date-time'],
    ['/v1/patterns', [['category', 'blogs']], 'category', 'is not a known query parameter'],
    ['host', [['host_hashes', UUID]], 'host_hashes', 'is not a known query parameter'],
    ['host', [['hosts', 'one.example']], 'hosts', 'is not a known query parameter'],
    ['host', [['formats', 'glob']], 'formats[0]', 'must be one of "regex", "url_pattern"'],
    ['host', [['per_page', 'ten']], 'per_page', 'must be an integer'],
  ] as [string, [string, string | number][], string, string][])('%s %j is a 422 on %s', async (path, pairs, field, message) => {
    const r = await api.get(`${path === 'host' ? hostPath() : path}${qs(pairs)}`, { tenant: T })
    expect(r.status).toBe(422)
    expect(r.body).toEqual({ error: 'validation', fields: [{ field, errors: [message] }] })
  })

  test('a bad host hash in the path is a 422, before the 404 of an unknown host', async () => {
    expect((await api.get('/v1/hosts/xyz/patterns', { tenant: T })).body).toEqual({ error: 'validation', fields: [{ field: 'host_hash', errors: ['must be 32 lowercase hex characters'] }] })
    expect((await api.get(`/v1/hosts/${'0'.repeat(32)}/patterns?per_page=0`, { tenant: T })).status).toBe(422)
  })
})

describe('OpenAPI', () => {
  test('documents the pattern routes with their bounds', async () => {
    const doc = (await api.get('/openapi.json', { tenant: null })).body
    for (const path of ['/v1/patterns', '/v1/hosts/{host_hash}/patterns', '/v1/patterns/{patterns_id}', '/v1/patterns/{patterns_id}/match']) expect(doc.paths[path]).toBeDefined()
    const body = JSON.stringify(doc.paths['/v1/hosts/{host_hash}/patterns'].post.requestBody)
    expect(body).toContain('"maxItems":100')
    expect(body).toContain('"maxLength":2048')
    const params = doc.paths['/v1/patterns'].get.parameters.map((p: { name: string }) => p.name)
    for (const name of ['page', 'per_page', 'include_ids', 'exclude_ids', 'categories', 'formats', 'host_hashes', 'hosts', 'created_before', 'created_after']) expect(params).toContain(name)
  })
})
