// Three `trawl serve` processes on one PostgreSQL database crawl a run; one is killed with -9
// mid-crawl. Its worker lease lapses (15 s), the others take its hosts over, and the run
// finishes: every page fetched, the dead process's unfinished pages (in flight or not committed,
// at most its concurrency) fetched a second time and no others, each second fetch in the crawl
// log as the `retried` `interrupted` fetch it repeats, and the dead process, started again on its
// data dir, logs none of them twice. Measured at the fixture server
// (test/helpers/multi-host-site.ts). Build the binary first (`bun run build`).
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { cleanup } from '../helpers/binary'
import { startCluster, wholeSite, type Cluster } from '../helpers/cluster'
import { multiHostSite, untilSite, type MultiHostSite } from '../helpers/multi-host-site'
import { clusterPort } from '../helpers/postgres'

let cluster: Cluster
let s: MultiHostSite

beforeAll(async () => {
  clusterPort()
  cluster = await startCluster({ processes: 3 })
  s = multiHostSite({ hosts: 12, pagesPerHost: 10, linksPerPage: 3, delayMs: 150, first: 30, identify: cluster.identify })
}, 60_000)
afterAll(async () => {
  await s?.close()
  await cluster?.close()
  await cleanup()
})

test('a process killed mid-crawl: the run finishes, its unfinished pages alone fetched again, each logged retried interrupted', async () => {
  const concurrency = 4
  const { runId } = await cluster.createJob(wholeSite(s.seed, { concurrency, per_host_concurrency: 2 }))
  // Mid-crawl: a process other than n0 (the one the test talks to) has fetches in flight, and a fair part of the site is done.
  const inFlightOf = (name: string) => s.requests.filter((r) => r.kind === 'page' && r.client === name && r.end === null).length
  let victim = -1
  await untilSite(s, 'n1 or n2 with two fetches in flight', () => s.totalFetches() >= 20 && (victim = [1, 2].find((i) => inFlightOf(`n${i}`) >= 2) ?? -1) >= 0)
  const name = `n${victim}`
  await s.settled() // every request so far named, while its sender is alive
  const killedAt = Date.now()
  const exit = await cluster.kill9(victim)
  expect(exit.signal).toBe('SIGKILL')
  const byVictim = new Set(s.requests.filter((r) => r.kind === 'page' && r.client === name).map((r) => r.url))

  // The dead process's worker lease has to lapse (15 s) before its hosts are taken over.
  const run = await cluster.finished(runId!, 45_000)
  await s.settled()
  const summary = s.summary()
  expect({ status: run.status, outcome: run.outcome, visited: run.stats.visited }).toEqual({ status: 'finished', outcome: 'complete', visited: 120 })
  expect(s.unfetched()).toEqual([])
  const again = s.duplicates()
  // Fetched twice at most, first by the dead process, and no more of them than its concurrency.
  for (const [url, n] of again) expect({ url, n, firstByDead: byVictim.has(url) }).toEqual({ url, n: 2, firstByDead: true })
  expect({ refetched: again.length, atMostConcurrency: again.length <= concurrency, summary }).toEqual({ refetched: again.length, atMostConcurrency: true, summary })
  // Every second fetch is in the crawl log as the interrupted fetch it repeats, dated when that one started.
  const interrupted = await cluster.logs(runId!, 'steps=fetch&statuses=retried&error_reasons=interrupted')
  const logged = new Set(interrupted.map((e: { url: string }) => e.url))
  expect(again.map(([url]) => url).filter((u) => !logged.has(u))).toEqual([])
  for (const e of interrupted) expect(Date.parse(e.occurred_at)).toBeLessThanOrEqual(killedAt)
  // One holder a host at a time, dead or alive.
  expect(s.maxInFlight()).toBeLessThanOrEqual(2)

  // The dead process's own journal, read when it starts again, adds no second entry for a fetch already logged.
  await cluster.restart(victim)
  await Bun.sleep(1500)
  const after = await cluster.logs(runId!, 'steps=fetch&statuses=retried&error_reasons=interrupted')
  expect(after.map((e: { url: string }) => e.url).sort()).toEqual(interrupted.map((e: { url: string }) => e.url).sort())
}, 70_000)
