/**
 * Runs side by side (design.md §5): several runs of several tenants progress together up to the
 * runner's maxActive; past it a run waits pending. A runner shut down mid-run leaves the run
 * running, and the next runner continues it from its frontier.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { crawlEnv, type CrawlEnv } from '../helpers/crawl-run'
import { crawlSite, tree, type CrawlSite } from '../helpers/crawl-site'
import { waitFor } from '../helpers/wait'

const calendarRun = (site: CrawlSite, maxUrls: number) => ({ seeds: [site.url('/cal/2026-03-01')], limits: { max_depth: 1000, max_urls: maxUrls }, politeness: { per_host_concurrency: 1 } })
const span = (site: CrawlSite) => {
  const pages = site.pageRequests()
  return { first: pages[0]!.at, last: pages[pages.length - 1]!.at }
}

describe('maxActive 2', () => {
  let env: CrawlEnv
  beforeAll(() => {
    env = crawlEnv(2)
  })
  afterAll(() => env.close())

  test('two runs of two tenants progress side by side and stay apart', async () => {
    const a = crawlSite({ calendar: '/cal/', delayMs: 100 })
    const b = crawlSite({ calendar: '/cal/', delayMs: 100 })
    try {
      const idA = await env.start(calendarRun(a, 6), { tenant: 'alpha' })
      const idB = await env.start(calendarRun(b, 6), { tenant: 'beta' })
      const runA = await env.finished(idA, 10_000, 'alpha')
      const runB = await env.finished(idB, 10_000, 'beta')
      expect(runA.stop_reason).toBe('max_urls')
      expect(runB.stop_reason).toBe('max_urls')
      expect(a.pageRequests().length).toBe(6)
      expect(b.pageRequests().length).toBe(6)
      // Interleaved in time: each started before the other ended.
      const sa = span(a)
      const sb = span(b)
      expect(sa.first).toBeLessThan(sb.last)
      expect(sb.first).toBeLessThan(sa.last)
      // Each tenant sees its own run and catalogue only.
      expect((await env.api.get(`/v1/runs/${idA}`, { tenant: 'beta' })).status).toBe(404)
      expect((await env.api.get(`/v1/runs/${idA}/links`, { tenant: 'beta' })).status).toBe(404)
      const betaLinks = await env.all('/v1/links', 'beta')
      expect(betaLinks.length).toBeGreaterThan(0)
      expect(betaLinks.every((l) => l.url.startsWith(b.url('/')))).toBe(true)
      expect((await env.artifacts(idA, '', 'beta')).length).toBe(0)
      expect((await env.artifacts(idA, '', 'alpha')).length).toBeGreaterThan(0)
    } finally {
      await a.close()
      await b.close()
    }
  })

  test('two runs of one job crawl side by side, each with its own frontier and records', async () => {
    const site = crawlSite({ pages: tree(3, 2).pages, delayMs: 40 }) // 13 pages
    try {
      const config = { seeds: [site.url('/')], limits: { max_depth: 10, max_urls: 100 }, politeness: { per_host_concurrency: 2 } }
      const job = await env.api.post('/v1/jobs', { name: 'twice', config })
      expect(job.status).toBe(201)
      const first = await env.api.post(`/v1/jobs/${job.body.id}/runs`, {})
      const second = await env.api.post(`/v1/jobs/${job.body.id}/runs`, {})
      expect([first.status, second.status]).toEqual([201, 201])
      env.runner.notify()
      const [a, b] = [first.body.id as string, second.body.id as string]
      const runA = await env.finished(a, 15_000)
      const runB = await env.finished(b, 15_000)
      // The same job, crawled twice at once: every page twice over, once by each run.
      const pages = site.pageRequests()
      expect(pages.length).toBe(26)
      const byPath = new Map<string, number>()
      for (const r of pages) byPath.set(r.path, (byPath.get(r.path) ?? 0) + 1)
      expect([...byPath.values()].every((n) => n === 2)).toBe(true)
      // Side by side: both runs asked for the seed before either had fetched half the site.
      const seeds = pages.filter((r) => r.path === '/').map((r) => r.at)
      expect(Math.max(...seeds)).toBeLessThan(pages[12]!.at)
      for (const [id, run] of [
        [a, runA],
        [b, runB],
      ] as const) {
        expect(run.stop_reason).toBe('max_empty_evaluations')
        expect(run.stats).toMatchObject({ visited: 13, failed: 0, queued: 0 })
        const visits = await env.visits(id)
        expect(new Set(visits.map((v) => v.url)).size).toBe(13)
        expect(visits.length).toBe(13)
        expect((await env.artifacts(id, 'kinds=raw')).length).toBe(13)
      }
    } finally {
      await site.close()
    }
  })

  test('a runner shut down mid-run leaves the run running; the next runner finishes it from its frontier', async () => {
    const t = tree(4, 2) // 21 pages
    const site = crawlSite({ pages: t.pages, delayMs: 100 })
    try {
      const id = await env.start({ seeds: [site.url('/')], politeness: { per_host_concurrency: 2 } })
      await env.until(id, (r) => r.stats.visited >= 4)
      await env.restart()
      const mid = await env.run(id)
      expect(mid.status).toBe('running')
      const run = await env.finished(id, 15_000)
      expect(run.stop_reason).toBe('max_empty_evaluations')
      expect(run.stats).toMatchObject({ visited: 21, failed: 0, queued: 0 })
      for (const p of t.all) {
        // Only what was in flight at the shutdown is fetched again.
        expect(site.hits(p), p).toBeGreaterThanOrEqual(1)
        expect(site.hits(p), p).toBeLessThanOrEqual(2)
      }
      expect(site.pageRequests().length).toBeLessThanOrEqual(21 + 2)
      expect(site.hits('/robots.txt')).toBe(1)
      expect((await env.visits(id)).length).toBe(21)
    } finally {
      await site.close()
    }
  })
})

describe('a lease taken over', () => {
  test('a process whose run was taken by another (it stalled past its lease) writes nothing more and lets the run go', async () => {
    const env = crawlEnv(1)
    const site = crawlSite({ calendar: '/cal/', delayMs: 150 })
    try {
      const outcomes: unknown[] = []
      env.runner.onFinish = (_, outcome) => outcomes.push(outcome)
      const id = await env.start(calendarRun(site, 1000))
      await env.until(id, (r) => r.stats.visited >= 3)
      const db = env.api.db
      const seq = (env.api.db.query('SELECT seq FROM runs WHERE id = ?').get(id) as { seq: number }).seq
      // What a second process does when it takes the run: its own lease, and frontier rows with
      // the next seqs it gives out, which this process's next writes would have reused.
      db.query("UPDATE runs SET lease_owner = 'elsewhere:1:taker', lease_until = ? WHERE seq = ?").run(Date.now() + 60_000, seq)
      // Edges and log entries as the API reads them: a page's are its visit row's (decision 101).
      const taken = { visits: count(db, 'visits', seq), frontier: count(db, 'frontier', seq), edges: (await env.edges(id)).length, logs: (await env.logs(id)).length }
      // The lease is asked when it is renewed (every 3 s) and at each commit.
      await waitFor('the execution to leave', () => outcomes.length === 1, 10_000)
      expect(outcomes).toEqual([{ left: 'lost_lease' }])
      // At most what was mid-commit when the lease changed hands; nothing after.
      await Bun.sleep(600)
      expect(count(db, 'visits', seq)).toBe(taken.visits)
      expect(count(db, 'frontier', seq)).toBe(taken.frontier)
      expect((await env.edges(id)).length).toBe(taken.edges)
      // Nor its crawl log: entries it had buffered describe fetches the new holder will make again.
      expect((await env.logs(id)).length).toBe(taken.logs)
      // The run still belongs to the other process: not finished, not released by this one.
      expect(db.query('SELECT status, lease_owner FROM runs WHERE seq = ?').get(seq)).toEqual({ status: 'running', lease_owner: 'elsewhere:1:taker' })
    } finally {
      await env.close()
      await site.close()
    }
  })
})

const count = (db: import('bun:sqlite').Database, table: string, runSeq: number) => (db.query(`SELECT count(*) AS n FROM ${table} WHERE run_seq = ?`).get(runSeq) as { n: number }).n

describe('restart with a paused run', () => {
  let env: CrawlEnv
  beforeAll(() => {
    env = crawlEnv(2)
  })
  afterAll(() => env.close())

  test('a paused run stays paused across a restart and continues when resumed', async () => {
    const site = crawlSite({ calendar: '/cal/', delayMs: 80 })
    try {
      const id = await env.start(calendarRun(site, 8))
      await env.until(id, (r) => r.stats.visited >= 2)
      expect((await env.api.put(`/v1/runs/${id}/pause`)).status).toBe(200)
      await Bun.sleep(200)
      await env.restart()
      const n = site.pageRequests().length
      await Bun.sleep(800)
      expect((await env.run(id)).status).toBe('paused')
      expect(site.pageRequests().length).toBe(n)
      expect((await env.api.put(`/v1/runs/${id}/resume`)).status).toBe(200)
      env.runner.notify()
      const run = await env.finished(id)
      expect(run.stop_reason).toBe('max_urls')
      expect(site.pageRequests().length).toBe(8)
      expect(site.hits('/robots.txt')).toBe(1)
    } finally {
      await site.close()
    }
  })
})

describe('maxActive 1', () => {
  let env: CrawlEnv
  beforeAll(() => {
    env = crawlEnv(1)
  })
  afterAll(() => env.close())

  test('the second run waits pending until the first finishes', async () => {
    const a = crawlSite({ calendar: '/cal/', delayMs: 150 })
    const b = crawlSite({ calendar: '/cal/', delayMs: 50 })
    try {
      const idA = await env.start(calendarRun(a, 5))
      await env.until(idA, (r) => r.status === 'running')
      const idB = await env.start(calendarRun(b, 3), { tenant: 'other' })
      for (let i = 0; i < 4; i++) {
        await Bun.sleep(100)
        if ((await env.run(idA)).status === 'finished') break
        expect((await env.run(idB, 'other')).status).toBe('pending')
        expect(b.requests.length).toBe(0)
      }
      const runA = await env.finished(idA)
      const runB = await env.finished(idB, 10_000, 'other')
      expect(runB.stop_reason).toBe('max_urls')
      expect(Date.parse(runB.started_at)).toBeGreaterThanOrEqual(Date.parse(runA.finished_at))
      expect(b.requests[0]!.at).toBeGreaterThan(span(a).last)
    } finally {
      await a.close()
      await b.close()
    }
  })

  test('pending runs start oldest first, whichever tenant or job they belong to', async () => {
    const a = crawlSite({ calendar: '/cal/', delayMs: 100 })
    const sites = [crawlSite({ calendar: '/cal/' }), crawlSite({ calendar: '/cal/' }), crawlSite({ calendar: '/cal/' })]
    try {
      const idA = await env.start(calendarRun(a, 4))
      await env.until(idA, (r) => r.status === 'running')
      // Created in this order while the one slot is taken: the newest is of another tenant.
      const waiting = [
        { id: await env.start(calendarRun(sites[0]!, 2)), tenant: undefined },
        { id: await env.start(calendarRun(sites[1]!, 2)), tenant: undefined },
        { id: await env.start(calendarRun(sites[2]!, 2), { tenant: 'other' }), tenant: 'other' },
      ]
      await env.finished(idA)
      const runs = []
      for (const w of waiting) runs.push(await env.finished(w.id, 10_000, w.tenant))
      for (let i = 1; i < runs.length; i++) expect(Date.parse(runs[i]!.started_at)).toBeGreaterThanOrEqual(Date.parse(runs[i - 1]!.finished_at))
      expect(sites.map((s) => s.pageRequests().length)).toEqual([2, 2, 2])
      for (let i = 1; i < sites.length; i++) expect(sites[i]!.requests[0]!.at).toBeGreaterThan(span(sites[i - 1]!).last)
    } finally {
      await a.close()
      for (const site of sites) await site.close()
    }
  })

  test('a pending run stopped by hand never starts', async () => {
    const a = crawlSite({ calendar: '/cal/', delayMs: 100 })
    const b = crawlSite({ calendar: '/cal/' })
    try {
      const idA = await env.start(calendarRun(a, 4))
      await env.until(idA, (r) => r.status === 'running')
      const idB = await env.start(calendarRun(b, 3))
      const stopped = await env.api.put(`/v1/runs/${idB}/stop`)
      expect(stopped.status).toBe(200)
      expect(stopped.body.stop_reason).toBe('manual')
      await env.finished(idA)
      await Bun.sleep(700) // a runner poll or two
      const runB = await env.run(idB)
      expect(runB.status).toBe('finished')
      expect(runB.stop_reason).toBe('manual')
      expect(runB.started_at).toBeNull()
      expect(b.requests.length).toBe(0)
    } finally {
      await a.close()
      await b.close()
    }
  })
})

describe('a run that cannot be resumed', () => {
  test('ends with stop reason unknown instead of failing the runner on every poll', async () => {
    const env = crawlEnv(1)
    try {
      await env.runner.stop()
      const job = await env.api.post('/v1/jobs?create_run=true', { name: 'broken', config: { seeds: ['http://127.0.0.1:9/'] } })
      const id = job.body.run.id as string
      // What a crash can leave behind, or a database edited by hand: a running run whose stored
      // configuration no longer reads back.
      env.api.db.query("UPDATE runs SET status = 'running', started_at = ?, config = '{\"seeds\":5}' WHERE id = ?").run(Date.now(), id)
      await env.restart()
      const run = await env.finished(id, 5_000)
      expect(run.stop_reason).toBe('unknown')
      expect(run.finished_at).not.toBeNull()
      // The runner keeps working: the next run crawls normally.
      const site = crawlSite({ pages: { '/': {} } })
      try {
        const next = await env.crawl({ seeds: [site.url('/')] })
        expect(next.stop_reason).toBe('max_empty_evaluations')
        expect(site.pageRequests().map((r) => r.path)).toEqual(['/'])
      } finally {
        await site.close()
      }
    } finally {
      await env.close()
    }
  })
  test('a crawl that throws once it has started ends unknown: logged, its queue failed, its lease released', async () => {
    const env = crawlEnv(1)
    const site = crawlSite({ pages: { '/': { links: ['/a'] }, '/a': {} } })
    try {
      await env.runner.stop()
      const job = await env.api.post('/v1/jobs?create_run=true', { name: 'broken frontier', config: { seeds: [site.url('/')] } })
      const id = job.body.run.id as string
      const { seq } = env.api.db.query('SELECT seq FROM runs WHERE id = ?').get(id) as { seq: number }
      // The configuration reads back, so the runner starts the crawl; the engine then throws
      // while loading the queue, on a row whose URL does not parse.
      env.api.db.query("UPDATE runs SET status = 'running', started_at = ? WHERE id = ?").run(Date.now(), id)
      env.api.db.query("INSERT INTO frontier (run_seq, seq, hash, url, host, depth, kind, state) VALUES (?, 1, 'h1', 'not a url', 'nowhere', 0, 0, 0)").run(seq)
      await env.restart()
      const run = await env.finished(id, 5_000)
      expect(run.stop_reason).toBe('unknown')
      expect(run.finished_at).not.toBeNull()
      expect(site.requests.length).toBe(0)
      const failed = env.lines.find((l) => l.includes('crawl failed'))
      expect(failed).toContain(id)
      expect(failed).toContain('Invalid URL')
      expect(env.api.db.query('SELECT state, lease_until FROM frontier WHERE run_seq = ?').all(seq)).toEqual([{ state: 3, lease_until: null }])
      expect(env.api.db.query('SELECT status, lease_owner FROM runs WHERE id = ?').get(id)).toEqual({ status: 'finished', lease_owner: null })
      // The runner keeps working: the next run crawls normally.
      const next = await env.crawl({ seeds: [site.url('/')] })
      expect(next.stop_reason).toBe('max_empty_evaluations')
      expect(
        site
          .pageRequests()
          .map((r) => r.path)
          .sort(),
      ).toEqual(['/', '/a'])
    } finally {
      await site.close()
      await env.close()
    }
  })
})
