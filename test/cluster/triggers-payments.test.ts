// Three `trawl serve` processes on one PostgreSQL database: each runs its own triggers'
// scheduler and its own x402 gate, and the database alone keeps them from doing a thing twice.
// A schedule ticking every second makes one execution (one run at most) per tick, whichever
// process fires it; one payment authorization sent 20 times at once to the three scrape ports is
// served once, without a facilitator and with one. Build the binary first (`bun run build`).
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { cleanup, freePorts } from '../helpers/binary'
import { startCluster, type Cluster } from '../helpers/cluster'
import { b64, loopbackFacilitator, PAY_TO, v2Payload } from '../payment/helpers'
import { clusterPort } from '../helpers/postgres'

const PAID = { TRAWL_PAY_TO: PAY_TO, TRAWL_PRICE: '$0.001' }
let cluster: Cluster
let site: ReturnType<typeof Bun.serve>
const closers: (() => Promise<unknown>)[] = []

beforeAll(async () => {
  clusterPort()
  cluster = await startCluster({ processes: 3, env: PAID })
  site = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    fetch: (req) =>
      new URL(req.url).pathname === '/page' ? new Response('<html><body><h1>Paid for</h1></body></html>', { headers: { 'content-type': 'text/html' } }) : new Response('no', { status: 404 }),
  })
}, 60_000)
afterAll(async () => {
  for (const close of closers) await close()
  await cluster?.close()
  site?.stop(true)
  await cleanup()
})

type Execution = { id: string; run_id: string | null; outcome: string; scheduled_at: string; executed_at: string }

describe('triggers', () => {
  test('a schedule every second fires once a tick across the three processes, one run at most a tick', async () => {
    // Runs of a port nothing listens on fail fast and finish, so most ticks find the last run done.
    const { jobId } = await cluster.createJob({ seeds: [`http://127.0.0.1:${freePorts(1)[0]}/`] }, { run: false, name: 'every second' })
    const t = await cluster.api(0).post(`/v1/jobs/${jobId}/triggers`, { name: 'each second', condition: { kind: 'schedule', params: { expression: '* * * * * *' } } })
    expect(t.status).toBe(201)
    const createdAt = Date.now()
    await Bun.sleep(6000)
    expect((await cluster.api(1).put(`/v1/triggers/${t.body.id}/disable`)).status).toBe(200)
    const disabledAt = Date.now()
    await Bun.sleep(1500) // a firing under way when it was disabled lands

    const executions = (await cluster.all(`/v1/triggers/${t.body.id}/executions`, 2)) as Execution[]
    const ticks = executions.map((e) => Date.parse(e.scheduled_at)).sort((a, b) => a - b)
    // One execution a tick: no tick twice, none skipped between the first and the last.
    expect(ticks.filter((x, i) => x === ticks[i - 1])).toEqual([])
    expect(ticks.filter((x, i) => i > 0 && x - ticks[i - 1]! !== 1000)).toEqual([])
    expect(ticks.length).toBeGreaterThanOrEqual(Math.floor((disabledAt - createdAt) / 1000) - 1)
    expect(ticks[ticks.length - 1]!).toBeLessThanOrEqual(disabledAt)
    // Each created run is one of the job's runs, and the job has no other.
    const created = executions.filter((e) => e.outcome === 'created_run').map((e) => e.run_id!)
    const runs = (await cluster.all(`/v1/jobs/${jobId}/runs`, 1)).map((r: { id: string }) => r.id)
    expect(new Set(created).size).toBe(created.length)
    expect(runs.sort()).toEqual([...created].sort())
    expect(created.length).toBeGreaterThanOrEqual(1)
    expect(executions.filter((e) => e.outcome !== 'created_run' && e.outcome !== 'skipped')).toEqual([])
  }, 30_000)
})

describe('x402 across processes', () => {
  const scrape = (base: string, header: string) =>
    fetch(`${base}/v1/scrape`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'PAYMENT-SIGNATURE': header },
      body: JSON.stringify({ url: `http://127.0.0.1:${site.port}/page` }),
    }).then(async (r) => ({ status: r.status, body: await r.text() }))
  /** 20 copies of one payment, spread over the scrape ports in turn, all sent at once. */
  const replay = async (bases: string[]) => {
    const header = b64(await v2Payload({ accepted: undefined }))
    return Promise.all(Array.from({ length: 20 }, (_, i) => scrape(bases[i % bases.length]!, header)))
  }

  test('20 concurrent copies of one payment to the three scrape ports: exactly one 200', async () => {
    const answers = await replay(cluster.scrapeUrls())
    const statuses = answers.map((a) => a.status)
    expect({ ok: statuses.filter((s) => s === 200).length, refused: statuses.filter((s) => s === 402).length }).toEqual({ ok: 1, refused: 19 })
    expect([...new Set(answers.filter((x) => x.status === 402).map((a) => JSON.parse(a.body).error))]).toEqual(['duplicate_settlement'])
    const rows = await cluster.sql()`SELECT status FROM payments`
    expect(rows.map((r: { status: string }) => r.status)).toEqual(['served'])
  })

  test('with a facilitator: exactly one 200 and one settlement', async () => {
    const facilitator = loopbackFacilitator()
    closers.push(async () => facilitator.server.stop(true))
    // Three more processes on the same database and bucket, these settling through the facilitator.
    const settling = await startCluster({ processes: 3, env: { ...PAID, TRAWL_FACILITATOR_URL: facilitator.url }, databaseUrl: cluster.databaseUrl!, s3: cluster.s3! })
    closers.push(() => settling.close())
    const answers = await replay(settling.scrapeUrls())
    expect(answers.filter((a) => a.status === 200)).toHaveLength(1)
    expect(answers.filter((a) => a.status === 402)).toHaveLength(19)
    expect(facilitator.paths().filter((p) => p === '/settle')).toHaveLength(1)
  }, 40_000)
})
