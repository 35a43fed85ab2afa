// Triggers with the real clock, the real runner and real crawls, wired as `trawl serve` wires
// them (createEngines): a second-level schedule creating runs that crawl, disabling stopping it,
// on_finish with and without a delay, and a recurring loop that disabling ends. Seconds, not
// minutes: schedules tick every second and delays are a few hundred milliseconds.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { createLogger } from '../../src/log'
import { createEngines, managementApp } from '../../src/server'
import { jsonClient } from '../helpers/client'
import { testApi, type TestApi } from '../helpers/api'
import { waitFor } from '../helpers/wait'

let api: TestApi
let engines: ReturnType<typeof createEngines>
let client: ReturnType<typeof jsonClient>
let server: ReturnType<typeof Bun.serve>
const fetched: string[] = []

beforeAll(() => {
  // Three pages that link to each other: each run crawls them all and finishes in milliseconds.
  server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    fetch(req) {
      const path = new URL(req.url).pathname
      fetched.push(path)
      if (path === '/robots.txt') return new Response('', { status: 404 })
      const links = ['/a', '/b', '/c'].map((p) => `<a href="${p}">${p}</a>`).join(' ')
      return new Response(`<html><body>${links}</body></html>`, { headers: { 'content-type': 'text/html' } })
    },
  })
  api = testApi({ TRAWL_ALLOW_PRIVATE_NETWORKS: 'true' })
  const log = createLogger('warn', () => {})
  engines = createEngines({ store: api.store, fetcher: api.fetcher, parser: api.parser, blobs: api.blobs, log }, 4)
  const app = managementApp({ store: api.store, config: api.config, log, parser: api.parser, fetcher: api.fetcher, blobs: api.blobs, engine: engines })
  client = jsonClient('http://trawl.test', (request) => app.handle(request))
  engines.start()
})
afterAll(async () => {
  await engines.stop()
  server.stop(true)
  api.close()
})

const newJob = async (name: string) => {
  const r = await client.post('/v1/jobs', { name, config: { seeds: [`http://127.0.0.1:${server.port}/a`], limits: { max_depth: 5 } } })
  expect(r.status).toBe(201)
  return r.body as { id: string }
}
type Run = { id: string; status: string; stop_reason: string | null; finished_at: string | null; stats: { visited: number } }
type Execution = { id: string; run_id: string | null; outcome: string; scheduled_at: string; executed_at: string }
const runsOf = async (jobId: string) => (await client.get(`/v1/jobs/${jobId}/runs?per_page=100`)).body.data as Run[]
const executionsOf = async (triggerId: string) => (await client.get(`/v1/triggers/${triggerId}/executions?per_page=100`)).body.data as Execution[]

describe('with the real clock', () => {
  test('a schedule every second creates runs that crawl; disabled, it creates no more', async () => {
    const j = await newJob('every second')
    const t = (await client.post(`/v1/jobs/${j.id}/triggers`, { name: 'tick', condition: { kind: 'schedule', params: { expression: '* * * * * *' } } })).body
    const runs = await waitFor('two finished runs made by the schedule', async () => {
      const all = await runsOf(j.id)
      return all.filter((r) => r.status === 'finished').length >= 2 ? all : null
    })
    for (const r of runs.filter((r) => r.status === 'finished')) expect([r.stop_reason, r.stats.visited]).toEqual(['max_empty_evaluations', 3])
    expect((await client.put(`/v1/triggers/${t.id}/disable`)).status).toBe(200)
    const executions = await executionsOf(t.id)
    expect(executions.length).toBeGreaterThanOrEqual(2)
    for (const e of executions) {
      // Each execution is at a whole second, made within a moment of it.
      expect(Date.parse(e.scheduled_at) % 1000).toBe(0)
      // (Waiting for the 5 s poll would take seconds.)
      expect(Date.parse(e.executed_at) - Date.parse(e.scheduled_at)).toBeLessThan(2500)
      if (e.outcome === 'created_run') expect(runs.some((r) => r.id === e.run_id)).toBe(true)
    }
    await Bun.sleep(2500)
    expect(await executionsOf(t.id)).toHaveLength(executions.length)
    expect((await runsOf(j.id)).length).toBe(executions.filter((e) => e.outcome === 'created_run').length)
  })

  test('on_finish without a delay fires as soon as the run finishes', async () => {
    const j = await newJob('chain')
    const t = (await client.post(`/v1/jobs/${j.id}/triggers`, { name: 'next', condition: { kind: 'on_finish' } })).body
    const first = (await client.post(`/v1/jobs/${j.id}/runs`)).body as Run
    // Each run it creates finishes and fires it again: the oldest execution is the first run's.
    const execution = await waitFor('the first execution', async () => (await executionsOf(t.id)).at(-1))
    const done = (await client.get(`/v1/runs/${first.id}`)).body as Run
    expect(done.status).toBe('finished')
    expect(execution!.scheduled_at).toBe(done.finished_at!)
    expect(Date.parse(execution!.executed_at) - Date.parse(done.finished_at!)).toBeLessThan(2500)
    await client.put(`/v1/triggers/${t.id}/disable`)
  })

  test('a recurring loop (on_finish with a delay re-running the job) goes round until the trigger is disabled', async () => {
    const j = await newJob('loop')
    const t = (await client.post(`/v1/jobs/${j.id}/triggers`, { name: 'again', condition: { kind: 'on_finish', params: { delay: '300ms' } } })).body
    await client.post(`/v1/jobs/${j.id}/runs`)
    await waitFor('three rounds', async () => (await executionsOf(t.id)).length >= 3)
    expect((await client.put(`/v1/triggers/${t.id}/disable`)).body.enabled).toBe(false)
    const executions = await executionsOf(t.id)
    const runs = await waitFor('every run finished', async () => {
      const all = await runsOf(j.id)
      return all.every((r) => r.status === 'finished') ? all : null
    })
    // Every round waited its delay after the finish that caused it.
    for (const e of executions) {
      expect(e.outcome).toBe('created_run')
      const cause = runs.find((r) => Date.parse(r.finished_at!) + 300 === Date.parse(e.scheduled_at))
      expect(cause).toBeDefined()
      expect(Date.parse(e.executed_at)).toBeGreaterThanOrEqual(Date.parse(e.scheduled_at))
    }
    await Bun.sleep(1000)
    expect(await executionsOf(t.id)).toHaveLength(executions.length)
    expect(await runsOf(j.id)).toHaveLength(executions.length + 1)
    for (const r of runs) expect(r.stats.visited).toBe(3)
  })
})
