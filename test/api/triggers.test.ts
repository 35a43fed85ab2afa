// Trigger routes (SPEC Triggers): create, get, delete, enable/disable, both lists with every
// filter, executions with every filter, validation (422 on the field, nothing stored) and tenancy.
// Executions are made by the scheduler on a fake clock (test/schedule has its behaviour).
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { createLogger } from '../../src/log'
import { Scheduler } from '../../src/schedule/scheduler'
import type { Execution } from '../../src/store/triggers'
import { job, qs, testApi, type TestApi } from '../helpers/api'

let api: TestApi
beforeAll(() => {
  api = testApi()
})
afterAll(() => api.close())

const HOUR = 3_600_000
const newJob = async (tenant = 'acme') => (await api.post('/v1/jobs', job(), { tenant })).body as { id: string }
const create = (jobId: string, body: unknown, tenant = 'acme') => api.post(`/v1/jobs/${jobId}/triggers`, body, { tenant })
const hourly = (name: string) => ({ name, condition: { kind: 'schedule', params: { expression: '0 * * * *' } } })
const COUNTED = ['triggers', 'trigger_executions', 'trigger_firings', 'runs']
const counts = async () => Object.fromEntries(await Promise.all(COUNTED.map(async (t) => [t, await api.count(t)])))
const names = async (path: string, pairs: [string, string | number | boolean][]) => {
  const r = await api.get(`${path}${qs([...pairs, ['per_page', 100]])}`)
  expect(r.status).toBe(200)
  return (r.body.data as { name: string }[]).map((t) => t.name)
}

describe('POST /v1/jobs/{job_id}/triggers', () => {
  test('a schedule: the stored shape, enabled, never executed', async () => {
    const j = await newJob()
    const r = await create(j.id, { name: 'nightly', condition: { kind: 'schedule', params: { expression: '30 2 * * *', timezone: 'Europe/Paris' } } })
    expect(r.status).toBe(201)
    expect(Object.keys(r.body).sort()).toEqual(['condition', 'created_at', 'enabled', 'id', 'job_id', 'last_executed_at', 'name'])
    expect(r.body).toMatchObject({
      job_id: j.id,
      name: 'nightly',
      condition: { kind: 'schedule', params: { expression: '30 2 * * *', timezone: 'Europe/Paris' } },
      enabled: true,
      last_executed_at: null,
    })
    expect(Date.parse(r.body.created_at)).toBeGreaterThan(Date.now() - 60_000)
    expect((await api.get(`/v1/triggers/${r.body.id}`)).body).toEqual(r.body)
  })

  test('on_finish with and without params, a given id, 409 on a taken id', async () => {
    const j = await newJob()
    const bare = await create(j.id, { name: 'after', condition: { kind: 'on_finish' } })
    expect(bare.body.condition).toEqual({ kind: 'on_finish', params: {} })
    const id = crypto.randomUUID()
    const delayed = await create(j.id, { id, name: 'later', condition: { kind: 'on_finish', params: { delay: '1h30m' } } })
    expect(delayed.status).toBe(201)
    expect(delayed.body).toMatchObject({ id, condition: { kind: 'on_finish', params: { delay: '1h30m' } } })
    expect((await api.one<{ delay_ms: number }>('SELECT delay_ms FROM triggers WHERE id = ?', [id]))!.delay_ms).toBe(90 * 60_000)
    const filtered = await create(j.id, { name: 'alert', condition: { kind: 'on_finish', params: { stop_reasons: ['max_age', 'manual'], outcomes: ['failed'] } } })
    expect(filtered.status).toBe(201)
    expect(filtered.body.condition).toEqual({ kind: 'on_finish', params: { stop_reasons: ['max_age', 'manual'], outcomes: ['failed'] } })
    expect((await api.get(`/v1/triggers/${filtered.body.id}`)).body.condition).toEqual(filtered.body.condition)
    const before = await counts()
    const dup = await create(j.id, { id, name: 'again', condition: { kind: 'on_finish' } })
    expect(dup.status).toBe(409)
    expect(dup.body).toEqual({ error: 'conflict', message: `trigger ${id} already exists` })
    expect(await counts()).toEqual(before)
  })

  test('5 and 6 fields, nicknames, names from 1 to 255 characters', async () => {
    const j = await newJob()
    for (const expression of ['*/15 9-17 * * MON-FRI', '*/30 * * * * *', '0 0 1 1 *', '@daily', '@hourly', '0 0 L * *']) {
      const r = await create(j.id, { name: 'x'.repeat(255), condition: { kind: 'schedule', params: { expression } } })
      expect([expression, r.status]).toEqual([expression, 201])
    }
  })

  test('every invalid field is a 422 on that field, with the reason; nothing is stored', async () => {
    const j = await newJob()
    const before = await counts()
    const cases: [unknown, { field: string; errors: string[] }[]][] = [
      [{ name: 'x', condition: { kind: 'schedule', params: { expression: '61 * * * *' } } }, [{ field: 'condition.params.expression', errors: ['CronPattern: Invalid value for minute: 61'] }]],
      [
        { name: 'x', condition: { kind: 'schedule', params: { expression: '* * * *' } } },
        [{ field: 'condition.params.expression', errors: ['must have 5 fields (minute hour day-of-month month day-of-week) or 6 (seconds first), got 4'] }],
      ],
      [
        { name: 'x', condition: { kind: 'schedule', params: { expression: '0 0 0 1 1 * 2030' } } },
        [{ field: 'condition.params.expression', errors: ['must have 5 fields (minute hour day-of-month month day-of-week) or 6 (seconds first), got 7'] }],
      ],
      [{ name: 'x', condition: { kind: 'schedule', params: { expression: '0 0 30 2 *' } } }, [{ field: 'condition.params.expression', errors: ['never fires (no date matches it)'] }]],
      [{ name: 'x', condition: { kind: 'schedule', params: { expression: '   ' } } }, [{ field: 'condition.params.expression', errors: ['must not be empty'] }]],
      [
        { name: 'x', condition: { kind: 'schedule', params: { expression: '0 * * * *', timezone: 'Mars/Olympus' } } },
        [{ field: 'condition.params.timezone', errors: ['is not an IANA time zone name (such as "UTC" or "Europe/Paris")'] }],
      ],
      [{ name: 'x', condition: { kind: 'schedule', params: {} } }, [{ field: 'condition.params.expression', errors: ['is required'] }]],
      [{ name: 'x', condition: { kind: 'schedule' } }, [{ field: 'condition.params', errors: ['is required'] }]],
      [{ name: 'x', condition: { kind: 'on_finish', params: { delay: 'soon' } } }, [{ field: 'condition.params.delay', errors: ['must be a duration such as 250ms, 30s or 1h30m'] }]],
      [{ name: 'x', condition: { kind: 'on_finish', params: { delay: '367d' } } }, [{ field: 'condition.params.delay', errors: ['must be at most 366d'] }]],
      [{ name: 'x', condition: { kind: 'on_finish', params: { expression: '0 * * * *' } } }, [{ field: 'condition.params.expression', errors: ['is not a known field'] }]],
      [
        { name: 'x', condition: { kind: 'on_finish', params: { stop_reasons: ['max_age', 'too_old'] } } },
        [{ field: 'condition.params.stop_reasons[1]', errors: ['must be one of "max_depth", "max_urls", "max_empty_evaluations", "max_age", "manual", "empty_seed", "unknown"'] }],
      ],
      [{ name: 'x', condition: { kind: 'on_finish', params: { stop_reasons: [] } } }, [{ field: 'condition.params.stop_reasons', errors: ['must have at least 1 item'] }]],
      [{ name: 'x', condition: { kind: 'on_finish', params: { outcomes: ['failed', 'failed'] } } }, [{ field: 'condition.params.outcomes', errors: ['must not repeat items'] }]],
      [{ name: 'x', condition: { kind: 'on_finish', params: { outcomes: 'failed' } } }, [{ field: 'condition.params.outcomes', errors: ['must be an array'] }]],
      [{ name: 'x', condition: { kind: 'schedule', params: { expression: '0 * * * *', outcomes: ['failed'] } } }, [{ field: 'condition.params.outcomes', errors: ['is not a known field'] }]],
      [{ name: 'x', condition: { kind: 'weekly' } }, [{ field: 'condition.kind', errors: ['must be one of "schedule", "on_finish"'] }]],
      [{ name: 'x' }, [{ field: 'condition', errors: ['is required'] }]],
      [{ name: '', condition: { kind: 'on_finish' } }, [{ field: 'name', errors: ['must not be empty'] }]],
      [{ name: 'x'.repeat(256), condition: { kind: 'on_finish' } }, [{ field: 'name', errors: ['must be at most 255 characters'] }]],
      [{ name: 'x', condition: { kind: 'on_finish' }, enabled: false }, [{ field: 'enabled', errors: ['is not a known field'] }]],
      [{ name: 'x', condition: { kind: 'on_finish' }, id: 'nope' }, [{ field: 'id', errors: ['must be a uuid'] }]],
    ]
    for (const [body, fields] of cases) {
      const r = await create(j.id, body)
      expect([JSON.stringify(body), r.status, r.body]).toEqual([JSON.stringify(body), 422, { error: 'validation', fields }])
    }
    expect(await counts()).toEqual(before)
  })

  test('an unknown job is 404; a malformed job id 422', async () => {
    const r = await create(crypto.randomUUID(), hourly('x'))
    expect(r.status).toBe(404)
    expect(r.body).toEqual({ error: 'not_found', message: 'job not found' })
    expect((await create('nope', hourly('x'))).body.fields).toEqual([{ field: 'job_id', errors: ['must be a uuid'] }])
  })
})

describe('get, delete, enable, disable', () => {
  test('enable and disable set `enabled` (idempotent); a schedule loses and regains its next tick', async () => {
    const j = await newJob()
    const t = (await create(j.id, hourly('h'))).body
    const nextAt = async () => (await api.one<{ next_at: number | null }>('SELECT next_at FROM triggers WHERE id = ?', [t.id]))!.next_at
    const tick = await nextAt()
    expect(tick! % HOUR).toBe(0)
    for (let i = 0; i < 2; i++) {
      const off = await api.put(`/v1/triggers/${t.id}/disable`)
      expect(off.status).toBe(200)
      expect(off.body).toEqual({ ...t, enabled: false })
      expect(await nextAt()).toBeNull()
    }
    for (let i = 0; i < 2; i++) {
      const on = await api.put(`/v1/triggers/${t.id}/enable`)
      expect(on.body).toEqual(t)
      expect(await nextAt()).toBe(tick)
    }
  })

  test('unknown triggers are 404 on every route; malformed ids 422', async () => {
    const id = crypto.randomUUID()
    for (const [method, path] of [
      ['GET', `/v1/triggers/${id}`],
      ['DELETE', `/v1/triggers/${id}`],
      ['PUT', `/v1/triggers/${id}/enable`],
      ['PUT', `/v1/triggers/${id}/disable`],
      ['GET', `/v1/triggers/${id}/executions`],
    ] as const) {
      const r = await api.call(method, path)
      expect([path, r.status, r.body]).toEqual([path, 404, { error: 'not_found', message: 'trigger not found' }])
      expect((await api.call(method, path.replace(id, 'x'))).body.fields).toEqual([{ field: 'trigger_id', errors: ['must be a uuid'] }])
    }
  })

  test('delete: 204, then gone', async () => {
    const j = await newJob()
    const t = (await create(j.id, hourly('gone'))).body
    expect((await api.del(`/v1/triggers/${t.id}`)).status).toBe(204)
    expect((await api.get(`/v1/triggers/${t.id}`)).status).toBe(404)
    expect((await api.del(`/v1/triggers/${t.id}`)).status).toBe(404)
  })

  test('there is no update route', async () => {
    const j = await newJob()
    const t = (await create(j.id, hourly('fixed'))).body
    const put = await api.put(`/v1/triggers/${t.id}`, { name: 'changed' })
    expect(put.status).toBe(405)
    expect(put.body.error).toBe('method_not_allowed')
    expect(put.headers.get('allow')).not.toContain('PUT')
    expect((await api.get(`/v1/triggers/${t.id}`)).body.name).toBe('fixed')
  })
})

describe('lists', () => {
  test('GET /v1/triggers and /v1/jobs/{id}/triggers: newest first, every filter', async () => {
    const a = await newJob()
    const b = await newJob()
    const t1 = (await create(a.id, hourly('alpha'))).body
    await Bun.sleep(5)
    const t2 = (await create(a.id, { name: 'beta', condition: { kind: 'on_finish' } })).body
    await Bun.sleep(5)
    const t3 = (await create(b.id, hourly('gamma'))).body
    await api.put(`/v1/triggers/${t2.id}/disable`)
    // gamma fires once, on a fake clock.
    const clock = (await api.one<{ next_at: number }>('SELECT next_at FROM triggers WHERE id = ?', [t3.id]))!.next_at
    await api.exec('UPDATE triggers SET next_at = NULL WHERE id = ?', [t1.id])
    await new Scheduler(
      api.store,
      createLogger('info', () => {}),
      () => {},
      () => clock,
    ).tick()
    const executedAt = (await api.get(`/v1/triggers/${t3.id}`)).body.last_executed_at
    expect(executedAt).toBe(new Date(clock).toISOString())

    const scope = (pairs: [string, string | boolean][]) => names('/v1/triggers', [['job_ids', a.id], ['job_ids', b.id], ...pairs])
    expect(await scope([])).toEqual(['gamma', 'beta', 'alpha'])
    expect(await names('/v1/triggers', [['job_ids', a.id]])).toEqual(['beta', 'alpha'])
    expect(await names('/v1/triggers', [['job_ids', crypto.randomUUID()]])).toEqual([])
    expect(
      await scope([
        ['include_ids', t1.id],
        ['include_ids', t3.id],
      ]),
    ).toEqual(['gamma', 'alpha'])
    expect(await scope([['exclude_ids', t1.id]])).toEqual(['gamma', 'beta'])
    expect(
      await scope([
        ['names', 'beta'],
        ['names', 'gamma'],
      ]),
    ).toEqual(['gamma', 'beta'])
    expect(await scope([['names', 'BETA']])).toEqual([])
    expect(await scope([['enabled', true]])).toEqual(['gamma', 'alpha'])
    expect(await scope([['enabled', false]])).toEqual(['beta'])
    expect(await scope([['created_after', t1.created_at]])).toEqual(['gamma', 'beta'])
    expect(await scope([['created_before', t3.created_at]])).toEqual(['beta', 'alpha'])
    expect(await scope([['executed_after', new Date(clock - 1).toISOString()]])).toEqual(['gamma'])
    expect(await scope([['executed_before', new Date(clock - 1).toISOString()]])).toEqual([])
    expect(await scope([['executed_before', new Date(clock + 1).toISOString()]])).toEqual(['gamma'])

    // The job's own list: same filters, no job_ids.
    expect(await names(`/v1/jobs/${a.id}/triggers`, [])).toEqual(['beta', 'alpha'])
    expect(await names(`/v1/jobs/${a.id}/triggers`, [['enabled', true]])).toEqual(['alpha'])
    expect(await names(`/v1/jobs/${a.id}/triggers`, [['names', 'gamma']])).toEqual([])
    const withJobIds = await api.get(`/v1/jobs/${a.id}/triggers?job_ids=${a.id}`)
    expect(withJobIds.body.fields).toEqual([{ field: 'job_ids', errors: ['is not a known query parameter'] }])
    expect((await api.get(`/v1/jobs/${crypto.randomUUID()}/triggers`)).status).toBe(404)
    expect((await api.get('/v1/triggers?enabled=maybe')).body.fields).toEqual([{ field: 'enabled', errors: ['must be a boolean'] }])
    expect((await api.get('/v1/triggers?executed_after=yesterday')).body.fields).toEqual([{ field: 'executed_after', errors: ['must be an RFC 3339 date-time'] }])
  })

  test('pages: per_page and the cursor walk every trigger once', async () => {
    const j = await newJob()
    for (let i = 0; i < 7; i++) await create(j.id, hourly(`p${i}`))
    const seen: string[] = []
    let page: string | null = null
    do {
      const r = await api.get(`/v1/jobs/${j.id}/triggers${qs([['per_page', 3], ...(page ? [['page', page] as [string, string]] : [])])}`)
      seen.push(...r.body.data.map((t: { name: string }) => t.name))
      page = r.body.next_page
    } while (page)
    expect(seen).toEqual(['p6', 'p5', 'p4', 'p3', 'p2', 'p1', 'p0'])
  })
})

describe('executions', () => {
  test('newest first, with every filter', async () => {
    const j = await newJob()
    const t = (await create(j.id, hourly('runs'))).body
    const first = (await api.one<{ next_at: number }>('SELECT next_at FROM triggers WHERE id = ?', [t.id]))!.next_at
    // Only this trigger ticks (the other tests' schedules share the database).
    await api.exec('UPDATE triggers SET next_at = NULL WHERE id <> ?', [t.id])
    let clock = first
    const scheduler = new Scheduler(
      api.store,
      createLogger('info', () => {}),
      () => {},
      () => clock,
    )
    const made: Execution[] = []
    for (let i = 0; i < 3; i++) {
      clock = first + i * HOUR + 1000 // executed a second after each tick
      made.push(...(await scheduler.tick()).made)
    }
    // The first run is still pending at the second and third ticks: skipped.
    expect(made.map((e) => e.outcome)).toEqual(['created_run', 'skipped', 'skipped'])
    const path = `/v1/triggers/${t.id}/executions`
    const list = async (pairs: [string, string][]) => {
      const r = await api.get(`${path}${qs(pairs)}`)
      expect(r.status).toBe(200)
      return (r.body.data as { id: string }[]).map((e) => made.findIndex((m) => m.id === e.id))
    }
    const all = (await api.get(path)).body.data
    expect(all).toEqual([...made].reverse())
    expect(Object.keys(all[0]).sort()).toEqual(['created_at', 'executed_at', 'id', 'outcome', 'run_id', 'scheduled_at', 'trigger_id'])
    expect(all[2].run_id).toBe((await api.get(`/v1/jobs/${j.id}/runs`)).body.data[0].id)
    const at = (i: number, extra = 0) => new Date(first + i * HOUR + extra).toISOString()
    expect(await list([])).toEqual([2, 1, 0])
    expect(
      await list([
        ['include_ids', made[0]!.id],
        ['include_ids', made[2]!.id],
      ]),
    ).toEqual([2, 0])
    expect(await list([['exclude_ids', made[1]!.id]])).toEqual([2, 0])
    expect(await list([['scheduled_after', at(0)]])).toEqual([2, 1])
    expect(await list([['scheduled_before', at(1)]])).toEqual([0])
    expect(await list([['executed_after', at(1, 1000)]])).toEqual([2])
    expect(await list([['executed_before', at(1, 1001)]])).toEqual([1, 0])
    expect(
      await list([
        ['created_after', at(0, 1000)],
        ['created_before', at(2, 1000)],
      ]),
    ).toEqual([1])
    expect((await api.get(`${path}?per_page=2`)).body.next_page).not.toBeNull()
    expect((await api.get(`${path}?outcome=skipped`)).body.fields).toEqual([{ field: 'outcome', errors: ['is not a known query parameter'] }])
  })
})

describe('tenancy', () => {
  test("another tenant cannot see, list, fire, enable, disable or delete a tenant's triggers, nor add one to its job", async () => {
    const j = await newJob('tenant-a')
    const t = (await create(j.id, hourly('mine'), 'tenant-a')).body
    const B = { tenant: 'tenant-b' }
    expect((await api.get(`/v1/triggers/${t.id}`, B)).status).toBe(404)
    expect((await api.put(`/v1/triggers/${t.id}/disable`, undefined, B)).status).toBe(404)
    expect((await api.put(`/v1/triggers/${t.id}/enable`, undefined, B)).status).toBe(404)
    expect((await api.del(`/v1/triggers/${t.id}`, B)).status).toBe(404)
    expect((await api.get(`/v1/triggers/${t.id}/executions`, B)).status).toBe(404)
    expect((await api.get(`/v1/triggers?include_ids=${t.id}`, B)).body.data).toEqual([])
    expect((await api.get(`/v1/triggers?job_ids=${j.id}`, B)).body.data).toEqual([])
    expect((await api.get(`/v1/jobs/${j.id}/triggers`, B)).status).toBe(404)
    expect((await create(j.id, hourly('theirs'), 'tenant-b')).status).toBe(404)
    // The same id in another tenant is its own trigger.
    const jb = await newJob('tenant-b')
    expect((await create(jb.id, { ...hourly('twin'), id: t.id }, 'tenant-b')).status).toBe(201)
    expect((await api.get(`/v1/triggers/${t.id}`, { tenant: 'tenant-a' })).body).toEqual(t)
  })
})

describe('POST /v1/triggers/preview', () => {
  const preview = (condition: unknown, tenant = 'acme') => api.post('/v1/triggers/preview', { condition }, { tenant })
  /** The five ticks after `from` of a schedule firing every `every` ms from `offset` past each multiple, worked out here. */
  const ticks = (from: number, every: number, offset = 0) => {
    const first = Math.floor((from - offset) / every) * every + offset + every
    return Array.from({ length: 5 }, (_, i) => new Date(first + i * every).toISOString())
  }
  /** The answer against the ticks from just before or just after the call (a boundary may fall in between). */
  const expectTicks = async (condition: unknown, every: number, offset = 0) => {
    const before = Date.now()
    const r = await preview(condition)
    const after = Date.now()
    expect(r.status).toBe(200)
    expect([ticks(before, every, offset), ticks(after, every, offset)]).toContainEqual(r.body.next_at)
  }

  test('a schedule answers its next five ticks, in UTC or in the given zone; nothing is stored', async () => {
    const before = await counts()
    await expectTicks({ kind: 'schedule', params: { expression: '*/15 * * * *' } }, 15 * 60_000)
    await expectTicks({ kind: 'schedule', params: { expression: '0 0 */2 * * *' } }, 2 * HOUR) // six fields: seconds first
    // 09:00 in Kolkata (UTC+5:30 all year) is 03:30Z every day.
    await expectTicks({ kind: 'schedule', params: { expression: '0 9 * * *', timezone: 'Asia/Kolkata' } }, 24 * HOUR, 3.5 * HOUR)
    expect(await counts()).toEqual(before)
  })

  test('a yearly schedule answers five New Years; on_finish, which no clock fires, answers none', async () => {
    const year = new Date().getUTCFullYear()
    // Once a year on 1 January: five of them, a year apart.
    const yearly = (await preview({ kind: 'schedule', params: { expression: '@yearly' } })).body.next_at
    expect(yearly).toEqual(Array.from({ length: 5 }, (_, i) => `${year + 1 + i}-01-01T00:00:00.000Z`))
    expect((await preview({ kind: 'on_finish', params: { delay: '10m' } })).body).toEqual({ next_at: [] })
    expect((await preview({ kind: 'on_finish' })).body).toEqual({ next_at: [] })
  })

  test('a condition create refuses is the same 422, at the same field; the tenant header is needed', async () => {
    const cases: [unknown, { field: string; errors: string[] }[]][] = [
      [
        { kind: 'schedule', params: { expression: '* * * *' } },
        [{ field: 'condition.params.expression', errors: ['must have 5 fields (minute hour day-of-month month day-of-week) or 6 (seconds first), got 4'] }],
      ],
      [{ kind: 'schedule', params: { expression: '0 0 30 2 *' } }, [{ field: 'condition.params.expression', errors: ['never fires (no date matches it)'] }]],
      [
        { kind: 'schedule', params: { expression: '0 * * * *', timezone: 'Mars/Olympus' } },
        [{ field: 'condition.params.timezone', errors: ['is not an IANA time zone name (such as "UTC" or "Europe/Paris")'] }],
      ],
      [{ kind: 'on_finish', params: { delay: '400d' } }, [{ field: 'condition.params.delay', errors: ['must be at most 366d'] }]],
    ]
    const j = await newJob()
    for (const [condition, fields] of cases) {
      const r = await preview(condition)
      expect([r.status, r.body]).toEqual([422, { error: 'validation', fields }])
      expect((await create(j.id, { name: 'same', condition })).body).toEqual(r.body)
    }
    const missing = await api.post('/v1/triggers/preview', {})
    expect(missing.body.fields).toEqual([{ field: 'condition', errors: ['is required'] }])
    expect((await api.post('/v1/triggers/preview', { condition: { kind: 'schedule', params: { expression: '@daily' } }, name: 'x' })).body.fields).toEqual([
      { field: 'name', errors: ['is not a known field'] },
    ])
    expect((await preview({ kind: 'schedule', params: { expression: '@daily' } }, null as never)).status).toBe(400)
  })
})
