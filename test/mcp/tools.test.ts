import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { Runner } from '../../src/crawl/runner'
import { createLogger } from '../../src/log'
import { managementApp } from '../../src/server'
import { snapshot, testApi, type TestApi } from '../helpers/api'
import { mcpSite, PAGES, PRICE_DATA, PRICE_FIELDS, type McpSite } from './site'

/**
 * The MCP tools through the SDK's own client, over the streamable HTTP route of a management app
 * on a real store and a real runner (app.handle, no sockets for trawl; the site is on loopback).
 */

let api: TestApi
let app: ReturnType<typeof managementApp>
let runner: Runner
let site: McpSite
const clients: Client[] = []
/** The run the crawl test made, read back by crawl_export. */
let crawled = ''

beforeAll(() => {
  // No Chromium here: a render the agent asks for fails as such, which shows `render` reached the scraper.
  api = testApi({ TRAWL_ALLOW_PRIVATE_NETWORKS: 'true', TRAWL_SCRAPE_RENDER: 'never', TRAWL_CHROMIUM: '/nonexistent/chromium' })
  const log = createLogger('warn', () => {})
  runner = new Runner({ store: api.store, fetcher: api.fetcher, parser: api.parser, blobs: api.blobs, log }, 2)
  app = managementApp({ store: api.store, config: api.config, parser: api.parser, log, fetcher: api.fetcher, blobs: api.blobs, engine: runner })
  runner.start()
  site = mcpSite()
})

afterAll(async () => {
  for (const c of clients) await c.close()
  await runner.stop()
  site.close()
  api.close()
})

const handle = (target: ReturnType<typeof managementApp>) => (url: string | URL, init?: RequestInit) => target.handle(new Request(String(url), init))

async function connect(tenant: string, target = app): Promise<Client> {
  const client = new Client({ name: 'trawl-test', version: '1.0.0' })
  await client.connect(new StreamableHTTPClientTransport(new URL('http://trawl.test/mcp'), { requestInit: { headers: { 'X-Tenant-Id': tenant } }, fetch: handle(target) }))
  clients.push(client)
  return client
}

type Text = { type: 'text'; text: string }
const texts = (result: Awaited<ReturnType<Client['callTool']>>) => (result.content as Text[]).map((c) => c.text)
const json = (text: string) => JSON.parse(text)

async function call(client: Client, name: string, args: Record<string, unknown>) {
  const result = await client.callTool({ name, arguments: args })
  return { isError: result.isError === true, texts: texts(result) }
}

describe('tools/list', () => {
  test('lists the five tools with their input schemas', async () => {
    const client = await connect('acme')
    const { tools } = await client.listTools()
    expect(tools.map((t) => t.name)).toEqual(['scrape', 'crawl_start', 'crawl_status', 'crawl_export', 'extract'])
    for (const t of tools) {
      expect(t.description!.length).toBeGreaterThan(80)
      expect(t.inputSchema.type).toBe('object')
    }
    const scrape = tools.find((t) => t.name === 'scrape')!
    expect(scrape.inputSchema.required).toEqual(['url'])
    expect(Object.keys(scrape.inputSchema.properties!)).toEqual(['url', 'formats', 'fields', 'main_content', 'render', 'timeout_seconds'])
    expect(scrape.annotations).toMatchObject({ readOnlyHint: true, openWorldHint: true })
    expect(tools.find((t) => t.name === 'crawl_start')!.annotations).toMatchObject({ readOnlyHint: false })
  })
})

describe('scrape', () => {
  test("answers the page's main content as markdown, then the page's facts as JSON", async () => {
    const client = await connect('acme')
    const r = await call(client, 'scrape', { url: site.url('/guide') })
    expect(r.isError).toBe(false)
    expect(r.texts).toHaveLength(2)
    const [markdown, facts] = r.texts as [string, string]
    expect(markdown).toContain('# Harbour guide')
    expect(markdown).toContain(PAGES['/guide']!.words)
    expect(markdown).not.toContain('Harbour navigation menu')
    expect(markdown).not.toContain('Copyright footer')
    expect(json(facts)).toMatchObject({ url: site.url('/guide'), status: 200, rendered: false })
  })

  test('main_content false keeps the navigation and the footer', async () => {
    const client = await connect('acme')
    const [markdown] = (await call(client, 'scrape', { url: site.url('/guide'), main_content: false })).texts as [string]
    expect(markdown).toContain(PAGES['/guide']!.words)
    expect(markdown).toContain('Harbour navigation menu')
    expect(markdown).toContain('Copyright footer')
  })

  test('formats html and json come back in the order asked', async () => {
    const client = await connect('acme')
    const r = await call(client, 'scrape', { url: site.url('/price'), formats: ['json', 'html'], fields: PRICE_FIELDS })
    expect(r.isError).toBe(false)
    expect(json(r.texts[0]!)).toEqual({ data: PRICE_DATA, errors: [] })
    expect(r.texts[1]).toBe(PAGES['/price']!.html)
  })

  test('render overrides TRAWL_SCRAPE_RENDER for the call', async () => {
    const client = await connect('acme')
    const always = await call(client, 'scrape', { url: site.url('/guide'), render: 'always' })
    expect(always.isError).toBe(true)
    expect(always.texts[0]).toStartWith('browser_unavailable: ')
    const extracted = await call(client, 'extract', { url: site.url('/price'), fields: PRICE_FIELDS, render: 'always' })
    expect(extracted.texts[0]).toStartWith('browser_unavailable: ')
    // auto renders only a page that needs script; this one does not, so no Chromium is asked for.
    const auto = await call(client, 'scrape', { url: site.url('/guide'), render: 'auto' })
    expect(auto.isError).toBe(false)
    expect(json(auto.texts[1]!)).toMatchObject({ rendered: false })
  })

  test('bad arguments are tool errors that name them', async () => {
    const client = await connect('acme')
    const cases: [Record<string, unknown>, string][] = [
      [{ url: 'ftp://example.com/' }, 'invalid arguments: url: must be an http or https URL'],
      [{ url: site.url('/'), formats: ['json'] }, 'invalid arguments: fields: is required with the json format'],
      [{ url: site.url('/'), formats: ['pdf'] }, 'invalid arguments: formats[0]:'],
      [{ url: site.url('/'), fields: PRICE_FIELDS }, 'invalid arguments: fields: goes with the json format'],
      [{ url: site.url('/'), formats: ['json'], fields: [{ name: 'x', selector: 'a[' }] }, 'invalid arguments: fields[0].selector:'],
      [{ url: site.url('/'), colour: 'red' }, 'invalid arguments:'],
      [{}, 'invalid arguments: url:'],
    ]
    for (const [args, message] of cases) {
      const r = await call(client, 'scrape', args)
      expect(r.isError).toBe(true)
      expect(r.texts[0]).toStartWith(message)
    }
  })

  test('a target that fails is a tool error with its code', async () => {
    const client = await connect('acme')
    const missing = await call(client, 'scrape', { url: site.url('/missing') })
    expect(missing).toEqual({ isError: true, texts: [`http_status: ${site.url('/missing')} answered HTTP 404`] })
  })

  test('the address guard holds where private networks are not allowed', async () => {
    const guarded = testApi({ TRAWL_SCRAPE_RENDER: 'never' })
    try {
      const client = await connect('acme', guarded.app)
      const before = site.hits.get('/') ?? 0
      const r = await call(client, 'scrape', { url: site.url('/') })
      expect(r.isError).toBe(true)
      expect(r.texts[0]).toStartWith('blocked_address: 127.0.0.1')
      expect(site.hits.get('/') ?? 0).toBe(before)
    } finally {
      guarded.close()
    }
  })
})

describe('extract', () => {
  test('fields given inline', async () => {
    const client = await connect('acme')
    const r = await call(client, 'extract', { url: site.url('/price'), fields: PRICE_FIELDS })
    expect(r.isError).toBe(false)
    expect(json(r.texts[0]!)).toEqual({ data: PRICE_DATA, errors: [] })
  })

  test("a saved data map, with an item selector; another tenant's map is not found", async () => {
    const host = await api.put('/v1/hosts', { hosts: ['127.0.0.1'] })
    expect(host.status).toBe(200)
    const hash = host.body.data[0].hash
    const map = await api.post(`/v1/hosts/${hash}/data_maps`, { schema_id: crypto.randomUUID(), map: { item_selector: 'li.size', fields: [{ name: 'size', selector: ':scope' }] } })
    expect(map.status).toBe(201)
    const client = await connect('acme')
    const r = await call(client, 'extract', { url: site.url('/price'), data_map_id: map.body.id })
    expect(r.isError).toBe(false)
    expect(json(r.texts[0]!)).toEqual({ data: [{ size: 'small' }, { size: 'large' }], errors: [] })

    const other = await call(await connect('globex'), 'extract', { url: site.url('/price'), data_map_id: map.body.id })
    expect(other).toEqual({ isError: true, texts: ['not_found: data map not found'] })
  })

  test('relative url values resolve against the page, inline and from a data map', async () => {
    const fields = [{ name: 'guide', selector: 'nav a[href="/guide"]', attr: 'href', type: 'url' }]
    const client = await connect('acme')
    expect(json((await call(client, 'extract', { url: site.url('/price'), fields })).texts[0]!)).toEqual({ data: { guide: site.url('/guide') }, errors: [] })
    const hash = (await api.put('/v1/hosts', { hosts: ['127.0.0.1'] })).body.data[0].hash
    const map = await api.post(`/v1/hosts/${hash}/data_maps`, { schema_id: crypto.randomUUID(), map: { fields } })
    expect(json((await call(client, 'extract', { url: site.url('/price'), data_map_id: map.body.id })).texts[0]!)).toEqual({ data: { guide: site.url('/guide') }, errors: [] })
  })

  test('fields or a data map, not both and not neither', async () => {
    const client = await connect('acme')
    for (const args of [{ url: site.url('/price') }, { url: site.url('/price'), fields: PRICE_FIELDS, data_map_id: crypto.randomUUID() }]) {
      const r = await call(client, 'extract', args)
      expect(r).toEqual({ isError: true, texts: ['invalid arguments: fields: give either fields or data_map_id'] })
    }
  })
})

describe('crawl_start and crawl_status', () => {
  test('a crawl started by the tool runs to the end; its status is the run the API shows', async () => {
    const client = await connect('acme')
    const started = await call(client, 'crawl_start', { url: site.url('/'), max_urls: 10, max_depth: 2 })
    expect(started.isError).toBe(false)
    const { run_id, job_id, status } = json(started.texts[0]!)
    expect(status).toBe('pending')
    const job = await api.get(`/v1/jobs/${job_id}`)
    expect(job.body.config).toEqual({ seeds: [site.url('/')], scope: {}, limits: { max_urls: 10, max_depth: 2 } })

    let shown: any
    for (let i = 0; i < 200; i++) {
      shown = json((await call(client, 'crawl_status', { run_id })).texts[0]!)
      if (shown.status === 'finished') break
      await Bun.sleep(50)
    }
    expect(shown.status).toBe('finished')
    const run = (await api.get(`/v1/runs/${run_id}`)).body
    expect(shown).toMatchObject({ run_id, job_id, status: 'finished', stop_reason: run.stop_reason, stats: run.stats, started_at: run.started_at, finished_at: run.finished_at })
    expect(shown.stats.visited).toBe(3)
    crawled = run_id
    if ('outcome' in run) expect(shown.outcome).toEqual(run.outcome)
    if ('error_counts' in run) expect(shown.error_counts).toEqual(run.error_counts)
    const visits = (await api.get(`/v1/runs/${run_id}/links?per_page=100`)).body.data.map((v: { url: string }) => v.url).sort()
    expect(visits).toEqual(['/', '/guide', '/price'].map((p) => site.url(p)).sort())

    // Tenant isolation: another tenant cannot see the run.
    const other = await call(await connect('globex'), 'crawl_status', { run_id })
    expect(other).toEqual({ isError: true, texts: ['not_found: run not found'] })
  })

  test('include, exclude and sitemaps reach the job; a bad regex creates nothing', async () => {
    const client = await connect('acme')
    const started = await call(client, 'crawl_start', { url: site.url('/'), max_urls: 1, include: ['/guide'], exclude: ['/price'], sitemaps: true })
    const { job_id } = json(started.texts[0]!)
    expect((await api.get(`/v1/jobs/${job_id}`)).body.config).toEqual({ seeds: [site.url('/')], sitemaps: true, scope: { include: ['/guide'], exclude: ['/price'] }, limits: { max_urls: 1 } })

    const before = snapshot(api)
    for (const [args, message] of [
      [{ url: site.url('/'), include: ['('] }, 'invalid arguments: include[0]: is not a valid RE2 regular expression'],
      [{ url: 'not a url' }, 'invalid arguments: url: must be an absolute http(s) URL'],
      [{ url: site.url('/'), max_urls: 0 }, 'invalid arguments: max_urls:'],
    ] as const) {
      const r = await call(client, 'crawl_start', args)
      expect(r.isError).toBe(true)
      expect(r.texts[0]).toStartWith(message)
    }
    expect(snapshot(api)).toEqual(before)
  })

  test('an unknown or malformed run id', async () => {
    const client = await connect('acme')
    expect(await call(client, 'crawl_status', { run_id: crypto.randomUUID() })).toEqual({ isError: true, texts: ['not_found: run not found'] })
    expect(await call(client, 'crawl_status', { run_id: 'r1' })).toEqual({ isError: true, texts: ['invalid arguments: run_id: must be a uuid'] })
  })
})

describe('crawl_export', () => {
  const visitsOf = async (runId: string) => (await api.get(`/v1/runs/${runId}/links?per_page=100`)).body.data as { url: string; status: number; depth: number }[]

  test("llms: the run's pages as one markdown document, a section per visit in visit order, main content only", async () => {
    const client = await connect('acme')
    const r = await call(client, 'crawl_export', { run_id: crawled })
    expect(r.isError).toBe(false)
    const [doc, slice] = r.texts as [string, string]
    expect(json(slice)).toEqual({ run_id: crawled, status: 'finished', format: 'llms', offset: 0, pages: 3, next_offset: null })
    expect(doc).toStartWith(`# 127.0.0.1:${new URL(site.origin).port}\n`)
    const visits = await visitsOf(crawled)
    const sources = [...doc.matchAll(/^Source: (.+)$/gm)].map((m) => m[1])
    expect(sources).toEqual(visits.map((v) => v.url))
    const sections = doc.split('\n---\n').slice(1)
    expect(sections).toHaveLength(3)
    visits.forEach((v, i) => {
      const p = PAGES[new URL(v.url).pathname]!
      expect(sections[i]).toContain(`# ${p.title}`)
      expect(sections[i]).toContain(p.words)
      expect(sections[i]).not.toContain('Harbour navigation menu')
      expect(sections[i]).not.toContain('Copyright footer')
    })
    const whole = (await call(client, 'crawl_export', { run_id: crawled, main_content: false })).texts[0]!
    expect(whole.match(/Harbour navigation menu/g)).toHaveLength(3)
  })

  test('jsonl: one object per visit, row by row as the run recorded it', async () => {
    const client = await connect('acme')
    const r = await call(client, 'crawl_export', { run_id: crawled, format: 'jsonl' })
    const rows = r.texts[0]!.trimEnd().split('\n').map(json)
    const visits = await visitsOf(crawled)
    expect(rows.map((x) => [x.url, x.status, x.depth])).toEqual(visits.map((v) => [v.url, v.status, v.depth]))
    for (const row of rows) {
      const p = PAGES[new URL(row.url).pathname]!
      expect(row).toMatchObject({ final_url: row.url, content_type: 'text/html; charset=utf-8', title: p.title, description: `${p.title} of Trawlville`, language: 'en', error: null })
      expect(row.markdown).toContain(p.words)
      expect(row.artifact_ids.length).toBeGreaterThan(0)
    }
    expect(json(r.texts[1]!)).toMatchObject({ format: 'jsonl', pages: 3, next_offset: null })
  })

  test('max_pages and offset page through the run; the slices add up to the whole', async () => {
    const client = await connect('acme')
    const whole = (await call(client, 'crawl_export', { run_id: crawled, format: 'jsonl' })).texts[0]!
    let offset: number | null = 0
    const slices: string[] = []
    const offsets: number[] = []
    while (offset !== null && offsets.length < 10) {
      offsets.push(offset)
      const r = await call(client, 'crawl_export', { run_id: crawled, format: 'jsonl', max_pages: 1, offset })
      slices.push(r.texts[0]!)
      const slice = json(r.texts[1]!)
      expect(slice.pages).toBe(1)
      offset = slice.next_offset
    }
    expect(offsets).toEqual([0, 1, 2])
    expect(slices.join('')).toBe(whole)
    const past = await call(client, 'crawl_export', { run_id: crawled, offset: 3 })
    expect(past.texts[0]).toBe('(no pages from offset 3)')
    expect(json(past.texts[1]!)).toMatchObject({ pages: 0, next_offset: null })
  })

  test('max_chars stops before the page that would not fit, and cuts a page longer than all of it', async () => {
    const client = await connect('acme')
    const sizes = (await call(client, 'crawl_export', { run_id: crawled, format: 'jsonl' })).texts[0]!.trimEnd()
      .split('\n')
      .map((l) => l.length + 1)
    // Room for the first two lines and not the third (max_chars is at least 1000; each line is longer than 500).
    const fit = sizes[0]! + sizes[1]! + 1
    expect(fit).toBeGreaterThanOrEqual(1000)
    const two = await call(client, 'crawl_export', { run_id: crawled, format: 'jsonl', max_chars: fit })
    expect(json(two.texts[1]!)).toMatchObject({ pages: 2, next_offset: 2 })
    expect(two.texts[0]!.length).toBe(fit - 1)

    const started = json((await call(client, 'crawl_start', { url: site.url('/long'), max_depth: 0 })).texts[0]!)
    for (let i = 0; i < 200 && json((await call(client, 'crawl_status', { run_id: started.run_id })).texts[0]!).status !== 'finished'; i++) await Bun.sleep(50)
    const full = (await call(client, 'crawl_export', { run_id: started.run_id })).texts[0]!
    expect(full.length).toBeGreaterThan(2000)
    const cut = await call(client, 'crawl_export', { run_id: started.run_id, max_chars: 1000 })
    expect(json(cut.texts[1]!)).toMatchObject({ pages: 1, next_offset: null, cut_short: 1 })
    expect(cut.texts[0]!.length).toBeLessThanOrEqual(1000)
    expect(cut.texts[0]).toContain('High water at 00:15 on day 1.')
    expect(cut.texts[0]).toMatch(/\[cut short: \d+ more characters; read this page with scrape, or ask for a larger max_chars\]/)
  })

  test("an unknown run, and another tenant's run, are not found", async () => {
    expect(await call(await connect('acme'), 'crawl_export', { run_id: crypto.randomUUID() })).toEqual({ isError: true, texts: ['not_found: run not found'] })
    expect(await call(await connect('globex'), 'crawl_export', { run_id: crawled })).toEqual({ isError: true, texts: ['not_found: run not found'] })
    const bad = await call(await connect('acme'), 'crawl_export', { run_id: crawled, format: 'csv', max_chars: 10 })
    expect(bad.isError).toBe(true)
    expect(bad.texts[0]).toStartWith('invalid arguments: ')
    expect(bad.texts[0]).toContain('format')
    expect(bad.texts[0]).toContain('max_chars')
  })
})

describe('the HTTP route', () => {
  const post = (headers: Record<string, string>, body: string): Promise<Response> =>
    app.handle(new Request('http://trawl.test/mcp', { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers }, body }))
  const bodyOf = (r: Response): Promise<any> => r.json()
  const list = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' })

  test('X-Tenant-Id is required and checked, in the usual error shape', async () => {
    const missing = await post({}, list)
    expect(missing.status).toBe(400)
    expect(await bodyOf(missing)).toEqual({ error: 'tenant_required', message: 'the X-Tenant-Id header is required' })
    const bad = await post({ 'x-tenant-id': 'a b' }, list)
    expect(bad.status).toBe(400)
    expect((await bodyOf(bad)).error).toBe('invalid_tenant')
  })

  test('a stateless answer as JSON, with no session id', async () => {
    const r = await post({ 'x-tenant-id': 'acme', 'mcp-protocol-version': '2025-06-18' }, list)
    expect(r.status).toBe(200)
    expect(r.headers.get('content-type')).toStartWith('application/json')
    expect(r.headers.get('mcp-session-id')).toBeNull()
    const body = await bodyOf(r)
    expect(body.id).toBe(1)
    expect(body.result.tools).toHaveLength(5)
  })

  test('an unknown tool is a JSON-RPC error', async () => {
    const r = await post({ 'x-tenant-id': 'acme', 'mcp-protocol-version': '2025-06-18' }, JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'nope', arguments: {} } }))
    const body = await bodyOf(r)
    expect(body.error.code).toBe(-32602)
    expect(body.error.message).toContain('no tool named "nope"')
  })

  test('GET and DELETE are 405 naming POST; a body that is not JSON is a 422', async () => {
    for (const method of ['GET', 'DELETE']) {
      const r = await app.handle(new Request('http://trawl.test/mcp', { method, headers: { 'x-tenant-id': 'acme', accept: 'text/event-stream' } }))
      expect(r.status).toBe(405)
      expect(r.headers.get('allow')).toBe('POST')
      expect((await bodyOf(r)).error).toBe('method_not_allowed')
    }
    const r = await post({ 'x-tenant-id': 'acme' }, '{"jsonrpc":')
    expect(r.status).toBe(422)
    expect((await bodyOf(r)).fields[0].field).toBe('body')
    const empty = await post({ 'x-tenant-id': 'acme' }, '')
    expect(empty.status).toBe(422)
    expect(await bodyOf(empty)).toEqual({ error: 'validation', fields: [{ field: 'body', errors: ['is required: a JSON-RPC message'] }] })
  })
})
