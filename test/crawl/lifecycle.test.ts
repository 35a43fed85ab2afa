/**
 * A run's lifecycle under the runner, in process (design.md §5, SPEC "Run transitions"): pause
 * lets in-flight fetches complete and record, starts nothing new and lets the run go; resume
 * picks it up at once (the API notifies the runner) and fetches nothing twice; stop finishes
 * the run with `manual` at once, aborts in-flight fetches and records nothing more.
 *
 * The fixture can *hold* requests: once every fetch slot of the run hangs on it, nothing the
 * engine does afterwards can be a fetch that was already under way, so "no fetch starts after
 * X" is checked exactly rather than with a timing window.
 */
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'bun:test'
import { Runner } from '../../src/crawl/runner'
import { linkHash } from '../../src/core/url'
import { createLogger } from '../../src/log'
import { managementApp } from '../../src/server'
import { jsonClient } from '../helpers/client'
import { testApi, type TestApi } from '../helpers/api'
import { waitFor as pollFor } from '../helpers/wait'

// ------------------------------------------------------------------ the fixture site

type Arrival = { path: string; at: number; aborted: boolean }

/**
 * Pages /p/0 … /p/{n-1} in a binary tree with a cross link and a link home on each page.
 * hold() makes every request that arrives from then on wait until release().
 */
function gatedSite(n: number, delayMs = 5) {
  const hits = new Map<string, number>()
  const arrivals: Arrival[] = []
  let gate: { promise: Promise<void>; open: () => void } | null = null
  const held: Arrival[] = []
  const server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    async fetch(req) {
      const path = new URL(req.url).pathname
      const arrival: Arrival = { path, at: Date.now(), aborted: false }
      hits.set(path, (hits.get(path) ?? 0) + 1)
      arrivals.push(arrival)
      req.signal.addEventListener('abort', () => (arrival.aborted = true))
      if (path === '/robots.txt') return new Response('User-agent: *\nAllow: /\n')
      const m = /^\/p\/(\d+)$/.exec(path)
      const i = m ? Number(m[1]) : NaN
      if (!(i >= 0 && i < n)) return new Response('not here', { status: 404 })
      if (gate) {
        held.push(arrival)
        await gate.promise
      }
      await Bun.sleep(delayMs)
      const links = [2 * i + 1, 2 * i + 2, (i * 5 + 2) % n, 0].filter((x) => x < n).map((x) => `<a href="/p/${x}">page ${x}</a>`)
      return new Response(`<html><head><title>page ${i}</title></head><body>${links.join(' ')}</body></html>`, { headers: { 'content-type': 'text/html' } })
    },
  })
  const origin = `http://127.0.0.1:${server.port}`
  return {
    server,
    n,
    hits,
    arrivals,
    held,
    url: (i: number) => `${origin}/p/${i}`,
    pages: () => Array.from({ length: n }, (_, i) => `${origin}/p/${i}`),
    pageHits: () => arrivals.filter((a) => a.path.startsWith('/p/')).length,
    hold() {
      let open!: () => void
      const promise = new Promise<void>((r) => (open = r))
      gate = { promise, open }
    },
    release() {
      gate?.open()
      gate = null
    },
  }
}
type Site = ReturnType<typeof gatedSite>

// ------------------------------------------------------------------ the engine under test

let api: TestApi
let runner: Runner
let client: ReturnType<typeof jsonClient>
const sites: Site[] = []

beforeAll(() => {
  api = testApi({ TRAWL_ALLOW_PRIVATE_NETWORKS: 'true' })
  const log = createLogger('warn', () => {})
  runner = new Runner({ store: api.store, fetcher: api.fetcher, parser: api.parser, blobs: api.blobs, log }, 4)
  // The management app as `trawl serve` builds it: the run moves notify the runner.
  const app = managementApp({ store: api.store, config: api.config, log, parser: api.parser, fetcher: api.fetcher, blobs: api.blobs, engine: runner })
  client = jsonClient('http://trawl.test', (request) => app.handle(request))
  runner.start()
})
afterEach(() => {
  for (const s of sites) s.release()
})
afterAll(async () => {
  for (const s of sites) s.release()
  await runner.stop()
  for (const s of sites) s.server.stop(true)
  api.close()
})

function site(n: number, delayMs?: number): Site {
  const s = gatedSite(n, delayMs)
  sites.push(s)
  return s
}

// Polled every 5 ms: these tests time pauses and stops against held requests.
const waitFor = <T>(what: string, probe: () => T | Promise<T>, timeoutMs = 10_000, everyMs = 5) => pollFor(what, probe, timeoutMs, everyMs)

/** A whole-site crawl of `s` with `concurrency` fetches at once; answers the run id and its seq. */
async function startRun(s: Site, concurrency: number) {
  const r = await client.post('/v1/jobs?create_run=true', {
    name: 'lifecycle',
    config: { seeds: [s.url(0)], limits: { max_depth: 50 }, politeness: { concurrency, per_host_concurrency: concurrency } },
  })
  expect(r.status).toBe(201)
  const id = r.body.run.id as string
  return { id, seq: api.repos.frontier.runSeq('acme', id)! }
}

const runOf = async (id: string) => (await client.get(`/v1/runs/${id}`)).body
const finished = (id: string, timeoutMs = 20_000) => waitFor(`run ${id} to finish`, async () => ((await runOf(id)).status === 'finished' ? runOf(id) : null), timeoutMs, 20)

async function visited(id: string): Promise<string[]> {
  const out: string[] = []
  let page: string | null = null
  do {
    const r = await client.get(`/v1/runs/${id}/links?per_page=100${page ? `&page=${encodeURIComponent(page)}` : ''}`)
    expect(r.status).toBe(200)
    out.push(...r.body.data.map((l: { url: string }) => l.url))
    page = r.body.next_page
  } while (page)
  return out
}

const leased = (seq: number) => api.repos.frontier.counts(seq).leased
const leaseOwner = (seq: number) => api.repos.frontier.run(seq)!.lease_owner

/** Lets the crawl get going, then holds requests until every one of the run's slots hangs on the fixture. */
async function fillSlots(s: Site, concurrency: number, after = 8) {
  await waitFor('the crawl to get going', () => s.pageHits() >= after)
  s.hold()
  await waitFor(`${concurrency} held requests`, () => s.held.length >= concurrency)
  await Bun.sleep(50)
  expect(s.held.length).toBe(concurrency) // the run's concurrency is honoured
}

// ------------------------------------------------------------------ pause and resume

describe('pause', () => {
  test('in-flight fetches complete and are recorded, nothing new starts, the execution leaves and releases its lease', async () => {
    const s = site(60)
    const { id, seq } = await startRun(s, 3)
    await fillSlots(s, 3)
    const arrivalsAtPause = s.arrivals.length

    const r = await client.put(`/v1/runs/${id}/pause`)
    expect(r.status).toBe(200)
    expect(r.body.status).toBe('paused')
    // The held fetches are still in flight: the execution waits for them.
    await Bun.sleep(150)
    expect(runner.execution(seq)).not.toBeNull()
    s.release()

    await waitFor('the execution to leave', () => runner.execution(seq) === null, 3_000)
    // The pages that were in flight got recorded…
    const urls = await visited(id)
    for (const h of s.held) expect(urls).toContain(s.url(Number(h.path.slice(3))))
    expect(s.held.some((h) => h.aborted)).toBe(false)
    // …and no fetch started once the slots came free.
    expect(s.arrivals.length).toBe(arrivalsAtPause)
    expect(leaseOwner(seq)).toBeNull()
    expect(leased(seq)).toBe(0)
    const run = await runOf(id)
    expect(run.status).toBe('paused')
    expect(run.stats.visited).toBe(urls.length)

    // It stays paused: the runner's polls (every 500 ms) leave it alone.
    await Bun.sleep(1_100)
    expect(s.arrivals.length).toBe(arrivalsAtPause)
    expect(runner.execution(seq)).toBeNull()
    expect((await runOf(id)).status).toBe('paused')

    // resume: the runner is told at once and the crawl goes on from the frontier.
    const resumed = await client.put(`/v1/runs/${id}/resume`)
    expect(resumed.status).toBe(200)
    expect(resumed.body.status).toBe('running')
    expect(runner.execution(seq)).not.toBeNull()
    const done = await finished(id)
    expect(done.stop_reason).toBe('max_empty_evaluations')
    expect((await visited(id)).sort()).toEqual(s.pages().sort())
    expect([...s.hits].filter(([, c]) => c > 1)).toEqual([]) // robots.txt too: it is kept per run
    expect(done.stats).toMatchObject({ visited: s.n, queued: 0, failed: 0 })
  }, 30_000)

  test('a resume while the paused execution still waits for its fetches: the crawl goes on, nothing fetched twice', async () => {
    const s = site(50)
    const { id, seq } = await startRun(s, 2)
    await fillSlots(s, 2)
    expect((await client.put(`/v1/runs/${id}/pause`)).status).toBe(200)
    await Bun.sleep(150) // the execution has seen the pause and waits for its two fetches
    const resumed = await client.put(`/v1/runs/${id}/resume`)
    expect(resumed.status).toBe(200)
    expect(resumed.body.status).toBe('running')
    s.release()
    const done = await finished(id)
    expect(done.stop_reason).toBe('max_empty_evaluations')
    expect((await visited(id)).sort()).toEqual(s.pages().sort())
    expect([...s.hits].filter(([, c]) => c > 1)).toEqual([])
    expect(leaseOwner(seq)).toBeNull()
  }, 30_000)

  test('paused time does not count towards max_age', async () => {
    const s = site(200, 60)
    const r = await client.post('/v1/jobs?create_run=true', {
      name: 'max-age',
      config: { seeds: [s.url(0)], limits: { max_depth: 50, max_age: '2s' }, politeness: { concurrency: 1, per_host_concurrency: 1 } },
    })
    const id = r.body.run.id as string
    const seq = api.repos.frontier.runSeq('acme', id)!
    await waitFor('the run to be under way', () => s.pageHits() >= 3)
    const startedAt = Date.parse((await runOf(id)).started_at)
    expect((await client.put(`/v1/runs/${id}/pause`)).status).toBe(200)
    const pausedAt = Date.now()
    await waitFor('the execution to leave', () => runner.execution(seq) === null, 3_000)
    await Bun.sleep(2_200)
    expect((await runOf(id)).status).toBe('paused')
    const beforeResume = s.pageHits()
    const resumedAt = Date.now()
    expect((await client.put(`/v1/runs/${id}/resume`)).body.status).toBe('running')
    // The run has been up for over 2 s of wall time but under 2 s of running time: it goes on.
    await waitFor('fetches after the resume', () => s.pageHits() > beforeResume + 2, 3_000)
    const done = await finished(id, 10_000)
    expect(done.stop_reason).toBe('max_age')
    const finishedAt = Date.parse(done.finished_at)
    const running = pausedAt - startedAt + (finishedAt - resumedAt)
    expect(running).toBeGreaterThanOrEqual(1_900)
    expect(running).toBeLessThan(3_500)
    expect(s.pageHits()).toBeLessThan(s.n)
  }, 20_000)

  test('pause answers 409 unless running; resume answers 409 unless paused', async () => {
    const s = site(20)
    const { id } = await startRun(s, 2)
    expect((await client.put(`/v1/runs/${id}/resume`)).status).toBe(409)
    expect((await client.put(`/v1/runs/${id}/pause`)).status).toBe(200)
    expect((await client.put(`/v1/runs/${id}/pause`)).status).toBe(409)
    expect((await client.put(`/v1/runs/${id}/stop`)).status).toBe(200)
    expect((await client.put(`/v1/runs/${id}/resume`)).status).toBe(409)
    expect((await client.put(`/v1/runs/${id}/pause`)).status).toBe(409)
    expect((await client.put(`/v1/runs/${id}/stop`)).status).toBe(409)
  })
})

// ------------------------------------------------------------------ stop

describe('stop', () => {
  test('finished with manual at once; in-flight fetches are aborted and logged as interrupted, nothing more is fetched or recorded', async () => {
    const s = site(80)
    const concurrency = 3
    const { id, seq } = await startRun(s, concurrency)
    await fillSlots(s, concurrency)
    const arrivalsAtStop = s.arrivals.length
    const heldUrls = s.held.map((h) => s.url(Number(h.path.slice(3))))

    const stoppedAt = Date.now()
    const r = await client.put(`/v1/runs/${id}/stop`)
    expect(r.status).toBe(200)
    expect(r.body.status).toBe('finished')
    expect(r.body.stop_reason).toBe('manual')
    expect(r.body.finished_at).not.toBeNull()

    // The execution notices within a tick or a few, and aborts what hangs on the fixture.
    await waitFor('the execution to leave', () => runner.execution(seq) === null, 2_000)
    expect(Date.now() - stoppedAt).toBeLessThan(1_500)
    await waitFor('the held requests to be aborted by the client', () => s.held.every((h) => h.aborted), 1_000)
    s.release()
    await Bun.sleep(700)

    // No fetch started after the stop, though the aborted ones freed every slot.
    expect(s.arrivals.length).toBe(arrivalsAtStop)
    // Recorded: exactly the pages whose visit was complete when the stop came (every slot then
    // hung on the fixture), none of the aborted ones.
    const done = s.arrivals.filter((a) => a.path.startsWith('/p/') && !s.held.includes(a)).map((a) => s.url(Number(a.path.slice(3))))
    const urls = await visited(id)
    expect(urls.slice().sort()).toEqual(done.sort())
    // Artifacts likewise: the raw and parsed bodies of those pages, nothing of the aborted ones.
    const artifactPages = (api.db.query('SELECT DISTINCT url_hash FROM artifacts WHERE run_id = ?').all(id) as { url_hash: string }[]).map((a) => a.url_hash)
    expect(artifactPages.sort()).toEqual(done.map(linkHash).sort())
    // The aborted fetches, which the fixture did see, are logged once each as interrupted, dated
    // when they started; nothing else of them, and nothing at all after the stop.
    const logs = await client.get(`/v1/runs/${id}/logs?per_page=100`)
    expect(logs.status).toBe(200)
    expect(logs.body.data.filter((e: { occurred_at: string }) => Date.parse(e.occurred_at) > stoppedAt)).toEqual([])
    const ofHeld = logs.body.data.filter((e: { url: string }) => heldUrls.includes(e.url))
    expect(ofHeld.map((e: { url: string; step: string; status: string; error_reason: string }) => [e.url, e.step, e.status, e.error_reason]).sort()).toEqual(
      heldUrls.map((u) => [u, 'fetch', 'error', 'interrupted']).sort(),
    )

    const run = await runOf(id)
    expect(run.status).toBe('finished')
    expect(run.stop_reason).toBe('manual')
    expect(run.finished_at).toBe(r.body.finished_at)
    expect(run.stats.visited).toBe(done.length)
    expect(leaseOwner(seq)).toBeNull()
    expect(leased(seq)).toBe(0)
    expect(runner.execution(seq)).toBeNull()
  }, 30_000)

  test('a stop while a paused execution still waits for its fetches aborts them too: they are logged as interrupted, nothing after the stop', async () => {
    const s = site(40)
    const { id, seq } = await startRun(s, 2)
    await fillSlots(s, 2)
    const heldUrls = s.held.map((h) => s.url(Number(h.path.slice(3))))
    expect((await client.put(`/v1/runs/${id}/pause`)).status).toBe(200)
    await Bun.sleep(700) // past the loop's longest sleep (500 ms): the execution has seen the pause and waits for its two fetches
    expect(runner.execution(seq)).not.toBeNull()
    const stoppedAt = Date.now()
    const r = await client.put(`/v1/runs/${id}/stop`)
    expect(r.body).toMatchObject({ status: 'finished', stop_reason: 'manual' })
    // Aborted before they are released: the fixture would answer them otherwise.
    await waitFor('the held requests to be aborted by the client', () => s.held.every((h) => h.aborted), 3_000)
    const abortedBeforeRelease = s.held.map((h) => h.aborted)
    s.release()
    await waitFor('the execution to leave', () => runner.execution(seq) === null, 3_000)
    await Bun.sleep(100)
    const urls = await visited(id)
    const logs = (await client.get(`/v1/runs/${id}/logs?per_page=100`)).body.data as { url: string; occurred_at: string; status: string; error_reason?: string }[]
    expect({
      aborted: abortedBeforeRelease,
      recordedHeld: heldUrls.filter((u) => urls.includes(u)),
      loggedAfterStop: logs.filter((e) => Date.parse(e.occurred_at) > stoppedAt).map((e) => e.url),
      // Each aborted fetch is in the log, once, as interrupted.
      heldLogged: logs.filter((e) => heldUrls.includes(e.url)).map((e) => `${e.status} ${e.error_reason}`),
    }).toEqual({ aborted: [true, true], recordedHeld: [], loggedAfterStop: [], heldLogged: ['error interrupted', 'error interrupted'] })
    expect(await runOf(id)).toMatchObject({ status: 'finished', stop_reason: 'manual' })
  }, 20_000)

  test('a paused run stops with manual and is never picked up again', async () => {
    const s = site(40)
    const { id, seq } = await startRun(s, 2)
    await waitFor('some pages', () => s.pageHits() >= 5)
    expect((await client.put(`/v1/runs/${id}/pause`)).status).toBe(200)
    await waitFor('the execution to leave', () => runner.execution(seq) === null, 3_000)
    const r = await client.put(`/v1/runs/${id}/stop`)
    expect(r.status).toBe(200)
    expect(r.body).toMatchObject({ status: 'finished', stop_reason: 'manual' })
    const before = s.arrivals.length
    await Bun.sleep(700)
    expect(s.arrivals.length).toBe(before)
    expect(runner.execution(seq)).toBeNull()
    expect(await runOf(id)).toMatchObject({ status: 'finished', stop_reason: 'manual' })
  }, 20_000)

  test('a pending run stops with manual before anything is fetched', async () => {
    // A second engine over its own data dir that is not started yet: the run stays pending.
    const other = testApi({ TRAWL_ALLOW_PRIVATE_NETWORKS: 'true' })
    const log = createLogger('warn', () => {})
    const idle = new Runner({ store: other.store, fetcher: other.fetcher, parser: other.parser, blobs: other.blobs, log }, 4)
    try {
      const s = site(10)
      const created = await other.post('/v1/jobs?create_run=true', { name: 'pending', config: { seeds: [s.url(0)] } })
      const id = created.body.run.id as string
      expect(created.body.run.status).toBe('pending')
      const r = await other.put(`/v1/runs/${id}/stop`)
      expect(r.status).toBe(200)
      expect(r.body).toMatchObject({ status: 'finished', stop_reason: 'manual' })
      idle.start()
      await Bun.sleep(700)
      expect(s.arrivals).toEqual([])
      expect((await other.get(`/v1/runs/${id}`)).body).toMatchObject({ status: 'finished', stop_reason: 'manual', started_at: null })
    } finally {
      await idle.stop()
      other.close()
    }
  }, 20_000)
})

// ------------------------------------------------------------------ shutdown

describe('shutdown', () => {
  test('a shutdown while a paused execution still waits for its fetches is prompt too: they are aborted and requeued', async () => {
    // Its own engine, since this one is shut down (what SIGTERM does to `trawl serve`).
    const other = testApi({ TRAWL_ALLOW_PRIVATE_NETWORKS: 'true' })
    const log = createLogger('warn', () => {})
    const engine = new Runner({ store: other.store, fetcher: other.fetcher, parser: other.parser, blobs: other.blobs, log }, 4)
    const app = managementApp({ store: other.store, config: other.config, log, parser: other.parser, fetcher: other.fetcher, blobs: other.blobs, engine })
    const c = jsonClient('http://trawl.test', (request) => app.handle(request))
    const s = site(40)
    try {
      engine.start()
      const created = await c.post('/v1/jobs?create_run=true', { name: 'shutdown', config: { seeds: [s.url(0)], limits: { max_depth: 50 }, politeness: { concurrency: 2, per_host_concurrency: 2 } } })
      const id = created.body.run.id as string
      const seq = other.repos.frontier.runSeq('acme', id)!
      await fillSlots(s, 2)
      expect((await c.put(`/v1/runs/${id}/pause`)).status).toBe(200)
      await Bun.sleep(700) // the execution has seen the pause and waits for its two fetches
      const t0 = Date.now()
      const stopped = await Promise.race([engine.stop().then(() => 'stopped'), Bun.sleep(2_000).then(() => 'still waiting')])
      const took = Date.now() - t0
      // The server sees a client's abort on its next turns, not at once; waited for before the
      // release, which would otherwise answer them.
      if (stopped === 'stopped') await waitFor('the held requests to be aborted by the client', () => s.held.every((h) => h.aborted), 3_000).catch(() => {})
      const aborted = s.held.map((h) => h.aborted)
      s.release()
      expect({ stopped, aborted }).toEqual({ stopped: 'stopped', aborted: [true, true] })
      expect(took).toBeLessThan(1_500)
      expect(other.repos.frontier.counts(seq).leased).toBe(0)
      expect(other.repos.frontier.run(seq)!.lease_owner).toBeNull()
      expect((await c.get(`/v1/runs/${id}`)).body.status).toBe('paused')
    } finally {
      s.release()
      await engine.stop()
      other.close()
    }
  }, 20_000)
})
