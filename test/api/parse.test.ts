import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { snapshot, testApi, type TestApi } from '../helpers/api'

let api: TestApi
beforeAll(() => {
  api = testApi()
})
afterAll(() => api.close())

const b64 = (s: string | Uint8Array) => Buffer.from(s).toString('base64')
const latin1 = (s: string) => Uint8Array.from(s, (c) => c.charCodeAt(0))
const PAGE = `<!doctype html><html lang="en"><head><title>Shop</title><meta name="description" content="All the things"></head>
<body><h1>Products</h1><p>See <a href="/p/1">one</a> and <a href="https://other.example/x#top" rel="nofollow">two</a>.</p></body></html>`
const doc = (over: Record<string, unknown> = {}) => ({ url: 'https://shop.example/list', body: b64(PAGE), content_type: 'text/html; charset=utf-8', ...over })
const parse = (body: unknown, tenant?: string) => api.post('/v1/parse', body, tenant ? { tenant } : undefined)
const ranSteps = (r: { body: any }, i = 0) => r.body.pipelines[i].steps

describe('POST /v1/parse', () => {
  test('without pipelines runs the default pipeline: one markdown step', async () => {
    const r = await parse(doc())
    expect(r.status).toBe(200)
    expect(r.body).toEqual({
      url: 'https://shop.example/list',
      base_url: 'https://shop.example/list',
      content_type: 'text/html',
      charset: 'utf-8',
      pipelines: [
        {
          identifier: 'default',
          priority: 0,
          status: 'ran',
          skipped_reason: null,
          links: null,
          steps: [{ kind: 'markdown', content: '# Products\n\nSee [one](https://shop.example/p/1) and [two](https://other.example/x#top).' }],
        },
      ],
      metadata: { title: 'Shop', description: 'All the things', canonical: null, language: 'en', open_graph: {}, json_ld: [] },
      links: [
        { url: 'https://shop.example/p/1', text: 'one', rel: [], nofollow: false },
        { url: 'https://other.example/x', text: 'two', rel: ['nofollow'], nofollow: true },
      ],
    })
  })

  test('the default result is the main content; main_content false keeps the chrome; pipelines given, no top-level metadata or links', async () => {
    const page = `<html><head><title>Guide</title></head><body><div><a href="/">Home</a> <ul><li><a href="/docs">Docs</a></li><li><a href="/blog">Blog</a></li></ul></div>
<div><h1>Guide</h1><p>The body text of the guide, long enough to be the content of this page.</p></div>
<div><p>We use cookies.</p><button>Accept</button></div></body></html>`
    const body = b64(page)
    const r = await parse(doc({ body }))
    expect(ranSteps(r)).toEqual([{ kind: 'markdown', content: '# Guide\n\nThe body text of the guide, long enough to be the content of this page.' }])
    expect(r.body.links.map((l: { url: string }) => l.url)).toEqual(['https://shop.example/', 'https://shop.example/docs', 'https://shop.example/blog'])
    const explicit = await parse(doc({ body, pipelines: [{ steps: [{ kind: 'markdown' }] }] }))
    expect(ranSteps(explicit)).toEqual(ranSteps(r))
    expect(explicit.body.metadata).toBeUndefined()
    expect(explicit.body.links).toBeUndefined()
    const whole = await parse(doc({ body, pipelines: [{ steps: [{ kind: 'markdown', main_content: false }] }] }))
    expect(ranSteps(whole)[0].content).toBe(
      '[Home](https://shop.example/)\n\n- [Docs](https://shop.example/docs)\n- [Blog](https://shop.example/blog)\n\n# Guide\n\nThe body text of the guide, long enough to be the content of this page.\n\nWe use cookies.\n\nAccept',
    )
  })

  test('metadata and links steps come from the page; links are absolute, without fragments', async () => {
    const r = await parse(doc({ pipelines: [{ identifier: 'meta', steps: [{ kind: 'metadata' }, { kind: 'links' }] }] }))
    expect(r.status).toBe(200)
    const [meta, links] = ranSteps(r)
    expect(meta).toEqual({
      kind: 'metadata',
      metadata: { title: 'Shop', description: 'All the things', canonical: null, language: 'en', open_graph: {}, json_ld: [] },
    })
    expect(links).toEqual({
      kind: 'links',
      links: [
        { url: 'https://shop.example/p/1', text: 'one', rel: [], nofollow: false },
        { url: 'https://other.example/x', text: 'two', rel: ['nofollow'], nofollow: true },
      ],
    })
  })

  test('links resolve against the last redirect location, relative locations included', async () => {
    const redirects = [
      { url: 'https://shop.example/list', location: 'https://www.shop.example/list/', side: 'server', type: 'permanent' },
      { url: 'https://www.shop.example/list/', location: '/v2/list/', side: 'server', type: 'temporary' },
    ]
    const r = await parse(doc({ redirects, pipelines: [{ steps: [{ kind: 'links' }] }] }))
    expect(r.body.base_url).toBe('https://www.shop.example/v2/list/')
    expect(ranSteps(r)[0].links.map((l: any) => l.url)).toEqual(['https://www.shop.example/p/1', 'https://other.example/x'])
  })

  test('pipelines run by priority, highest first; ties keep their order; stop skips the rest', async () => {
    const r = await parse(
      doc({
        pipelines: [
          { identifier: 'low', priority: -5, steps: [{ kind: 'text' }] },
          { identifier: 'a', priority: 10, steps: [{ kind: 'metadata' }] },
          { identifier: 'b', priority: 10, behavior: 'stop', steps: [{ kind: 'text' }] },
          { identifier: 'mid', priority: 3, steps: [{ kind: 'text' }] },
        ],
      }),
    )
    expect(r.body.pipelines.map((p: any) => [p.identifier, p.priority, p.status, p.skipped_reason])).toEqual([
      ['a', 10, 'ran', null],
      ['b', 10, 'ran', null],
      ['mid', 3, 'skipped', 'stopped'],
      ['low', -5, 'skipped', 'stopped'],
    ])
    expect(r.body.pipelines[2].steps).toEqual([])
  })

  test('a stop pipeline whose guard fails does not stop the others', async () => {
    const r = await parse(
      doc({
        pipelines: [
          { identifier: 'pdf-only', priority: 5, behavior: 'stop', guards: [{ kind: 'content_type', values: ['application/pdf'] }] },
          { identifier: 'html', steps: [{ kind: 'text' }] },
        ],
      }),
    )
    expect(r.body.pipelines.map((p: any) => [p.identifier, p.status, p.skipped_reason])).toEqual([
      ['pdf-only', 'skipped', 'content_type'],
      ['html', 'ran', null],
    ])
    expect(ranSteps(r, 1)).toEqual([{ kind: 'text', content: 'Products\n\nSee one and two.' }])
  })

  test('guards: content type with wildcards, url include/exclude on the final URL', async () => {
    const pipelines = [
      { identifier: 'text-any', guards: [{ kind: 'content_type', values: ['TEXT/*'] }], steps: [{ kind: 'metadata' }] },
      { identifier: 'list-pages', guards: [{ kind: 'url', include: ['/list$'], exclude: ['\\?page='] }], steps: [{ kind: 'metadata' }] },
      { identifier: 'excluded', guards: [{ kind: 'url', exclude: ['shop\\.example'] }], steps: [{ kind: 'metadata' }] },
      { identifier: 'not-included', guards: [{ kind: 'url', include: ['^https://elsewhere\\.'] }], steps: [{ kind: 'metadata' }] },
    ]
    const r = await parse(doc({ pipelines }))
    expect(r.body.pipelines.map((p: any) => [p.identifier, p.status, p.skipped_reason])).toEqual([
      ['text-any', 'ran', null],
      ['list-pages', 'ran', null],
      ['excluded', 'skipped', 'url'],
      ['not-included', 'skipped', 'url'],
    ])
    const moved = await parse(doc({ redirects: [{ url: 'https://shop.example/list', location: '/list?page=2' }], pipelines: [pipelines[1]] }))
    expect(moved.body.pipelines[0].skipped_reason).toBe('url')
  })

  test('navigator: default selector, include/exclude, and selectors the streaming pass serves', async () => {
    const html = `<nav><a href="/a">A</a><a class="next" href="/page/2">Next</a></nav><main><ul><li><a href="/p/1">P1</a></li><li><a href="/p/2">P2</a></li></ul></main>`
    const r = await parse(
      doc({
        body: b64(html),
        pipelines: [
          { identifier: 'all', navigator: { kind: 'links' } },
          { identifier: 'products', navigator: { kind: 'links', selector: 'main li > a', exclude: ['/p/2$'] } },
          { identifier: 'next', navigator: { kind: 'links', selector: 'nav a:nth-of-type(2)' } },
        ],
      }),
    )
    expect(r.status).toBe(200)
    const links = r.body.pipelines.map((p: any) => p.links.map((l: any) => l.url))
    expect(links).toEqual([
      ['https://shop.example/a', 'https://shop.example/page/2', 'https://shop.example/p/1', 'https://shop.example/p/2'],
      ['https://shop.example/p/1'],
      ['https://shop.example/page/2'],
    ])
    // a pipeline without steps runs the default markdown step beside its navigator
    expect(r.body.pipelines[0].steps.map((s: any) => s.kind)).toEqual(['markdown'])
  })

  test('a navigator selector HTMLRewriter cannot run is served from the tree by the same link rules', async () => {
    const html = `<head><base href="/shop/"><meta name="robots" content="nofollow"></head><ul>
      <li><img src="t.png"><a href="p/1" rel="Bookmark">One</a></li>
      <li><a href="p/2">Two</a></li>
      <li><img src="t.png"><a href="p/3"><img src="3.png" alt=" Three "></a></li>
      <li><img src="t.png"><a href="p/1" rel="next Next">One again</a></li></ul>`
    const r = await parse(doc({ body: b64(html), pipelines: [{ navigator: { kind: 'links', selector: 'li:has(> img) > a' }, steps: [{ kind: 'links' }] }] }))
    expect(r.status).toBe(200)
    expect(r.body.pipelines[0].links).toEqual([
      { url: 'https://shop.example/shop/p/1', text: 'One', rel: ['bookmark'], nofollow: true },
      { url: 'https://shop.example/shop/p/3', text: 'Three', rel: [], nofollow: true },
    ])
    // the same links as the streaming pass sees them
    const streamed = ranSteps(r)[0].links.filter((l: any) => !l.url.endsWith('/2'))
    expect(r.body.pipelines[0].links).toEqual(streamed)
  })

  test('the URL is judged as WHATWG URL writes it, without fragment; redirect urls may be relative', async () => {
    const r = await parse(doc({ url: 'HTTPS://Shop.EXAMPLE/café#frag', pipelines: [{ guards: [{ kind: 'url', include: ['/caf%C3%A9$'] }], steps: [{ kind: 'links' }] }] }))
    expect(r.body.url).toBe('HTTPS://Shop.EXAMPLE/café#frag')
    expect(r.body.base_url).toBe('https://shop.example/caf%C3%A9')
    expect(r.body.pipelines[0].status).toBe('ran')
    const hops = [
      { url: '/list', location: '/v2/' },
      { url: '/v2/', location: 'list?x=1' },
    ]
    const moved = await parse(doc({ redirects: hops, pipelines: [{ steps: [{ kind: 'metadata' }] }] }))
    expect(moved.body.base_url).toBe('https://shop.example/v2/list?x=1')
  })

  test('html and text steps', async () => {
    const html = `<html><head><style>p{}</style><script>alert(1)</script></head><body><!-- c --><p onclick="x()">Hi <a href="/a">there</a></p><div>Line&nbsp;two</div></body></html>`
    const r = await parse(doc({ body: b64(html), pipelines: [{ steps: [{ kind: 'html' }, { kind: 'text' }] }] }))
    const [clean, text] = ranSteps(r)
    expect(clean.kind).toBe('html')
    expect(clean.content).not.toContain('alert(1)')
    expect(clean.content).not.toContain('p{}')
    expect(clean.content).not.toContain('<!-- c -->')
    expect(clean.content).not.toContain('onclick')
    expect(clean.content).toContain('<a href="https://shop.example/a">there</a>')
    expect(text).toEqual({ kind: 'text', content: 'Hi there\n\nLine two' }) // paragraphs are separated by a blank line
  })

  test('fields step extracts with the shared engine and reports required fields that matched nothing', async () => {
    const r = await parse(
      doc({
        pipelines: [
          {
            steps: [
              {
                kind: 'fields',
                fields: [
                  { name: 'heading', selector: 'h1' },
                  { name: 'hrefs', selector: 'p a', attr: 'href', type: 'url', multiple: true },
                  { name: 'price', selector: '.price', type: 'number', required: true },
                ],
              },
            ],
          },
        ],
      }),
    )
    expect(ranSteps(r)).toEqual([
      {
        kind: 'fields',
        data: { heading: 'Products', hrefs: ['https://shop.example/p/1', 'https://other.example/x#top'], price: null },
        errors: [{ field: 'price', error: 'required', message: expect.any(String) }],
      },
    ])
  })

  test('windows-1252 pages decode from the meta tag; the Content-Type charset wins when given', async () => {
    const bytes = latin1('<html><head><meta charset="windows-1252"><title>Caf\xe9 \x80</title></head><body><p>na\xefve</p></body></html>')
    const r = await parse(doc({ body: b64(bytes), content_type: 'text/html', pipelines: [{ steps: [{ kind: 'metadata' }, { kind: 'text' }] }] }))
    expect(r.body.charset).toBe('windows-1252')
    expect(ranSteps(r)[0].metadata.title).toBe('Café €')
    expect(ranSteps(r)[1].content).toBe('naïve') // the title is not body text
  })

  test('XHTML is parsed as HTML', async () => {
    const xhtml = `<?xml version="1.0" encoding="UTF-8"?><html xmlns="http://www.w3.org/1999/xhtml"><head><title>X</title></head><body><h2>Sub</h2></body></html>`
    const r = await parse(doc({ body: b64(xhtml), content_type: 'application/xhtml+xml' }))
    expect(r.status).toBe(200)
    expect(ranSteps(r)).toEqual([{ kind: 'markdown', content: '## Sub' }])
  })

  test('text/plain and JSON are kept as text; their links are the URLs written in them', async () => {
    const text = 'See https://a.example/x, and (https://b.example/y).\nDone.'
    const r = await parse(doc({ body: b64(text), content_type: 'text/plain', pipelines: [{ steps: [{ kind: 'markdown' }, { kind: 'text' }, { kind: 'links' }, { kind: 'html' }] }] }))
    expect(ranSteps(r)).toEqual([
      { kind: 'markdown', content: text },
      { kind: 'text', content: text },
      {
        kind: 'links',
        links: [
          { url: 'https://a.example/x', text: '', rel: [], nofollow: false },
          { url: 'https://b.example/y', text: '', rel: [], nofollow: false },
        ],
      },
      { kind: 'html', content: `<pre>${text}</pre>` },
    ])
    const j = await parse(doc({ body: b64('{"a":"<b>"}'), content_type: 'application/ld+json', pipelines: [{ steps: [{ kind: 'text' }, { kind: 'html' }] }] }))
    expect(ranSteps(j)).toEqual([
      { kind: 'text', content: '{"a":"<b>"}' },
      { kind: 'html', content: '<pre>{&quot;a&quot;:&quot;&lt;b&gt;&quot;}</pre>' },
    ])
  })

  test('other content types answer 415 unsupported_content_type', async () => {
    const r = await parse(doc({ content_type: 'image/png', body: b64('\x89PNG') }))
    expect(r.status).toBe(415)
    expect(r.body).toEqual({ error: 'unsupported_content_type', message: 'content type image/png is not parsed; HTML, XHTML, plain text and JSON are' })
  })
})

describe('pattern-set categories and data maps in pipelines', () => {
  let hostHash: string
  let mapId: string
  beforeAll(async () => {
    hostHash = (await api.put('/v1/hosts', { hosts: ['shop.example'] })).body.data[0].hash
    const set = await api.post(`/v1/hosts/${hostHash}/patterns`, { category: 'products', patterns: { format: 'url_pattern', patterns: ['/p/:id'] } })
    expect(set.status).toBe(201)
    const map = await api.post(`/v1/hosts/${hostHash}/data_maps`, {
      schema_id: crypto.randomUUID(),
      map: {
        fields: [
          { name: 'title', selector: 'h1' },
          { name: 'links', selector: 'a', attr: 'href', type: 'url', multiple: true },
        ],
      },
    })
    expect(map.status).toBe(201)
    mapId = map.body.id
  })

  test('the category guard classifies the final URL with its host pattern sets', async () => {
    const pipelines = [
      { identifier: 'products', guards: [{ kind: 'category', categories: ['products'] }], steps: [{ kind: 'metadata' }] },
      { identifier: 'articles', guards: [{ kind: 'category', categories: ['articles', 'blogs'] }], steps: [{ kind: 'metadata' }] },
    ]
    const product = await parse(doc({ url: 'https://shop.example/p/42', pipelines }))
    expect(product.body.pipelines.map((p: any) => p.status)).toEqual(['ran', 'skipped'])
    const list = await parse(doc({ url: 'https://shop.example/list', pipelines }))
    expect(list.body.pipelines.map((p: any) => p.skipped_reason)).toEqual(['category', 'category'])
    const unknownHost = await parse(doc({ url: 'https://nowhere.example/p/42', pipelines }))
    expect(unknownHost.body.pipelines.map((p: any) => p.skipped_reason)).toEqual(['category', 'category'])
    // another tenant has no pattern sets for the host
    const other = await parse(doc({ url: 'https://shop.example/p/42', pipelines }), 'globex')
    expect(other.body.pipelines[0].skipped_reason).toBe('category')
  })

  test('a data_map step applies the map, resolving urls against the document', async () => {
    const r = await parse(doc({ url: 'https://www.shop.example/list', pipelines: [{ steps: [{ kind: 'data_map', id: mapId }] }] }))
    expect(ranSteps(r)).toEqual([{ kind: 'data_map', id: mapId, data: { title: 'Products', links: ['https://www.shop.example/p/1', 'https://other.example/x#top'] }, errors: [] }])
  })

  test("an unknown data map, or another tenant's, is a 404 before any work", async () => {
    const missing = crypto.randomUUID()
    const r = await parse(doc({ pipelines: [{ steps: [{ kind: 'data_map', id: missing }] }] }))
    expect(r.status).toBe(404)
    expect(r.body).toEqual({ error: 'not_found', message: `data map ${missing} not found` })
    const other = await parse(doc({ pipelines: [{ steps: [{ kind: 'data_map', id: mapId }] }] }), 'globex')
    expect(other.status).toBe(404)
  })
})

describe('POST /v1/parse/batch', () => {
  test('results in item order; failing items are error items', async () => {
    const items = [
      doc(),
      doc({ url: 'https://shop.example/img.png', content_type: 'image/png' }),
      doc({ url: 'https://shop.example/m', pipelines: [{ steps: [{ kind: 'data_map', id: '00000000-0000-4000-8000-000000000000' }] }] }),
      doc({ url: 'https://shop.example/t', body: b64('plain'), content_type: 'text/plain', pipelines: [{ steps: [{ kind: 'text' }] }] }),
    ]
    const r = await api.post('/v1/parse/batch', { items })
    expect(r.status).toBe(200)
    expect(r.body.results).toHaveLength(4)
    expect(r.body.results[0]).toEqual({ ok: true, ...(await parse(doc())).body })
    expect(r.body.results[1]).toEqual({
      ok: false,
      url: 'https://shop.example/img.png',
      error: { error: 'unsupported_content_type', message: 'content type image/png is not parsed; HTML, XHTML, plain text and JSON are' },
    })
    expect(r.body.results[2]).toEqual({
      ok: false,
      url: 'https://shop.example/m',
      error: { error: 'not_found', message: 'data map 00000000-0000-4000-8000-000000000000 not found' },
    })
    expect(r.body.results[3].ok).toBe(true)
    expect(r.body.results[3].pipelines[0].steps).toEqual([{ kind: 'text', content: 'plain' }])
  })

  test('64 items are fine', async () => {
    const items = Array.from({ length: 64 }, (_, i) => doc({ url: `https://shop.example/${i}`, pipelines: [{ steps: [{ kind: 'metadata' }] }] }))
    const r = await api.post('/v1/parse/batch', { items })
    expect(r.status).toBe(200)
    expect(r.body.results.map((x: any) => x.url)).toEqual(items.map((i) => i.url))
    expect(r.body.results.every((x: any) => x.ok && x.pipelines[0].steps[0].metadata.title === 'Shop')).toBe(true)
  })
})

describe('validation', () => {
  const cases: [string, unknown, { field: string; errors: string[] }[]][] = [
    [
      'missing fields',
      {},
      [
        { field: 'url', errors: ['is required'] },
        { field: 'body', errors: ['is required'] },
        { field: 'content_type', errors: ['is required'] },
      ],
    ],
    [
      'a relative url and bad base64',
      doc({ url: '/x', body: 'not base64!' }),
      [
        { field: 'url', errors: ['must be an absolute http(s) URL'] },
        { field: 'body', errors: ['must be base64-encoded'] },
      ],
    ],
    ['an ftp url', doc({ url: 'ftp://a.example/x' }), [{ field: 'url', errors: ['must be an absolute http(s) URL'] }]],
    ['an unknown key', doc({ extra: 1 }), [{ field: 'extra', errors: ['is not a known field'] }]],
    [
      'a bad redirect location',
      doc({ redirects: [{ url: 'https://a.example/', location: 'http://[::1' }] }),
      [{ field: 'redirects[0].location', errors: ['must resolve to an http(s) URL (absolute, or relative to the redirect url)'] }],
    ],
    [
      'a redirect to mailto: (links would have no base)',
      doc({
        redirects: [
          { url: '/list', location: '/ok' },
          { url: '/ok', location: 'mailto:x@y.example' },
        ],
      }),
      [{ field: 'redirects[1].location', errors: ['must resolve to an http(s) URL (absolute, or relative to the redirect url)'] }],
    ],
    [
      'a bad guard regex and a bad navigator selector',
      doc({
        pipelines: [{ guards: [{ kind: 'url', include: ['(unclosed'] }], navigator: { kind: 'links', selector: 'a[' } }],
      }),
      [
        { field: 'pipelines[0].guards[0].include[0]', errors: [expect.stringContaining('is not a valid RE2 regular expression')] as any },
        { field: 'pipelines[0].navigator.selector', errors: [expect.any(String)] as any },
      ],
    ],
    ['an unknown step kind', doc({ pipelines: [{ steps: [{ kind: 'pdf' }] }] }), [{ field: 'pipelines[0].steps[0].kind', errors: [expect.any(String)] as any }]],
    [
      'a bad fields selector',
      doc({ pipelines: [{ steps: [{ kind: 'fields', fields: [{ name: 'x', selector: 'div >' }] }] }] }),
      [{ field: 'pipelines[0].steps[0].fields[0].selector', errors: [expect.any(String)] as any }],
    ],
  ]
  for (const [name, body, fields] of cases) {
    test(`${name} → 422`, async () => {
      const before = await snapshot(api)
      const r = await parse(body)
      expect(r.status).toBe(422)
      expect(r.body).toEqual({ error: 'validation', fields })
      expect(await snapshot(api)).toEqual(before)
    })
  }

  test('batch item paths, and 0 or 65 items', async () => {
    const r = await api.post('/v1/parse/batch', { items: [doc(), doc({ url: 'nope', body: '%%' }), doc(), doc({ content_type: undefined })] })
    expect(r.status).toBe(422)
    expect(r.body.fields).toEqual([
      { field: 'items[3].content_type', errors: ['is required'] },
      { field: 'items[1].url', errors: ['must be an absolute http(s) URL'] },
      { field: 'items[1].body', errors: ['must be base64-encoded'] },
    ])
    for (const items of [[], Array.from({ length: 65 }, () => doc())]) {
      const bad = await api.post('/v1/parse/batch', { items })
      expect(bad.status).toBe(422)
      expect(bad.body.fields.map((f: any) => f.field)).toEqual(['items'])
    }
  })

  test('a job config is checked the same way: selectors and regexes of its pipelines', async () => {
    const r = await api.post('/v1/jobs', {
      name: 'x',
      config: { seeds: ['https://a.example/'], pipelines: [{ navigator: { kind: 'links', selector: '::' }, steps: [{ kind: 'fields', fields: [{ name: 'x', selector: '[' }] }] }] },
    })
    expect(r.status).toBe(422)
    expect(r.body.fields.map((f: any) => f.field)).toEqual(['config.pipelines[0].navigator.selector', 'config.pipelines[0].steps[0].fields[0].selector'])
  })

  test('a tenant is required', async () => {
    const r = await api.post('/v1/parse', doc(), { tenant: null })
    expect(r.status).toBe(400)
    expect(r.body.error).toBe('tenant_required')
  })
})
