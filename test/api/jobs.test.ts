import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { job, qs, snapshot, testApi, type TestApi } from '../helpers/api'

let api: TestApi
beforeAll(() => {
  api = testApi({ TRAWL_PROXIES: 'isp=http://proxy.example:3128' })
})
afterAll(() => api.close())

const RESOLVED_DEFAULTS = {
  seeds: ['https://example.com/'],
  sitemaps: false,
  scope: { domains: 'same_host', include: [], exclude: [], categories: [], follow_nofollow: false },
  limits: { max_depth: 3, max_urls: 1000, max_empty_evaluations: 60, max_age: '1h' },
  politeness: { concurrency: 16, per_host_concurrency: 2, delay: '0s', respect_robots: true },
  fetch: {
    client: { kind: 'standard' },
    user_agent: 'trawl',
    headers: [],
    cookies: [],
    proxies: [],
    middleware: [],
    timeout: '30s',
    max_redirects: 5,
    max_retries: 2,
  },
  pipelines: [],
  store: { raw: true, parsed: true, assets: false, max_body_bytes: 10485760 },
}

describe('POST /v1/jobs', () => {
  test('creates a job as written, with generated id and default labels', async () => {
    const r = await api.post('/v1/jobs', job())
    expect(r.status).toBe(201)
    expect(r.body).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      name: 'docs',
      config: { seeds: ['https://example.com/'] },
      labels: {},
      created_at: expect.any(String),
      updated_at: r.body.created_at,
    })
    expect(r.body.run).toBeUndefined()
    expect((await api.get(`/v1/jobs/${r.body.id}`)).body).toEqual(r.body)
  })

  test('create_run=true also creates a pending run with the resolved config and the job labels', async () => {
    const r = await api.post('/v1/jobs?create_run=true', job({ labels: { env: 'prod' } }))
    expect(r.status).toBe(201)
    expect(r.body.run).toEqual({
      id: expect.any(String),
      job_id: r.body.id,
      status: 'pending',
      stop_reason: null,
      outcome: null,
      error_counts: {},
      labels: { env: 'prod' },
      config: RESOLVED_DEFAULTS,
      created_at: expect.any(String),
      started_at: null,
      finished_at: null,
      stats: { queued: 0, visited: 0, failed: 0, bytes: 0 },
    })
    expect((await api.get(`/v1/runs/${r.body.run.id}`)).body).toEqual(r.body.run)
  })

  test('create_run=false creates no run', async () => {
    const before = (await snapshot(api)).runs
    const r = await api.post('/v1/jobs?create_run=false', job())
    expect(r.body.run).toBeUndefined()
    expect((await snapshot(api)).runs).toBe(before)
  })

  test('a full config is kept as written and resolved with nested defaults filled', async () => {
    const config = {
      seeds: ['https://a.example/'],
      scope: { domains: 'same_domain', include: ['^https://a\\.example/docs/'], categories: ['articles'] },
      limits: { max_depth: 0 },
      fetch: { client: { kind: 'browser' }, proxies: ['isp'], headers: [['accept-language', 'en']], middleware: [{ kind: 'bearer_auth', token: 't' }] },
      pipelines: [{ identifier: 'articles', guards: [{ kind: 'category', categories: ['articles'] }], steps: [{ kind: 'fields', fields: [{ name: 'title', selector: 'h1' }] }] }],
    }
    const r = await api.post('/v1/jobs?create_run=true', { name: 'full', config })
    expect(r.status).toBe(201)
    expect(r.body.config).toEqual(config)
    const resolved = r.body.run.config
    expect(resolved.scope).toEqual({ domains: 'same_domain', include: ['^https://a\\.example/docs/'], exclude: [], categories: ['articles'], follow_nofollow: false })
    expect(resolved.limits).toEqual({ max_depth: 0, max_urls: 1000, max_empty_evaluations: 60, max_age: '1h' })
    expect(resolved.fetch.client).toEqual({ kind: 'browser', wait_until: 'load' })
    expect(resolved.fetch.middleware).toEqual([{ kind: 'bearer_auth', token: 't' }])
    expect(resolved.pipelines).toEqual([
      {
        identifier: 'articles',
        guards: [{ kind: 'category', categories: ['articles'] }],
        steps: [{ kind: 'fields', fields: [{ name: 'title', selector: 'h1', attr: 'text', type: 'string', multiple: false, required: false }] }],
        priority: 0,
        behavior: 'continue',
      },
    ])
  })

  test('an id that exists is a 409; the same id in another tenant is fine', async () => {
    const id = crypto.randomUUID()
    expect((await api.post('/v1/jobs', job({ id }))).status).toBe(201)
    const again = await api.post('/v1/jobs', job({ id, name: 'other' }))
    expect(again.status).toBe(409)
    expect(again.body).toEqual({ error: 'conflict', message: `job ${id} already exists` })
    expect((await api.get(`/v1/jobs/${id}`)).body.name).toBe('docs')
    expect((await api.post('/v1/jobs', job({ id }), { tenant: 'other-tenant' })).status).toBe(201)
  })
})

describe('GET/PUT/DELETE /v1/jobs/{id}', () => {
  test('PUT replaces given fields and keeps the others', async () => {
    const created = (await api.post('/v1/jobs', job({ labels: { a: '1' } }))).body
    await Bun.sleep(2)
    const renamed = await api.put(`/v1/jobs/${created.id}`, { name: 'renamed' })
    expect(renamed.status).toBe(200)
    expect(renamed.body).toMatchObject({ name: 'renamed', config: created.config, labels: { a: '1' }, created_at: created.created_at })
    expect(renamed.body.updated_at > created.updated_at).toBe(true)
    const relabelled = await api.put(`/v1/jobs/${created.id}`, { labels: { b: '2' }, config: { seeds: ['https://b.example/'] } })
    expect(relabelled.body).toMatchObject({ name: 'renamed', labels: { b: '2' }, config: { seeds: ['https://b.example/'] } })
    expect(
      (
        await api.get(
          `/v1/jobs${qs([
            ['labels[a]', '1'],
            ['include_ids', created.id],
          ])}`,
        )
      ).body.data,
    ).toEqual([])
    expect((await api.get(`/v1/jobs${qs([['labels[b]', '2']])}`)).body.data.map((j: any) => j.id)).toEqual([created.id])
    expect((await api.put(`/v1/jobs/${created.id}`, {})).body.name).toBe('renamed')
    const bad = await api.put(`/v1/jobs/${created.id}`, { name: '', config: { limits: { max_urls: 0 } } })
    expect(bad.status).toBe(422)
    expect(bad.body.fields).toEqual([
      { field: 'name', errors: ['must not be empty'] },
      { field: 'config.limits.max_urls', errors: ['must be >= 1'] },
    ])
    expect((await api.get(`/v1/jobs/${created.id}`)).body.name).toBe('renamed')
    expect((await api.put(`/v1/jobs/${crypto.randomUUID()}`, { name: 'x' })).status).toBe(404)
  })

  test('DELETE removes the job with its runs and their labels', async () => {
    const created = (await api.post('/v1/jobs?create_run=true', job({ labels: { gone: 'yes' } }))).body
    await api.post(`/v1/jobs/${created.id}/runs`)
    const before = await snapshot(api)
    const r = await api.del(`/v1/jobs/${created.id}`)
    expect(r.status).toBe(204)
    expect(r.body).toBe('')
    expect((await api.get(`/v1/jobs/${created.id}`)).status).toBe(404)
    expect((await api.get(`/v1/runs/${created.run.id}`)).status).toBe(404)
    expect(await snapshot(api)).toMatchObject({ jobs: before.jobs - 1, runs: before.runs - 2, labels: before.labels - 3 })
    expect((await api.get(`/v1/runs${qs([['labels[gone]', 'yes']])}`)).body.data).toEqual([])
    expect((await api.del(`/v1/jobs/${created.id}`)).status).toBe(404)
  })
})

describe('GET /v1/jobs filters', () => {
  test('include_ids, exclude_ids, names, created_before/after, labels', async () => {
    const t = testApi()
    try {
      const mk = async (name: string, labels = {}) => (await t.post('/v1/jobs', job({ name, labels }))).body
      const a = await mk('alpha', { team: 'x' })
      await Bun.sleep(5)
      const b = await mk('beta', { team: 'y' })
      await Bun.sleep(5)
      const c = await mk('gamma', { team: 'x', env: 'prod' })
      const names = async (q: [string, string][]) => (await t.get(`/v1/jobs${qs(q)}`)).body.data.map((j: any) => j.name)
      expect(await names([])).toEqual(['gamma', 'beta', 'alpha'])
      expect(
        await names([
          ['include_ids', a.id],
          ['include_ids', c.id],
        ]),
      ).toEqual(['gamma', 'alpha'])
      expect(await names([['exclude_ids', b.id]])).toEqual(['gamma', 'alpha'])
      expect(
        await names([
          ['names', 'beta'],
          ['names', 'alpha'],
        ]),
      ).toEqual(['beta', 'alpha'])
      expect(await names([['names', 'Beta']])).toEqual([])
      expect(await names([['created_after', a.created_at]])).toEqual(['gamma', 'beta'])
      expect(await names([['created_before', c.created_at]])).toEqual(['beta', 'alpha'])
      expect(
        await names([
          ['created_after', a.created_at],
          ['created_before', c.created_at],
        ]),
      ).toEqual(['beta'])
      expect(await names([['labels[team]', 'x']])).toEqual(['gamma', 'alpha'])
      expect(
        await names([
          ['labels[team]', 'x'],
          ['labels[env]', 'prod'],
        ]),
      ).toEqual(['gamma'])
      expect(
        await names([
          ['labels[team]', 'x'],
          ['exclude_ids', c.id],
        ]),
      ).toEqual(['alpha'])
      expect(await names([['labels', '{"team":"y"}']])).toEqual(['beta'])
      expect(await names([['per_page', '1']])).toEqual(['gamma'])
    } finally {
      await t.close()
    }
  })
})
