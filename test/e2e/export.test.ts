/**
 * Export through the compiled binary: `trawl crawl` a local site, then `trawl export` (JSONL to
 * stdout, llms to a file, --out-dir), its exit statuses, and GET /v1/runs/{id}/export of
 * `trawl serve` on the same data dir. And one page's default result is the same string from a
 * crawl's export, POST /v1/parse with no pipelines and POST /v1/scrape.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { cleanup, ensureBinary, runBinary, startTrawl, tempDir, type Trawl } from '../helpers/binary'
import { inspectStore, onPostgres, storeWhere } from '../helpers/binary-engine'
import { crawlSite, type CrawlSite } from '../helpers/crawl-site'

const CHROME = `<header><a href="/">Site</a> banner text</header><nav><a href="/">Home</a> <a href="/guide">Guide</a> <a href="/ref">Reference</a></nav>`
const FOOTER = `<footer>Footer text <a href="/about">About</a></footer><div class="cookie-banner">We use cookies <button>OK</button></div>`
const body = (h: string, text: string, more = '') =>
  `${CHROME}<main><article><h1>${h}</h1><p>${text}</p>${more}<pre><code>SELECT 1;</code></pre><table><tr><th>a</th><th>b</th></tr><tr><td>1</td><td>2</td></tr></table></article></main>${FOOTER}`

let site: CrawlSite
let dataDir: string
let runId: string
let records: any[]

beforeAll(async () => {
  await ensureBinary()
  site = crawlSite({
    pages: {
      '/': { title: 'Home', html: body('Welcome', 'The home page of the fixture site, with links.', '<a href="/guide">the guide</a> <a href="/missing">a missing page</a>') },
      '/guide': { title: 'Guide', html: body('The guide', 'How to use the fixture site, step by step, in prose long enough to count.') },
      '/ref': { title: 'Reference', html: body('Reference', 'Every option of the fixture site, described.') },
      '/about': { title: 'About', html: body('About', 'Who made the fixture site.') },
    },
  })
  dataDir = tempDir()
  const crawled = await runBinary(['crawl', site.url('/'), '--data-dir', dataDir])
  expect(crawled.code).toBe(0)
  runId = /\(run ([0-9a-f-]{36}),/.exec(crawled.stdout)![1]!
}, 60_000)
afterAll(async () => {
  await site.close()
  await cleanup()
})

/** The run's visits as the database holds them, in visit order. */
const visits = () =>
  inspectStore(dataDir, (db) =>
    db.query<{ url: string; status: number | null; depth: number; visited_at: number }>(
      'SELECT l.url, v.status, v.depth, v.visited_at FROM visits v JOIN runs r ON r.seq = v.run_seq JOIN links l ON l.tenant = r.tenant AND l.hash = v.hash WHERE r.id = ? ORDER BY v.seq',
      [runId],
    ),
  )

describe('trawl export', () => {
  test('JSONL to stdout: one line per visit, in visit order', async () => {
    const r = await runBinary(['export', runId, '--data-dir', dataDir])
    expect(r.stderr).toBe('')
    expect(r.code).toBe(0)
    expect(r.stdout.endsWith('\n')).toBe(true)
    records = r.stdout
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l))
    const rows = await visits()
    expect(rows.length).toBe(5)
    expect(records.map((x) => [x.url, x.status, x.depth, x.visited_at])).toEqual(rows.map((v) => [v.url, v.status, v.depth, new Date(v.visited_at).toISOString()]))
    const guide = records.find((x) => x.url === site.url('/guide'))
    expect(guide.title).toBe('Guide')
    expect(guide.markdown).toContain('How to use the fixture site')
    expect(guide.markdown).not.toContain('banner text')
    expect(records.find((x) => x.url === site.url('/missing')).error).toEqual({ reason: 'http_status', detail: 'the server answered 404' })
  })

  test('--format llms -o FILE, and --out-dir', async () => {
    const dir = tempDir()
    const file = join(dir, 'site.txt')
    const r = await runBinary(['export', runId, '--data-dir', dataDir, '--format', 'llms', '-o', file])
    expect(r.code).toBe(0)
    expect(r.stdout).toBe(`exported 5 pages to ${file}\n`)
    const text = readFileSync(file, 'utf8')
    expect(text.startsWith(`# 127.0.0.1:${site.port}\n\n> The pages of trawl run ${runId} crawled from ${site.url('/')}, as markdown, in visit order.\n\n`)).toBe(true)
    expect(text.split('\n---\n\n').length - 1).toBe(5) // the 404 page has markdown too
    expect(text).toContain(`# Guide\n\nSource: ${site.url('/guide')}\n\n`)

    const out = join(dir, 'pages')
    const d = await runBinary(['export', runId, '--data-dir', dataDir, '--out-dir', out])
    expect(d.code).toBe(0)
    expect(d.stdout).toBe(`exported 5 pages: 5 markdown files and ${join(out, 'index.md')}\n`)
    const host = `127.0.0.1_${site.port}`
    for (const f of ['index.md', 'guide.md', 'ref.md', 'about.md', 'missing.md']) expect(existsSync(join(out, host, f)), f).toBe(true)
    const guide = readFileSync(join(out, host, 'guide.md'), 'utf8')
    expect(guide).toBe(`---\nurl: "${site.url('/guide')}"\ntitle: "Guide"\n---\n\n${records.find((x) => x.url === site.url('/guide')).markdown}\n`)
    expect(readFileSync(join(out, 'index.md'), 'utf8')).toContain(`- [Guide](${host}/guide.md): ${site.url('/guide')}\n`)
  })

  test('exit statuses: 1 for an unknown run or data dir, 2 for usage', async () => {
    const unknown = crypto.randomUUID()
    const r = await runBinary(['export', unknown, '--data-dir', dataDir])
    expect([r.code, r.stdout, r.stderr]).toEqual([1, '', `trawl: run ${unknown} not found in ${await storeWhere(dataDir)} (tenant local)\n`])
    const other = await runBinary(['export', runId, '--data-dir', dataDir, '--tenant', 'someone'])
    expect(other.code).toBe(1)
    const none = await runBinary(['export', runId, '--data-dir', join(dataDir, 'nope')])
    expect(none.code).toBe(1)
    // On PostgreSQL the store is the database, not the data dir: another data dir is another (empty) database.
    expect(none.stderr).toBe(
      onPostgres()
        ? `trawl: run ${runId} not found in ${await storeWhere(join(dataDir, 'nope'))} (tenant local)\n`
        : `trawl: no data dir at ${join(dataDir, 'nope')} (trawl crawl makes one; --data-dir names another)\n`,
    )
    expect(existsSync(join(dataDir, 'nope'))).toBe(false)
    for (const args of [
      ['export'],
      ['export', 'not-a-run'],
      ['export', runId, '--format', 'csv'],
      ['export', runId, '--out-dir', 'x', '-o', 'y'],
      ['export', runId, '--main-content', 'maybe'],
      ['export', runId, '--formt', 'llms'],
    ]) {
      const bad = await runBinary([...args, '--data-dir', dataDir])
      expect(bad.code, args.join(' ')).toBe(2)
      expect(bad.stdout).toBe('')
      expect(bad.stderr.trim().split('\n').length, bad.stderr).toBe(1)
    }
  })
})

describe('trawl crawl -o / --out-dir', () => {
  test('-o FILE writes what trawl export writes for the run, after the summary', async () => {
    const dir = tempDir()
    const file = join(dir, 'pages.jsonl')
    const r = await runBinary(['crawl', site.url('/'), '--data-dir', join(dir, 'data'), '-o', file])
    expect(r.code).toBe(0)
    const run = /\(run ([0-9a-f-]{36}),/.exec(r.stdout)![1]!
    expect(r.stdout).toMatch(/outcome: complete \(nothing was left to visit\)\nerrors by reason:\n  http_404  1\nexported 5 pages to .*pages\.jsonl\n$/)
    const exported = await runBinary(['export', run, '--data-dir', join(dir, 'data')])
    expect(readFileSync(file, 'utf8')).toBe(exported.stdout)
    const lines = exported.stdout
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l))
    expect(lines.map((x) => x.url).sort()).toEqual(['/', '/about', '/guide', '/missing', '/ref'].map((p) => site.url(p)).sort())
  })

  test('--out-dir DIR writes one markdown file per page and the index', async () => {
    const dir = tempDir()
    const out = join(dir, 'md')
    const r = await runBinary(['crawl', site.url('/'), '--data-dir', join(dir, 'data'), '--out-dir', out])
    expect(r.code).toBe(0)
    expect(r.stdout).toContain(`exported 5 pages: 5 markdown files and ${join(out, 'index.md')}\n`)
    const guide = readFileSync(join(out, `127.0.0.1_${site.port}`, 'guide.md'), 'utf8')
    expect(guide).toStartWith(`---\nurl: "${site.url('/guide')}"\ntitle: "Guide"\n---\n\n# The guide\n\nHow to use the fixture site`)
    expect(guide).not.toContain('banner text')
    expect(guide.endsWith('\n')).toBe(true)
    const index = readFileSync(join(out, 'index.md'), 'utf8')
    expect(index).toContain(`(127.0.0.1_${site.port}/missing.md): ${site.url('/missing')} (http_status)\n`)
  })

  test('a bad -o/--out-dir combination is refused before anything is crawled', async () => {
    const dir = tempDir()
    const r = await runBinary(['crawl', site.url('/'), '--data-dir', join(dir, 'data'), '-o', join(dir, 'a'), '--out-dir', join(dir, 'b')])
    expect(r.code).toBe(2)
    expect(r.stderr).toBe('trawl: --out-dir writes a directory of markdown files: it takes neither -o nor --format\n')
    expect(existsSync(join(dir, 'data'))).toBe(false)
  })
})

describe('over HTTP, and the same default everywhere', () => {
  let trawl: Trawl
  beforeAll(async () => {
    trawl = await startTrawl({ dataDir, env: { TRAWL_ALLOW_PRIVATE_NETWORKS: 'true', TRAWL_SCRAPE_RENDER: 'never' } })
  })
  afterAll(async () => {
    await trawl?.stop()
  })

  test('GET /v1/runs/{id}/export answers what trawl export prints', async () => {
    const cli = await runBinary(['export', runId, '--data-dir', dataDir])
    const res = await fetch(`${trawl.managementUrl}/v1/runs/${runId}/export`, { headers: { 'x-tenant-id': 'local' } })
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toBe('application/x-ndjson')
    expect(await res.text()).toBe(cli.stdout)
    const llms = await fetch(`${trawl.managementUrl}/v1/runs/${runId}/export?format=llms&depth=1`, { headers: { 'x-tenant-id': 'local' } })
    expect(llms.headers.get('content-type')).toBe('text/markdown; charset=utf-8')
    expect((await llms.text()).split('\n---\n\n').length - 1).toBe(4)
    const missing = await fetch(`${trawl.managementUrl}/v1/runs/${runId}/export`, { headers: { 'x-tenant-id': 'acme' } })
    expect(missing.status).toBe(404)
    expect(await missing.json()).toEqual({ error: 'not_found', message: 'run not found' })
    const doc = (await (await fetch(`${trawl.managementUrl}/openapi.json`)).json()) as any
    const op = doc.paths['/v1/runs/{run_id}/export'].get
    expect(op.parameters.map((p: { name: string }) => p.name)).toEqual(expect.arrayContaining(['run_id', 'format', 'main_content', 'depth', 'urls', 'hosts']))
  })

  test("a page's default markdown is one string from the crawl export, /v1/parse and /v1/scrape", async () => {
    const url = site.url('/guide')
    const exported = records.find((x) => x.url === url).markdown as string
    const parsed = await trawl.api.post('/v1/parse', { url, content_type: 'text/html; charset=utf-8', body: Buffer.from(site.bodyOf('/guide')).toString('base64') }, { tenant: 'local' })
    expect(parsed.status).toBe(200)
    const scraped = await trawl.scrape.post('/v1/scrape', { url }, { tenant: null })
    expect(scraped.status).toBe(200)
    expect(scraped.body.results[0].kind).toBe('markdown')
    // Each default on its own first (a failure names the one that differs), then all three.
    expect(exported).toContain('How to use the fixture site')
    expect(exported).not.toContain('banner text')
    expect(scraped.body.results[0].content).toBe(exported)
    expect(parsed.body.pipelines[0].steps.find((s: { kind: string }) => s.kind === 'markdown').content).toBe(exported)
  })
})
