/**
 * How runs end (design.md §5 stop reasons): max_depth, max_urls, max_empty_evaluations (complete or
 * stalled), max_age (paused time excluded), manual, empty_seed; and the calendar trap.
 */
import { describe, expect, test } from 'bun:test'
import { useCrawlEnv, pathOf, type CrawlEnv } from '../helpers/crawl-run'
import { crawlSite, tree, type CrawlSite, withSite } from '../helpers/crawl-site'

const env = useCrawlEnv()

describe('max_depth', () => {
  test('links deeper than max_depth are not fetched; the reason is max_depth; their edges are still recorded', () =>
    withSite(crawlSite({ pages: tree(2, 3).pages }), async (site) => {
      const t = tree(2, 3)
      const run = await env.crawl({ seeds: [site.url('/')], limits: { max_depth: 1 } })
      expect(run.stop_reason).toBe('max_depth')
      expect(
        site
          .pageRequests()
          .map((r) => r.path)
          .sort(),
      ).toEqual([...t.levels[0]!, ...t.levels[1]!].sort())
      expect(run.stats).toMatchObject({ visited: 3, queued: 0, failed: 0 })
      const edges = (await env.edges(run.id)).map((e) => `${pathOf(e.parent.url)} -> ${pathOf(e.child.url)}`)
      expect(edges).toContain('/n1 -> /n1-1')
      const visits = await env.visits(run.id)
      expect(Math.max(...visits.map((v) => v.depth))).toBe(1)
    }))

  test('max_depth 0 fetches the seeds only', () =>
    withSite(crawlSite({ pages: tree(2, 2).pages }), async (site) => {
      const run = await env.crawl({ seeds: [site.url('/'), site.url('/n2-1')], limits: { max_depth: 0 } })
      expect(run.stop_reason).toBe('max_depth')
      expect(
        site
          .pageRequests()
          .map((r) => r.path)
          .sort(),
      ).toEqual(['/', '/n2-1'])
    }))

  test('a leaf at the depth limit cuts nothing: the crawl completes with max_empty_evaluations', () =>
    withSite(crawlSite({ pages: tree(2, 2).pages }), async (site) => {
      const run = await env.crawl({ seeds: [site.url('/')], limits: { max_depth: 2 } })
      expect(run.stop_reason).toBe('max_empty_evaluations')
      expect(run.stats.visited).toBe(7)
    }))
})

describe('max_urls', () => {
  test('exactly max_urls URLs get a response, then the run ends with max_urls', () =>
    withSite(crawlSite({ pages: tree(3, 3).pages }), async (site) => {
      const run = await env.crawl({ seeds: [site.url('/')], limits: { max_urls: 5, max_depth: 10 }, politeness: { per_host_concurrency: 4 } })
      expect(run.stop_reason).toBe('max_urls')
      await Bun.sleep(300)
      expect(site.pageRequests().length).toBe(5)
      expect(run.stats.visited).toBe(5)
      const visits = await env.visits(run.id)
      expect(visits.length).toBe(5)
    }))

  test('error answers count: 404s are HTTP responses', () =>
    withSite(crawlSite({ pages: { '/': { links: ['/m1', '/m2', '/m3', '/m4', '/m5'] } } }), async (site) => {
      const run = await env.crawl({ seeds: [site.url('/')], limits: { max_urls: 3 }, politeness: { per_host_concurrency: 1 } })
      expect(run.stop_reason).toBe('max_urls')
      await Bun.sleep(200)
      expect(site.pageRequests().length).toBe(3)
    }))

  test('max_urls wins over a crawl that completes at the same moment', () =>
    withSite(crawlSite({ pages: tree(2, 1).pages }), async (site) => {
      const run = await env.crawl({ seeds: [site.url('/')], limits: { max_urls: 3 } })
      expect(site.pageRequests().length).toBe(3)
      expect(run.stop_reason).toBe('max_urls')
    }))
})

describe('calendar trap', () => {
  test('bounded by max_depth', () =>
    withSite(crawlSite({ calendar: '/cal/' }), async (site) => {
      const run = await env.crawl({ seeds: [site.url('/cal/2026-01-30')], limits: { max_depth: 5 } })
      expect(run.stop_reason).toBe('max_depth')
      expect(site.pageRequests().map((r) => r.path)).toEqual(['/cal/2026-01-30', '/cal/2026-01-31', '/cal/2026-02-01', '/cal/2026-02-02', '/cal/2026-02-03', '/cal/2026-02-04'])
    }))

  test('bounded by max_urls', () =>
    withSite(crawlSite({ calendar: '/cal/' }), async (site) => {
      const run = await env.crawl({ seeds: [site.url('/cal/2026-12-30')], limits: { max_depth: 1000, max_urls: 8 } })
      expect(run.stop_reason).toBe('max_urls')
      await Bun.sleep(200)
      expect(site.pageRequests().length).toBe(8)
      expect(site.hits('/cal/2027-01-06')).toBe(1)
    }))
})

describe('max_age', () => {
  test('a run older than max_age ends with max_age', () =>
    withSite(crawlSite({ calendar: '/cal/', delayMs: 100 }), async (site) => {
      const id = await env.start({ seeds: [site.url('/cal/2026-01-01')], limits: { max_depth: 1000, max_age: '1s' } })
      const run = await env.finished(id, 6_000)
      expect(run.stop_reason).toBe('max_age')
      const age = Date.parse(run.finished_at) - Date.parse(run.started_at)
      expect(age).toBeGreaterThanOrEqual(1_000)
      expect(age).toBeLessThan(2_500)
      const n = site.pageRequests().length
      await Bun.sleep(300)
      expect(site.pageRequests().length).toBe(n)
    }))

  test('paused time does not count, and nothing is fetched while paused', () =>
    withSite(crawlSite({ calendar: '/cal/', delayMs: 100 }), async (site) => {
      const id = await env.start({ seeds: [site.url('/cal/2026-01-01')], limits: { max_depth: 1000, max_age: '2s' } })
      await env.until(id, (r) => r.stats.visited >= 2)
      expect((await env.api.put(`/v1/runs/${id}/pause`)).status).toBe(200)
      await Bun.sleep(300) // the fetch in flight completes
      const before = site.pageRequests().length
      await Bun.sleep(1_700)
      expect(site.pageRequests().length).toBe(before)
      expect((await env.run(id)).status).toBe('paused')
      expect((await env.api.put(`/v1/runs/${id}/resume`)).status).toBe(200)
      env.runner.notify()
      const run = await env.finished(id, 8_000)
      expect(run.stop_reason).toBe('max_age')
      expect(site.pageRequests().length).toBeGreaterThan(before)
      const span = Date.parse(run.finished_at) - Date.parse(run.started_at)
      // 2 s of running plus ~2 s paused.
      expect(span).toBeGreaterThanOrEqual(3_800)
      // No day was fetched twice across the pause.
      const paths = site.pageRequests().map((r) => r.path)
      expect(new Set(paths).size).toBe(paths.length)
      expect(site.hits('/robots.txt')).toBe(1)
    }))
})

describe('manual stop', () => {
  test('PUT stop finishes the run with manual; fetching stops at once', () =>
    withSite(crawlSite({ calendar: '/cal/', delayMs: 150 }), async (site) => {
      const id = await env.start({ seeds: [site.url('/cal/2026-01-01')], limits: { max_depth: 1000 } })
      await env.until(id, (r) => r.stats.visited >= 2)
      const r = await env.api.put(`/v1/runs/${id}/stop`)
      expect(r.status).toBe(200)
      expect(r.body.status).toBe('finished')
      expect(r.body.stop_reason).toBe('manual')
      await Bun.sleep(200)
      const n = site.pageRequests().length
      await Bun.sleep(600)
      expect(site.pageRequests().length).toBe(n)
      const run = await env.run(id)
      expect(run.status).toBe('finished')
      expect(run.stop_reason).toBe('manual')
      expect(run.stats.visited).toBeGreaterThanOrEqual(2)
    }))
})

describe('empty_seed', () => {
  test('every seed outside the scope (exclude): nothing is fetched', () =>
    withSite(crawlSite({ pages: tree(2, 1).pages }), async (site) => {
      const run = await env.crawl({ seeds: [site.url('/')], scope: { exclude: ['127\\.0\\.0\\.1'] } })
      expect(run.stop_reason).toBe('empty_seed')
      expect(site.requests.length).toBe(0)
      const logs = await env.logs(run.id)
      expect(logs.some((l) => l.step === 'schedule' && l.status === 'skipped' && l.error_reason === 'out_of_scope')).toBe(true)
    }))

  test('no seeds at all', async () => {
    const run = await env.crawl({ seeds: [] })
    expect(run.stop_reason).toBe('empty_seed')
  })

  test('every seed disallowed by robots.txt: only robots.txt is fetched', () =>
    withSite(crawlSite({ pages: tree(2, 1).pages, robots: 'User-agent: *\nDisallow: /\n' }), async (site) => {
      const run = await env.crawl({ seeds: [site.url('/'), site.url('/n1')] })
      expect(run.stop_reason).toBe('empty_seed')
      expect(site.requests.map((r) => r.path)).toEqual(['/robots.txt'])
      const logs = await env.logs(run.id, 'steps=robots&statuses=skipped')
      expect(logs.map((l) => pathOf(l.url)).sort()).toEqual(['/', '/n1'])
      for (const l of logs) expect(l.error_reason).toBe('robots_disallowed')
    }))

  test('robots.txt answering 5xx disallows the host', () =>
    withSite(crawlSite({ pages: tree(2, 1).pages, robots: { status: 500, body: 'oops' } }), async (site) => {
      const run = await env.crawl({ seeds: [site.url('/')] })
      expect(run.stop_reason).toBe('empty_seed')
      expect(site.pageRequests().length).toBe(0)
    }))

  test('robots.txt unreachable disallows the host', async () => {
    const probe = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: () => new Response('') })
    const port = probe.port
    await probe.stop(true)
    const run = await env.crawl({ seeds: [`http://127.0.0.1:${port}/`], fetch: { max_retries: 0 } })
    expect(run.stop_reason).toBe('empty_seed')
  })
})

describe('max_empty_evaluations', () => {
  test('a stalled run (host backed off for long) ends after that many empty evaluations; its queued rows fail', () =>
    withSite(
      // /b comes first (discovery order), then /a asks for 30 s: the host backs off and nothing is ready.
      crawlSite({ pages: { '/': { links: ['/b', '/a'] }, '/a': { throttle: { times: 100, retryAfter: '30' } }, '/b': {} } }),
      async (site) => {
        const t0 = Date.now()
        const run = await env.crawl({ seeds: [site.url('/')], limits: { max_empty_evaluations: 2 }, politeness: { per_host_concurrency: 1 }, fetch: { max_retries: 0 } }, { timeoutMs: 8_000 })
        expect(run.stop_reason).toBe('max_empty_evaluations')
        expect(Date.now() - t0).toBeLessThan(6_000)
        expect(site.hits('/a')).toBe(1)
        expect(run.stats.queued).toBe(0)
        expect(site.hits('/b')).toBe(1)
        // /a was left waiting for its backoff: it failed.
        expect(run.stats.failed).toBe(1)
        expect(run.stats.visited).toBe(2)
      },
    ))

  test('a stall after a depth cut reports max_depth', () =>
    withSite(crawlSite({ pages: { '/': { links: ['/b', '/a'] }, '/a': { throttle: { times: 100, retryAfter: '30' } }, '/b': { links: ['/deep'] }, '/deep': {} } }), async (site) => {
      const run = await env.crawl(
        { seeds: [site.url('/')], limits: { max_depth: 1, max_empty_evaluations: 2 }, politeness: { per_host_concurrency: 1 }, fetch: { max_retries: 0 } },
        { timeoutMs: 8_000 },
      )
      expect(site.hits('/b')).toBe(1)
      expect(site.hits('/deep')).toBe(0)
      expect(run.stop_reason).toBe('max_depth')
    }))
})
