/**
 * What a crawl records (design.md §4 "full recording", §5 "what a run records"): run stats,
 * visits with depth, edges, catalogue hosts and links, raw/parsed/asset artifacts with their
 * bytes, crawl log entries per step, metrics and latency.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { linkHash } from '../../src/core/url'
import { useCrawlEnv, pathOf, type CrawlEnv } from '../helpers/crawl-run'
import { crawlSite, tree, type CrawlSite } from '../helpers/crawl-site'

const env = useCrawlEnv()

const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0)

describe('a small tree, crawled completely', () => {
  // / → /n1, /n2 → /n1-1, /n1-2, /n2-1, /n2-2: 7 pages, leaves link nowhere (no depth cut).
  const t = tree(2, 2)
  let site: CrawlSite
  let run: any
  beforeAll(async () => {
    site = crawlSite({ pages: t.pages })
    run = await env.crawl({ seeds: [site.url('/')], limits: { max_depth: 3 } }, { tenant: 'records' })
  })
  afterAll(() => site.close())

  test('the run finishes: complete with no depth cut is max_empty_evaluations', () => {
    expect(run.status).toBe('finished')
    expect(run.stop_reason).toBe('max_empty_evaluations')
    expect(run.started_at).not.toBeNull()
    expect(run.finished_at).not.toBeNull()
  })

  test('every page is fetched exactly once, robots.txt once', () => {
    for (const path of t.all) expect(site.hits(path)).toBe(1)
    expect(site.hits('/robots.txt')).toBe(1)
    expect(site.pageRequests().length).toBe(t.all.length)
  })

  test('stats: visited, queued, failed, bytes', () => {
    const bytes = sum(t.all.map((p) => site.bodyOf(p).byteLength))
    expect(run.stats).toEqual({ queued: 0, visited: 7, failed: 0, bytes })
  })

  test('visited links carry their depth, status and visit time', async () => {
    const visits = await env.visits(run.id, 'records')
    expect(visits.length).toBe(7)
    const byPath = new Map(visits.map((v) => [pathOf(v.url), v]))
    t.levels.forEach((paths, depth) => {
      for (const p of paths) {
        const v = byPath.get(p)
        expect(v, p).toBeDefined()
        expect(v.depth).toBe(depth)
        expect(v.status).toBe(200)
        expect(v.hash).toBe(linkHash(site.url(p)))
        expect(Number.isNaN(Date.parse(v.visited_at))).toBe(false)
      }
    })
    const depth1 = await env.all(`/v1/runs/${run.id}/links?depth=1`, 'records')
    expect(depth1.map((v) => pathOf(v.url)).sort()).toEqual(['/n1', '/n2'])
  })

  test('edges: parent → child for every link', async () => {
    const edges = await env.edges(run.id, 'records')
    const pairs = edges.map((e) => `${pathOf(e.parent.url)} -> ${pathOf(e.child.url)}`).sort()
    expect(pairs).toEqual(['/ -> /n1', '/ -> /n2', '/n1 -> /n1-1', '/n1 -> /n1-2', '/n2 -> /n2-1', '/n2 -> /n2-2'].sort())
  })

  test('the catalogue has the host and its links', async () => {
    const hosts = await env.all('/v1/hosts?hosts=127.0.0.1', 'records')
    expect(hosts.length).toBe(1)
    const links = await env.all(`/v1/hosts/${hosts[0].hash}/links`, 'records')
    expect(links.map((l) => pathOf(l.url)).sort()).toEqual([...t.all].sort())
    const one = await env.all(`/v1/links?urls=${encodeURIComponent(site.url('/n1-2'))}`, 'records')
    expect(one.length).toBe(1)
    expect(one[0].host.domain).toBe('127.0.0.1')
  })

  test('a raw artifact per page holds the exact body bytes and content type', async () => {
    const raws = await env.artifacts(run.id, 'kinds=raw', 'records')
    expect(raws.length).toBe(7)
    const byHash = new Map(raws.map((a) => [a.url_hash, a]))
    for (const p of t.all) {
      const a = byHash.get(linkHash(site.url(p)))
      expect(a, p).toBeDefined()
      expect(a.content_type).toBe('text/html; charset=utf-8')
      expect(a.pipeline_id ?? null).toBeNull()
      const blob = await env.api.call('GET', `/v1/artifacts/${a.id}/blob`, { tenant: 'records' })
      expect(blob.status).toBe(200)
      expect(blob.headers.get('content-type')).toBe('text/html; charset=utf-8')
      expect(blob.text).toBe(new TextDecoder().decode(site.bodyOf(p)))
    }
  })

  test('a parsed artifact per page and pipeline, as JSON', async () => {
    const parsed = await env.artifacts(run.id, 'kinds=parsed', 'records')
    expect(parsed.length).toBe(7)
    for (const a of parsed) {
      expect(a.pipeline_id).toBe('default')
      expect(a.content_type).toBe('application/json')
    }
    const root = parsed.find((a) => a.url_hash === linkHash(site.url('/')))
    const blob = await env.api.call('GET', `/v1/artifacts/${root.id}/blob`, { tenant: 'records' })
    expect(blob.headers.get('content-type')).toContain('application/json')
    const doc = JSON.parse(blob.text)
    expect(doc.url).toBe(site.url('/'))
    expect(JSON.stringify(doc)).toContain(site.url('/n1'))
  })

  test('crawl log: fetch, parse, store and discover for every page; fetch has http_status and latency', async () => {
    const logs = await env.logs(run.id, '', 'records')
    for (const p of t.all) {
      const mine = logs.filter((l) => l.url === site.url(p))
      const steps = mine.map((l) => l.step)
      for (const s of ['fetch', 'parse', 'store', 'discover']) expect(steps, `${p} ${s}`).toContain(s)
      const fetch = mine.find((l) => l.step === 'fetch')
      expect(fetch.status).toBe('ok')
      expect(fetch.http_status).toBe(200)
      expect(typeof fetch.latency_ms).toBe('number')
      expect(fetch.error_reason).toBeUndefined()
      expect(fetch.run_id).toBe(run.id)
      expect(fetch.job_id).toBe(run.job_id)
      expect(fetch.url_hash).toBe(linkHash(site.url(p)))
      expect(fetch.depth).toBe(t.levels.findIndex((l) => l.includes(p)))
      if (p === '/') expect(fetch.parent_url_hash).toBeUndefined()
      else expect(fetch.parent_url_hash).toBe(linkHash(site.url(/^\/n\d+$/.test(p) ? '/' : p.replace(/-\d+$/, ''))))
    }
    const robots = logs.filter((l) => l.step === 'robots')
    expect(robots.length).toBe(1)
    expect(robots[0].http_status).toBe(404)
  })

  test('crawl log: error_reason and error_detail are absent on success (SPEC crawl log entry)', async () => {
    const ok = await env.logs(run.id, 'statuses=ok', 'records')
    expect(ok.length).toBeGreaterThan(0)
    const withDetail = ok.filter((l) => l.error_reason !== undefined || l.error_detail !== undefined).map((l) => `${l.step}: ${l.error_detail}`)
    expect(withDetail).toEqual([])
  })

  test('crawl log host is the host as the catalogue names it, so the hosts filter finds the entries', async () => {
    const logs = await env.logs(run.id, '', 'records')
    const hosts = new Set(logs.map((l) => l.host))
    // One host crawled: one spelling of it in the log, and it is the catalogue's domain.
    expect([...hosts]).toEqual(['127.0.0.1'])
    const filtered = await env.logs(run.id, 'hosts=127.0.0.1', 'records')
    expect(filtered.length).toBe(logs.length)
  })

  test('metrics and latency count the fetch entries', async () => {
    const m = await env.api.get(`/v1/runs/${run.id}/metrics?window=hour&group_by=step&group_by=status`, { tenant: 'records' })
    expect(m.status).toBe(200)
    const groups = m.body.buckets.flatMap((b: any) => b.groups)
    const fetchOk = sum(groups.filter((g: any) => g.step === 'fetch' && g.status === 'ok').map((g: any) => g.count))
    expect(fetchOk).toBe(7)
    const lat = await env.api.get(`/v1/runs/${run.id}/latency?window=hour&steps=fetch`, { tenant: 'records' })
    expect(lat.status).toBe(200)
    const steps = lat.body.buckets.flatMap((b: any) => b.steps)
    expect(sum(steps.filter((s: any) => s.step === 'fetch').map((s: any) => s.count))).toBe(7)
    expect(steps.every((s: any) => s.max >= s.p50)).toBe(true)
  })
})

describe('stats are current while the run is going', () => {
  test('visited grows on the run resource before the run finishes', async () => {
    const t = tree(6, 1)
    const site = crawlSite({ pages: t.pages, delayMs: 150 })
    try {
      const id = await env.start({ seeds: [site.url('/')], politeness: { per_host_concurrency: 1 } })
      const mid = await env.until(id, (r) => r.stats.visited >= 2, 5_000)
      expect(mid.status).toBe('running')
      expect(mid.stats.queued).toBeGreaterThan(0)
      expect(mid.stats.bytes).toBeGreaterThan(0)
      const done = await env.finished(id)
      expect(done.stats.visited).toBe(7)
      expect(done.stats.queued).toBe(0)
    } finally {
      await site.close()
    }
  })
})

describe('assets', () => {
  const page = {
    links: ['/next'],
    assets: {
      img: ['/logo.png', 'http://localhost:{port}/elsewhere.png', '/pic.html'],
      script: ['/app.js'],
      stylesheet: ['/site.css'],
    },
  }
  const PNG = Uint8Array.from(atob('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII='), (c) => c.charCodeAt(0))
  const pages = {
    '/': page,
    '/next': {},
    '/logo.png': { body: PNG, contentType: 'image/png' },
    '/app.js': { body: 'console.log("hi")', contentType: 'text/javascript' },
    '/site.css': { body: 'body{background:url(/bg.png)}', contentType: 'text/css' },
    // An "image" that is really a page with a link: an asset is never parsed, so /from-asset stays unknown.
    '/pic.html': { links: ['/from-asset'] },
    '/from-asset': {},
  }

  test('store.assets fetches in-scope img/script/stylesheet as asset artifacts, never parsed', async () => {
    const site = crawlSite({ pages, hosts: { localhost: { pages: { '/elsewhere.png': { body: PNG, contentType: 'image/png' } } } } })
    try {
      const run = await env.crawl({ seeds: [site.url('/')], store: { assets: true } })
      expect(site.hits('/logo.png')).toBe(1)
      expect(site.hits('/app.js')).toBe(1)
      expect(site.hits('/site.css')).toBe(1)
      expect(site.hits('/pic.html')).toBe(1)
      expect(site.hits('/from-asset')).toBe(0)
      expect(site.hits('/elsewhere.png', 'localhost')).toBe(0)
      const assets = await env.artifacts(run.id, 'kinds=asset')
      const byHash = new Map(assets.map((a) => [a.url_hash, a]))
      expect(assets.length).toBe(4)
      const png = byHash.get(linkHash(site.url('/logo.png')))
      expect(png.content_type).toBe('image/png')
      const blob = await env.api.call('GET', `/v1/artifacts/${png.id}/blob`)
      expect(blob.headers.get('content-type')).toBe('image/png')
      const bytes = new Uint8Array(await (await env.api.app.handle(new Request(`http://trawl.test/v1/artifacts/${png.id}/blob`, { headers: { 'x-tenant-id': 'acme' } }))).arrayBuffer())
      expect(bytes).toEqual(PNG)
      expect(byHash.get(linkHash(site.url('/app.js'))).content_type).toBe('text/javascript')
      expect(byHash.get(linkHash(site.url('/site.css'))).content_type).toBe('text/css')
      // Assets are neither raw pages nor parsed.
      const raws = await env.artifacts(run.id, 'kinds=raw')
      expect(raws.map((a) => a.url_hash).sort()).toEqual([linkHash(site.url('/')), linkHash(site.url('/next'))].sort())
      const parsed = await env.artifacts(run.id, 'kinds=parsed')
      expect(parsed.length).toBe(2)
      const logs = await env.logs(run.id, 'steps=parse')
      expect(logs.some((l) => l.url === site.url('/pic.html') || l.url === site.url('/logo.png'))).toBe(false)
    } finally {
      await site.close()
    }
  })

  test('without store.assets nothing but pages is fetched', async () => {
    const site = crawlSite({ pages })
    try {
      const run = await env.crawl({ seeds: [site.url('/')] })
      expect(
        site
          .pageRequests()
          .map((r) => r.path)
          .sort(),
      ).toEqual(['/', '/next'])
      expect((await env.artifacts(run.id, 'kinds=asset')).length).toBe(0)
    } finally {
      await site.close()
    }
  })
})

describe('canonical', () => {
  test('an in-scope canonical URL that differs is enqueued; one out of scope or equal is not', async () => {
    const site = crawlSite({
      pages: {
        '/': { links: ['/p?utm=1', '/q', '/self'] },
        '/p?utm=1': { canonical: '/p' },
        '/p': { title: 'canonical p' },
        '/q': { canonical: 'http://localhost:{port}/q' },
        '/self': { canonical: '/self' },
      },
    })
    try {
      const run = await env.crawl({ seeds: [site.url('/')] })
      expect(site.hits('/p')).toBe(1)
      expect(site.hits('/p?utm=1')).toBe(1)
      expect(site.hits('/self')).toBe(1)
      expect(site.requests.filter((r) => r.host === 'localhost').length).toBe(0)
      const visits = await env.visits(run.id)
      expect(visits.map((v) => pathOf(v.url)).sort()).toEqual(['/', '/p', '/p?utm=1', '/q', '/self'])
    } finally {
      await site.close()
    }
  })
})

describe('user pipelines', () => {
  test('the navigator decides what is followed; a parsed artifact per pipeline that ran; fields steps log extract entries', async () => {
    const site = crawlSite({
      pages: {
        '/': { html: '<nav><a href="/in-nav">in nav</a></nav><p class="none">no price</p>', links: ['/outside'] },
        '/in-nav': { html: '<p class="price">12.5</p>' },
        '/outside': {},
      },
    })
    try {
      const pipelines = [
        { identifier: 'nav', navigator: { kind: 'links', selector: 'nav a[href]' }, steps: [{ kind: 'fields', fields: [{ name: 'price', selector: '.price', type: 'number', required: true }] }] },
        { identifier: 'guarded', navigator: { kind: 'links', selector: 'nav a[href]' }, guards: [{ kind: 'url', include: ['/in-nav$'] }], steps: [{ kind: 'metadata' }] },
      ]
      const run = await env.crawl({ seeds: [site.url('/')], pipelines })
      expect(
        site
          .pageRequests()
          .map((r) => r.path)
          .sort(),
      ).toEqual(['/', '/in-nav'])
      const parsed = await env.artifacts(run.id, 'kinds=parsed')
      const got = parsed.map((a) => `${a.url_hash === linkHash(site.url('/')) ? '/' : '/in-nav'} ${a.pipeline_id}`).sort()
      expect(got).toEqual(['/ nav', '/in-nav guarded', '/in-nav nav'])
      const extract = await env.logs(run.id, 'steps=extract')
      const byUrl = new Map(extract.map((l) => [pathOf(l.url), l]))
      expect(byUrl.get('/')?.status).toBe('error')
      expect(byUrl.get('/')?.error_reason).toBe('parse_error')
      expect(byUrl.get('/')?.pipeline_id).toBe('nav')
      expect(byUrl.get('/in-nav')?.status).toBe('ok')
      const navDoc = parsed.find((a) => a.url_hash === linkHash(site.url('/in-nav')) && a.pipeline_id === 'nav')
      const blob = await env.api.call('GET', `/v1/artifacts/${navDoc.id}/blob`)
      expect(JSON.stringify(JSON.parse(blob.text))).toContain('12.5')
    } finally {
      await site.close()
    }
  })

  test('store.raw and store.parsed false: no artifacts, the crawl still follows links', async () => {
    const t = tree(2, 1)
    const site = crawlSite({ pages: t.pages })
    try {
      const run = await env.crawl({ seeds: [site.url('/')], store: { raw: false, parsed: false } })
      expect(run.stats.visited).toBe(3)
      expect((await env.artifacts(run.id)).length).toBe(0)
    } finally {
      await site.close()
    }
  })
})
