/**
 * Politeness (design.md §5 and its rules 9-10): per-host and global concurrency, the delay
 * between request starts to one host, robots.txt Crawl-delay, 429/503 backoff with Retry-After,
 * and giving up on a host after 5 consecutive network failures.
 */
import { describe, expect, test } from 'bun:test'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { gapFloor } from '../helpers/arrivals'
import { useCrawlEnv, pathOf, type CrawlEnv } from '../helpers/crawl-run'
import { crawlSite, type CrawlSite, type PageSpec, withSite } from '../helpers/crawl-site'

const env = useCrawlEnv()

/** `/` linking to `/p1 … /pn` (or absolute URLs built by `href`), each page empty. */
function star(n: number, href: (i: number) => string = (i) => `/p${i}`, extra: PageSpec = {}): Record<string, PageSpec> {
  const pages: Record<string, PageSpec> = { '/': { links: Array.from({ length: n }, (_, i) => href(i + 1)) } }
  for (let i = 1; i <= n; i++) pages[`/p${i}`] = { ...extra }
  return pages
}

/** Timer slack: a request may arrive a little earlier after its gap than the gap's start was measured. */
const SLACK = 25

describe('concurrency', () => {
  test('per_host_concurrency is reached and never exceeded', () =>
    withSite(crawlSite({ pages: star(12), delayMs: 150 }), async (site) => {
      const run = await env.crawl({ seeds: [site.url('/')], politeness: { per_host_concurrency: 3 } })
      expect(run.stats.visited).toBe(13)
      expect(site.maxPagesAtOnce()).toBe(3)
    }))

  test('per_host_concurrency bounds TCP connections too, counted by a node:http server', async () => {
    // The fixture site counts requests; this server counts sockets open at once, which is what a
    // site's connection limit sees. Keep-alive reuses them: no request needs a fourth.
    let open = 0
    let mostOpen = 0
    let sockets = 0
    const server = createServer((req, res) => {
      const n = Number(/^\/p(\d+)$/.exec(req.url ?? '')?.[1] ?? 0)
      const body = req.url === '/' ? Array.from({ length: 12 }, (_, i) => `<a href="/p${i + 1}">p${i + 1}</a>`).join(' ') : `<p>page ${n}</p>`
      setTimeout(() => {
        res.writeHead(req.url === '/robots.txt' ? 404 : 200, { 'content-type': 'text/html' })
        res.end(body)
      }, 100)
    })
    server.on('connection', (socket) => {
      sockets++
      mostOpen = Math.max(mostOpen, ++open)
      socket.on('close', () => open--)
    })
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    try {
      const port = (server.address() as AddressInfo).port
      const run = await env.crawl({ seeds: [`http://127.0.0.1:${port}/`], politeness: { per_host_concurrency: 3, concurrency: 16 } })
      expect(run.stats.visited).toBe(13)
      expect(mostOpen).toBe(3) // reached, never exceeded
      expect(sockets).toBeLessThanOrEqual(3 + 1) // robots.txt's socket may close before the pages start
    } finally {
      server.closeAllConnections()
      server.close()
    }
  })

  test('the default per_host_concurrency is 2', () =>
    withSite(crawlSite({ pages: star(8), delayMs: 120 }), async (site) => {
      await env.crawl({ seeds: [site.url('/')] })
      expect(site.maxPagesAtOnce()).toBe(2)
    }))

  // Both hosts are seeds, so each has its work from the start (and its robots.txt from its seed's origin).
  const twoHosts = (delayMs: number) => crawlSite({ pages: star(6), delayMs, hosts: { localhost: { pages: star(6), delayMs } } })

  test('global concurrency caps requests across hosts', () =>
    withSite(twoHosts(150), async (site) => {
      const run = await env.crawl({ seeds: [site.url('/'), site.url('/', 'localhost')], politeness: { concurrency: 2, per_host_concurrency: 3 } })
      expect(run.stats.visited).toBe(14)
      expect(site.pageRequests('localhost').length).toBe(7)
      expect(site.maxPagesAtOnce()).toBe(2)
    }))

  test('two hosts are crawled side by side, each up to its own per-host limit', () =>
    withSite(twoHosts(200), async (site) => {
      const run = await env.crawl({ seeds: [site.url('/'), site.url('/', 'localhost')], politeness: { per_host_concurrency: 2 } })
      expect(run.stats.visited).toBe(14)
      expect(site.maxPagesAtOnce(['127.0.0.1'])).toBe(2)
      expect(site.maxPagesAtOnce(['localhost'])).toBe(2)
      expect(site.maxPagesAtOnce()).toBe(4)
    }))
})

describe('delay', () => {
  test('politeness.delay spaces request starts to one host', () =>
    withSite(crawlSite({ pages: star(4) }), async (site) => {
      await env.crawl({ seeds: [site.url('/')], politeness: { delay: '250ms', per_host_concurrency: 4 } })
      const gaps = site.gaps()
      expect(gaps.length).toBe(4)
      // On arrival (gapFloor says why not 250 ms itself); four at once without the delay.
      for (const g of gaps) expect(g).toBeGreaterThanOrEqual(gapFloor(250))
    }))

  test('robots.txt Crawl-delay raises the delay', () =>
    withSite(crawlSite({ pages: star(3), robots: 'User-agent: *\nCrawl-delay: 0.4\nDisallow: /nothing\n' }), async (site) => {
      await env.crawl({ seeds: [site.url('/')], politeness: { delay: '100ms', per_host_concurrency: 4 } })
      const gaps = site.gaps()
      expect(gaps.length).toBe(3)
      // Above what the 100 ms delay alone would give, even on arrival (gapFloor).
      for (const g of gaps) expect(g).toBeGreaterThanOrEqual(gapFloor(400))
    }))

  test('Crawl-delay is ignored when respect_robots is false', () =>
    withSite(crawlSite({ pages: star(3), robots: 'User-agent: *\nCrawl-delay: 5\n' }), async (site) => {
      const t0 = Date.now()
      await env.crawl({ seeds: [site.url('/')], politeness: { respect_robots: false } })
      expect(Date.now() - t0).toBeLessThan(3_000)
      expect(site.pageRequests().length).toBe(4)
    }))
})

describe('429 and 503', () => {
  test('429 with Retry-After: the URL is requeued and the host waits that long', () =>
    withSite(crawlSite({ pages: { ...star(3), '/p1': { throttle: { times: 1, retryAfter: '1' } } } }), async (site) => {
      const run = await env.crawl({ seeds: [site.url('/')], politeness: { per_host_concurrency: 1 }, fetch: { max_retries: 0 } })
      expect(site.hits('/p1')).toBe(2)
      const reqs = site.pageRequests()
      const first = reqs.findIndex((r) => r.path === '/p1')
      const throttled = reqs[first]!
      // Nothing goes to the host until Retry-After has passed.
      const next = reqs[first + 1]!
      expect(next.at - throttled.end!).toBeGreaterThanOrEqual(1_000 - SLACK)
      expect(run.stats).toMatchObject({ visited: 4, failed: 0, queued: 0 })
      const logs = await env.logs(run.id, 'steps=fetch')
      const p1 = logs.filter((l) => l.url === site.url('/p1')).reverse()
      expect(p1.map((l) => [l.status, l.http_status])).toEqual([
        ['retried', 429],
        ['ok', 200],
      ])
      expect(p1[0].error_reason).toBe('http_status')
      const visit = (await env.visits(run.id)).find((v) => v.url === site.url('/p1'))
      expect(visit.status).toBe(200)
    }))

  test('503 without Retry-After backs off 1 s, then 2 s', () =>
    withSite(crawlSite({ pages: { '/': { links: ['/busy'] }, '/busy': { throttle: { times: 2, status: 503 } } } }), async (site) => {
      const run = await env.crawl({ seeds: [site.url('/')], fetch: { max_retries: 0 } }, { timeoutMs: 10_000 })
      const busy = site.requests.filter((r) => r.path === '/busy')
      expect(busy.map((r) => r.status)).toEqual([503, 503, 200])
      expect(busy[1]!.at - busy[0]!.end!).toBeGreaterThanOrEqual(1_000 - SLACK)
      expect(busy[2]!.at - busy[1]!.end!).toBeGreaterThanOrEqual(2_000 - SLACK)
      expect(run.stats.visited).toBe(2)
    }))

  test('a URL is tried at most 3 times; the last answer is recorded as an error', () =>
    withSite(crawlSite({ pages: { '/': { links: ['/never'] }, '/never': { throttle: { times: 100, retryAfter: '0' } } } }), async (site) => {
      const run = await env.crawl({ seeds: [site.url('/')], fetch: { max_retries: 0 } })
      expect(site.hits('/never')).toBe(3)
      const logs = (await env.logs(run.id, 'steps=fetch')).filter((l) => l.url === site.url('/never'))
      expect(logs.map((l) => l.status).sort()).toEqual(['error', 'retried', 'retried'])
      const last = logs.find((l) => l.status === 'error')
      expect(last.error_reason).toBe('http_status')
      expect(last.http_status).toBe(429)
    }))

  test('with the crawl default max_retries a URL that keeps answering 429 is still requested at most 3 times', () =>
    withSite(crawlSite({ pages: { '/': { links: ['/never'] }, '/never': { throttle: { times: 100, retryAfter: '0' } } } }), async (site) => {
      await env.crawl({ seeds: [site.url('/')] })
      expect(site.hits('/never')).toBeLessThanOrEqual(3)
    }))

  test('Retry-After is capped at 60 s', () =>
    withSite(crawlSite({ pages: { '/': { links: ['/slow-down'] }, '/slow-down': { throttle: { times: 100, retryAfter: '3600' } } } }), async (site) => {
      const run = await env.crawl({ seeds: [site.url('/')], limits: { max_empty_evaluations: 1 }, fetch: { max_retries: 0 } })
      expect(run.stop_reason).toBe('max_empty_evaluations')
      const retried = (await env.logs(run.id, 'statuses=retried'))[0]
      expect(retried.error_detail).toContain('60000 ms')
      expect(site.hits('/slow-down')).toBe(1)
    }))
})

describe('a host that keeps failing', () => {
  test('after 5 consecutive network failures its queued URLs fail with host_unreachable', async () => {
    const probe = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: () => new Response('') })
    const dead = probe.port
    await probe.stop(true)
    // Same host name, another port: in scope (ports never matter), another politeness host.
    await withSite(crawlSite({ pages: star(8, (i) => `http://127.0.0.1:${dead}/d${i}`) }), async (site) => {
      const run = await env.crawl({ seeds: [site.url('/')], politeness: { per_host_concurrency: 1, respect_robots: false }, fetch: { max_retries: 0 } })
      expect(run.stats).toMatchObject({ visited: 1, failed: 8, queued: 0 })
      const logs = await env.logs(run.id, 'steps=fetch&statuses=error')
      const reasons = logs.map((l) => l.error_reason).sort()
      expect(reasons).toEqual(['connect', 'connect', 'connect', 'connect', 'connect', 'host_unreachable', 'host_unreachable', 'host_unreachable'])
      for (const l of logs) expect(pathOf(l.url)).toMatch(/^\/d\d$/)
    })
  })

  test('its count of failures survives a restart: the resumed run gives up after 5 in all, not 5 more', async () => {
    const probe = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: () => new Response('') })
    const dead = probe.port
    await probe.stop(true)
    await withSite(crawlSite({ pages: star(10, (i) => `http://127.0.0.1:${dead}/d${i}`) }), async (site) => {
      // One attempt a second: the restart comes after the third failure, well before the fifth.
      const id = await env.start({ seeds: [site.url('/')], politeness: { per_host_concurrency: 1, delay: '1s', respect_robots: false }, fetch: { max_retries: 0 } })
      const failedSoFar = async () => (await env.logs(id, 'steps=fetch&statuses=error&error_reasons=connect')).length
      for (let t0 = Date.now(); (await failedSoFar()) < 3; await Bun.sleep(20)) if (Date.now() - t0 > 10_000) throw new Error('no third failure')
      await env.restart()
      // What the first execution left for the next: the dead host's count so far.
      const saved = env.api.repos.frontier.hostFailures(env.api.repos.frontier.runSeq('acme', id)!)
      expect(saved.map((h) => h.host)).toEqual([`127.0.0.1:${dead}`])
      expect(saved[0]!.failures).toBeGreaterThanOrEqual(3)
      expect(saved[0]!.failures).toBeLessThan(5)
      const run = await env.finished(id, 20_000)
      expect(run.stats).toMatchObject({ visited: 1, failed: 10, queued: 0 })
      const reasons = (await env.logs(id, 'steps=fetch&statuses=error')).map((l) => l.error_reason)
      expect(reasons.filter((r) => r === 'connect')).toHaveLength(5)
      expect(reasons.filter((r) => r === 'host_unreachable')).toHaveLength(5)
    })
  })
})
