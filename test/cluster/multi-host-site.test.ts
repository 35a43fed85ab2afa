// The cluster tests' fixture and harness, checked on their own: the multi-host site serves its
// pages on many loopback addresses and measures what the cluster tests assert (per-host requests
// in flight, gaps, fetches per page, which process sent each request); one `trawl serve` on
// SQLite crawls it under per-host limits, and the site's measures agree with the run.
import { afterAll, describe, expect, test } from 'bun:test'
import { cleanup } from '../helpers/binary'
import { startCluster } from '../helpers/cluster'
import { gapFloor } from '../helpers/arrivals'
import { multiHostSite, socketOwner } from '../helpers/multi-host-site'

afterAll(cleanup)

describe('multiHostSite', () => {
  test('pages on many hosts, linked across hosts: a tree from page 0 reaches them all', async () => {
    const site = multiHostSite({ hosts: 5, pagesPerHost: 4, linksPerPage: 3, delayMs: 0 })
    try {
      expect(site.hosts).toEqual(['127.0.0.10', '127.0.0.11', '127.0.0.12', '127.0.0.13', '127.0.0.14'])
      expect(site.seed).toBe(`http://127.0.0.10:${site.port}/p/0`)
      expect(site.urls).toHaveLength(20)
      // Consecutive pages are on different hosts; page 7 is /p/1 on the third host.
      expect(site.urlOf(7)).toBe(`http://127.0.0.12:${site.port}/p/1`)
      const seen = new Set<number>([0])
      const todo = [0]
      while (todo.length) for (const t of site.linksOf(todo.pop()!)) if (!seen.has(t) && seen.add(t)) todo.push(t)
      expect(seen.size).toBe(20)

      const r = await fetch(site.urlOf(7))
      const body = await r.text()
      expect(r.status).toBe(200)
      for (const t of site.linksOf(7)) expect(body).toContain(`href="${site.urlOf(t)}"`)
      expect((await fetch(`http://127.0.0.13:${site.port}/robots.txt`)).status).toBe(200)
      expect((await fetch(`http://127.0.0.13:${site.port}/p/99`)).status).toBe(404)
      expect(site.fetchCount(site.urlOf(7))).toBe(1)
      expect(site.totalFetches()).toBe(1)
      expect(site.robotsFetches('127.0.0.13')).toBe(1)
      expect(site.unfetched()).toHaveLength(19)
    } finally {
      await site.close()
    }
  })

  test('measures per host: requests in flight, the smallest gap, duplicates', async () => {
    const site = multiHostSite({ hosts: 2, pagesPerHost: 5, delayMs: 100 })
    try {
      const [a, b] = site.hosts as [string, string]
      // Three at once to host a, then one more to a 30 ms later; two spaced 150 ms apart to b.
      const first = [0, 2, 4].map((g) => fetch(site.urlOf(g)).then((r) => r.text()))
      await Bun.sleep(30)
      const later = fetch(site.urlOf(6)).then((r) => r.text())
      await fetch(site.urlOf(1)).then((r) => r.text())
      await Bun.sleep(50)
      await fetch(site.urlOf(3)).then((r) => r.text())
      await Promise.all([...first, later])
      await fetch(site.urlOf(0)).then((r) => r.text())
      const stats = Object.fromEntries(site.hostStats().map((h) => [h.host, h]))
      expect(stats[a]!.maxInFlight).toBe(4)
      expect(stats[a]!.pages).toBe(5)
      expect(stats[b]!.maxInFlight).toBe(1)
      expect(stats[b]!.minGapMs).toBeGreaterThanOrEqual(145)
      expect(stats[a]!.minGapMs).toBeLessThan(5)
      expect(site.maxInFlight()).toBe(4)
      expect(site.duplicates()).toEqual([[site.urlOf(0), 2]])
      expect(site.maxPagesAtOnce()).toBe(5)
      site.reset()
      expect(site.totalFetches()).toBe(0)
      expect(site.hostStats().every((h) => h.maxInFlight === 0 && h.minGapMs === Infinity && h.minGapBetween === null)).toBe(true)
    } finally {
      await site.close()
    }
  })

  test('tells which process sent a request, by the owner of its socket', async () => {
    const procs: Record<string, number> = {}
    const identify = socketOwner(() => procs)
    const site = multiHostSite({ hosts: 2, pagesPerHost: 2, delayMs: 0, identify })
    try {
      // Each client stays a moment after its requests: a request is named while its sender is there.
      const client = (url: string) =>
        Bun.spawn([process.execPath, '-e', `for (let i = 0; i < 3; i++) await (await fetch(${JSON.stringify(url)})).text(); await Bun.sleep(300)`], { stdout: 'ignore', stderr: 'inherit' })
      const one = client(site.urlOf(0))
      const two = client(site.urlOf(1))
      procs.one = one.pid
      procs.two = two.pid
      expect([await one.exited, await two.exited]).toEqual([0, 0])
      await fetch(site.urlOf(2)).then((r) => r.text()) // this process is neither
      await site.settled()
      const byUrl = (url: string) => site.requests.filter((r) => r.url === url).map((r) => r.client)
      expect(byUrl(site.urlOf(0))).toEqual(['one', 'one', 'one'])
      expect(byUrl(site.urlOf(1))).toEqual(['two', 'two', 'two'])
      expect(byUrl(site.urlOf(2))).toEqual([null])
      expect(site.byClient()).toEqual({ one: 3, two: 3, '?': 1 })
    } finally {
      identify.close()
      await site.close()
    }
  })
})

describe('the cluster harness on SQLite: one process crawls the site under per-host limits', () => {
  test('every page once; per host at most per_host_concurrency in flight and starts at least the delay apart, as the site saw them', async () => {
    const cluster = await startCluster({ processes: 1, store: 'sqlite' })
    const site = multiHostSite({ hosts: 6, pagesPerHost: 6, linksPerPage: 3, delayMs: 250, identify: cluster.identify })
    try {
      const { runId } = await cluster.createJob({
        seeds: [site.seed],
        scope: { domains: 'any' },
        limits: { max_depth: 50, max_urls: 1000 },
        politeness: { concurrency: 8, per_host_concurrency: 2, delay: '200ms' },
      })
      const run = await cluster.finished(runId!, 30_000)
      await site.settled()
      expect({ status: run.status, stop_reason: run.stop_reason, outcome: run.outcome, visited: run.stats.visited, failed: run.stats.failed }).toEqual({
        status: 'finished',
        stop_reason: 'max_empty_evaluations',
        outcome: 'complete',
        visited: 36,
        failed: 0,
      })
      expect(site.unfetched()).toEqual([])
      expect(site.duplicates()).toEqual([])
      for (const h of site.hostStats()) {
        expect({ host: h.host, robots: h.robots, pages: h.pages }).toEqual({ host: h.host, robots: 1, pages: 6 })
        expect(h.maxInFlight).toBeLessThanOrEqual(2)
        // Measured on arrival at the site (gapFloor says why not the delay itself).
        expect(h.minGapMs).toBeGreaterThanOrEqual(gapFloor(200))
      }
      // The delay (200 ms) is shorter than an answer (250 ms): two in flight on some host.
      expect(site.maxInFlight()).toBe(2)
      expect(site.byClient()).toEqual({ n0: 36 })
      expect(new Set(site.requests.map((r) => r.userAgent))).toEqual(new Set([expect.stringContaining('trawl')]))
    } finally {
      await site.close()
      await cluster.close()
    }
  }, 60_000)
})
