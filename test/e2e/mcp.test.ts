// End-to-end: the MCP tools in the compiled binary, through the SDK's own client, over both
// transports: `trawl mcp` on stdio, and POST /mcp on the management port of `trawl serve`. Only
// the 127.0.0.1 site started here is contacted.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { BINARY, cleanup, ensureBinary, startTrawl, tempDir, trawlEnv, type Trawl } from '../helpers/binary'
import { onPostgres, recordedAnything } from '../helpers/binary-engine'
import { mcpSite, PAGES, PRICE_DATA, PRICE_FIELDS, type McpSite } from '../mcp/site'

let site: McpSite
let trawl: Trawl
const clients: Client[] = []

beforeAll(async () => {
  await ensureBinary()
  site = mcpSite()
  trawl = await startTrawl({ env: { TRAWL_ALLOW_PRIVATE_NETWORKS: 'true', TRAWL_SCRAPE_RENDER: 'never' } })
}, 180_000)
afterAll(async () => {
  for (const c of clients) await c.close().catch(() => {})
  await cleanup()
  site.close()
})

type Text = { type: 'text'; text: string }
const json = (text: string) => JSON.parse(text)

async function call(client: Client, name: string, args: Record<string, unknown>) {
  const result = await client.callTool({ name, arguments: args })
  return { isError: result.isError === true, texts: (result.content as Text[]).map((c) => c.text) }
}

async function httpClient(base: string, tenant: string): Promise<Client> {
  const client = new Client({ name: 'trawl-e2e', version: '1.0.0' })
  await client.connect(new StreamableHTTPClientTransport(new URL(`${base}/mcp`), { requestInit: { headers: { 'X-Tenant-Id': tenant } } }))
  clients.push(client)
  return client
}

/** What an agent does: list the tools, scrape a page, crawl the site and read it back, extract, and get a tool error. */
async function agentSession(client: Client): Promise<string> {
  const { tools } = await client.listTools()
  expect(tools.map((t) => t.name)).toEqual(['scrape', 'crawl_start', 'crawl_status', 'crawl_export', 'extract'])

  const scraped = await call(client, 'scrape', { url: site.url('/guide') })
  expect(scraped.isError).toBe(false)
  expect(scraped.texts[0]).toContain('# Harbour guide')
  expect(scraped.texts[0]).toContain(PAGES['/guide']!.words)
  expect(scraped.texts[0]).not.toContain('Harbour navigation menu')
  expect(json(scraped.texts[1]!)).toMatchObject({ url: site.url('/guide'), status: 200 })

  const started = await call(client, 'crawl_start', { url: site.url('/'), max_urls: 10 })
  expect(started.isError).toBe(false)
  const { run_id } = json(started.texts[0]!)
  let status: any
  for (let i = 0; i < 300; i++) {
    status = json((await call(client, 'crawl_status', { run_id })).texts[0]!)
    if (status.status === 'finished') break
    await Bun.sleep(50)
  }
  expect(status).toMatchObject({ run_id, status: 'finished', stats: { visited: 3, failed: 0 } })

  const exported = await call(client, 'crawl_export', { run_id, format: 'jsonl' })
  expect(exported.isError).toBe(false)
  const rows = exported.texts[0]!.trimEnd().split('\n').map(json)
  expect(rows.map((r) => new URL(r.url).pathname).sort()).toEqual(['/', '/guide', '/price'])
  for (const row of rows) {
    const page = PAGES[new URL(row.url).pathname]!
    expect(row).toMatchObject({ status: 200, title: page.title, error: null })
    expect(row.markdown).toContain(page.words)
    expect(row.markdown).not.toContain('Copyright footer')
  }
  expect(json(exported.texts[1]!)).toEqual({ run_id, status: 'finished', format: 'jsonl', offset: 0, pages: 3, next_offset: null })
  const llms = await call(client, 'crawl_export', { run_id })
  expect(llms.texts[0]!.match(/^Source: /gm)).toHaveLength(3)

  const extracted = await call(client, 'extract', { url: site.url('/price'), fields: PRICE_FIELDS })
  expect(json(extracted.texts[0]!)).toEqual({ data: PRICE_DATA, errors: [] })

  const failed = await call(client, 'scrape', { url: site.url('/missing') })
  expect(failed).toEqual({ isError: true, texts: [`http_status: ${site.url('/missing')} answered HTTP 404`] })
  const invalid = await call(client, 'crawl_status', { run_id: 'r1' })
  expect(invalid).toEqual({ isError: true, texts: ['invalid arguments: run_id: must be a uuid'] })
  return run_id
}

describe('trawl mcp (stdio)', () => {
  test('an agent session; stdout carries nothing but JSON-RPC; closing stdin ends it and closes the data dir', async () => {
    const dataDir = tempDir()
    const transport = new StdioClientTransport({ command: BINARY, args: ['mcp', '--data-dir', dataDir], env: await trawlEnv(dataDir), cwd: dataDir, stderr: 'pipe' })
    let stderr = ''
    transport.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()))
    const client = new Client({ name: 'trawl-e2e', version: '1.0.0' })
    const protocolErrors: Error[] = []
    client.onerror = (err) => protocolErrors.push(err)
    await client.connect(transport)
    const pid = transport.pid!
    await agentSession(client)
    expect(protocolErrors).toEqual([])

    const t0 = performance.now()
    await client.close()
    // The SDK's client sends SIGTERM after 2 s of waiting; the server leaves on stdin's end, before that.
    expect(performance.now() - t0).toBeLessThan(1900)
    expect(() => process.kill(pid, 0)).toThrow()
    expect(await recordedAnything(dataDir)).toBe(true)
    // SQLite: the database was checkpointed and closed.
    if (!onPostgres()) expect(existsSync(join(dataDir, 'trawl.db-wal'))).toBe(false)
    expect(stderr).not.toContain('error')
  }, 60_000)

  test('a bad flag is refused before the protocol starts', async () => {
    const cwd = tempDir()
    const proc = Bun.spawn([BINARY, 'mcp', '--tenant', 'a b'], { cwd, env: await trawlEnv(join(cwd, 'trawl-data')), stdin: 'pipe', stdout: 'pipe', stderr: 'pipe' })
    const [out, err, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited])
    expect(code).toBe(2)
    expect(out).toBe('')
    expect(err).toContain('--tenant: must be 1..128 of A-Z a-z 0-9 . _ : -, got "a b"')
  })
})

describe('POST /mcp on trawl serve (streamable HTTP)', () => {
  test('an agent session as tenant acme; tenant globex sees none of its runs', async () => {
    const acme = await httpClient(trawl.managementUrl, 'acme')
    const runId = await agentSession(acme)
    const run = await trawl.api.get(`/v1/runs/${runId}`, { tenant: 'acme' })
    expect(run.status).toBe(200)
    expect(run.body.stats.visited).toBe(3)

    const globex = await httpClient(trawl.managementUrl, 'globex')
    expect(await call(globex, 'crawl_status', { run_id: runId })).toEqual({ isError: true, texts: ['not_found: run not found'] })
    expect(await call(globex, 'crawl_export', { run_id: runId })).toEqual({ isError: true, texts: ['not_found: run not found'] })
    expect((await trawl.api.get(`/v1/runs/${runId}`, { tenant: 'globex' })).status).toBe(404)
  }, 60_000)

  test('without X-Tenant-Id: 400 in the usual error shape', async () => {
    const r = await fetch(`${trawl.managementUrl}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    })
    expect(r.status).toBe(400)
    expect(await r.json()).toEqual({ error: 'tenant_required', message: 'the X-Tenant-Id header is required' })
  })

  test('the address guard applies to scrape and extract as it does to the scrape API', async () => {
    const guarded = await startTrawl({ env: { TRAWL_SCRAPE_RENDER: 'never' } })
    const client = await httpClient(guarded.managementUrl, 'acme')
    const before = site.hits.get('/price') ?? 0
    for (const [tool, args] of [
      ['scrape', { url: site.url('/price') }],
      ['extract', { url: site.url('/price'), fields: PRICE_FIELDS }],
    ] as const) {
      const r = await call(client, tool, args)
      expect(r.isError).toBe(true)
      expect(r.texts[0]).toStartWith('blocked_address: 127.0.0.1, a loopback address')
    }
    expect(site.hits.get('/price') ?? 0).toBe(before)
    const api = await guarded.scrape.post('/v1/scrape', { url: site.url('/price') }, { tenant: null })
    expect(api.status).toBe(500)
    expect(api.body.error).toBe('blocked_address')
  }, 60_000)
})
