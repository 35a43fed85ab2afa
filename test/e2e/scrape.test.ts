// End-to-end: the scrape API in the compiled binary over real HTTP, and `trawl scrape` (design.md
// §1, §7). Free mode here; test/e2e/x402.test.ts pays with the real x402 clients. Only 127.0.0.1
// fixture servers started here are contacted.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { BINARY, cleanup, ensureBinary, runBinary, startTrawl, tempDir, trawlEnv, type Trawl } from '../helpers/binary'

// 3 MB: far more than a pipe holds, so the command must wait for its reader before exiting.
const LARGE = new Uint8Array(3 * 1024 * 1024).map((_, i) => (i * 31) & 255)
let site: ReturnType<typeof Bun.serve>
let origin: string
let trawl: Trawl

beforeAll(async () => {
  await ensureBinary()
  site = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    fetch(req) {
      const url = new URL(req.url)
      if (url.pathname === '/page')
        return new Response(`<html><head><title>Page</title></head><body><h1>Hello</h1><p class="price">12.50</p><p>${url.search.replace(/&/g, '&amp;')}</p></body></html>`, {
          headers: { 'content-type': 'text/html' },
        })
      if (url.pathname === '/bytes') return new Response(new Uint8Array([0, 1, 2, 254, 255]), { headers: { 'content-type': 'application/octet-stream' } })
      if (url.pathname === '/large') return new Response(LARGE, { headers: { 'content-type': 'application/pdf' } })
      return new Response('gone', { status: 410 })
    },
  })
  origin = `http://127.0.0.1:${site.port}`
  trawl = await startTrawl({ env: { TRAWL_ALLOW_PRIVATE_NETWORKS: 'true', TRAWL_SCRAPE_RENDER: 'never', TRAWL_SCRAPE_RATE: '2/s' } })
}, 180_000)
afterAll(async () => {
  await cleanup()
  site.stop(true)
})

describe('the scrape API in the binary', () => {
  test('POST and GET answer on the scrape port, not the management port', async () => {
    const r = await trawl.scrape.post(
      '/v1/scrape',
      { url: `${origin}/page?x=1`, formats: [{ kind: 'markdown' }, { kind: 'json', fields: [{ name: 'price', selector: '.price', type: 'number' }] }] },
      { tenant: null },
    )
    expect(r.status).toBe(200)
    expect(r.body).toEqual({
      url: `${origin}/page?x=1`,
      rendered: false,
      status: 200,
      metadata: { title: 'Page', description: null, canonical: null, language: null, open_graph: {}, json_ld: [] },
      links: [],
      results: [
        { kind: 'markdown', content: '# Hello\n\n12.50\n\n?x=1' },
        { kind: 'json', data: { price: 12.5 }, errors: [] },
      ],
    })
    const get = await fetch(`${trawl.scrapeUrl}/v1/scrape/${origin}/page?a=1&b=2`)
    expect(get.status).toBe(200)
    expect(get.headers.get('content-type')).toBe('text/markdown; charset=utf-8')
    expect(await get.text()).toBe('# Hello\n\n12.50\n\n?a=1&b=2')
    expect((await trawl.api.post('/v1/scrape', { url: `${origin}/page` })).status).toBe(404)
  })

  test('a burst from one address gets 429 with Retry-After; the limit is TRAWL_SCRAPE_RATE', async () => {
    await Bun.sleep(1100)
    const statuses = await Promise.all(
      Array.from({ length: 8 }, () => fetch(`${trawl.scrapeUrl}/v1/scrape/${origin}/page`).then(async (r) => [r.status, r.headers.get('retry-after'), await r.text()] as const)),
    )
    const limited = statuses.filter(([s]) => s === 429)
    expect(statuses.filter(([s]) => s === 200).length).toBeLessThanOrEqual(5)
    expect(limited.length).toBeGreaterThanOrEqual(3)
    for (const [, retry, body] of limited) {
      expect(Number(retry)).toBeGreaterThanOrEqual(1)
      expect(JSON.parse(body).error).toBe('rate_limited')
    }
  })

  test('a Host header Bun cannot make a URL of gets our JSON, never a page of stack frames (both ports)', async () => {
    for (const port of [trawl.scrapePort, trawl.port]) {
      const raw = await rawRequest(port, `GET /v1/scrape/${origin}/page HTTP/1.1\r\nHost: a/b\r\nConnection: close\r\n\r\n`)
      expect(raw).toMatch(/^HTTP\/1\.1 [45]\d\d /)
      expect(raw).not.toContain('<html')
      expect(raw).not.toMatch(/\bat .*\.ts:\d+/)
      expect(raw.slice(raw.indexOf('\r\n\r\n') + 4)).toMatch(/^\{"error":"[a-z_]+","message":/)
    }
  })

  test('a route asked with a Host header that names no host is a 400 invalid_host, and does nothing', async () => {
    const requests = [
      [trawl.scrapePort, `GET /v1/scrape/${origin}/page HTTP/1.1\r\nHost: a/b\r\nConnection: close\r\n\r\n`],
      [trawl.port, `POST /v1/jobs HTTP/1.1\r\nHost: bad host\r\nX-Tenant-Id: t1\r\nContent-Type: application/json\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}`],
    ] as const
    for (const [port, text] of requests) {
      const raw = await rawRequest(port, text)
      expect(raw).toStartWith('HTTP/1.1 400 ')
      expect(JSON.parse(raw.slice(raw.indexOf('\r\n\r\n') + 4))).toEqual({ error: 'invalid_host', message: 'the Host header does not name a host' })
    }
    const jobs = await trawl.api.get('/v1/jobs', { tenant: 't1' })
    expect(jobs.body.data).toEqual([])
  })

  test('the address guard holds by default: a loopback target is a 500 blocked_address', async () => {
    const guarded = await startTrawl({ env: { TRAWL_SCRAPE_RENDER: 'never' } })
    const r = await guarded.scrape.post('/v1/scrape', { url: `${origin}/page` }, { tenant: null })
    expect(r.status).toBe(500)
    expect(r.body.error).toBe('blocked_address')
    await guarded.stop()
  })
})

/** One raw HTTP exchange, for requests fetch() will not send. */
async function rawRequest(port: number, text: string): Promise<string> {
  const { connect } = await import('node:net')
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.write(text))
    let out = ''
    socket.on('data', (d) => (out += d.toString('latin1')))
    socket.on('end', () => resolve(out))
    socket.on('error', reject)
    setTimeout(() => (socket.destroy(), resolve(out)), 5000)
  })
}

describe('trawl scrape', () => {
  const env = { TRAWL_SCRAPE_RENDER: 'never' }
  test('markdown by default, html, json with --fields; bytes of binary content', async () => {
    const md = await runBinary(['scrape', `${origin}/page`], env)
    expect([md.code, md.stdout]).toEqual([0, '# Hello\n\n12.50\n'])
    const html = await runBinary(['scrape', `${origin}/page`, '--format', 'html'], env)
    expect(html.stdout).toStartWith('<html><head><title>Page</title>')
    const dir = tempDir()
    const fields = join(dir, 'fields.json')
    writeFileSync(
      fields,
      JSON.stringify([
        { name: 'title', selector: 'h1' },
        { name: 'price', selector: '.price', type: 'number' },
      ]),
    )
    const json = await runBinary(['scrape', `${origin}/page`, '--format', 'json', '--fields', fields], env)
    expect([json.code, JSON.parse(json.stdout)]).toEqual([0, { title: 'Hello', price: 12.5 }])
    // Bytes, not text: read the child's stdout as it is.
    const child = Bun.spawn([BINARY, 'scrape', `${origin}/bytes`], { cwd: dir, env: await trawlEnv(join(dir, 'trawl-data'), env), stdout: 'pipe', stderr: 'pipe' })
    const raw = new Uint8Array(await new Response(child.stdout).arrayBuffer())
    expect([await child.exited, [...raw]]).toEqual([0, [0, 1, 2, 254, 255]])
    // A reader that starts late still gets every byte of a large body.
    const slow = Bun.spawn([BINARY, 'scrape', `${origin}/large`], { cwd: dir, env: await trawlEnv(join(dir, 'trawl-data'), env), stdout: 'pipe', stderr: 'pipe' })
    await Bun.sleep(500)
    const all = new Uint8Array(await new Response(slow.stdout).arrayBuffer())
    expect(await slow.exited).toBe(0)
    expect(all.length).toBe(LARGE.length)
    expect(Buffer.compare(all, LARGE)).toBe(0)
  })

  test('a failing target exits 1 with its reason; bad arguments exit 2 with one line', async () => {
    const gone = await runBinary(['scrape', `${origin}/missing`], env)
    expect([gone.code, gone.stdout, gone.stderr]).toEqual([1, '', `trawl scrape: http_status: ${origin}/missing answered HTTP 410\n`])
    const cases: [string[], string][] = [
      [[], 'trawl: scrape takes one URL: trawl scrape URL [--format markdown|html|json] [--fields FILE] [--render auto|never|always] [--main-content true|false]\n'],
      [['notaurl'], 'trawl: scrape: the URL must be an absolute URL with its scheme, got "notaurl"\n'],
      [[`${origin}/page`, '--format', 'pdf'], 'trawl: --format: must be one of markdown, html, json, got "pdf"\n'],
      [[`${origin}/page`, '--format', 'json'], 'trawl: --format json needs --fields FILE (a JSON array of fields)\n'],
      [[`${origin}/page`, '--fields', '/nonexistent.json'], 'trawl: --fields goes with --format json\n'],
      [[`${origin}/page`, '--timeout', '0'], 'trawl: --timeout: must be seconds from 1 to 120, got "0"\n'],
    ]
    for (const [args, stderr] of cases) {
      const r = await runBinary(['scrape', ...args], env)
      expect([args, r.code, r.stderr]).toEqual([args, 2, stderr])
    }
  })
})
