/**
 * Export of a real crawled run (GET /v1/runs/{id}/export and exportPages): one record per visited
 * URL, checked row by row against the run's visits, crawl log and artifacts; the llms format;
 * filters; the artifact URL; streaming that does not render the whole run first.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { linkHash } from '../../src/core/url'
import { exportPages, type PageRecord } from '../../src/export'
import { ParsePool } from '../../src/parse/pool'
import { useCrawlEnv } from '../helpers/crawl-run'
import { crawlSite, type CrawlSite } from '../helpers/crawl-site'

const env = useCrawlEnv()
const SCHEMA = '8a1f7c2e-4b3d-4e5f-9a6b-7c8d9e0f1a2b'

/** A page with chrome around its article: what main content must drop and keep. */
const article = (n: number, links: string[]) => `
<header><a href="/">Site home</a> banner text</header>
<nav><a href="/">Home</a> | <a href="/a1">Prev</a> | <a href="/a2">Next</a></nav>
<main><article><h2>Article ${n}</h2><p class="lead">The body text of article number ${n}, long enough to be the content of the page and nothing else.</p>
<p>${links.map((l) => `<a href="${l}">more ${l}</a>`).join(' ')}</p></article></main>
<footer>Copyright footer text</footer>`

/** Refused connections: a port that was free a moment ago and that nothing listens on. */
function closedPort(): number {
  const s = Bun.listen({ hostname: '127.0.0.1', port: 0, socket: { data() {} } })
  const port = s.port
  s.stop(true)
  return port
}

async function exportText(runId: string, query = '', tenant = 'acme'): Promise<{ status: number; type: string | null; text: string }> {
  const res = await env.api.app.handle(new Request(`http://trawl.test/v1/runs/${runId}/export${query ? `?${query}` : ''}`, { headers: { 'x-tenant-id': tenant } }))
  return { status: res.status, type: res.headers.get('content-type'), text: await res.text() }
}
const lines = (text: string): PageRecord[] =>
  text
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l))

describe('export of a crawled run', () => {
  let site: CrawlSite
  let runId: string
  let mapId: string
  let refused: string
  beforeAll(async () => {
    site = crawlSite({
      pages: {
        '/': { title: 'Home', html: article(0, ['/a1', '/a2', '/old', '/missing', '/data.bin']) },
        '/a1': { title: 'First', html: article(1, ['/a2']) },
        '/a2': { title: 'Second', html: article(2, ['/a1']) },
        '/old': { redirect: '/new' },
        '/new': { title: 'Moved here', html: article(3, []) },
        '/data.bin': { body: new Uint8Array([0, 1, 2, 3]), contentType: 'application/octet-stream' },
      },
    })
    refused = `http://127.0.0.1:${closedPort()}/`
    const host = (await env.api.put('/v1/hosts', { hosts: ['127.0.0.1'] })).body.data[0].hash
    const map = await env.api.post(`/v1/hosts/${host}/data_maps`, { schema_id: SCHEMA, map: { fields: [{ name: 'lead', selector: 'p.lead' }] } })
    expect(map.status).toBe(201)
    mapId = map.body.id
    const pipelines = [{ identifier: 'lead', steps: [{ kind: 'data_map', id: mapId }] }]
    const run = await env.crawl({ seeds: [site.url('/'), refused], pipelines, limits: { max_depth: 3 } })
    runId = run.id
  })
  afterAll(() => site.close())

  test('one record per visit, in visit order, each field from the run', async () => {
    const r = await exportText(runId)
    expect(r.status).toBe(200)
    expect(r.type).toBe('application/x-ndjson')
    const records = lines(r.text)
    const visits = await env.visits(runId)
    const logs = await env.logs(runId)
    const artifacts = await env.artifacts(runId)
    expect(records.map((x) => x.url)).toEqual(visits.map((v) => v.url))
    expect(new Set(records.map((x) => x.url)).size).toBe(records.length)
    for (const [i, rec] of records.entries()) {
      const v = visits[i]
      expect(Object.keys(rec).sort()).toEqual(
        ['artifact_ids', 'content_type', 'data', 'depth', 'description', 'error', 'final_url', 'language', 'markdown', 'outlinks', 'status', 'title', 'url', 'visited_at'].sort(),
      )
      expect(rec.status).toBe(v.status)
      expect(rec.depth).toBe(v.depth)
      expect(rec.visited_at).toBe(v.visited_at)
      // Every artifact of the URL in this run, oldest first (the list is newest first).
      expect(rec.artifact_ids).toEqual(
        artifacts
          .filter((a) => a.url_hash === v.hash)
          .map((a) => a.id)
          .reverse(),
      )
      const fetchLog = logs.find((l) => l.url_hash === v.hash && l.step === 'fetch')
      if (v.status === null || v.status >= 400) expect(rec.error).toEqual({ reason: fetchLog.error_reason, detail: fetchLog.error_detail })
      else expect(rec.error).toBeNull()
    }
    const byUrl = new Map(records.map((x) => [x.url, x]))

    const home = byUrl.get(site.url('/'))!
    expect(home).toMatchObject({ final_url: site.url('/'), status: 200, depth: 0, content_type: 'text/html; charset=utf-8', title: 'Home', language: 'en', description: null })
    // Main content by default: the article, not the page's chrome.
    expect(home.markdown).toContain('The body text of article number 0')
    expect(home.markdown).toContain('## Article 0')
    for (const chrome of ['banner text', 'Copyright footer text', 'Prev']) expect(home.markdown).not.toContain(chrome)
    // Distinct links on the page: / (header and nav), /a1, /a2 (nav and article), /old, /missing, /data.bin.
    expect(home.outlinks).toBe(6)
    expect(home.data).toEqual({ [mapId]: { lead: 'The body text of article number 0, long enough to be the content of the page and nothing else.' } })

    // A redirect: the record is the URL visited, final_url where it led, links resolved there.
    expect(byUrl.get(site.url('/old'))).toMatchObject({ status: 200, final_url: site.url('/new'), title: 'Moved here', depth: 1 })
    expect(byUrl.has(site.url('/new'))).toBe(false)

    expect(byUrl.get(site.url('/missing'))).toMatchObject({ status: 404, markdown: expect.any(String), error: { reason: 'http_status', detail: 'the server answered 404' } })
    const refusedRec = byUrl.get(refused)!
    expect(refusedRec).toMatchObject({ status: null, depth: 0, markdown: null, content_type: null, title: null, data: null, outlinks: 0, artifact_ids: [] })
    expect(refusedRec.error!.reason).toBe('connect')
    expect(refusedRec.error!.detail).toEqual(expect.any(String))

    // Not HTML: no markdown, but its type and its raw artifact.
    const bin = byUrl.get(site.url('/data.bin'))!
    expect(bin).toMatchObject({ status: 200, content_type: 'application/octet-stream', markdown: null, title: null, error: null })
    expect(bin.artifact_ids.length).toBe(1)
  })

  test('main_content=false keeps the chrome; the article is there either way', async () => {
    const records = lines((await exportText(runId, 'main_content=false')).text)
    const home = records.find((x) => x.url === site.url('/'))!
    expect(home.markdown).toContain('banner text')
    expect(home.markdown).toContain('Copyright footer text')
    expect(home.markdown).toContain('The body text of article number 0')
  })

  test('format=llms: a header, then one section per page with markdown, in visit order', async () => {
    const r = await exportText(runId, 'format=llms')
    expect(r.status).toBe(200)
    expect(r.type).toBe('text/markdown; charset=utf-8')
    const records = lines((await exportText(runId)).text).filter((x) => x.markdown !== null)
    expect(r.text.startsWith(`# 127.0.0.1:${site.port}\n\n> The pages of trawl run ${runId} crawled from ${site.url('/')}, ${refused}, as markdown, in visit order.\n\n`)).toBe(true)
    const sections = r.text.split('\n---\n\n').slice(1)
    expect(sections.length).toBe(records.length)
    sections.forEach((s, i) => {
      const rec = records[i]!
      expect(s.startsWith(`# ${rec.title ?? rec.final_url}\n\nSource: ${rec.final_url}\n\n${rec.markdown!.trim()}`)).toBe(true)
    })
  })

  test('filters as the run links list has them', async () => {
    const seeds = lines((await exportText(runId, 'depth=0')).text)
    expect(seeds.map((x) => x.url).sort()).toEqual([site.url('/'), refused].sort())
    const one = lines((await exportText(runId, `urls=${encodeURIComponent(site.url('/a2'))}`)).text)
    expect(one.map((x) => x.url)).toEqual([site.url('/a2')])
    expect(lines((await exportText(runId, `url_hashes=${linkHash(site.url('/a1'))}`)).text).map((x) => x.url)).toEqual([site.url('/a1')])
    expect(lines((await exportText(runId, 'visited_before=2000-01-01T00:00:00Z')).text)).toEqual([])
    expect(lines((await exportText(runId, 'hosts=nowhere.example')).text)).toEqual([])
  })

  test('bad input: 422 for a bad format, filter or paging; 404 for an unknown or another tenant’s run', async () => {
    for (const [query, field] of [
      ['format=csv', 'format'],
      ['depth=-1', 'depth'],
      ['main_content=maybe', 'main_content'],
      ['per_page=10', 'per_page'],
      ['visited_before=yesterday', 'visited_before'],
    ]) {
      const r = await exportText(runId, query)
      expect(r.status, query).toBe(422)
      const body = JSON.parse(r.text)
      expect(body.error).toBe('validation')
      expect(body.fields.map((f: { field: string }) => f.field.replace(/\[\d+\]$/, ''))).toContain(field)
    }
    for (const [id, tenant] of [
      [crypto.randomUUID(), 'acme'],
      [runId, 'other'],
    ] as const) {
      const r = await exportText(id, '', tenant)
      expect(r.status).toBe(404)
      expect(JSON.parse(r.text)).toEqual({ error: 'not_found', message: 'run not found' })
    }
    expect((await exportText('not-a-uuid')).status).toBe(422)
  })

  test('artifacts carry the URL they are for', async () => {
    const visits = await env.visits(runId)
    const urls = new Map(visits.map((v) => [v.hash, v.url]))
    const artifacts = await env.artifacts(runId)
    expect(artifacts.length).toBeGreaterThan(0)
    for (const a of artifacts) expect(a.url).toBe(urls.get(a.url_hash))
    const one = await env.api.get(`/v1/artifacts/${artifacts[0].id}`)
    expect(one.body.url).toBe(urls.get(artifacts[0].url_hash))
  })
})

describe('a default crawl whose raw body artifact was deleted', () => {
  test('the page keeps its title and final URL from the parsed artifact, made again from the body it shares; no markdown', async () => {
    const site = crawlSite({ pages: { '/': { title: 'Front', links: ['/old'] }, '/old': { redirect: '/new' }, '/new': { title: 'Moved here' } } })
    try {
      const run = await env.crawl({ seeds: [site.url('/')] }, { tenant: 'kept' })
      const artifacts = await env.artifacts(run.id, '', 'kept')
      const raw = artifacts.find((a) => a.kind === 'raw' && a.url_hash === linkHash(site.url('/old')))
      expect((await env.api.call('DELETE', `/v1/artifacts/${raw.id}`, { tenant: 'kept' })).status).toBe(204)
      const records = lines((await exportText(run.id, '', 'kept')).text)
      const old = records.find((r) => r.url === site.url('/old'))!
      expect(old).toMatchObject({ final_url: site.url('/new'), title: 'Moved here', markdown: null, content_type: 'text/html' })
      const front = records.find((r) => r.url === site.url('/'))!
      expect(front).toMatchObject({ final_url: site.url('/'), title: 'Front', content_type: 'text/html; charset=utf-8' })
      expect(front.markdown).toContain('Front')
    } finally {
      site.close()
    }
  })
})

describe('streaming', () => {
  test('the first record comes before the run is rendered; stopping early renders no more', async () => {
    const pages: Record<string, { title: string; links: string[] }> = {}
    for (let i = 0; i < 120; i++) pages[i === 0 ? '/' : `/p${i}`] = { title: `P${i}`, links: i === 0 ? Array.from({ length: 119 }, (_, k) => `/p${k + 1}`) : [] }
    const site = crawlSite({ pages })
    try {
      const run = await env.crawl({ seeds: [site.url('/')], politeness: { per_host_concurrency: 8, concurrency: 8 } }, { timeoutMs: 30_000 })
      expect(run.stats.visited).toBe(120)
      // A real pool that counts what it is asked to render.
      const pool = new ParsePool(2, 60_000)
      let asked = 0
      const parser = new Proxy(pool, {
        get: (target, key) => (key === 'parse' ? (...args: Parameters<ParsePool['parse']>) => (asked++, target.parse(...args)) : Reflect.get(target, key)),
      })
      try {
        const gen = await exportPages({ store: env.api.store, blobs: env.api.blobs, parser }, 'acme', run.id, { main_content: true, filters: {} })
        expect(asked).toBe(0) // nothing is read until the first record is asked for
        const first = await gen.next()
        expect(first.value?.url).toBe(site.url('/'))
        expect(asked).toBeGreaterThan(1) // several in flight at once…
        expect(asked).toBeLessThan(40) // …but not the whole run
        await gen.return(undefined)
        const stopped = asked
        await Bun.sleep(100)
        expect(asked).toBe(stopped)
        let n = 0
        for await (const r of await exportPages({ store: env.api.store, blobs: env.api.blobs, parser }, 'acme', run.id, { main_content: true, filters: {} })) {
          expect(r.title).toMatch(n === 0 ? /^P0$/ : /^P\d+$/)
          n++
        }
        expect(n).toBe(120)
        // skip: the visits before it are passed over unrendered, and the rest are the same records
        const all = await Array.fromAsync(await exportPages({ store: env.api.store, blobs: env.api.blobs, parser: pool }, 'acme', run.id, { main_content: true, filters: {} }))
        const before = asked
        const tail = await Array.fromAsync(await exportPages({ store: env.api.store, blobs: env.api.blobs, parser }, 'acme', run.id, { main_content: true, filters: {}, skip: 100 }))
        expect(asked - before).toBe(20)
        expect(tail).toEqual(all.slice(100))
        expect(await Array.fromAsync(await exportPages({ store: env.api.store, blobs: env.api.blobs, parser }, 'acme', run.id, { main_content: true, filters: {}, skip: 500 }))).toEqual([])
      } finally {
        pool.close()
      }
    } finally {
      await site.close()
    }
  })

  test('an unknown run throws at once, before anything is read', async () => {
    await expect(exportPages({ store: env.api.store, blobs: env.api.blobs, parser: env.api.parser }, 'acme', crypto.randomUUID(), { main_content: true, filters: {} })).rejects.toThrow('run not found')
  })
})
