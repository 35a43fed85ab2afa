/**
 * How a run's ending reads to a person (docs/crawl.md, "Outcomes"): `outcome` and `error_counts`
 * beside SPEC's stop_reason, which stays as it was. A seed that could not be fetched (refused,
 * no such name, a blocked address) is a failed URL with its reason, and the run failed.
 */
import { describe, expect, test } from 'bun:test'
import { Runner } from '../../src/crawl/runner'
import { linkHash } from '../../src/core/url'
import { createLogger } from '../../src/log'
import { FAILED } from '../../src/store/frontier'
import { testApi } from '../helpers/api'
import { useCrawlEnv } from '../helpers/crawl-run'
import { crawlSite, tree, withSite } from '../helpers/crawl-site'

const env = useCrawlEnv()

/** A port nothing listens on: a server is started there and stopped. */
async function closedPort(): Promise<number> {
  const probe = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: () => new Response('') })
  const port = probe.port!
  await probe.stop(true)
  return port
}

/** The frontier state of a URL of the run (what the API does not show). */
function frontierState(db: any, runId: string, url: string): number | null {
  const row = db.query('SELECT f.state FROM frontier f JOIN runs r ON r.seq = f.run_seq WHERE r.id = ? AND f.hash = ?').get(runId, linkHash(url)) as { state: number } | null
  return row?.state ?? null
}

/** What the brief asks of a seed that could not be fetched: a failed URL with its reason, everywhere. */
async function expectFailedSeed(e: { logs: (id: string, q?: string) => Promise<any[]>; visits: (id: string) => Promise<any[]> }, db: any, run: any, seed: string, reason: string) {
  expect(run.status).toBe('finished')
  expect(run.outcome).toBe('failed')
  expect(run.error_counts).toEqual({ [reason]: 1 })
  expect(run.stats).toMatchObject({ visited: 0, failed: 1, queued: 0 })
  const fetches = await e.logs(run.id, 'steps=fetch')
  expect(fetches.map((l) => [l.url, l.status, l.error_reason])).toEqual([[seed, 'error', reason]])
  expect(fetches[0].error_detail).toBeTruthy()
  expect((await e.visits(run.id)).map((v) => [v.url, v.status ?? null])).toEqual([[seed, null]])
  expect(frontierState(db, run.id, seed)).toBe(FAILED)
}

describe('outcome complete', () => {
  test('a site crawled to its end: complete, with the same stop reason as before; answers of 400 or more are counted by status', () =>
    withSite(crawlSite({ pages: { '/': { links: ['/a', '/gone', '/b'] }, '/a': { links: ['/gone'] }, '/b': {}, '/gone': { status: 404 } } }), async (site) => {
      const id = await env.start({ seeds: [site.url('/')] })
      const running = await env.run(id)
      // Null until the run finishes; the counts are there from the start.
      expect(running.outcome).toBeNull()
      expect(running.error_counts).toEqual({})
      const run = await env.finished(id)
      expect(run.stop_reason).toBe('max_empty_evaluations')
      expect(run.outcome).toBe('complete')
      expect(run.error_counts).toEqual({ http_404: 1 })
      expect(run.stats).toMatchObject({ visited: 4, failed: 0, queued: 0 })
    }))

  test('a leaf at the depth limit cuts nothing: complete', () =>
    withSite(crawlSite({ pages: tree(2, 2).pages }), async (site) => {
      const run = await env.crawl({ seeds: [site.url('/')], limits: { max_depth: 2 } })
      expect([run.stop_reason, run.outcome]).toEqual(['max_empty_evaluations', 'complete'])
      expect(run.error_counts).toEqual({})
    }))
})

describe('outcome limited', () => {
  test('max_depth cut links: limited', () =>
    withSite(crawlSite({ pages: tree(2, 3).pages }), async (site) => {
      const run = await env.crawl({ seeds: [site.url('/')], limits: { max_depth: 1 } })
      expect([run.stop_reason, run.outcome]).toEqual(['max_depth', 'limited'])
    }))

  test('max_urls ended it: limited, and what was still queued stays queued, not counted as an error', () =>
    withSite(crawlSite({ pages: tree(3, 3).pages }), async (site) => {
      const run = await env.crawl({ seeds: [site.url('/')], limits: { max_urls: 4, max_depth: 10 } })
      expect([run.stop_reason, run.outcome]).toEqual(['max_urls', 'limited'])
      expect(run.stats.queued).toBeGreaterThan(0)
      expect(run.error_counts).toEqual({})
    }))

  test('max_age ended it: limited', () =>
    withSite(crawlSite({ calendar: '/cal/', delayMs: 100 }), async (site) => {
      const run = await env.crawl({ seeds: [site.url('/cal/2026-01-01')], limits: { max_depth: 1000, max_age: '1s' } }, { timeoutMs: 6_000 })
      expect([run.stop_reason, run.outcome]).toEqual(['max_age', 'limited'])
    }))
})

describe('outcome stalled', () => {
  test('max_empty_evaluations with a URL still waiting: stalled, though the stop reason is that of a complete crawl', () =>
    withSite(crawlSite({ pages: { '/': { links: ['/b', '/a'] }, '/a': { throttle: { times: 100, retryAfter: '30' } }, '/b': {} } }), async (site) => {
      const run = await env.crawl({ seeds: [site.url('/')], limits: { max_empty_evaluations: 2 }, politeness: { per_host_concurrency: 1 }, fetch: { max_retries: 0 } }, { timeoutMs: 8_000 })
      expect([run.stop_reason, run.outcome]).toEqual(['max_empty_evaluations', 'stalled'])
      // /a waited for its Retry-After when the run ended: failed, as a URL left in the queue.
      expect(run.error_counts).toEqual({ left_queued: 1 })
      expect(run.stats).toMatchObject({ visited: 2, failed: 1, queued: 0 })
      expect(frontierState(env.api.db, run.id, site.url('/a'))).toBe(FAILED)
    }))
})

describe('outcome stopped', () => {
  test('the stop endpoint: stopped, in its own answer and the run after it', () =>
    withSite(crawlSite({ calendar: '/cal/', delayMs: 100 }), async (site) => {
      const id = await env.start({ seeds: [site.url('/cal/2026-01-01')], limits: { max_depth: 1000 } })
      await env.until(id, (r) => r.stats.visited >= 1)
      const r = await env.api.put(`/v1/runs/${id}/stop`)
      expect(r.status).toBe(200)
      expect([r.body.stop_reason, r.body.outcome]).toEqual(['manual', 'stopped'])
      await Bun.sleep(300)
      const run = await env.run(id)
      expect([run.stop_reason, run.outcome]).toEqual(['manual', 'stopped'])
    }))

  test('a pending run stopped before it started: stopped', async () => {
    const job = await env.api.post('/v1/jobs', { name: 'never', config: { seeds: ['http://127.0.0.1:9/'] } })
    const created = await env.api.post(`/v1/jobs/${job.body.id}/runs`, {})
    const r = await env.api.put(`/v1/runs/${created.body.id}/stop`)
    expect([r.body.status, r.body.stop_reason, r.body.outcome]).toEqual(['finished', 'manual', 'stopped'])
  })
})

describe('outcome failed: no seed could be fetched', () => {
  test('connection refused: the seed is a failed URL with connect, not a robots.txt skip; the stop reason stays empty_seed', async () => {
    const seed = `http://127.0.0.1:${await closedPort()}/`
    const run = await env.crawl({ seeds: [seed], fetch: { max_retries: 0 } })
    expect(run.stop_reason).toBe('empty_seed')
    await expectFailedSeed(env, env.api.db, run, seed, 'connect')
    expect(await env.logs(run.id, 'error_reasons=robots_disallowed')).toEqual([])
    // robots.txt's own failed fetch is still logged as before.
    const robots = await env.logs(run.id, 'steps=robots')
    expect(robots.map((l) => [l.status, l.error_reason])).toEqual([['error', 'connect']])
  })

  test('a name that does not resolve: the seed fails with dns', async () => {
    const seed = 'http://no-such-seed.invalid/'
    const run = await env.crawl({ seeds: [seed], fetch: { max_retries: 0 } })
    expect(run.stop_reason).toBe('max_empty_evaluations')
    await expectFailedSeed(env, env.api.db, run, seed, 'dns')
  })

  test('a seed on an address the guard refuses (private networks not allowed): blocked_address', () =>
    withSite(crawlSite({ pages: { '/': {} } }), async (site) => {
      const api = testApi({})
      const runner = new Runner({ store: api.store, fetcher: api.fetcher, parser: api.parser, blobs: api.blobs, log: createLogger('error', () => {}) }, 1)
      runner.start()
      try {
        const created = await api.post('/v1/jobs?create_run=true', { name: 'blocked', config: { seeds: [site.url('/')] } })
        runner.notify()
        let run: any
        for (const t0 = Date.now(); Date.now() - t0 < 10_000; await Bun.sleep(50)) {
          run = (await api.get(`/v1/runs/${created.body.run.id}`)).body
          if (run.status === 'finished') break
        }
        const list = async (path: string) => (await api.get(`${path}${path.includes('?') ? '&' : '?'}per_page=100`)).body.data as any[]
        await expectFailedSeed({ logs: (id, q = '') => list(`/v1/runs/${id}/logs${q ? `?${q}` : ''}`), visits: (id) => list(`/v1/runs/${id}/links`) }, api.db, run, site.url('/'), 'blocked_address')
        expect(site.requests).toEqual([])
      } finally {
        await runner.stop()
        api.close()
      }
    }))

  test('a seed answered 404: fetched, but no page: failed, with http_404', () =>
    withSite(crawlSite({ pages: {} }), async (site) => {
      const run = await env.crawl({ seeds: [site.url('/nothing')] })
      expect(run.stop_reason).toBe('max_empty_evaluations')
      expect(run.outcome).toBe('failed')
      expect(run.error_counts).toEqual({ http_404: 1 })
      expect(run.stats).toMatchObject({ visited: 1, failed: 0 })
    }))

  test('every seed disallowed by robots.txt, or out of scope: failed (empty_seed)', () =>
    withSite(crawlSite({ pages: tree(2, 1).pages, robots: 'User-agent: *\nDisallow: /\n' }), async (site) => {
      const disallowed = await env.crawl({ seeds: [site.url('/')] })
      expect([disallowed.stop_reason, disallowed.outcome]).toEqual(['empty_seed', 'failed'])
      const outOfScope = await env.crawl({ seeds: [site.url('/')], scope: { exclude: ['127\\.0\\.0\\.1'] } })
      expect([outOfScope.stop_reason, outOfScope.outcome]).toEqual(['empty_seed', 'failed'])
    }))

  test('one seed refused, one answered: the run is complete, and the refused one is counted', () =>
    withSite(crawlSite({ pages: { '/': {} } }), async (site) => {
      const refused = `http://localhost:${await closedPort()}/`
      const run = await env.crawl({ seeds: [site.url('/'), refused], fetch: { max_retries: 0 } })
      expect(run.outcome).toBe('complete')
      expect(run.error_counts).toEqual({ connect: 1 })
      expect(run.stats).toMatchObject({ visited: 1, failed: 1 })
    }))
})

/** `/` links to the missing /m1 and to /c1, /c1 to /c2 … /cN to the missing /m2. */
function chain(n: number) {
  const pages: Record<string, { links: string[] }> = { '/': { links: ['/m1', '/c1'] } }
  for (let i = 1; i <= n; i++) pages[`/c${i}`] = { links: [i === n ? '/m2' : `/c${i + 1}`] }
  return pages
}

describe('error counts', () => {
  test('one count per failed URL and reason, most frequent first; the network ones add up to stats.failed', () =>
    withSite(
      crawlSite({
        pages: {
          '/': { links: ['/m1', '/m2', '/m3', '/slow', '/broken', 'http://gone.invalid/x'] },
          '/slow': { delayMs: 3_000 },
          '/broken': { status: 500 },
        },
      }),
      async (site) => {
        const run = await env.crawl({ seeds: [site.url('/')], scope: { domains: 'any' }, politeness: { respect_robots: false }, fetch: { timeout: '300ms', max_retries: 0 } })
        expect(run.outcome).toBe('complete')
        expect(run.error_counts).toEqual({ http_404: 3, dns: 1, http_500: 1, timeout: 1 })
        expect(Object.keys(run.error_counts)).toEqual(['http_404', 'dns', 'http_500', 'timeout'])
        expect(run.stats.failed).toBe(2)
        // The crawl log says the same, URL by URL.
        const errors = await env.logs(run.id, 'steps=fetch&statuses=error')
        const fromLog = new Map<string, number>()
        for (const l of errors) {
          const key = l.error_reason === 'http_status' ? `http_${l.http_status}` : l.error_reason
          fromLog.set(key, (fromLog.get(key) ?? 0) + 1)
        }
        expect(Object.fromEntries(fromLog)).toEqual(run.error_counts)
      },
    ))

  test('a host that keeps failing: its given-up URLs are counted as host_unreachable', async () => {
    const port = await closedPort()
    const links = Array.from({ length: 8 }, (_, i) => `http://127.0.0.1:${port}/p${i}`)
    await withSite(crawlSite({ pages: { '/': { links } } }), async (site) => {
      const run = await env.crawl({ seeds: [site.url('/')], scope: { domains: 'any' }, politeness: { respect_robots: false, per_host_concurrency: 1 }, fetch: { max_retries: 0 } })
      expect(run.error_counts).toEqual({ connect: 5, host_unreachable: 3 })
      expect(run.stats).toMatchObject({ visited: 1, failed: 8 })
    })
  })

  test('counts survive a restart: a resumed run goes on from what was saved', () =>
    withSite(crawlSite({ pages: chain(10), delayMs: 120 }), async (site) => {
      // One 404 before the restart, one at the chain's end after it: both are counted.
      const id = await env.start({ seeds: [site.url('/')], limits: { max_depth: 20 }, politeness: { per_host_concurrency: 1 } })
      await env.until(id, (r) => r.error_counts.http_404 === 1)
      expect(site.hits('/m2')).toBe(0)
      await env.restart()
      const run = await env.finished(id, 15_000)
      expect(site.hits('/m2')).toBe(1)
      expect([run.stop_reason, run.outcome]).toEqual(['max_empty_evaluations', 'complete'])
      expect(run.error_counts).toEqual({ http_404: 2 })
    }))
})

describe('the outcomes filter', () => {
  test('runs are listed by outcome; an unknown outcome is a 422 naming the field', () =>
    withSite(crawlSite({ pages: { '/': {} } }), async (site) => {
      const tenant = 'outcomes-filter'
      const complete = await env.crawl({ seeds: [site.url('/')] }, { tenant })
      const failed = await env.crawl({ seeds: [`http://127.0.0.1:${await closedPort()}/`], fetch: { max_retries: 0 } }, { tenant })
      const ids = async (q: string) => {
        const r = await env.api.get(`/v1/runs?${q}`, { tenant })
        if (r.status !== 200) throw new Error(`${r.status} ${r.text}`)
        return (r.body.data as any[]).map((run) => run.id)
      }
      expect(await ids('outcomes=failed')).toEqual([failed.id])
      expect(await ids('outcomes=complete')).toEqual([complete.id])
      expect((await ids('outcomes=complete&outcomes=failed')).sort()).toEqual([complete.id, failed.id].sort())
      expect(await ids('outcomes=stalled')).toEqual([])
      const jobRuns = await env.api.get(`/v1/jobs/${failed.job_id}/runs?outcomes=failed`, { tenant })
      expect(jobRuns.body.data.map((r: any) => [r.id, r.outcome, r.error_counts])).toEqual([[failed.id, 'failed', { connect: 1 }]])
      const bad = await env.api.get('/v1/runs?outcomes=done', { tenant })
      expect(bad.status).toBe(422)
      expect(JSON.stringify(bad.body)).toContain('outcomes')
    }))
})
