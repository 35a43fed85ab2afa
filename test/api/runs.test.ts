import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { job, qs, snapshot, testApi, type TestApi } from '../helpers/api'

let api: TestApi
beforeAll(() => {
  api = testApi()
})
afterAll(() => api.close())

const newJob = async (labels: Record<string, string> = {}) => (await api.post('/v1/jobs', job({ labels }))).body
const newRun = async (jobId: string, body?: unknown) => (await api.post(`/v1/jobs/${jobId}/runs`, body)).body

/** Sets a run's state directly, as the crawl engine will (it is not an API move yet). */
const setStatus = (id: string, status: string) => api.exec('UPDATE runs SET status = ? WHERE id = ?', [status, id])

describe('POST /v1/jobs/{job_id}/runs', () => {
  test('with no body, an empty body or an id', async () => {
    const j = await newJob({ env: 'prod' })
    const a = await api.post(`/v1/jobs/${j.id}/runs`)
    expect(a.status).toBe(201)
    expect(a.body).toMatchObject({ job_id: j.id, status: 'pending', stop_reason: null, labels: { env: 'prod' } })
    expect(a.body.config.limits.max_depth).toBe(3)
    const id = crypto.randomUUID()
    const b = await api.post(`/v1/jobs/${j.id}/runs`, { id })
    expect(b.status).toBe(201)
    expect(b.body.id).toBe(id)
    expect((await api.post(`/v1/jobs/${j.id}/runs`, {})).status).toBe(201)
    const dup = await api.post(`/v1/jobs/${j.id}/runs`, { id })
    expect(dup.status).toBe(409)
    expect(dup.body.error).toBe('conflict')
  })

  test('the run keeps the config resolved at creation; later job edits do not change it', async () => {
    const j = await newJob()
    const run = await newRun(j.id)
    await api.put(`/v1/jobs/${j.id}`, { config: { seeds: ['https://changed.example/'], limits: { max_depth: 9 } } })
    const again = (await api.get(`/v1/runs/${run.id}`)).body
    expect(again.config.seeds).toEqual(['https://example.com/'])
    expect(again.config.limits.max_depth).toBe(3)
    expect((await newRun(j.id)).config.limits.max_depth).toBe(9)
  })

  test('errors: unknown job 404, bad id 422, bad body 422, nothing created', async () => {
    const before = await snapshot(api)
    expect((await api.post(`/v1/jobs/${crypto.randomUUID()}/runs`)).status).toBe(404)
    const badId = await api.post(`/v1/jobs/nope/runs`, { id: 'x' })
    expect(badId.status).toBe(422)
    expect(badId.body.fields).toEqual([
      { field: 'job_id', errors: ['must be a uuid'] },
      { field: 'id', errors: ['must be a uuid'] },
    ])
    const j = await newJob()
    const extra = await api.post(`/v1/jobs/${j.id}/runs`, { id: crypto.randomUUID(), status: 'running' })
    expect(extra.body.fields).toEqual([{ field: 'status', errors: ['is not a known field'] }])
    expect(await snapshot(api)).toMatchObject({ runs: before.runs })
  })
})

describe('state moves', () => {
  test('pending: stop finishes it with manual; pause and resume are 409', async () => {
    const j = await newJob()
    const run = await newRun(j.id)
    const pause = await api.put(`/v1/runs/${run.id}/pause`)
    expect(pause.status).toBe(409)
    expect(pause.body).toEqual({ error: 'conflict', message: 'cannot pause a pending run' })
    expect((await api.put(`/v1/runs/${run.id}/resume`)).body).toEqual({ error: 'conflict', message: 'cannot resume a pending run' })
    const stop = await api.put(`/v1/runs/${run.id}/stop`)
    expect(stop.status).toBe(200)
    const finishedAt = stop.body.finished_at // toMatchObject below writes its matchers into the object it checks
    expect(Date.parse(finishedAt)).toBeGreaterThan(0)
    expect(stop.body).toMatchObject({ id: run.id, status: 'finished', stop_reason: 'manual', finished_at: expect.any(String) })
    const again = await api.put(`/v1/runs/${run.id}/stop`)
    expect(again.status).toBe(409)
    expect(again.body.message).toBe('cannot stop a finished run')
    expect((await api.get(`/v1/runs/${run.id}`)).body.finished_at).toBe(finishedAt)
  })

  test('running → paused → running → finished, with 409 for moves that do not fit', async () => {
    const j = await newJob()
    const run = await newRun(j.id)
    await setStatus(run.id, 'running')
    expect((await api.put(`/v1/runs/${run.id}/resume`)).status).toBe(409)
    const paused = await api.put(`/v1/runs/${run.id}/pause`)
    expect(paused.status).toBe(200)
    expect(paused.body.status).toBe('paused')
    expect((await api.put(`/v1/runs/${run.id}/pause`)).body.message).toBe('cannot pause a paused run')
    await Bun.sleep(20)
    const resumed = await api.put(`/v1/runs/${run.id}/resume`)
    expect(resumed.body.status).toBe('running')
    const pausedMs = (await api.one('SELECT paused_ms, paused_at FROM runs WHERE id = ?', [run.id])) as any
    expect(pausedMs.paused_ms).toBeGreaterThanOrEqual(15)
    expect(pausedMs.paused_at).toBeNull()
    const stopped = await api.put(`/v1/runs/${run.id}/stop`)
    expect(stopped.body).toMatchObject({ status: 'finished', stop_reason: 'manual' })
    for (const move of ['pause', 'resume', 'stop']) expect((await api.put(`/v1/runs/${run.id}/${move}`)).status).toBe(409)
  })

  test('a paused run can be stopped', async () => {
    const j = await newJob()
    const run = await newRun(j.id)
    await setStatus(run.id, 'running')
    await api.put(`/v1/runs/${run.id}/pause`)
    expect((await api.put(`/v1/runs/${run.id}/stop`)).body).toMatchObject({ status: 'finished', stop_reason: 'manual' })
  })

  test('moves on unknown or malformed runs', async () => {
    expect((await api.put(`/v1/runs/${crypto.randomUUID()}/stop`)).body).toEqual({ error: 'not_found', message: 'run not found' })
    expect((await api.put(`/v1/runs/abc/pause`)).body.fields).toEqual([{ field: 'run_id', errors: ['must be a uuid'] }])
  })
})

describe('GET and DELETE one run', () => {
  test('delete answers 204 and the run is gone, its job stays', async () => {
    const j = await newJob()
    const run = await newRun(j.id)
    expect((await api.del(`/v1/runs/${run.id}`)).status).toBe(204)
    expect((await api.get(`/v1/runs/${run.id}`)).status).toBe(404)
    expect((await api.del(`/v1/runs/${run.id}`)).status).toBe(404)
    expect((await api.get(`/v1/jobs/${j.id}`)).status).toBe(200)
  })
})

describe('list filters', () => {
  test('every filter of GET /v1/runs and GET /v1/jobs/{id}/runs', async () => {
    const t = testApi()
    try {
      const j1 = (await t.post('/v1/jobs', job({ labels: { team: 'x' } }))).body
      const j2 = (await t.post('/v1/jobs', job({ labels: { team: 'y' } }))).body
      const run = async (j: any) => (await t.post(`/v1/jobs/${j.id}/runs`)).body
      const r1 = await run(j1)
      await Bun.sleep(5)
      const r2 = await run(j1)
      await Bun.sleep(5)
      const r3 = await run(j2)
      await Bun.sleep(5)
      const r4 = await run(j2)
      await t.exec("UPDATE runs SET status = 'running' WHERE id = ?", [r2.id])
      await t.exec("UPDATE runs SET status = 'paused' WHERE id = ?", [r3.id])
      const s1 = (await t.put(`/v1/runs/${r1.id}/stop`)).body
      await Bun.sleep(5)
      const s4 = (await t.put(`/v1/runs/${r4.id}/stop`)).body
      await t.exec("UPDATE runs SET stop_reason = 'max_urls' WHERE id = ?", [r4.id])

      const ids = async (path: string, q: [string, string][]) => {
        const r = await t.get(`${path}${qs(q)}`)
        expect(r.status).toBe(200)
        return r.body.data.map((x: any) => x.id)
      }
      const all = '/v1/runs'
      expect(await ids(all, [])).toEqual([r4.id, r3.id, r2.id, r1.id])
      expect(await ids(all, [['job_ids', j1.id]])).toEqual([r2.id, r1.id])
      expect(
        await ids(all, [
          ['include_ids', r1.id],
          ['include_ids', r3.id],
        ]),
      ).toEqual([r3.id, r1.id])
      expect(
        await ids(all, [
          ['exclude_ids', r1.id],
          ['exclude_ids', r3.id],
        ]),
      ).toEqual([r4.id, r2.id])
      expect(
        await ids(all, [
          ['statuses', 'running'],
          ['statuses', 'paused'],
        ]),
      ).toEqual([r3.id, r2.id])
      expect(await ids(all, [['statuses', 'finished']])).toEqual([r4.id, r1.id])
      expect(await ids(all, [['stop_reasons', 'manual']])).toEqual([r1.id])
      expect(
        await ids(all, [
          ['stop_reasons', 'max_urls'],
          ['stop_reasons', 'manual'],
        ]),
      ).toEqual([r4.id, r1.id])
      expect(await ids(all, [['created_after', r2.created_at]])).toEqual([r4.id, r3.id])
      expect(await ids(all, [['created_before', r2.created_at]])).toEqual([r1.id])
      expect(await ids(all, [['finished_after', s1.finished_at]])).toEqual([r4.id])
      expect(await ids(all, [['finished_before', s4.finished_at]])).toEqual([r1.id])
      expect(await ids(all, [['labels[team]', 'y']])).toEqual([r4.id, r3.id])
      expect(
        await ids(all, [
          ['labels[team]', 'y'],
          ['statuses', 'paused'],
        ]),
      ).toEqual([r3.id])
      const ofJob = `/v1/jobs/${j2.id}/runs`
      expect(await ids(ofJob, [])).toEqual([r4.id, r3.id])
      expect(await ids(ofJob, [['statuses', 'finished']])).toEqual([r4.id])
      expect(await ids(ofJob, [['include_ids', r1.id]])).toEqual([])
      const withJobIds = await t.get(`${ofJob}${qs([['job_ids', j1.id]])}`)
      expect(withJobIds.status).toBe(422)
      expect(withJobIds.body.fields).toEqual([{ field: 'job_ids', errors: ['is not a known query parameter'] }])
      expect((await t.get(`/v1/jobs/${crypto.randomUUID()}/runs`)).status).toBe(404)
      const badEnum = await t.get(`${all}${qs([['stop_reasons', 'bored']])}`)
      expect(badEnum.body.fields[0].field).toBe('stop_reasons[0]')
    } finally {
      await t.close()
    }
  })
})
