// Three `trawl serve` processes on one PostgreSQL database and one S3 bucket crawl runs together
// (decision 112): a run's host queues are leased one process per host, so per_host_concurrency,
// politeness.delay and the cluster-wide per-host ceiling (TRAWL_HOST_CEILING) hold across the
// processes. Everything is asserted from the fixture server's side (test/helpers/multi-host-site.ts):
// which process sent each request (the owner of its socket), how many requests a host had in
// flight, the gaps between them, how many times each page was fetched. Each process's webhook
// deliverer shares the outbox (decision 116): every event of a run arrives once. Build the binary
// first (`bun run build`).
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { cleanup } from '../helpers/binary'
import { startCluster, wholeSite, type Cluster } from '../helpers/cluster'
import { gapFloor } from '../helpers/arrivals'
import { multiHostSite, untilSite, type MultiHostSite, type MultiHostSiteOptions } from '../helpers/multi-host-site'
import { clusterPort } from '../helpers/postgres'
import { waitFor } from '../helpers/wait'
import { webhookReceiver } from '../helpers/webhook-receiver'

const CEILING = 3
let cluster: Cluster
const sites: MultiHostSite[] = []
const receiver = webhookReceiver()

beforeAll(async () => {
  clusterPort() // PostgreSQL starts here, not inside a test's time
  cluster = await startCluster({ processes: 3, env: { TRAWL_HOST_CEILING: String(CEILING) } })
}, 60_000)
afterAll(async () => {
  receiver.stop()
  for (const s of sites) await s.close()
  await cluster?.close()
  await cleanup()
})

const site = (o: MultiHostSiteOptions) => {
  const s = multiHostSite({ ...o, identify: cluster.identify })
  sites.push(s)
  return s
}

describe('one run, three processes', () => {
  test('split across all three: every page fetched once, per-host limits and the delay held cluster-wide', async () => {
    const s = site({ hosts: 12, pagesPerHost: 8, linksPerPage: 3, delayMs: 250 })
    const { runId } = await cluster.createJob(wholeSite(s.seed, { concurrency: 4, per_host_concurrency: 2, delay: '200ms' }))
    const run = await cluster.finished(runId!, 40_000)
    await s.settled()
    const m = s.summary()
    expect({ status: run.status, outcome: run.outcome, visited: run.stats.visited, failed: run.stats.failed }).toEqual({ status: 'finished', outcome: 'complete', visited: 96, failed: 0 })
    expect({ unfetched: s.unfetched(), duplicates: s.duplicates() }).toEqual({ unfetched: [], duplicates: [] })
    const visits = await cluster.visits(runId!)
    expect({ visits: visits.length, distinct: new Set(visits.map((v: { url: string }) => v.url)).size }).toEqual({ visits: 96, distinct: 96 })
    // Each process fetched pages, and every request came from one of them.
    expect({ processes: Object.keys(m.byClient).sort(), summary: m }).toEqual({ processes: ['n0', 'n1', 'n2'], summary: m })
    // Per host, as the site saw the arrivals (gapFloor says why not the delay itself).
    expect(s.hostStats().filter((h) => h.maxInFlight > 2 || h.minGapMs < gapFloor(200))).toEqual([])
  }, 50_000)
})

describe('run moves seen by every process', () => {
  test('pause through one process: no process starts a fetch two seconds later; resume through another finishes with every page once', async () => {
    const s = site({ hosts: 10, pagesPerHost: 12, linksPerPage: 3, delayMs: 100, first: 60 })
    const { runId } = await cluster.createJob(wholeSite(s.seed, { concurrency: 4, per_host_concurrency: 1, delay: '200ms' }))
    await untilSite(s, 'all three fetching', () => Object.keys(s.byClient()).length === 3 && s.totalFetches() >= 15)
    await cluster.pause(runId!, 1)
    const pausedAt = Date.now()
    for (const i of [0, 1, 2]) expect((await cluster.run(runId!, i)).status).toBe('paused')
    await Bun.sleep(3500)
    await s.settled()
    const late = s.pageRequests(pausedAt + 2000)
    const lastByClient: Record<string, number> = {}
    for (const r of s.pageRequests(pausedAt)) lastByClient[r.client ?? '?'] = Math.round(r.at - pausedAt)
    expect({ late: late.map((r) => `${r.client} ${r.url} +${Math.round(r.at - pausedAt)} ms`), lastByClient }).toEqual({ late: [], lastByClient })
    const fetchedWhilePaused = s.totalFetches()
    expect(fetchedWhilePaused).toBeLessThan(120)

    await cluster.resume(runId!, 2)
    const run = await cluster.finished(runId!, 40_000)
    expect({ status: run.status, outcome: run.outcome, visited: run.stats.visited }).toEqual({ status: 'finished', outcome: 'complete', visited: 120 })
    expect({ unfetched: s.unfetched(), duplicates: s.duplicates() }).toEqual({ unfetched: [], duplicates: [] })
    // One at a time a host, 200 ms apart (gapFloor), across the pause and the hand-overs.
    expect(s.hostStats().filter((h) => h.maxInFlight > 1 || h.minGapMs < gapFloor(200))).toEqual([])
  }, 60_000)

  test('stop through one process: finished manual at once, and no process starts a fetch two seconds later', async () => {
    const s = site({ hosts: 10, pagesPerHost: 12, linksPerPage: 3, delayMs: 100, first: 80 })
    const { runId } = await cluster.createJob(wholeSite(s.seed, { concurrency: 4, per_host_concurrency: 1, delay: '200ms' }))
    await untilSite(s, 'all three fetching', () => Object.keys(s.byClient()).length === 3 && s.totalFetches() >= 15)
    const stopped = await cluster.stop(runId!, 2)
    const stoppedAt = Date.now()
    expect({ status: stopped.status, stop_reason: stopped.stop_reason }).toEqual({ status: 'finished', stop_reason: 'manual' })
    await Bun.sleep(3000)
    await s.settled()
    const late = s.pageRequests(stoppedAt + 2000)
    expect(late.map((r) => `${r.client} ${r.url} +${Math.round(r.at - stoppedAt)} ms`)).toEqual([])
    for (const i of [0, 1, 2]) expect((await cluster.run(runId!, i)).status).toBe('finished')
    expect(s.duplicates()).toEqual([])
  }, 40_000)
})

describe('the per-host ceiling across runs and processes', () => {
  test(`two jobs crawling one site together never have more than TRAWL_HOST_CEILING (${CEILING}) requests in flight to a host`, async () => {
    const s = site({ hosts: 4, pagesPerHost: 15, linksPerPage: 3, delayMs: 200, first: 100 })
    // Each run alone may have 2 in flight on a host; together they could have 4.
    const config = wholeSite(s.seed, { concurrency: 8, per_host_concurrency: 2 })
    const [a, b] = await Promise.all([cluster.createJob(config, { via: 0, name: 'a' }), cluster.createJob(config, { via: 2, name: 'b' })])
    const runs = await Promise.all([cluster.finished(a.runId!, 40_000), cluster.finished(b.runId!, 40_000)])
    for (const run of runs) expect({ outcome: run.outcome, visited: run.stats.visited }).toEqual({ outcome: 'complete', visited: 60 })
    // Each page once per run.
    expect(s.unfetched()).toEqual([])
    expect(s.urls.filter((u) => s.fetchCount(u) !== 2)).toEqual([])
    const perHost = s.hostStats().map((h) => `${h.host} ${h.maxInFlight}`)
    expect(s.hostStats().filter((h) => h.maxInFlight > CEILING)).toEqual([])
    // The runs did overlap on a host: the ceiling, not per_host_concurrency, was what held them.
    expect({ perHost, reached: s.maxInFlight() }).toEqual({ perHost, reached: CEILING })
  }, 50_000)
})

describe('webhooks across processes', () => {
  test('a run crawled by three processes, paused through one and resumed through another: each of its four events arrives once', async () => {
    const hook = await cluster.api(0).post('/v1/webhooks', { url: receiver.url(), events: ['run.started', 'run.paused', 'run.resumed', 'run.finished'] })
    expect(hook.status).toBe(201)
    receiver.trust(hook.body.secret)
    const s = site({ hosts: 8, pagesPerHost: 6, linksPerPage: 3, delayMs: 80 })
    const { runId } = await cluster.createJob(wholeSite(s.seed, { concurrency: 4, per_host_concurrency: 1 }), { via: 1 })
    await untilSite(s, 'all three fetching', () => Object.keys(s.byClient()).length === 3 && s.totalFetches() >= 10)
    await cluster.pause(runId!, 1)
    await cluster.resume(runId!, 2)
    const run = await cluster.finished(runId!, 40_000)
    expect(run.stats.visited).toBe(48)

    const types = () => receiver.ofRun(runId!).map((r) => r.type)
    await waitFor('the four events', () => types().length >= 4, 15_000, 50)
    // Every process polls the outbox each second: a second sender would have sent by now.
    await Bun.sleep(2500)
    expect(types().sort()).toEqual(['run.finished', 'run.paused', 'run.resumed', 'run.started'])
    expect(new Set(receiver.ofRun(runId!).map((r) => r.id)).size).toBe(4)
    expect(receiver.rejected).toEqual([])
    const finished = receiver.ofRun(runId!).find((r) => r.type === 'run.finished')!
    expect(finished.data).toEqual({ run_id: runId, job_id: run.job_id, status: 'finished', stop_reason: run.stop_reason, outcome: run.outcome, stats: run.stats, error_counts: run.error_counts })
    const rows = await cluster.sql()`SELECT status, count(*)::int AS n, sum(attempts)::int AS attempts FROM webhook_deliveries GROUP BY status`
    expect([...rows]).toEqual([{ status: 'delivered', n: 4, attempts: 4 }])
  }, 60_000)
})
