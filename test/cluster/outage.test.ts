// Two `trawl serve` processes on one PostgreSQL database crawl a run, and the database goes away
// for five seconds (a fast shutdown: every connection is cut). The processes stay up: their
// executions leave the run (their uncommitted pages lost), their runners and schedulers go on
// asking, and when the database is back they join the run again, give back what they had taken,
// and finish it. Pages fetched twice are at most what the processes had in flight or not yet
// committed: their concurrency together. Build the binary first (`bun run build`).
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { cleanup } from '../helpers/binary'
import { startCluster, wholeSite, type Cluster } from '../helpers/cluster'
import { multiHostSite, untilSite, type MultiHostSite } from '../helpers/multi-host-site'
import { clusterPort, takeClusterAway } from '../helpers/postgres'

let cluster: Cluster
let s: MultiHostSite

beforeAll(async () => {
  clusterPort()
  cluster = await startCluster({ processes: 2 })
  s = multiHostSite({ hosts: 8, pagesPerHost: 10, linksPerPage: 3, delayMs: 100, identify: cluster.identify })
}, 60_000)
afterAll(async () => {
  await s?.close()
  await cluster?.close()
  await cleanup()
})

test('the database away for five seconds: both processes stay up and finish the run, fetching again at most their concurrency', async () => {
  const concurrency = 4
  const { runId } = await cluster.createJob(wholeSite(s.seed, { concurrency, per_host_concurrency: 1 }))
  await untilSite(s, 'both fetching', () => Object.keys(s.byClient()).length === 2 && s.totalFetches() >= 20)
  const away = takeClusterAway()
  await Bun.sleep(5000)
  away.back()
  const run = await cluster.finished(runId!, 45_000)
  expect({ status: run.status, outcome: run.outcome, visited: run.stats.visited }).toEqual({ status: 'finished', outcome: 'complete', visited: 80 })
  expect(s.unfetched()).toEqual([])
  expect(s.duplicates().length).toBeLessThanOrEqual(2 * concurrency)
  for (const node of cluster.nodes) expect({ node: node.name, exitCode: node.trawl.proc.exitCode, signal: node.trawl.proc.signalCode }).toEqual({ node: node.name, exitCode: null, signal: null })
}, 80_000)
