// The trigger scheduler on a fake clock (design.md §5 triggers): when ticks and on_finish firings
// fire, what each firing creates and records, and what never fires. Real SQLite, real routes;
// the scheduler's `now` is the only thing faked, and it is never started (no timers): each test
// calls tick() at the moments it wants.
import { afterEach, beforeEach, describe, expect, test } from 'bun:test'
import { join } from 'node:path'
import { createLogger } from '../../src/log'
import { triggerFirings } from '../../src/metrics'
import { Scheduler } from '../../src/schedule/scheduler'
import { job, testApi, type TestApi } from '../helpers/api'

let api: TestApi
let clock: number
let runsStarted: number
let scheduler: Scheduler
const logs: string[] = []

beforeEach(() => {
  api = testApi()
  clock = Date.now()
  runsStarted = 0
  logs.length = 0
  scheduler = new Scheduler(
    api.store,
    createLogger('info', (l) => logs.push(l)),
    () => runsStarted++,
    () => clock,
  )
})
afterEach(() => api.close())

const newJob = async () => (await api.post('/v1/jobs', job())).body as { id: string }
const newTrigger = async (jobId: string, condition: unknown, name = 't') => {
  const r = await api.post(`/v1/jobs/${jobId}/triggers`, { name, condition })
  expect(r.status).toBe(201)
  return r.body as { id: string }
}
const nextAt = (triggerId: string) => (api.db.query('SELECT next_at FROM triggers WHERE id = ?').get(triggerId) as { next_at: number | null }).next_at
const runsOf = async (jobId: string) => (await api.get(`/v1/jobs/${jobId}/runs?per_page=100`)).body.data as { id: string; status: string; job_id: string; config: { seeds: string[] } }[]
const executionsOf = async (triggerId: string) =>
  (await api.get(`/v1/triggers/${triggerId}/executions?per_page=100`)).body.data as {
    id: string
    trigger_id: string
    run_id: string | null
    outcome: string
    scheduled_at: string
    executed_at: string
    created_at: string
  }[]
const firings = () => api.db.query('SELECT trigger_seq, run_seq, due_at FROM trigger_firings').all() as { due_at: number }[]
const stop = async (runId: string) => expect((await api.put(`/v1/runs/${runId}/stop`)).status).toBe(200)
const HOUR = 3_600_000
/** The process's trigger_firings_total of a kind, by outcome (tests compare its moves: the counter is the process's). */
const fired = (kind: string) => Object.fromEntries(['created_run', 'skipped', 'deferred', 'failed'].map((o) => [o, triggerFirings.labels(kind, o).value]))
const moved = (before: Record<string, number>, after: Record<string, number>) => Object.fromEntries(Object.entries(after).map(([o, n]) => [o, n - before[o]!]))

describe('schedule', () => {
  test('fires at its tick, not before: a pending run of the job and a created_run execution', async () => {
    const j = await newJob()
    const t = await newTrigger(j.id, { kind: 'schedule', params: { expression: '0 * * * *' } })
    const tick = nextAt(t.id)!
    expect(tick % HOUR).toBe(0)
    expect(tick).toBeGreaterThan(clock)
    clock = tick - 1
    expect((await scheduler.tick()).made).toEqual([])
    expect(await runsOf(j.id)).toEqual([])

    clock = tick + 250
    const made = (await scheduler.tick()).made
    expect(made).toHaveLength(1)
    const runs = await runsOf(j.id)
    expect(runs).toHaveLength(1)
    expect(runs[0]).toMatchObject({ job_id: j.id, status: 'pending', config: { seeds: ['https://example.com/'] } })
    expect(runsStarted).toBe(1)
    const executions = await executionsOf(t.id)
    expect(executions).toEqual([
      {
        id: made[0]!.id,
        trigger_id: t.id,
        run_id: runs[0]!.id,
        outcome: 'created_run',
        scheduled_at: new Date(tick).toISOString(),
        executed_at: new Date(tick + 250).toISOString(),
        created_at: new Date(tick + 250).toISOString(),
      },
    ])
    const shown = (await api.get(`/v1/triggers/${t.id}`)).body
    expect(shown.last_executed_at).toBe(new Date(tick + 250).toISOString())
    expect(nextAt(t.id)).toBe(tick + HOUR)
    // The same moment again makes nothing more.
    expect((await scheduler.tick()).made).toEqual([])
    expect(await runsOf(j.id)).toHaveLength(1)
  })

  test('a tick while the job has an unfinished run creates no run: a skipped execution', async () => {
    const j = await newJob()
    const t = await newTrigger(j.id, { kind: 'schedule', params: { expression: '0 * * * *' } })
    const manual = (await api.post(`/v1/jobs/${j.id}/runs`)).body
    const before = fired('schedule')
    for (const status of ['pending', 'running', 'paused']) {
      api.db.query('UPDATE runs SET status = ? WHERE id = ?').run(status, manual.id)
      clock = nextAt(t.id)!
      expect((await scheduler.tick()).made.map((e) => e.outcome)).toEqual(['skipped'])
    }
    expect((await runsOf(j.id)).map((r) => r.id)).toEqual([manual.id])
    const executions = await executionsOf(t.id)
    expect(executions.map((e) => [e.outcome, e.run_id])).toEqual([
      ['skipped', null],
      ['skipped', null],
      ['skipped', null],
    ])
    expect(runsStarted).toBe(0)
    // Once it has finished, the next tick creates a run.
    await stop(manual.id)
    clock = nextAt(t.id)!
    expect((await scheduler.tick()).made.map((e) => e.outcome)).toEqual(['created_run'])
    expect(await runsOf(j.id)).toHaveLength(2)
    expect(moved(before, fired('schedule'))).toEqual({ created_run: 1, skipped: 3, deferred: 0, failed: 0 })
  })

  test('ticks missed while nothing ran fire once, and the next tick counts from now', async () => {
    const j = await newJob()
    const t = await newTrigger(j.id, { kind: 'schedule', params: { expression: '*/5 * * * *' } })
    const first = nextAt(t.id)!
    // Down for ten hours: 120 ticks passed.
    clock = first + 10 * HOUR + 60_000
    const made = (await scheduler.tick()).made
    expect(made).toHaveLength(1)
    expect(made[0]!.scheduled_at).toBe(new Date(first).toISOString())
    expect(await runsOf(j.id)).toHaveLength(1)
    expect(nextAt(t.id)).toBe(first + 10 * HOUR + 5 * 60_000)
  })

  test('six fields: seconds first', async () => {
    const j = await newJob()
    const t = await newTrigger(j.id, { kind: 'schedule', params: { expression: '*/10 * * * * *' } })
    const tick = nextAt(t.id)!
    expect(tick % 10_000).toBe(0)
    expect(tick - clock).toBeLessThanOrEqual(10_000)
    clock = tick
    await scheduler.tick()
    expect(nextAt(t.id)).toBe(tick + 10_000)
  })

  test('a timezone moves the tick: 09:00 in Paris is 08:00 UTC in winter', async () => {
    const j = await newJob()
    const t = await newTrigger(j.id, { kind: 'schedule', params: { expression: '0 9 * * *', timezone: 'Europe/Paris' } })
    const utc = await newTrigger(j.id, { kind: 'schedule', params: { expression: '0 9 * * *' } })
    const paris = new Date(nextAt(t.id)!)
    expect([paris.getUTCHours(), paris.getUTCMinutes()]).toEqual([paris.getUTCMonth() >= 3 && paris.getUTCMonth() <= 9 ? 7 : 8, 0])
    expect(new Date(nextAt(utc.id)!).getUTCHours()).toBe(9)
  })

  test('a disabled schedule never fires; enabled again, it fires from its next tick, not the ones it missed', async () => {
    const j = await newJob()
    const t = await newTrigger(j.id, { kind: 'schedule', params: { expression: '0 * * * *' } })
    const tick = nextAt(t.id)!
    expect((await api.put(`/v1/triggers/${t.id}/disable`)).body.enabled).toBe(false)
    expect(nextAt(t.id)).toBeNull()
    clock = tick + 5 * HOUR
    expect((await scheduler.tick()).made).toEqual([])
    expect(await runsOf(j.id)).toEqual([])
    // Enabling computes from the real now (the route's clock): the next hour after it.
    expect((await api.put(`/v1/triggers/${t.id}/enable`)).body.enabled).toBe(true)
    expect(nextAt(t.id)).toBe(tick)
    clock = tick
    expect((await scheduler.tick()).made).toHaveLength(1)
  })

  test('two schedulers on one database (two processes) make a tick once', async () => {
    const j = await newJob()
    const t = await newTrigger(j.id, { kind: 'schedule', params: { expression: '0 * * * *' } })
    clock = nextAt(t.id)!
    const other = new Scheduler(
      api.store,
      createLogger('info', () => {}),
      () => {},
      () => clock,
    )
    const due = await api.store.triggers.due(clock, 10)
    expect(due).toHaveLength(1)
    // Both saw it due; the second's claim finds it gone.
    const firing = () => ({ now: clock, nextAt: clock + HOUR, run: { id: crypto.randomUUID(), config: {} } })
    expect(await api.store.triggers.fire(due[0]!, firing())).not.toBeNull()
    expect(await api.store.triggers.fire(due[0]!, firing())).toBeNull()
    expect((await other.tick()).made).toEqual([])
    expect(await runsOf(j.id)).toHaveLength(1)
  })
})

describe('on_finish', () => {
  test('without a delay: fires as soon as a run of the job finishes, with any stop reason', async () => {
    const j = await newJob()
    const t = await newTrigger(j.id, { kind: 'on_finish' })
    expect((await scheduler.tick()).made).toEqual([])
    const first = (await api.post(`/v1/jobs/${j.id}/runs`)).body
    expect((await scheduler.tick()).made).toEqual([])
    await stop(first.id)
    const finishedAt = Date.parse((await api.get(`/v1/runs/${first.id}`)).body.finished_at)
    clock = Date.now()
    const made = (await scheduler.tick()).made
    expect(made).toHaveLength(1)
    expect(made[0]).toMatchObject({ outcome: 'created_run', scheduled_at: new Date(finishedAt).toISOString() })
    const runs = await runsOf(j.id)
    expect(runs.map((r) => r.id)).toEqual([made[0]!.run_id, first.id])
    expect(runs[0]!.status).toBe('pending')
    // The engine's own finishes count too (max_urls here), as does `unknown`.
    const seqOf = (id: string) => (api.db.query('SELECT seq FROM runs WHERE id = ?').get(id) as { seq: number }).seq
    api.db.query("UPDATE runs SET status = 'running' WHERE id = ?").run(made[0]!.run_id)
    expect(api.repos.frontier.finish(seqOf(made[0]!.run_id!), 'max_urls', Date.now())).toBe(true)
    clock = Date.now()
    expect((await scheduler.tick()).made.map((e) => e.outcome)).toEqual(['created_run'])
    expect(await executionsOf(t.id)).toHaveLength(2)
    expect(firings()).toEqual([])
  })

  test('with a delay: recorded at the finish, fires once the delay has passed', async () => {
    const j = await newJob()
    const t = await newTrigger(j.id, { kind: 'on_finish', params: { delay: '10m' } })
    const run = (await api.post(`/v1/jobs/${j.id}/runs`)).body
    await stop(run.id)
    const finishedAt = Date.parse((await api.get(`/v1/runs/${run.id}`)).body.finished_at)
    expect(firings().map((f) => f.due_at)).toEqual([finishedAt + 600_000])
    clock = finishedAt + 599_999
    expect((await scheduler.tick()).made).toEqual([])
    clock = finishedAt + 600_000
    const made = (await scheduler.tick()).made
    expect(made.map((e) => [e.outcome, e.scheduled_at])).toEqual([['created_run', new Date(finishedAt + 600_000).toISOString()]])
    expect(firings()).toEqual([])
    expect((await executionsOf(t.id)).map((e) => e.run_id)).toEqual([made[0]!.run_id])
  })

  test('a recurring loop: each run it creates, once finished, brings the next; disabling the trigger ends it', async () => {
    const j = await newJob()
    const t = await newTrigger(j.id, { kind: 'on_finish', params: { delay: '1m' } })
    let run = (await api.post(`/v1/jobs/${j.id}/runs`)).body
    for (let round = 1; round <= 3; round++) {
      await stop(run.id)
      clock = Date.now() + 61_000
      const made = (await scheduler.tick()).made
      expect(made).toHaveLength(1)
      run = (await api.get(`/v1/runs/${made[0]!.run_id}`)).body
      expect(run.status).toBe('pending')
    }
    expect(await runsOf(j.id)).toHaveLength(4)
    // Disabled while its latest run goes on: that run's finish records nothing.
    await api.put(`/v1/triggers/${t.id}/disable`)
    await stop(run.id)
    expect(firings()).toEqual([])
    clock = Date.now() + 3_600_000
    expect((await scheduler.tick()).made).toEqual([])
    expect(await runsOf(j.id)).toHaveLength(4)
    expect(await executionsOf(t.id)).toHaveLength(3)
  })

  test('disabling drops firings already waiting for their delay; enabling does not bring them back', async () => {
    const j = await newJob()
    const t = await newTrigger(j.id, { kind: 'on_finish', params: { delay: '5m' } })
    await stop((await api.post(`/v1/jobs/${j.id}/runs`)).body.id)
    expect(firings()).toHaveLength(1)
    await api.put(`/v1/triggers/${t.id}/disable`)
    expect(firings()).toEqual([])
    await api.put(`/v1/triggers/${t.id}/enable`)
    clock = Date.now() + HOUR
    expect((await scheduler.tick()).made).toEqual([])
    expect(await runsOf(j.id)).toHaveLength(1)
  })

  test('two on_finish triggers of one job: one creates the run, the other is skipped (no doubling per round)', async () => {
    const j = await newJob()
    const a = await newTrigger(j.id, { kind: 'on_finish' }, 'a')
    const b = await newTrigger(j.id, { kind: 'on_finish' }, 'b')
    await stop((await api.post(`/v1/jobs/${j.id}/runs`)).body.id)
    clock = Date.now()
    const made = (await scheduler.tick()).made
    expect(made.map((e) => e.outcome).sort()).toEqual(['created_run', 'skipped'])
    expect(await runsOf(j.id)).toHaveLength(2)
    expect((await executionsOf(a.id)).length + (await executionsOf(b.id)).length).toBe(2)
  })

  test('a trigger of another job of the same tenant does not fire', async () => {
    const j = await newJob()
    const other = await newJob()
    await newTrigger(other.id, { kind: 'on_finish' })
    await stop((await api.post(`/v1/jobs/${j.id}/runs`)).body.id)
    clock = Date.now() + HOUR
    expect((await scheduler.tick()).made).toEqual([])
    expect(await runsOf(other.id)).toEqual([])
  })
})

describe('deletion', () => {
  test('deleting a trigger removes its executions and waiting firings; its runs stay', async () => {
    const j = await newJob()
    const t = await newTrigger(j.id, { kind: 'on_finish', params: { delay: '1m' } })
    await stop((await api.post(`/v1/jobs/${j.id}/runs`)).body.id)
    clock = Date.now() + 61_000
    const [made] = (await scheduler.tick()).made
    await stop(made!.run_id!)
    expect(firings()).toHaveLength(1)
    expect((await api.del(`/v1/triggers/${t.id}`)).status).toBe(204)
    expect(firings()).toEqual([])
    expect((api.db.query('SELECT count(*) AS n FROM trigger_executions').get() as { n: number }).n).toBe(0)
    expect(await runsOf(j.id)).toHaveLength(2)
    clock = Date.now() + HOUR
    expect((await scheduler.tick()).made).toEqual([])
  })

  test('deleting a job removes its triggers, their executions and firings', async () => {
    const j = await newJob()
    const s = await newTrigger(j.id, { kind: 'schedule', params: { expression: '0 * * * *' } })
    await newTrigger(j.id, { kind: 'on_finish', params: { delay: '1h' } })
    clock = nextAt(s.id)!
    await scheduler.tick()
    await stop((await runsOf(j.id))[0]!.id)
    expect(firings()).toHaveLength(1)
    expect((await api.del(`/v1/jobs/${j.id}`)).status).toBe(204)
    const count = (table: string) => (api.db.query(`SELECT count(*) AS n FROM ${table}`).get() as { n: number }).n
    expect([count('triggers'), count('trigger_executions'), count('trigger_firings')]).toEqual([0, 0, 0])
    expect((await api.get(`/v1/triggers/${s.id}`)).status).toBe(404)
    clock += 2 * HOUR
    expect((await scheduler.tick()).made).toEqual([])
  })
})

describe('failures', () => {
  test('a database that is busy (another process holds the write lock) defers the firing: nothing is lost, it fires once the lock is free', async () => {
    const j = await newJob()
    const t = await newTrigger(j.id, { kind: 'on_finish', params: { delay: '1m' } })
    await stop((await api.post(`/v1/jobs/${j.id}/runs`)).body.id)
    clock = Date.now() + 61_000
    const before = fired('on_finish')
    // A second connection takes the write lock and keeps it past the busy timeout.
    const { Database } = await import('bun:sqlite')
    const other = new Database(join(api.dir, 'trawl.db'))
    other.exec('PRAGMA busy_timeout = 0')
    api.db.exec('PRAGMA busy_timeout = 50')
    other.exec('BEGIN IMMEDIATE')
    try {
      expect(await scheduler.tick()).toEqual({ made: [], more: false })
      expect(logs.some((l) => l.includes('trigger firing deferred'))).toBe(true)
    } finally {
      other.exec('ROLLBACK')
      other.close()
      api.db.exec('PRAGMA busy_timeout = 5000')
    }
    expect(firings()).toHaveLength(1)
    // Not before the retry delay, then once.
    expect((await scheduler.tick()).made).toEqual([])
    clock += 1_000
    expect((await scheduler.tick()).made.map((e) => e.outcome)).toEqual(['created_run'])
    expect(await executionsOf(t.id)).toHaveLength(1)
    expect(moved(before, fired('on_finish'))).toEqual({ created_run: 1, skipped: 0, deferred: 1, failed: 0 })
  })

  test("a finish of a run that reuses a deleted run's seq still records its own firing", async () => {
    const j = await newJob()
    await newTrigger(j.id, { kind: 'on_finish', params: { delay: '1h' } })
    const first = (await api.post(`/v1/jobs/${j.id}/runs`)).body
    await stop(first.id)
    const seqOf = (id: string) => (api.db.query('SELECT seq FROM runs WHERE id = ?').get(id) as { seq: number }).seq
    const firstSeq = seqOf(first.id)
    expect((await api.del(`/v1/runs/${first.id}`)).status).toBe(204)
    const second = (await api.post(`/v1/jobs/${j.id}/runs`)).body
    expect(seqOf(second.id)).toBe(firstSeq)
    await stop(second.id)
    expect(firings()).toHaveLength(2)
  })

  test('a firing that fails is logged and given up, not retried in a loop; later ticks still fire', async () => {
    const j = await newJob()
    const t = await newTrigger(j.id, { kind: 'schedule', params: { expression: '0 * * * *' } })
    const tick = nextAt(t.id)!
    // A job config the run creation cannot resolve (stored by hand: the API never lets one in).
    api.db.query("UPDATE jobs SET config = 'not json' WHERE id = ?").run(j.id)
    clock = tick
    const before = fired('schedule')
    expect((await scheduler.tick()).made).toEqual([])
    expect(logs.some((l) => l.includes('trigger firing failed'))).toBe(true)
    expect(moved(before, fired('schedule'))).toEqual({ created_run: 0, skipped: 0, deferred: 0, failed: 1 })
    expect(nextAt(t.id)).toBe(tick + HOUR)
    expect(await executionsOf(t.id)).toEqual([])
    api.db.query('UPDATE jobs SET config = ? WHERE id = ?').run(JSON.stringify(job().config), j.id)
    clock = tick + HOUR
    expect((await scheduler.tick()).made.map((e) => e.outcome)).toEqual(['created_run'])
  })
})
