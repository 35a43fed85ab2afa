// Schedulers of several processes sharing one database: a due firing is made once, whoever
// makes it, and firings of one job judge "busy" one after the other.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import type { SQL } from 'bun'
import { openPostgres } from '../../../src/store/postgres/open'
import { numeric } from '../../../src/store/postgres/pg'
import { postgresStore } from '../../../src/store/postgres/store'
import type { DueFiring, Execution } from '../../../src/store/triggers'
import type { Store } from '../../../src/store/types'
import { clusterPort, freshDatabase } from '../../helpers/postgres'

// The throwaway cluster starts before the tests, which are timed without it.
beforeAll(() => void clusterPort(), 120_000)
const opened: SQL[] = []
afterAll(async () => {
  await Promise.all(opened.map((sql) => sql.close()))
})

const A = 'acme'
const HOUR = 3_600_000
const T0 = Date.parse('2030-01-01T10:00:00Z')
const hourly = { kind: 'schedule' as const, params: { expression: '0 * * * *' } }
const uuid = () => crypto.randomUUID()

/** `n` stores over one new database, each with a pool of its own, as `n` processes. */
async function processes(n: number): Promise<{ sql: SQL; store: Store }[]> {
  const url = freshDatabase()
  const out = []
  for (let i = 0; i < n; i++) {
    const sql = await openPostgres(url)
    opened.push(sql)
    out.push({ sql, store: postgresStore(sql, { journalDir: null }) })
  }
  return out
}

const count = async (sql: SQL, text: string, params: unknown[] = []) => numeric<{ n: number }>(await sql.unsafe(`SELECT count(*) AS n FROM ${text}`, params))[0]!.n
const made = (results: (Execution | null)[]) => results.filter((e): e is Execution => e !== null)

describe('firings made by several schedulers', () => {
  test('a tick fired by four processes at once is made once: one execution, one run, the tick moved on', async () => {
    const ps = await processes(4)
    const { store, sql } = ps[0]!
    const { job } = await store.jobs.create(A, { id: uuid(), name: 'j', config: {}, labels: {} })
    const t = (await store.triggers.create(A, job.id, { id: uuid(), name: 'hourly', condition: hourly, nextAt: T0 }))!
    for (let i = 0; i < 8; i++) {
      const tick = T0 + i * HOUR
      const due = await store.triggers.due(tick, 10)
      expect(due).toHaveLength(1)
      const results = await Promise.all(ps.map((p) => p.store.triggers.fire(due[0]!, { now: tick, nextAt: tick + HOUR, run: { id: uuid(), config: {} } })))
      const [execution, ...more] = made(results)
      expect(more).toEqual([])
      expect(execution).toMatchObject({ trigger_id: t.id, outcome: 'created_run' })
      await store.runs.move(A, execution!.run_id!, 'stop')
      expect(await store.triggers.nextDue()).toBe(tick + HOUR)
    }
    expect(await count(sql, 'trigger_executions')).toBe(8)
    expect(await count(sql, 'runs')).toBe(8)
  })

  test('an on_finish firing fired by four processes at once is made once, and its row goes', async () => {
    const ps = await processes(4)
    const { store, sql } = ps[0]!
    const { job, run } = await store.jobs.create(A, { id: uuid(), name: 'j', config: {}, labels: {} }, { id: uuid(), config: {} })
    const t = (await store.triggers.create(A, job.id, { id: uuid(), name: 'again', condition: { kind: 'on_finish', params: {} }, nextAt: null }))!
    let last = run!.id
    for (let i = 0; i < 8; i++) {
      await store.runs.move(A, last, 'stop')
      const due = await store.triggers.due(Date.now() + 1000, 10)
      // (Checked field by field: an asymmetric matcher in toMatchObject would be written into `due`.)
      expect(due.map((d) => [d.kind, typeof d.firing_seq])).toEqual([['on_finish', 'number']])
      const results = await Promise.all(ps.map((p) => p.store.triggers.fire(due[0]!, { now: Date.now(), nextAt: null, run: { id: uuid(), config: {} } })))
      const [execution, ...more] = made(results)
      expect(more).toEqual([])
      expect(execution).toMatchObject({ trigger_id: t.id, outcome: 'created_run' })
      last = execution!.run_id!
      expect(await count(sql, 'trigger_firings')).toBe(0)
    }
    expect(await count(sql, 'trigger_executions')).toBe(8)
  })

  test('two triggers of one job due together, fired by two processes: one run, the other firing skipped', async () => {
    const [p1, p2] = await processes(2)
    const store = p1!.store
    const { job } = await store.jobs.create(A, { id: uuid(), name: 'j', config: {}, labels: {} })
    const a = (await store.triggers.create(A, job.id, { id: uuid(), name: 'a', condition: hourly, nextAt: T0 }))!
    const b = (await store.triggers.create(A, job.id, { id: uuid(), name: 'b', condition: hourly, nextAt: T0 }))!
    for (let i = 0; i < 8; i++) {
      const tick = T0 + i * HOUR
      const due = await store.triggers.due(tick, 10)
      expect(due.map((d) => d.kind)).toEqual(['schedule', 'schedule'])
      const fire = (s: Store, d: DueFiring) => s.triggers.fire(d, { now: tick, nextAt: tick + HOUR, run: { id: uuid(), config: {} } })
      const results = made(await Promise.all([fire(p1!.store, due[0]!), fire(p2!.store, due[1]!)]))
      expect(results.map((e) => e.outcome).sort()).toEqual(['created_run', 'skipped'])
      expect(new Set(results.map((e) => e.trigger_id))).toEqual(new Set([a.id, b.id]))
      await store.runs.move(A, results.find((e) => e.run_id)!.run_id!, 'stop')
    }
    expect(await count(p1!.sql, 'runs')).toBe(8)
  })

  test('a firing and the deletion of its job at once: no deadlock, and a run made first goes with the job', async () => {
    const [p1, p2] = await processes(2)
    for (let i = 0; i < 10; i++) {
      const { job } = await p1!.store.jobs.create(A, { id: uuid(), name: 'j', config: {}, labels: {} })
      await p1!.store.triggers.create(A, job.id, { id: uuid(), name: 'hourly', condition: hourly, nextAt: T0 })
      const [due] = (await p1!.store.triggers.due(T0, 10)).filter((d) => d.job_id === job.id)
      const [execution, deleted] = await Promise.all([p1!.store.triggers.fire(due!, { now: T0, nextAt: T0 + HOUR, run: { id: uuid(), config: {} } }), p2!.store.jobs.delete(A, job.id)])
      if (execution) expect(deleted).toEqual([execution.run_id!])
      else expect(deleted).toEqual([])
      expect(await count(p1!.sql, 'runs WHERE job_id = $1', [job.id])).toBe(0)
      expect(await count(p1!.sql, 'triggers')).toBe(0)
    }
  })

  test('a firing and its trigger disabled or deleted at once: no deadlock, and nothing waits after', async () => {
    const [p1, p2] = await processes(2)
    const store = p1!.store
    for (let i = 0; i < 10; i++) {
      const { job, run } = await store.jobs.create(A, { id: uuid(), name: 'j', config: {}, labels: {} }, { id: uuid(), config: {} })
      const t = (await store.triggers.create(A, job.id, { id: uuid(), name: 'again', condition: { kind: 'on_finish', params: {} }, nextAt: null }))!
      await store.runs.move(A, run!.id, 'stop')
      const [due] = (await store.triggers.due(Date.now() + 1000, 10)).filter((d) => d.job_id === job.id)
      const change = i % 2 ? p2!.store.triggers.setEnabled(A, t.id, false, null) : p2!.store.triggers.delete(A, t.id)
      await Promise.all([store.triggers.fire(due!, { now: Date.now(), nextAt: null, run: { id: uuid(), config: {} } }), change])
      expect(await count(p1!.sql, 'trigger_firings')).toBe(0)
    }
  })

  test('a stale due firing (its tick made meanwhile) makes nothing and leaves the next tick alone', async () => {
    const [p1] = await processes(1)
    const store = p1!.store
    const { job } = await store.jobs.create(A, { id: uuid(), name: 'j', config: {}, labels: {} })
    await store.triggers.create(A, job.id, { id: uuid(), name: 'hourly', condition: hourly, nextAt: T0 })
    const [due] = await store.triggers.due(T0, 10)
    expect(await store.triggers.fire(due!, { now: T0, nextAt: T0 + HOUR, run: { id: uuid(), config: {} } })).not.toBeNull()
    expect(await store.triggers.fire(due!, { now: T0, nextAt: T0 + 5 * HOUR, run: { id: uuid(), config: {} } })).toBeNull()
    await store.triggers.discard(due!, T0 + 7 * HOUR)
    expect(await store.triggers.nextDue()).toBe(T0 + HOUR)
  })
})
