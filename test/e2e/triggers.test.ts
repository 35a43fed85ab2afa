// End-to-end: triggers across restarts of the compiled binary (design.md §5). Ticks missed while
// `trawl serve` was down fire once when it starts (not once per tick); an on_finish firing
// whose delay ran out while the process was down (killed with -9 just after the finish was
// acknowledged) fires after the restart. Only 127.0.0.1 is contacted.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { cleanup, ensureBinary, freePorts, startTrawl, tempDir } from '../helpers/binary'
import { waitFor } from '../helpers/wait'

beforeAll(() => ensureBinary(), 180_000)
afterAll(() => cleanup())

type Execution = { id: string; run_id: string | null; outcome: string; scheduled_at: string; executed_at: string }

// Runs these triggers create crawl a port nothing listens on: they fail fast and finish.
const deadSeed = () => `http://127.0.0.1:${freePorts(1)[0]}/`
const env = { TRAWL_ALLOW_PRIVATE_NETWORKS: 'true' }

describe('triggers across restarts', () => {
  test('two ticks missed while the process was down fire once at start; the next tick is next year', async () => {
    const dataDir = tempDir()
    let trawl = await startTrawl({ dataDir, env })
    const job = (await trawl.api.post('/v1/jobs', { name: 'yearly', config: { seeds: [deadSeed()] } })).body
    // Two seconds a few seconds ahead, in one minute (UTC: the default zone).
    let first: Date
    do {
      first = new Date(Math.ceil(Date.now() / 1000) * 1000 + 3000)
      if (first.getUTCSeconds() > 55) await Bun.sleep(5000)
    } while (first.getUTCSeconds() > 55)
    const s = first.getUTCSeconds()
    const expression = `${s},${s + 1} ${first.getUTCMinutes()} ${first.getUTCHours()} ${first.getUTCDate()} ${first.getUTCMonth() + 1} *`
    const t = await trawl.api.post(`/v1/jobs/${job.id}/triggers`, { name: 'twice', condition: { kind: 'schedule', params: { expression } } })
    expect(t.status).toBe(201)
    expect((await trawl.stop()).code).toBe(0)

    await Bun.sleep(first.getTime() + 2000 - Date.now())
    const restartedAt = Date.now()
    trawl = await startTrawl({ dataDir, env })
    const [execution] = await waitFor(
      'the missed tick',
      async () => {
        const e = (await trawl.api.get(`/v1/triggers/${t.body.id}/executions`)).body.data as Execution[]
        return e.length > 0 ? e : null
      },
      15_000,
      50,
    )
    expect(execution!.outcome).toBe('created_run')
    expect(execution!.scheduled_at).toBe(first.toISOString())
    expect(Date.parse(execution!.executed_at)).toBeGreaterThanOrEqual(restartedAt)
    const runs = (await trawl.api.get(`/v1/jobs/${job.id}/runs`)).body.data
    expect(runs.map((r: { id: string }) => r.id)).toEqual([execution!.run_id])
    await Bun.sleep(1500)
    expect((await trawl.api.get(`/v1/triggers/${t.body.id}/executions`)).body.data).toHaveLength(1)
    expect((await trawl.api.get(`/v1/triggers/${t.body.id}`)).body.last_executed_at).toBe(execution!.executed_at)
    await trawl.stop()
  }, 60_000)

  test('an on_finish firing that fell due while the process was down (kill -9) fires after the restart', async () => {
    const dataDir = tempDir()
    let trawl = await startTrawl({ dataDir, env })
    // A seed that never answers keeps the run running until it is stopped.
    const hanging = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: () => new Promise<Response>(() => {}) })
    const job = (await trawl.api.post('/v1/jobs', { name: 'after', config: { seeds: [`http://127.0.0.1:${hanging.port}/`], politeness: { respect_robots: false } } })).body
    const t = (await trawl.api.post(`/v1/jobs/${job.id}/triggers`, { name: 'later', condition: { kind: 'on_finish', params: { delay: '2s' } } })).body
    const run = (await trawl.api.post(`/v1/jobs/${job.id}/runs`)).body
    await waitFor('the run to be running', async () => (await trawl.api.get(`/v1/runs/${run.id}`)).body.status === 'running', 15_000, 50)
    const stopped = await trawl.api.put(`/v1/runs/${run.id}/stop`)
    await trawl.kill9()
    hanging.stop(true)
    expect(stopped.status).toBe(200)
    expect(stopped.body.stop_reason).toBe('manual')
    const finishedAt = Date.parse(stopped.body.finished_at)

    await Bun.sleep(Math.max(0, finishedAt + 2500 - Date.now()))
    const restartedAt = Date.now()
    trawl = await startTrawl({ dataDir, env })
    const [execution] = await waitFor(
      'the delayed firing',
      async () => {
        const e = (await trawl.api.get(`/v1/triggers/${t.id}/executions`)).body.data as Execution[]
        return e.length > 0 ? e : null
      },
      15_000,
      50,
    )
    expect(execution!.outcome).toBe('created_run')
    expect(execution!.scheduled_at).toBe(new Date(finishedAt + 2000).toISOString())
    expect(Date.parse(execution!.executed_at)).toBeGreaterThanOrEqual(restartedAt)
    const created = (await trawl.api.get(`/v1/runs/${execution!.run_id}`)).body
    expect(created.job_id).toBe(job.id)
    await trawl.api.put(`/v1/triggers/${t.id}/disable`)
    await trawl.stop()
  }, 60_000)
})
