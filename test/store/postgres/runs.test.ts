// Jobs and runs on PostgreSQL written by several processes at once: a job's deletion takes every
// run created meanwhile or none, a move is made once, and a job with its first run is all or nothing.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import type { SQL } from 'bun'
import { DomainError } from '../../../src/core/errors'
import { openPostgres } from '../../../src/store/postgres/open'
import { numeric } from '../../../src/store/postgres/pg'
import { postgresStore } from '../../../src/store/postgres/store'
import type { Store } from '../../../src/store/types'
import { clusterPort, freshDatabase } from '../../helpers/postgres'

// The throwaway cluster starts before the tests, which are timed without it.
beforeAll(() => void clusterPort(), 120_000)
const opened: SQL[] = []
afterAll(async () => {
  await Promise.all(opened.map((sql) => sql.close()))
})

const A = 'acme'
const uuid = () => crypto.randomUUID()
const newJob = (labels: Record<string, string> = {}) => ({ id: uuid(), name: 'j', config: { seeds: ['https://example.com/'] }, labels })

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

const rows = async <T>(sql: SQL, text: string, params: unknown[] = []) => numeric<T>(await sql.unsafe(text, params))
const settle = <T>(p: Promise<T>) =>
  p.then(
    (value) => ({ value, error: null }),
    (error: unknown) => ({ value: null, error }),
  )
const conflictOr = (r: { error: unknown }) => {
  if (r.error && !(r.error instanceof DomainError && r.error.code === 'conflict')) throw r.error
}

describe('jobs and runs across processes', () => {
  test('runs created while their job is deleted: each is either refused (null) or deleted with the job, its bodies asked for', async () => {
    const [p1, p2, p3] = await processes(3)
    for (let i = 0; i < 10; i++) {
      const { job } = await p1!.store.jobs.create(A, newJob({ team: 'x' }))
      const [a, deleted, b] = await Promise.all([
        p2!.store.runs.create(A, job.id, { id: uuid(), config: {} }),
        p1!.store.jobs.delete(A, job.id),
        p3!.store.runs.create(A, job.id, { id: uuid(), config: {} }),
      ])
      const created = [a, b].filter((r) => r !== null).map((r) => r!.id)
      expect(deleted!.sort()).toEqual(created.sort())
      expect(await rows(p1!.sql, 'SELECT id FROM runs WHERE job_id = $1', [job.id])).toEqual([])
      const asked = (await rows<{ run_id: string }>(p1!.sql, 'SELECT run_id FROM body_deletions')).map((r) => r.run_id)
      for (const id of created) expect(asked).toContain(id)
    }
    // No label index row outlives its run or job.
    expect(await rows(p1!.sql, 'SELECT * FROM labels')).toEqual([])
  })

  test('a run stopped by five processes at once is stopped once: one answer, four conflicts, one on_finish firing', async () => {
    const ps = await processes(5)
    const store = ps[0]!.store
    for (let i = 0; i < 5; i++) {
      const { job, run } = await store.jobs.create(A, newJob(), { id: uuid(), config: {}, lease: { owner: 'o', ms: 60_000 } })
      await store.triggers.create(A, job.id, { id: uuid(), name: 'again', condition: { kind: 'on_finish', params: {} }, nextAt: null })
      const results = await Promise.all(ps.map((p) => settle(p.store.runs.move(A, run!.id, 'stop'))))
      results.forEach(conflictOr)
      expect(results.filter((r) => r.value).map((r) => r.value!.status)).toEqual(['finished'])
      for (const r of results.filter((r) => r.error)) expect((r.error as Error).message).toBe('cannot stop a finished run')
    }
    expect((await rows<{ n: number }>(ps[0]!.sql, 'SELECT count(*) AS n FROM trigger_firings'))[0]!.n).toBe(5)
  })

  test('pause and resume: the paused time is counted once, whoever resumes', async () => {
    const [p1, p2] = await processes(2)
    const { run } = await p1!.store.jobs.create(A, newJob(), { id: uuid(), config: {}, lease: { owner: 'o', ms: 60_000 } })
    expect((await p1!.store.runs.move(A, run!.id, 'pause'))!.status).toBe('paused')
    await Bun.sleep(20)
    const results = await Promise.all([settle(p1!.store.runs.move(A, run!.id, 'resume')), settle(p2!.store.runs.move(A, run!.id, 'resume'))])
    results.forEach(conflictOr)
    expect(results.filter((r) => r.value)).toHaveLength(1)
    const [stored] = await rows<{ paused_ms: number; paused_at: number | null; status: string }>(p1!.sql, 'SELECT paused_ms, paused_at, status FROM runs WHERE id = $1', [run!.id])
    expect(stored).toMatchObject({ paused_at: null, status: 'running' })
    expect(stored!.paused_ms).toBeGreaterThanOrEqual(15)
    expect(stored!.paused_ms).toBeLessThan(10_000)
  })

  test('one job id created by four processes at once: one job, three conflicts; a taken run id leaves no job nor label rows', async () => {
    const ps = await processes(4)
    const job = newJob({ env: 'prod' })
    const results = await Promise.all(ps.map((p) => settle(p.store.jobs.create(A, job, { id: uuid(), config: {} }))))
    results.forEach(conflictOr)
    expect(results.filter((r) => r.value)).toHaveLength(1)
    const sql = ps[0]!.sql
    expect(await rows(sql, 'SELECT id FROM jobs')).toEqual([{ id: job.id }])
    expect(await rows(sql, 'SELECT id FROM runs')).toHaveLength(1)
    const before = await rows(sql, 'SELECT * FROM labels ORDER BY kind')
    expect(before).toHaveLength(2)
    const [taken] = await rows<{ id: string }>(sql, 'SELECT id FROM runs')
    const again = await settle(ps[1]!.store.jobs.create(A, newJob({ env: 'dev' }), { id: taken!.id, config: {} }))
    expect((again.error as DomainError).code).toBe('conflict')
    expect(await rows(sql, 'SELECT id FROM jobs')).toEqual([{ id: job.id }])
    expect(await rows(sql, 'SELECT * FROM labels ORDER BY kind')).toEqual(before)
  })

  test('two updates of one job at once each keep the field the other set', async () => {
    const [p1, p2] = await processes(2)
    for (let i = 0; i < 5; i++) {
      const { job } = await p1!.store.jobs.create(A, newJob())
      await Promise.all([p1!.store.jobs.update(A, job.id, { name: `renamed-${i}` }), p2!.store.jobs.update(A, job.id, { labels: { round: String(i) } })])
      expect(await p1!.store.jobs.get(A, job.id)).toMatchObject({ name: `renamed-${i}`, labels: { round: String(i) }, config: job.config })
      expect((await p1!.store.jobs.list(A, { labels: { round: String(i) } }, undefined, 10)).data.map((j) => j.id)).toEqual([job.id])
    }
  })

  test('runs.create with a lease: running, its creator its one worker, started; list filters by outcome and finish time', async () => {
    const [p1] = await processes(1)
    const store = p1!.store
    const { job } = await store.jobs.create(A, newJob({ l: 'v' }))
    const before = Date.now()
    const run = await store.runs.create(A, job.id, { id: uuid(), config: {}, lease: { owner: 'me', ms: 60_000 } })
    expect(run).toMatchObject({ status: 'running', labels: { l: 'v' } })
    expect(run!.started_at).not.toBeNull()
    // Other processes join a run as workers (decision 112): the run row names no holder.
    const [held] = await rows<{ lease_owner: string | null; lease_until: number | null }>(p1!.sql, 'SELECT lease_owner, lease_until FROM runs WHERE id = $1', [run!.id])
    expect(held).toEqual({ lease_owner: null, lease_until: null })
    const workers = await rows<{ owner: string; lease_until: number }>(p1!.sql, 'SELECT w.owner, w.lease_until FROM run_workers w JOIN runs r ON r.seq = w.run_seq WHERE r.id = $1', [run!.id])
    expect(workers.map((w) => w.owner)).toEqual(['me'])
    expect(workers[0]!.lease_until).toBeGreaterThanOrEqual(before + 60_000)
    expect(workers[0]!.lease_until).toBeLessThanOrEqual(Date.now() + 60_000)
    const other = await store.runs.create(A, job.id, { id: uuid(), config: {} })
    const stopped = (await store.runs.move(A, run!.id, 'stop'))!
    const ids = async (f: Parameters<Store['runs']['list']>[1]) => (await store.runs.list(A, f, undefined, 10)).data.map((r) => r.id)
    expect(await ids({ outcomes: ['stopped'] })).toEqual([run!.id])
    expect(await ids({ stop_reasons: ['manual'], labels: { l: 'v' } })).toEqual([run!.id])
    expect(await ids({ finished_before: new Date(Date.parse(stopped.finished_at!) + 1).toISOString() })).toEqual([run!.id])
    expect(await ids({ finished_after: stopped.finished_at! })).toEqual([])
    expect(await ids({ exclude_ids: [run!.id] })).toEqual([other!.id])
    expect(await ids({ include_ids: [] })).toEqual([])
  })
})
