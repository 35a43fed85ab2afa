// Webhook routes (docs/webhooks.md): create, get, list with its filters, patch, delete; 422s on
// the field with nothing stored; tenancy; deliveries written by a run's moves, listed with their
// attempts, and a failed one retried. Sending them is the deliverer's (test/webhooks).
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { job, qs, testApi, type TestApi } from '../helpers/api'

let api: TestApi
beforeAll(() => {
  api = testApi()
})
afterAll(() => api.close())

const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw'
const newJob = async (tenant = 'acme') => (await api.post('/v1/jobs', job(), { tenant })).body as { id: string }
const create = (body: Record<string, unknown>, tenant = 'acme') => api.post('/v1/webhooks', { url: 'https://hooks.example/in', events: ['run.finished'], ...body }, { tenant })
const ids = async (pairs: [string, string | number | boolean][], tenant = 'acme') => {
  const r = await api.get(`/v1/webhooks${qs([...pairs, ['per_page', 100]])}`, { tenant })
  expect(r.status).toBe(200)
  return (r.body.data as { id: string }[]).map((w) => w.id)
}

describe('webhooks', () => {
  test('create: the stored shape, a generated secret, a given one; get answers the same', async () => {
    const j = await newJob()
    const r = await create({ job_id: j.id, events: ['run.started', 'run.finished'], description: 'ci' })
    expect(r.status).toBe(201)
    expect(Object.keys(r.body).sort()).toEqual(['created_at', 'description', 'enabled', 'events', 'id', 'job_id', 'secret', 'updated_at', 'url'])
    expect(r.body).toMatchObject({ job_id: j.id, url: 'https://hooks.example/in', events: ['run.started', 'run.finished'], enabled: true, description: 'ci' })
    expect(r.body.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/)
    expect((await api.get(`/v1/webhooks/${r.body.id}`)).body).toEqual(r.body)

    const given = await create({ secret: SECRET, enabled: false, job_id: null })
    expect(given.body).toMatchObject({ secret: SECRET, enabled: false, job_id: null, description: null })
    const other = await create({ secret: SECRET })
    expect(other.body.secret).toBe(SECRET)
  })

  test('every invalid field is a 422 on that field, with the reason; nothing is stored', async () => {
    const before = await api.count('webhooks')
    const cases: [Record<string, unknown>, string, string][] = [
      [{ url: 'ftp://hooks.example/' }, 'url', 'must be an http or https URL'],
      [{ url: 'not a url' }, 'url', 'must be an absolute http or https URL'],
      [{ url: 'http://10.1.2.3/in' }, 'url', '10.1.2.3, a private address; set TRAWL_ALLOW_PRIVATE_NETWORKS=true to allow it'],
      [{ url: 'http://[::1]:8080/in' }, 'url', '::1, a loopback address; set TRAWL_ALLOW_PRIVATE_NETWORKS=true to allow it'],
      [{ events: [] }, 'events', 'must have at least 1 item'],
      [{ events: ['run.finished', 'run.finished'] }, 'events', 'must not repeat items'],
      [{ secret: 'plain' }, 'secret', 'must be whsec_ followed by standard base64 (with its padding)'],
      [{ secret: 'whsec_c2hvcnQ=' }, 'secret', 'must encode 24 to 64 bytes (this one 5)'],
      [{ job_id: 'nope' }, 'job_id', 'must be a uuid'],
    ]
    for (const [body, field, message] of cases) {
      const r = await create(body)
      expect([JSON.stringify(body), r.status, r.body.error]).toEqual([JSON.stringify(body), 422, 'validation'])
      const f = (r.body.fields as { field: string; errors: string[] }[]).find((x) => x.field === field)
      expect([JSON.stringify(body), f?.errors.some((e) => e.includes(message))]).toEqual([JSON.stringify(body), true])
    }
    const unknownEvent = await create({ events: ['run.exploded'] })
    expect(unknownEvent.status).toBe(422)
    expect(unknownEvent.body.fields.map((f: { field: string }) => f.field)).toEqual(['events[0]'])
    expect(await api.count('webhooks')).toBe(before)
    expect((await create({ job_id: crypto.randomUUID() })).status).toBe(404)
  })

  test('lists filter by job and enabled and page; patch changes the fields given; delete; another tenant’s is 404', async () => {
    const tenant = 'lists'
    const j = await newJob(tenant)
    const all = (await create({}, tenant)).body
    const mine = (await create({ job_id: j.id }, tenant)).body
    const off = (await create({ job_id: j.id, enabled: false }, tenant)).body
    expect(await ids([], tenant)).toEqual([off.id, mine.id, all.id])
    expect(await ids([['job_ids', j.id]], tenant)).toEqual([off.id, mine.id])
    expect(await ids([['enabled', false]], tenant)).toEqual([off.id])
    const first = await api.get(`/v1/webhooks${qs([['per_page', 2]])}`, { tenant })
    expect(first.body.data).toHaveLength(2)
    expect(
      (
        await api.get(
          `/v1/webhooks${qs([
            ['per_page', 2],
            ['page', first.body.next_page],
          ])}`,
          { tenant },
        )
      ).body,
    ).toEqual({ data: [all], next_page: null })

    const patched = await api.patch(`/v1/webhooks/${off.id}`, { enabled: true, url: 'https://other.example/hook', events: ['run.paused'], secret: SECRET, description: 'moved' }, { tenant })
    expect(patched.status).toBe(200)
    expect(patched.body).toMatchObject({
      id: off.id,
      job_id: j.id,
      enabled: true,
      url: 'https://other.example/hook',
      events: ['run.paused'],
      secret: SECRET,
      description: 'moved',
      created_at: off.created_at,
    })
    expect((await api.patch(`/v1/webhooks/${off.id}`, { description: null }, { tenant })).body).toMatchObject({ description: null, url: 'https://other.example/hook' })
    const bad = await api.patch(`/v1/webhooks/${off.id}`, { url: 'http://127.0.0.1/', job_id: null }, { tenant })
    expect(bad.status).toBe(422)
    expect(bad.body.fields.map((f: { field: string }) => f.field)).toEqual(['job_id', 'url'])

    expect((await api.get(`/v1/webhooks/${mine.id}`)).status).toBe(404)
    expect((await api.patch(`/v1/webhooks/${mine.id}`, { enabled: false })).status).toBe(404)
    expect((await api.del(`/v1/webhooks/${mine.id}`)).status).toBe(404)
    expect((await api.get(`/v1/webhooks/${mine.id}/deliveries`)).status).toBe(404)
    expect(await ids([])).not.toContain(mine.id)
    expect((await api.del(`/v1/webhooks/${mine.id}`, { tenant })).status).toBe(204)
    expect((await api.get(`/v1/webhooks/${mine.id}`, { tenant })).status).toBe(404)
  })

  test('a run’s moves are deliveries, listed newest first with their payloads; a failed one is retried', async () => {
    const tenant = 'deliveries'
    const j = (await api.post('/v1/jobs', job(), { tenant })).body as { id: string }
    const w = (await create({ job_id: j.id, events: ['run.finished', 'run.paused'] }, tenant)).body
    const run = (await api.post(`/v1/jobs/${j.id}/runs`, {}, { tenant })).body as { id: string }
    const stopped = (await api.put(`/v1/runs/${run.id}/stop`, undefined, { tenant })).body
    expect(stopped.status).toBe('finished')
    const list = await api.get(`/v1/webhooks/${w.id}/deliveries`, { tenant })
    expect(list.status).toBe(200)
    expect(list.body.data).toHaveLength(1)
    const d = list.body.data[0]
    expect(d).toMatchObject({ event: 'run.finished', status: 'pending', attempts: [], delivered_at: null, next_attempt_at: d.created_at })
    expect(d.id).toMatch(/^msg_[0-9a-f]{32}$/)
    expect(d.payload).toEqual({
      type: 'run.finished',
      timestamp: stopped.finished_at,
      data: { run_id: run.id, job_id: j.id, status: 'finished', stop_reason: 'manual', outcome: 'stopped', stats: stopped.stats, error_counts: {} },
    })
    expect((await api.get(`/v1/webhooks/${w.id}/deliveries/${d.id}`, { tenant })).body).toEqual(d)
    expect((await api.get(`/v1/webhooks/${w.id}/deliveries/${d.id}`)).status).toBe(404)
    expect((await api.get(`/v1/webhooks/${w.id}/deliveries/msg_00`, { tenant })).status).toBe(404)
    expect((await api.get(`/v1/webhooks/${w.id}/deliveries/nope`, { tenant })).status).toBe(422)
    expect((await api.get(`/v1/webhooks/${w.id}/deliveries${qs([['statuses', 'failed']])}`, { tenant })).body.data).toEqual([])
    expect((await api.get(`/v1/webhooks/${w.id}/deliveries${qs([['statuses', 'lost']])}`, { tenant })).status).toBe(422)

    expect((await api.post(`/v1/webhooks/${w.id}/deliveries/${d.id}/retry`, undefined, { tenant })).status).toBe(409)
    await api.exec("UPDATE webhook_deliveries SET status = 'failed', next_at = NULL WHERE id = ?", [d.id])
    const retried = await api.post(`/v1/webhooks/${w.id}/deliveries/${d.id}/retry`, undefined, { tenant })
    expect(retried.status).toBe(200)
    expect(retried.body).toMatchObject({ id: d.id, status: 'pending', payload: d.payload })
    expect(Date.parse(retried.body.next_attempt_at)).toBeGreaterThan(Date.now() - 60_000)
    expect((await api.post(`/v1/webhooks/${w.id}/deliveries/${d.id}/retry`, undefined)).status).toBe(404)

    // Deleting the job takes its webhook and the webhook's deliveries.
    await api.del(`/v1/jobs/${j.id}`, { tenant })
    expect((await api.get(`/v1/webhooks/${w.id}`, { tenant })).status).toBe(404)
    expect(await api.count('webhook_deliveries', 'id = ?', [d.id])).toBe(0)
  })
})
