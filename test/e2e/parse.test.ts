// End-to-end: the issue-3 routes (pattern sets, data maps, parse) on the compiled binary over
// real HTTP. What this guards: the build flags (minification, bytecode) must keep what these
// routes lean on: TypeBox field paths, re2js, the URLPattern→RE2 compiler, css-select/css-what,
// node-html-parser, turndown+domino (loaded with require), HTMLRewriter, TextDecoder charsets,
// the embedded migration 002 and the OpenAPI document.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { cleanup, ensureBinary, startTrawl, type Trawl } from '../helpers/binary'

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/
const SCHEMA = '8a1f7c2e-4b3d-4e5f-9a6b-7c8d9e0f1a2b'
const OTHER_SCHEMA = '1b2c3d4e-5f60-4718-9a0b-c1d2e3f40516'
const MISSING_MAP = '00000000-0000-4000-8000-000000000000'
const b64 = (s: string | Uint8Array) => Buffer.from(s).toString('base64')
const latin1 = (s: string) => Uint8Array.from(s, (c) => c.charCodeAt(0))
const qs = (pairs: [string, string][]) => `?${new URLSearchParams(pairs).toString()}`
const PNG = 'content type image/png is not parsed; HTML, XHTML, plain text and JSON are'

let t: Trawl
const host: Record<string, { hash: string; domain: string }> = {}
const sets: Record<'A' | 'B' | 'C' | 'D', any> = {} as never
const maps: Record<'M' | 'P', any> = {} as never

beforeAll(async () => {
  await ensureBinary()
  t = await startTrawl()
  const r = await t.api.put('/v1/hosts', { hosts: ['shop.example', 'News.Example'] })
  expect(r.status).toBe(200)
  for (const h of r.body.data) host[h.domain] = { hash: h.hash, domain: h.domain }
}, 120_000)
afterAll(async () => {
  await t?.stop()
  await cleanup()
})

const match = (id: string, paths: string[]) => t.api.post(`/v1/patterns/${id}/match`, { paths })
const row = (path: string, url: string, patterns: string[], category: string) => ({ path, url, matched: patterns.length > 0, patterns, category: patterns.length ? category : null })

describe('pattern sets', () => {
  test('both formats are created on hosts from PUT /v1/hosts, answered as stored', async () => {
    const plan = [
      ['A', 'shop.example', 'products', { format: 'url_pattern', patterns: ['/p/:id(\\d+)', '/café', 'https://shop.example/sale/*\\?ref=:r'] }],
      ['B', 'shop.example', 'articles', { format: 'regex', patterns: ['^https://shop\\.example/blog/\\d{4}/', '[?&]amp=1'] }],
      ['C', 'news.example', 'others', { format: 'regex', patterns: ['(a+)+$'] }],
      ['D', 'news.example', 'sections', { format: 'url_pattern', patterns: ['/*a*a*a*a*a*a*b'] }],
    ] as const
    for (const [key, domain, category, patterns] of plan) {
      const r = await t.api.post(`/v1/hosts/${host[domain]!.hash}/patterns`, { category, patterns })
      expect(r.status).toBe(201)
      expect(r.body).toEqual({ id: expect.stringMatching(UUID), category, patterns, host: host[domain], created_at: expect.stringMatching(ISO) })
      expect((await t.api.get(`/v1/patterns/${r.body.id}`)).body).toEqual(r.body)
      sets[key] = r.body
    }
  })

  test('url_pattern match table: RE2 groups, encoded characters, a query string, other hosts', async () => {
    const r = await match(sets.A.id, ['/p/42', '/p/abc', '/p/42/', '/caf%C3%A9', '/café', '/sale/shoes?ref=mail', '/sale/shoes', 'https://other.example/p/7?x=1', 'http://shop.example/sale/x?ref=1'])
    expect(r.status).toBe(200)
    expect(r.body).toEqual({
      results: [
        row('/p/42', 'https://shop.example/p/42', ['/p/:id(\\d+)'], 'products'),
        row('/p/abc', 'https://shop.example/p/abc', [], 'products'),
        row('/p/42/', 'https://shop.example/p/42/', [], 'products'),
        row('/caf%C3%A9', 'https://shop.example/caf%C3%A9', ['/café'], 'products'),
        row('/café', 'https://shop.example/caf%C3%A9', ['/café'], 'products'),
        row('/sale/shoes?ref=mail', 'https://shop.example/sale/shoes?ref=mail', ['https://shop.example/sale/*\\?ref=:r'], 'products'),
        row('/sale/shoes', 'https://shop.example/sale/shoes', [], 'products'),
        row('https://other.example/p/7?x=1', 'https://other.example/p/7?x=1', ['/p/:id(\\d+)'], 'products'),
        row('http://shop.example/sale/x?ref=1', 'http://shop.example/sale/x?ref=1', [], 'products'),
      ],
    })
  })

  test('regex match table, searched unanchored in the absolute URL', async () => {
    const r = await match(sets.B.id, ['/blog/2024/tea', '/news?amp=1', 'blog/x'])
    expect(r.body.results).toEqual([
      row('/blog/2024/tea', 'https://shop.example/blog/2024/tea', ['^https://shop\\.example/blog/\\d{4}/'], 'articles'),
      row('/news?amp=1', 'https://shop.example/news?amp=1', ['[?&]amp=1'], 'articles'),
      row('blog/x', 'https://shop.example/blog/x', [], 'articles'),
    ])
  })

  test('catastrophic patterns answer correctly and quickly (linear-time RE2, never backtracking)', async () => {
    const as = 'a'.repeat(8000)
    const started = performance.now()
    const r = await match(sets.C.id, [`/${as}`, `/${as}b`])
    const d = await match(sets.D.id, [`/${'a'.repeat(300)}`, `/${'a'.repeat(300)}b`])
    expect(performance.now() - started).toBeLessThan(2000)
    expect(r.body.results).toEqual([row(`/${as}`, `https://news.example/${as}`, ['(a+)+$'], 'others'), row(`/${as}b`, `https://news.example/${as}b`, [], 'others')])
    expect(d.body.results.map((x: any) => [x.matched, x.patterns, x.category])).toEqual([
      [false, [], null],
      [true, ['/*a*a*a*a*a*a*b'], 'sections'],
    ])
  })

  test('a pattern that does not compile is a 422 at its index, and nothing is stored', async () => {
    const bad = await t.api.post(`/v1/hosts/${host['shop.example']!.hash}/patterns`, { category: 'products', patterns: { format: 'regex', patterns: ['^/ok', '(', 'a(?=b)'] } })
    expect(bad.status).toBe(422)
    const fields = [
      { field: 'patterns.patterns[1]', errors: ['is not a valid RE2 regular expression: error parsing regexp: missing closing ): `(`'] },
      { field: 'patterns.patterns[2]', errors: ['is not a valid RE2 regular expression: error parsing regexp: invalid or unsupported Perl syntax: `(?=`'] },
    ]
    expect(bad.body).toEqual({ error: 'validation', fields })
    const url = await t.api.post(`/v1/hosts/${host['shop.example']!.hash}/patterns`, { category: 'products', patterns: { format: 'url_pattern', patterns: ['/p/('] } })
    expect(url.body).toEqual({
      error: 'validation',
      fields: [{ field: 'patterns.patterns[0]', errors: ['is not a valid URL pattern: Current open token does not have a corresponding close token.'] }],
    })
    expect((await t.api.get('/v1/patterns')).body.data).toHaveLength(4)
  })

  test('GET /v1/patterns: newest first, filtered by categories, formats, hosts and host_hashes', async () => {
    const page = async (pairs: [string, string][]) => (await t.api.get(`/v1/patterns${qs(pairs)}`)).body
    const of = (...keys: (keyof typeof sets)[]) => ({ data: keys.map((k) => sets[k]), next_page: null })
    expect(await page([])).toEqual(of('D', 'C', 'B', 'A'))
    expect(
      await page([
        ['categories', 'products'],
        ['categories', 'others'],
      ]),
    ).toEqual(of('C', 'A'))
    expect(await page([['formats', 'url_pattern']])).toEqual(of('D', 'A'))
    expect(await page([['hosts', 'NEWS.example.']])).toEqual(of('D', 'C'))
    expect(await page([['host_hashes', host['shop.example']!.hash]])).toEqual(of('B', 'A'))
    expect(
      await page([
        ['formats', 'regex'],
        ['hosts', 'shop.example'],
      ]),
    ).toEqual(of('B'))
    const bad = await t.api.get(`/v1/patterns${qs([['formats', 'glob']])}`)
    expect(bad.body).toEqual({ error: 'validation', fields: [{ field: 'formats[0]', errors: ['must be one of "regex", "url_pattern"'] }] })
  })
})

const LISTING_MAP = {
  item_selector: 'ul.grid > li.product',
  fields: [
    { name: 'sku', selector: ':scope', attr: 'data-sku', required: true },
    { name: 'title', selector: 'h2' },
    { name: 'url', selector: 'a.card', attr: 'href', type: 'url' },
    { name: 'price', selector: '.price', type: 'number' },
    { name: 'released', selector: 'time', type: 'date' },
    {
      name: 'seller',
      selector: '.seller',
      fields: [
        { name: 'name', selector: '.name' },
        { name: 'rating', selector: '.rating', type: 'integer' },
      ],
    },
    { name: 'tags', selector: '.tags > li', multiple: true },
  ],
}
const LISTING = `<html><body><ul class="grid">
<li class="product" data-sku="A-1"><h2> Steel&nbsp; kettle </h2><a class="card" href="/p/1?c=red">x</a><span class="price">$1,234.50</span>
  <time>Fri, 05 Jan 2024 10:00:00 +0100</time><div class="seller"><span class="name">Acme</span><span class="rating">4</span></div>
  <ul class="tags"><li>kitchen</li><li> steel </li></ul></li>
<li class="product"><h2>Mug</h2><a class="card" href="../p/2">x</a><span class="price">1.234,50 €</span><time>March 3, 2023</time>
  <div class="seller"><span class="name">Bo</span><span class="rating">4.5</span></div></li>
</ul></body></html>`
const PARSE_MAP = {
  fields: [
    { name: 'title', selector: 'h1', required: true },
    { name: 'links', selector: 'a', attr: 'href', type: 'url', multiple: true },
  ],
}
const apply = (id: string, content: string) => t.api.post(`/v1/data_maps/${id}/apply`, { content })

describe('data maps', () => {
  test('created with item_selector and nested fields, answered as written', async () => {
    for (const [key, map] of [
      ['M', LISTING_MAP],
      ['P', PARSE_MAP],
    ] as const) {
      const r = await t.api.post(`/v1/hosts/${host['shop.example']!.hash}/data_maps`, { schema_id: SCHEMA, map })
      expect(r.status).toBe(201)
      expect(r.body).toEqual({ id: expect.stringMatching(UUID), schema_id: SCHEMA, map, host: host['shop.example'], created_at: expect.stringMatching(ISO), updated_at: r.body.created_at })
      maps[key] = r.body
    }
  })

  test('apply: items, nested objects, numbers, dates, errors by item; relative urls are errors, an absolute <base href> resolves them', async () => {
    const r = await apply(maps.M.id, b64(LISTING))
    expect(r.status).toBe(200)
    const relative = (text: string) => `"${text}" is relative, and there is no page URL or absolute <base href> to resolve it against`
    expect(r.body).toEqual({
      data: [
        { sku: 'A-1', title: 'Steel kettle', url: null, price: 1234.5, released: '2024-01-05T09:00:00.000Z', seller: { name: 'Acme', rating: 4 }, tags: ['kitchen', 'steel'] },
        { sku: null, title: 'Mug', url: null, price: 1234.5, released: '2023-03-03', seller: { name: 'Bo', rating: null }, tags: [] },
      ],
      errors: [
        { field: '[0].url', error: 'invalid', message: relative('/p/1?c=red') },
        { field: '[1].sku', error: 'required', message: 'the first element matching ":scope" has no "data-sku" attribute value' },
        { field: '[1].url', error: 'invalid', message: relative('../p/2') },
        { field: '[1].seller.rating', error: 'invalid', message: '"4.5" is not a whole number' },
      ],
    })
    const based = await apply(maps.M.id, b64(LISTING.replace('<body>', '<body><base href="http://shop.example:8080/list/">')))
    expect(based.body.data.map((item: { url: string }) => item.url)).toEqual(['http://shop.example:8080/p/1?c=red', 'http://shop.example:8080/p/2'])
    expect(based.body.errors.map((e: { field: string }) => e.field)).toEqual(['[1].sku', '[1].seller.rating'])
  })

  test('a windows-1252 page is decoded by its meta charset', async () => {
    const bytes = latin1(
      '<html><head><meta charset="windows-1252"><base href="https://shop.example/"></head><body><ul class="grid"><li class="product" data-sku="C-3"><h2>Caf\xe9 \x93cr\xe8me\x94 \x96 Gr\xf6\xdfe L</h2><a class="card" href="/m\xfcller">x</a><span class="price">\x80 12,50</span></li></ul></body></html>',
    )
    const r = await apply(maps.M.id, b64(bytes))
    const item = { sku: 'C-3', title: 'Café “crème” – Größe L', url: 'https://shop.example/m%C3%BCller', price: 12.5, released: null, seller: null, tags: [] }
    expect(r.body).toEqual({ data: [item], errors: [] })
  })

  test('selectors that do not parse are 422s at their paths; nothing is stored', async () => {
    const r = await t.api.post(`/v1/hosts/${host['shop.example']!.hash}/data_maps`, {
      schema_id: SCHEMA,
      map: {
        item_selector: 'li..card',
        fields: [
          { name: 'a', selector: 'a::' },
          { name: 'b', selector: 'div >' },
        ],
      },
    })
    expect(r.status).toBe(422)
    expect(r.body).toEqual({
      error: 'validation',
      fields: [
        { field: 'map.item_selector', errors: ['is not a valid CSS selector: ".card" is not a class name'] },
        { field: 'map.fields[0].selector', errors: ['is not a valid CSS selector: expected a name, found "::"'] },
        { field: 'map.fields[1].selector', errors: ['is not a valid CSS selector: ends with the combinator ">"'] },
      ],
    })
    expect((await t.api.get('/v1/data_maps')).body).toEqual({ data: [maps.P, maps.M], next_page: null })
  })

  test('content that is not base64 is a 422 at content, before the 404 of an unknown map', async () => {
    const notBase64 = { error: 'validation', fields: [{ field: 'content', errors: ['must be base64-encoded'] }] }
    expect(await apply(maps.M.id, '<h1>raw html</h1>')).toMatchObject({ status: 422, body: notBase64 })
    expect(await apply(MISSING_MAP, 'aGVsbG8=!')).toMatchObject({ status: 422, body: notBase64 })
    expect(await apply(MISSING_MAP, b64('<p>'))).toMatchObject({ status: 404, body: { error: 'not_found', message: 'data map not found' } })
  })

  test('PUT changes only the supplied fields and moves updated_at', async () => {
    const r = await t.api.put(`/v1/data_maps/${maps.M.id}`, { schema_id: OTHER_SCHEMA })
    expect(r.status).toBe(200)
    expect(r.body).toEqual({ ...maps.M, schema_id: OTHER_SCHEMA, updated_at: expect.stringMatching(ISO) })
    expect(r.body.updated_at > maps.M.updated_at).toBe(true)
    expect((await t.api.get(`/v1/data_maps/${maps.M.id}`)).body).toEqual(r.body)
    maps.M = r.body
  })
})

const URL_ = 'https://shop.example/guides/tea'
const GUIDE = `<!doctype html><html lang="en"><head><title>Guide</title><meta name="description" content="How to brew">
<link rel="canonical" href="/guides/tea?ref=x#top"><meta property="og:title" content="Tea &amp; more">
<script type="application/ld+json">{"@type":"HowTo","name":"Brew"}</script></head>
<body><h1>Brew guide</h1>
<p>Read <a href="/docs/start">the start</a> or <a href="faq#cost" rel="Nofollow">the FAQ</a>.</p>
<table><thead><tr><th>Step</th><th align="right">Minutes</th></tr></thead>
<tbody><tr><td>Boil</td><td>5</td></tr><tr><td>Steep</td><td>3</td></tr></tbody></table>
<pre><code class="language-python">def brew(tea):
    return tea * 2
</code></pre></body></html>`
const doc = (over: Record<string, unknown> = {}) => ({ url: URL_, body: b64(GUIDE), content_type: 'text/html; charset=utf-8', ...over })
const ran = (identifier: string, steps: unknown[], links: unknown = null) => ({ identifier, priority: 0, status: 'ran', skipped_reason: null, links, steps })
const skipped = (identifier: string, reason: string) => ({ identifier, priority: 0, status: 'skipped', skipped_reason: reason, links: null, steps: [] })
const MARKDOWN = [
  '# Brew guide',
  'Read [the start](https://shop.example/docs/start) or [the FAQ](https://shop.example/guides/faq#cost).',
  '| Step | Minutes |\n| --- | ---: |\n| Boil | 5 |\n| Steep | 3 |',
  '```python\ndef brew(tea):\n    return tea * 2\n```',
].join('\n\n')
const FAQ = { url: 'https://shop.example/guides/faq', text: 'the FAQ', rel: ['nofollow'], nofollow: true }
const METADATA = {
  title: 'Guide',
  description: 'How to brew',
  canonical: 'https://shop.example/guides/tea?ref=x',
  language: 'en',
  open_graph: { 'og:title': 'Tea & more' },
  json_ld: [{ '@type': 'HowTo', name: 'Brew' }],
}
const LINKS = [{ url: 'https://shop.example/docs/start', text: 'the start', rel: [], nofollow: false }, FAQ]
const DOCUMENT = { url: URL_, base_url: URL_, content_type: 'text/html', charset: 'utf-8' }
// Without pipelines: the default markdown, and the page's metadata and links beside it.
const DEFAULT_RESULT = { ...DOCUMENT, pipelines: [ran('default', [{ kind: 'markdown', content: MARKDOWN }])], metadata: METADATA, links: LINKS }

describe('parse', () => {
  test('the default pipeline is markdown: a GFM table, a fenced block with its language, absolute links', async () => {
    const r = await t.api.post('/v1/parse', doc())
    expect(r.status).toBe(200)
    expect(r.body).toEqual(DEFAULT_RESULT)
  })

  test('metadata and links steps, and a navigator selector run by HTMLRewriter', async () => {
    const r = await t.api.post(
      '/v1/parse',
      doc({ pipelines: [{ identifier: 'meta', navigator: { kind: 'links', selector: 'p > a[rel~=nofollow i]' }, steps: [{ kind: 'metadata' }, { kind: 'links' }] }] }),
    )
    expect(r.status).toBe(200)
    expect(r.body).toEqual({
      ...DOCUMENT,
      pipelines: [
        ran(
          'meta',
          [
            { kind: 'metadata', metadata: METADATA },
            { kind: 'links', links: LINKS },
          ],
          [FAQ],
        ),
      ],
    })
  })

  test('the category guard classifies the URL with the pattern sets of its host', async () => {
    const pipelines = ['products', 'articles'].map((c) => ({ identifier: c, guards: [{ kind: 'category', categories: [c] }], steps: [{ kind: 'text' }] }))
    const run = async (url: string) => (await t.api.post('/v1/parse', doc({ url, body: b64('<p>Hi</p>'), pipelines }))).body.pipelines
    expect(await run('https://shop.example/p/42')).toEqual([ran('products', [{ kind: 'text', content: 'Hi' }]), skipped('articles', 'category')])
    expect(await run('https://shop.example/blog/2024/tea')).toEqual([skipped('products', 'category'), ran('articles', [{ kind: 'text', content: 'Hi' }])])
    expect(await run('https://shop.example/p/x')).toEqual([skipped('products', 'category'), skipped('articles', 'category')])
  })

  test('a data_map step resolves urls against the document', async () => {
    const r = await t.api.post('/v1/parse', doc({ pipelines: [{ identifier: 'x', steps: [{ kind: 'data_map', id: maps.P.id }] }] }))
    const data = { title: 'Brew guide', links: ['https://shop.example/docs/start', 'https://shop.example/guides/faq#cost'] }
    expect(r.body.pipelines).toEqual([ran('x', [{ kind: 'data_map', id: maps.P.id, data, errors: [] }])])
  })

  test('batch: results in item order, failing items as error items', async () => {
    const text = {
      url: 'https://shop.example/notes.txt',
      body: b64('See https://a.example/x now'),
      content_type: 'text/plain; charset=utf-8',
      pipelines: [{ identifier: 't', steps: [{ kind: 'links' }] }],
    }
    const items = [
      doc(),
      doc({ url: 'https://shop.example/i.png', content_type: 'image/png' }),
      doc({ url: 'https://shop.example/m', pipelines: [{ steps: [{ kind: 'data_map', id: MISSING_MAP }] }] }),
      text,
    ]
    const r = await t.api.post('/v1/parse/batch', { items })
    expect(r.status).toBe(200)
    expect(r.body).toEqual({
      results: [
        { ok: true, ...DEFAULT_RESULT },
        { ok: false, url: 'https://shop.example/i.png', error: { error: 'unsupported_content_type', message: PNG } },
        { ok: false, url: 'https://shop.example/m', error: { error: 'not_found', message: `data map ${MISSING_MAP} not found` } },
        {
          ok: true,
          url: text.url,
          base_url: text.url,
          content_type: 'text/plain',
          charset: 'utf-8',
          pipelines: [ran('t', [{ kind: 'links', links: [{ url: 'https://a.example/x', text: '', rel: [], nofollow: false }] }])],
        },
      ],
    })
  })

  test('an unsupported content type alone is a 415', async () => {
    const r = await t.api.post('/v1/parse', doc({ content_type: 'image/png' }))
    expect(r.status).toBe(415)
    expect(r.body).toEqual({ error: 'unsupported_content_type', message: PNG })
  })

  test('422s name their paths: batch items, guard regexes, step selectors', async () => {
    const batch = await t.api.post('/v1/parse/batch', { items: [doc(), doc({ url: 'nope', body: '%%' })] })
    expect(batch.status).toBe(422)
    const fields = [
      { field: 'items[1].url', errors: ['must be an absolute http(s) URL'] },
      { field: 'items[1].body', errors: ['must be base64-encoded'] },
    ]
    expect(batch.body).toEqual({ error: 'validation', fields })
    const single = await t.api.post('/v1/parse', doc({ pipelines: [{ guards: [{ kind: 'url', include: ['(a'] }], steps: [{ kind: 'fields', fields: [{ name: 'x', selector: 'div >' }] }] }] }))
    expect(single.status).toBe(422)
    expect(single.body.fields).toEqual([
      { field: 'pipelines[0].guards[0].include[0]', errors: ['is not a valid RE2 regular expression: error parsing regexp: missing closing ): `(a`'] },
      { field: 'pipelines[0].steps[0].fields[0].selector', errors: ['is not a valid CSS selector: ends with the combinator ">"'] },
    ])
  })
})

test('GET /openapi.json lists the new paths with their request body schemas', async () => {
  const doc = (await t.api.get('/openapi.json', { tenant: null })).body
  const paths = ['/v1/patterns', '/v1/hosts/{host_hash}/patterns', '/v1/patterns/{patterns_id}/match', '/v1/data_maps', '/v1/data_maps/{map_id}/apply', '/v1/parse', '/v1/parse/batch']
  for (const p of paths) expect(Object.keys(doc.paths)).toContain(p)
  const body = (p: string) => doc.paths[p].post.requestBody.content['application/json'].schema
  expect(body('/v1/parse/batch')).toMatchObject({
    type: 'object',
    required: ['items'],
    properties: { items: { type: 'array', minItems: 1, maxItems: 64, items: { required: ['url', 'body', 'content_type'] } } },
  })
  // exactly one of the three sources; the route's refine says which is missing or extra
  const apply = body('/v1/data_maps/{map_id}/apply')
  expect(apply).toMatchObject({ type: 'object', properties: { content: { type: 'string', minLength: 1 }, url: { type: 'string', maxLength: 8192 }, artifact_id: { type: 'string', format: 'uuid' } } })
  expect(apply.required ?? []).toEqual([])
  expect(body('/v1/hosts/{host_hash}/patterns')).toMatchObject({
    required: ['category', 'patterns'],
    properties: { category: { enum: ['articles', 'blogs', 'products', 'forums', 'sections', 'others'] } },
  })
  expect(JSON.stringify(body('/v1/hosts/{host_hash}/patterns'))).toContain('"maxLength":2048')
  expect(body('/v1/patterns/{patterns_id}/match')).toMatchObject({ properties: { paths: { type: 'array', maxItems: 255 } } })
})

test('SIGTERM, then a new process on the same data dir answers the same sets and maps', async () => {
  const reads: [string, string, unknown?][] = [
    ['GET', '/v1/patterns'],
    ['GET', `/v1/patterns/${sets.A.id}`],
    ['POST', `/v1/patterns/${sets.A.id}/match`, { paths: ['/p/42', '/café', '/sale/x?ref=1'] }],
    ['GET', '/v1/data_maps'],
    ['GET', `/v1/data_maps/${maps.M.id}`],
    ['POST', `/v1/data_maps/${maps.M.id}/apply`, { content: b64(LISTING) }],
  ]
  const before = []
  for (const [method, path, body] of reads) before.push(await t.api.call(method, path, { body }))
  expect(before.map((r) => r.status)).toEqual([200, 200, 200, 200, 200, 200])
  expect(before[1]!.body).toEqual(sets.A)
  expect(before[4]!.body).toEqual(maps.M)
  expect(await t.stop()).toEqual({ code: 0, signal: null })
  t = await startTrawl({ dataDir: t.dataDir })
  for (const [i, [method, path, body]] of reads.entries()) {
    const r = await t.api.call(method, path, { body })
    expect({ path, status: r.status, text: r.text }).toEqual({ path, status: 200, text: before[i]!.text })
  }
})
