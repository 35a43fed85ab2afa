// The scrape surface without payment (SPEC "Scrape API", design.md §7): every format on fixture
// pages (an article, a table-heavy page, a PDF, an image, a windows-1252 page), the GET form with
// raw and encoded URLs and their query strings, each 422, 429 under a burst, target failures as
// 500s, the address guard, CORS and a proxy. Fixtures are Bun servers on 127.0.0.1.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { forwardProxy, type ForwardProxy } from '../helpers/forward-proxy'
import { testScrape, type TestScrape } from '../helpers/scrape'
import { toMarkdown } from '../../src/parse/markdown'

const FIXTURES = join(import.meta.dir, '../fixtures')
const ARTICLE = readFileSync(join(FIXTURES, 'extract/article.html'))
const LATIN = readFileSync(join(FIXTURES, 'extract/windows-1252.html'))
const TABLES = readFileSync(join(FIXTURES, 'markdown/tables.html'))
// Not a renderable document: the bytes must come back exactly.
const PDF = new Uint8Array([...new TextEncoder().encode('%PDF-1.4\n%\xe2\xe3\xcf\xd3\n1 0 obj << /Type /Catalog >> endobj\n'), 0, 255, 128, 10])
const PNG = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 0x49, 0x48, 0x44, 0x52, 0, 0, 0, 1, 0, 0, 0, 1, 8, 6, 0, 0, 0, 0x1f, 0x15, 0xc4, 0x89])

let site: ReturnType<typeof Bun.serve>
let origin: string
const seen: { path: string; query: string; headers: Headers }[] = []
let scrape: TestScrape
let proxy: ForwardProxy

beforeAll(async () => {
  site = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    async fetch(req) {
      const url = new URL(req.url)
      seen.push({ path: url.pathname, query: url.search, headers: req.headers })
      const html = (body: string | Uint8Array, type = 'text/html; charset=utf-8') => new Response(body, { headers: { 'content-type': type } })
      switch (url.pathname) {
        case '/article':
          return html(ARTICLE)
        case '/moved':
          return Response.redirect(`${origin}/article`, 301)
        case '/tables':
          return html(TABLES)
        case '/latin':
          return html(LATIN, 'text/html')
        case '/doc.pdf':
          return html(PDF, 'application/pdf')
        case '/logo.png':
          return html(PNG, 'image/png')
        case '/plain':
          return html('line one\nline two', 'text/plain; charset=utf-8')
        case '/query':
          return html(`<html><body><h1>Query</h1><p>search was ${url.search.replace(/&/g, '&amp;')}</p></body></html>`)
        case '/lang':
          return html(`<html><body><p>lang: ${req.headers.get('accept-language')}</p></body></html>`)
        case '/slow':
          await Bun.sleep(3000)
          return html('<p>late</p>')
        case '/product':
          return html('<html><body><div class="p"><h2 class="name">Mill</h2><span class="price">12.50</span></div></body></html>')
        default:
          return new Response('<h1>Not here</h1>', { status: 404, headers: { 'content-type': 'text/html' } })
      }
    },
  })
  origin = `http://127.0.0.1:${site.port}`
  proxy = await forwardProxy()
  scrape = testScrape({ TRAWL_ALLOW_PRIVATE_NETWORKS: 'true', TRAWL_SCRAPE_RATE: 'off', TRAWL_PROXIES: `isp=${proxy.url}` })
})
afterAll(async () => {
  await scrape.close()
  await proxy.close()
  site.stop(true)
})

const post = (body: unknown, s: TestScrape = scrape) => s.post('/v1/scrape', body, { tenant: null })

describe('POST /v1/scrape: formats', () => {
  test('default: main-content markdown of the page with its metadata and links, after redirects, with the final URL', async () => {
    const r = await post({ url: `${origin}/moved` })
    expect(r.status).toBe(200)
    expect(Object.keys(r.body).sort()).toEqual(['links', 'metadata', 'rendered', 'results', 'status', 'url'])
    expect(r.body.url).toBe(`${origin}/article`)
    expect(r.body.rendered).toBe(false)
    expect(r.body.status).toBe(200)
    expect(r.body.results).toHaveLength(1)
    expect(r.body.results[0].kind).toBe('markdown')
    const md: string = r.body.results[0].content
    expect(md).toContain('# Harbour cranes return to Port Ellis')
    expect(md).not.toContain('dataLayer')
    expect(md).not.toContain('color: #666')
    // Main content: the site header's navigation is gone, the article stays.
    expect(md).not.toContain('[Weather](')
    expect(md).toContain('each weighing **1,150 tonnes**')
    expect(md).toBe(toMarkdown(ARTICLE.toString('utf8'), `${origin}/article`, { main_content: true }))
    const m = r.body.metadata
    expect(m.title).toBe('Harbour cranes return to Port Ellis | The Coastal Ledger')
    expect(m.description).toBe('After a decade away, two container cranes are back on the quay.')
    expect(m.language).toBe('en')
    expect(m.canonical).toBe('https://ledger.example/news/2024/01/harbour-cranes-return')
    expect(m.json_ld[0].headline).toBe('Harbour cranes return to Port Ellis')
    // Every link of the page, chrome included: links are the page's, not its main content's.
    const urls = r.body.links.map((l: { url: string }) => l.url)
    expect(urls).toContain(`${origin}/weather/`)
    expect(urls).toContain(`${origin}/authors/maria-okafor`)
    expect(r.body.links.find((l: { url: string }) => l.url === `${origin}/weather/`)).toEqual({ url: `${origin}/weather/`, text: 'Weather', rel: [], nofollow: false })
  })

  test('main_content false: the whole page, navigation included; skip_tags still apply', async () => {
    const r = await post({
      url: `${origin}/article`,
      formats: [
        { kind: 'markdown', main_content: false },
        { kind: 'markdown', main_content: true },
      ],
    })
    expect(r.status).toBe(200)
    const [whole, main] = r.body.results
    expect(whole.content).toContain('[Weather](')
    expect(whole.content).toBe(toMarkdown(ARTICLE.toString('utf8'), `${origin}/article`, { main_content: false }))
    expect(main.content).not.toContain('[Weather](')
    expect(main.content).toBe((await post({ url: `${origin}/article` })).body.results[0].content)
    const bad = await post({ url: `${origin}/article`, formats: [{ kind: 'markdown', main_content: 'no' }] })
    expect(bad.status).toBe(422)
    expect(bad.body.fields[0].field).toContain('formats')
  })

  test('several formats come back in the order asked: html as fetched, markdown with skip_tags, json fields', async () => {
    const r = await post({
      url: `${origin}/article`,
      formats: [
        {
          kind: 'json',
          fields: [
            { name: 'headline', selector: 'h1.headline', type: 'string', required: true },
            { name: 'missing', selector: '.nope', required: true },
          ],
        },
        { kind: 'html' },
        { kind: 'markdown', skip_tags: ['nav', 'header'], main_content: false },
        { kind: 'markdown', main_content: false },
      ],
    })
    expect(r.status).toBe(200)
    expect(r.body.results.map((x: { kind: string }) => x.kind)).toEqual(['json', 'html', 'markdown', 'markdown'])
    const [json, html, skipped, full] = r.body.results
    expect(json.data.headline).toBe('Harbour cranes return to Port Ellis')
    expect(json.errors).toEqual([{ field: 'missing', error: 'required', message: expect.any(String) }])
    expect(html.content).toBe(ARTICLE.toString('utf8'))
    expect(full.content).toContain('[Weather](')
    expect(skipped.content).not.toContain('[Weather](')
    expect(skipped.content).toContain('# Harbour cranes return to Port Ellis')
  })

  test('a table-heavy page becomes GFM tables, as the parse API renders it', async () => {
    const r = await post({ url: `${origin}/tables` })
    const md: string = r.body.results[0].content
    expect(md).toMatch(/^\| .+ \|$/m)
    expect(md).toMatch(/^\| ?-{3,}/m)
    const parsed = await post({ url: `${origin}/tables`, formats: [{ kind: 'markdown' }, { kind: 'markdown' }] })
    expect(parsed.body.results[1].content).toBe(md)
  })

  test('a windows-1252 page is decoded by its meta charset in markdown, html and json', async () => {
    const r = await post({ url: `${origin}/latin`, formats: [{ kind: 'markdown' }, { kind: 'html' }, { kind: 'json', fields: [{ name: 'price', selector: '.preis .betrag' }] }] })
    expect(r.status).toBe(200)
    const [md, html, json] = r.body.results
    expect(md.content).toContain('Kaffeemühle „Bärenstark“ – Edelstahl')
    expect(md.content).toContain('1.234,50 €')
    expect(html.content).toContain('<title>Kaffeemühle „Bärenstark“ – Müller &amp; Söhne</title>')
    expect(json.data.price).toBe('1.234,50 €')
  })

  test('a PDF and an image come back as binary results, one per format asked, with their exact bytes', async () => {
    for (const [path, bytes, type] of [
      ['/doc.pdf', PDF, 'application/pdf'],
      ['/logo.png', PNG, 'image/png'],
    ] as const) {
      const r = await post({ url: `${origin}${path}`, formats: [{ kind: 'markdown' }, { kind: 'html' }] })
      expect(r.status).toBe(200)
      expect(r.body.results).toEqual([
        { kind: 'binary', content: Buffer.from(bytes).toString('base64'), content_type: type },
        { kind: 'binary', content: Buffer.from(bytes).toString('base64'), content_type: type },
      ])
      expect(r.body.metadata).toBeNull()
      expect(r.body.links).toBeNull()
    }
  })

  test('plain text is text: markdown and html give it back, with metadata and links of its own', async () => {
    const r = await post({ url: `${origin}/plain`, formats: [{ kind: 'markdown' }, { kind: 'html' }] })
    expect(r.body.metadata).toEqual({ title: null, description: null, canonical: null, language: null, open_graph: {}, json_ld: [] })
    expect(r.body.links).toEqual([])
    expect(r.body.results).toEqual([
      { kind: 'markdown', content: 'line one\nline two' },
      { kind: 'html', content: 'line one\nline two' },
    ])
  })

  test('locale is sent as Accept-Language; the proxy named isp carries the request', async () => {
    const r = await post({ url: `${origin}/lang`, locale: 'de-CH' })
    expect(r.body.results[0].content).toBe('lang: de-CH,de;q=0.9')
    proxy.reset()
    const viaProxy = await post({ url: `${origin}/lang`, proxy: 'isp', locale: 'fr' })
    expect(viaProxy.status).toBe(200)
    expect(viaProxy.body.results[0].content).toBe('lang: fr')
    expect(proxy.requests.map((q) => q.target)).toEqual([`${origin}/lang`])
  })
})

describe('GET /v1/scrape/{url}', () => {
  test('the raw URL with its own query string: text/markdown of that exact URL', async () => {
    const r = await scrape.get(`/v1/scrape/${origin}/query?a=1&b=two%20words`, { tenant: null })
    expect(r.status).toBe(200)
    expect(r.headers.get('content-type')).toBe('text/markdown; charset=utf-8')
    expect(r.headers.get('x-scrape-url')).toBe(`${origin}/query?a=1&b=two%20words`)
    expect(r.text).toBe('# Query\n\nsearch was ?a=1&b=two%20words')
  })

  test('main content by default; X-Scrape-Main-Content: false gives the whole page', async () => {
    const main = await scrape.get(`/v1/scrape/${origin}/article`, { tenant: null })
    const whole = await scrape.get(`/v1/scrape/${origin}/article`, { tenant: null, headers: { 'X-Scrape-Main-Content': 'false' } })
    expect(main.text).toBe(toMarkdown(ARTICLE.toString('utf8'), `${origin}/article`, { main_content: true }))
    expect(main.text).not.toContain('[Weather](')
    expect(whole.text).toBe(toMarkdown(ARTICLE.toString('utf8'), `${origin}/article`, { main_content: false }))
    expect(whole.text).toContain('[Weather](')
  })

  test('a percent-encoded URL (any case) is decoded once, query included', async () => {
    for (const prefix of ['http%3A%2F%2F', 'HTTP%3a%2f%2f']) {
      const encoded = `${prefix}${encodeURIComponent(`127.0.0.1:${site.port}/query?x=%2F&y=2`)}`
      const r = await scrape.get(`/v1/scrape/${encoded}`, { tenant: null })
      expect([prefix, r.status]).toEqual([prefix, 200])
      expect(r.text).toBe('# Query\n\nsearch was ?x=%2F&y=2')
    }
  })

  test('headers: X-Scrape-Locale, X-Scrape-Proxy, X-Scrape-Timeout-Seconds', async () => {
    proxy.reset()
    const r = await scrape.get(`/v1/scrape/${origin}/lang`, { tenant: null, headers: { 'X-Scrape-Locale': 'pt-BR', 'X-Scrape-Proxy': 'isp', 'X-Scrape-Timeout-Seconds': '5' } })
    expect(r.text).toBe('lang: pt-BR,pt;q=0.9')
    expect(proxy.requests).toHaveLength(1)
    const slow = await scrape.get(`/v1/scrape/${origin}/slow`, { tenant: null, headers: { 'X-Scrape-Timeout-Seconds': '1' } })
    expect(slow.status).toBe(500)
    expect(slow.body.error).toBe('timeout')
  })

  test('content that is not text comes back as its own bytes and type', async () => {
    const r = await fetchRaw(`/v1/scrape/${origin}/logo.png`)
    expect(r.status).toBe(200)
    expect(r.headers.get('content-type')).toBe('image/png')
    expect(r.headers.get('x-content-type-options')).toBe('nosniff')
    expect(r.headers.get('content-security-policy')).toBe('sandbox')
    expect(new Uint8Array(await r.arrayBuffer())).toEqual(PNG)
  })

  test('bad headers and URLs are 422s naming them', async () => {
    const cases: [string, Record<string, string>, { field: string; errors: string[] }[]][] = [
      [`/v1/scrape/${origin}/article`, { 'X-Scrape-Timeout-Seconds': '0' }, [{ field: 'X-Scrape-Timeout-Seconds', errors: ['must be a number of seconds from 1 to 120'] }]],
      [`/v1/scrape/${origin}/article`, { 'X-Scrape-Timeout-Seconds': 'soon' }, [{ field: 'X-Scrape-Timeout-Seconds', errors: ['must be a number of seconds from 1 to 120'] }]],
      [`/v1/scrape/${origin}/article`, { 'X-Scrape-Locale': 'not a locale!' }, [{ field: 'X-Scrape-Locale', errors: ['must be a BCP 47 language tag, such as en-US or de'] }]],
      [`/v1/scrape/${origin}/article`, { 'X-Scrape-Proxy': 'dc' }, [{ field: 'X-Scrape-Proxy', errors: ['is not a configured proxy (TRAWL_PROXIES names: isp)'] }]],
      [`/v1/scrape/${origin}/article`, { 'X-Scrape-Main-Content': 'no' }, [{ field: 'X-Scrape-Main-Content', errors: ['must be true or false'] }]],
      ['/v1/scrape/ftp://example.com/file', {}, [{ field: 'url', errors: ['must be an http or https URL'] }]],
      ['/v1/scrape/example.com/page', {}, [{ field: 'url', errors: ['must be an absolute URL with its scheme'] }]],
      ['/v1/scrape/https%3A%2F%2F%E0%A4%A', {}, [{ field: 'url', errors: ['must follow /v1/scrape/: an absolute http(s) URL, as written or percent-encoded'] }]],
    ]
    const before = seen.length
    for (const [path, headers, fields] of cases) {
      const r = await scrape.get(path, { tenant: null, headers })
      expect([path, r.status, r.body]).toEqual([path, 422, { error: 'validation', fields }])
    }
    expect(seen.length).toBe(before)
  })
})

describe('validation', () => {
  test('every invalid field of the POST body is a 422 on that field; nothing is fetched', async () => {
    const url = `${origin}/article`
    const cases: [unknown, { field: string; errors: string[] }[]][] = [
      [{}, [{ field: 'url', errors: ['is required'] }]],
      [{ url: '/relative' }, [{ field: 'url', errors: ['must be an absolute URL with its scheme'] }]],
      [{ url: 'mailto:a@example.com' }, [{ field: 'url', errors: ['must be an http or https URL'] }]],
      [{ url, formats: [] }, [{ field: 'formats', errors: ['must have at least 1 item'] }]],
      [{ url, formats: [{ kind: 'pdf' }] }, [{ field: 'formats[0].kind', errors: ['must be one of "markdown", "html", "json"'] }]],
      [{ url, formats: [{ kind: 'json' }] }, [{ field: 'formats[0].fields', errors: ['is required'] }]],
      [{ url, formats: [{ kind: 'json', fields: [{ name: 'x', selector: 'p:::bad' }] }] }, [{ field: 'formats[0].fields[0].selector', errors: [expect.any(String)] as never }]],
      [{ url, formats: [{ kind: 'markdown', skip_tags: ['<nav>'] }] }, [{ field: 'formats[0].skip_tags[0]', errors: ['must be a tag name'] }]],
      [{ url, formats: [{ kind: 'html', extra: 1 }] }, [{ field: 'formats[0].extra', errors: ['is not a known field'] }]],
      [{ url, proxy: 'dc' }, [{ field: 'proxy', errors: ['is not a configured proxy (TRAWL_PROXIES names: isp)'] }]],
      [{ url, timeout_seconds: 0 }, [{ field: 'timeout_seconds', errors: ['must be >= 1'] }]],
      [{ url, timeout_seconds: 121 }, [{ field: 'timeout_seconds', errors: ['must be <= 120'] }]],
      [{ url, timeout_seconds: '5' }, [{ field: 'timeout_seconds', errors: ['must be a number'] }]],
      [{ url, locale: 'english please' }, [{ field: 'locale', errors: ['must be a BCP 47 language tag, such as en-US or de'] }]],
      [{ url, cookies: [] }, [{ field: 'cookies', errors: ['is not a known field'] }]],
    ]
    const before = seen.length
    for (const [body, fields] of cases) {
      const r = await post(body)
      expect([JSON.stringify(body), r.status, r.body]).toEqual([JSON.stringify(body), 422, { error: 'validation', fields }])
    }
    expect(seen.length).toBe(before)
    const notJson = await scrape.post('/v1/scrape', undefined, { tenant: null, raw: '{"url":', headers: { 'content-type': 'application/json' } })
    expect(notJson.status).toBe(422)
    expect(notJson.body.fields[0].field).toBe('body')
  })
})

describe('failures are 500 with the reason, never a stack', () => {
  test('timeout, HTTP error status, refused connection', async () => {
    const slow = await post({ url: `${origin}/slow`, timeout_seconds: 1 })
    expect([slow.status, slow.body.error]).toEqual([500, 'timeout'])
    const missing = await post({ url: `${origin}/nowhere` })
    expect(missing.status).toBe(500)
    expect(missing.body).toEqual({ error: 'http_status', message: `${origin}/nowhere answered HTTP 404` })
    const closed = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: () => new Response('') })
    const port = closed.port
    closed.stop(true)
    const refused = await post({ url: `http://127.0.0.1:${port}/` })
    expect([refused.status, refused.body.error]).toEqual([500, 'connect'])
    for (const r of [slow, missing, refused]) {
      expect(Object.keys(r.body).sort()).toEqual(['error', 'message'])
      expect(r.text).not.toContain('    at ')
    }
  })

  test('the address guard: loopback, private and metadata addresses are refused unless allowed', async () => {
    const guarded = testScrape({ TRAWL_SCRAPE_RATE: 'off' })
    try {
      const before = seen.length
      for (const url of [`${origin}/article`, 'http://169.254.169.254/latest/meta-data/', 'http://10.0.0.1/', 'http://[::1]:9/']) {
        const r = await post({ url }, guarded)
        expect([url, r.status, r.body.error]).toEqual([url, 500, 'blocked_address'])
      }
      const viaGet = await guarded.get(`/v1/scrape/${origin}/article`, { tenant: null })
      expect([viaGet.status, viaGet.body.error]).toEqual([500, 'blocked_address'])
      expect(seen.length).toBe(before)
    } finally {
      await guarded.close()
    }
  })
})

describe('rate limit', () => {
  test('a burst over TRAWL_SCRAPE_RATE gets 429 with Retry-After, per client address; invalid requests are 422 first', async () => {
    let ip = '198.51.100.1'
    const limited = testScrape({ TRAWL_ALLOW_PRIVATE_NETWORKS: 'true', TRAWL_SCRAPE_RATE: '1/s' }, { clientIp: () => ip })
    try {
      // One scrape from another address first: the parse worker starts on the first one, which on
      // a loaded machine can take long enough for the bucket to refill between the burst's calls.
      ip = '198.51.100.9'
      expect((await post({ url: `${origin}/plain` }, limited)).status).toBe(200)
      ip = '198.51.100.1'
      const statuses = []
      for (let i = 0; i < 3; i++) statuses.push((await post({ url: `${origin}/plain` }, limited)).status)
      expect(statuses).toEqual([200, 200, 429])
      const r = await post({ url: `${origin}/plain` }, limited)
      expect(r.status).toBe(429)
      expect(r.headers.get('retry-after')).toBe('1')
      expect(r.body).toEqual({ error: 'rate_limited', message: 'too many scrapes; retry in 1 s (TRAWL_SCRAPE_RATE)' })
      expect((await post({ url: 'nope' }, limited)).status).toBe(422)
      ip = '198.51.100.2'
      expect((await post({ url: `${origin}/plain` }, limited)).status).toBe(200)
      ip = '198.51.100.1'
      await Bun.sleep(1100)
      expect((await post({ url: `${origin}/plain` }, limited)).status).toBe(200)
    } finally {
      await limited.close()
    }
  })

  test('off: no limit', async () => {
    const statuses = await Promise.all(Array.from({ length: 30 }, () => post({ url: `${origin}/plain` }).then((r) => r.status)))
    expect(new Set(statuses)).toEqual(new Set([200]))
  })
})

describe('CORS', () => {
  test('a preflight allows the payment headers; answers expose the receipts and Retry-After', async () => {
    const pre = await scrape.call('OPTIONS', '/v1/scrape', {
      tenant: null,
      headers: { origin: 'https://app.example', 'access-control-request-method': 'POST', 'access-control-request-headers': 'x-payment, content-type' },
    })
    expect(pre.status).toBe(204)
    expect(pre.headers.get('access-control-allow-origin')).toBe('*')
    const allowed = pre.headers.get('access-control-allow-headers')!.toLowerCase()
    for (const h of ['x-payment', 'payment-signature', 'access-control-expose-headers', 'content-type', 'x-scrape-locale']) expect(allowed).toContain(h)
    const r = await post({ url: `${origin}/plain` })
    expect(r.headers.get('access-control-allow-origin')).toBe('*')
    const exposed = r.headers.get('access-control-expose-headers')!.toLowerCase()
    for (const h of ['payment-required', 'payment-response', 'x-payment-response', 'retry-after']) expect(exposed).toContain(h)
    const bad = await post({})
    expect(bad.headers.get('access-control-allow-origin')).toBe('*')
  })
})

describe('rendering', () => {
  test('TRAWL_SCRAPE_RENDER=always renders with Chromium: script-made content is there, rendered is true', async () => {
    const js = Bun.serve({
      hostname: '127.0.0.1',
      port: 0,
      fetch: () =>
        new Response('<html><body><h1>Static</h1><script>document.body.insertAdjacentHTML("beforeend", "<p>made by script</p>")</script></body></html>', { headers: { 'content-type': 'text/html' } }),
    })
    const rendering = testScrape({ TRAWL_ALLOW_PRIVATE_NETWORKS: 'true', TRAWL_SCRAPE_RATE: 'off', TRAWL_SCRAPE_RENDER: 'always' })
    try {
      const r = await post({ url: `http://127.0.0.1:${js.port}/`, formats: [{ kind: 'markdown' }, { kind: 'html' }] }, rendering)
      expect(r.status).toBe(200)
      expect(r.body.rendered).toBe(true)
      expect(r.body.results[0].content).toContain('made by script')
      expect(r.body.results[1].content).toContain('<p>made by script</p>')
      const plain = await post({ url: `http://127.0.0.1:${js.port}/` })
      expect(plain.body.rendered).toBe(false)
      expect(plain.body.results[0].content).not.toContain('made by script')
    } finally {
      await rendering.close()
      js.stop(true)
    }
  }, 30_000)
})

describe('OpenAPI', () => {
  test('the scrape surface documents both routes, the GET form under /v1/scrape/{url} with its headers', async () => {
    const doc = (await scrape.get('/openapi.json', { tenant: null })).body
    expect(Object.keys(doc.paths).sort()).toEqual(['/v1/scrape', '/v1/scrape/{url}'])
    const get = doc.paths['/v1/scrape/{url}'].get
    expect(get.parameters.map((p: { name: string; in: string }) => `${p.in}:${p.name}`)).toEqual([
      'path:url',
      'header:X-Scrape-Proxy',
      'header:X-Scrape-Timeout-Seconds',
      'header:X-Scrape-Locale',
      'header:X-Scrape-Main-Content',
    ])
    const body = JSON.stringify(doc.paths['/v1/scrape'].post.requestBody)
    for (const name of ['url', 'formats', 'proxy', 'timeout_seconds', 'locale', 'skip_tags', 'main_content', 'fields']) expect(body).toContain(`"${name}"`)
    const answer = JSON.stringify(doc.paths['/v1/scrape'].post.responses['200'])
    for (const name of ['rendered', 'metadata', 'links', 'open_graph', 'nofollow']) expect(answer).toContain(`"${name}"`)
  })
})

/** A GET whose body is bytes, not text (the client decodes text). */
function fetchRaw(path: string) {
  return scrape.app.handle(new Request(`http://localhost${path}`))
}
