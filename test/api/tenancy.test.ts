import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { job, qs, testApi, type TestApi } from '../helpers/api'

let api: TestApi
const A = { tenant: 'tenant-a' }
const B = { tenant: 'tenant-b' }
let jobA: any
let hostA: string
let linkA: string

beforeAll(async () => {
  api = testApi()
  jobA = (await api.post('/v1/jobs?create_run=true', job({ labels: { env: 'prod' } }), A)).body
  hostA = (await api.put('/v1/hosts', { hosts: ['shared.example'] }, A)).body.data[0].hash
  linkA = (await api.put('/v1/links', { urls: ['https://shared.example/page'] }, A)).body.data[0].hash
  await api.put(`/v1/hosts/${hostA}/labels`, { labels: { owner: 'a' } }, A)
  await api.put(`/v1/links/${linkA}/labels`, { labels: { owner: 'a' } }, A)
})
afterAll(() => api.close())

describe('tenant B never sees tenant A', () => {
  test.each([
    ['GET', () => `/v1/jobs/${jobA.id}`],
    ['PUT', () => `/v1/jobs/${jobA.id}`],
    ['DELETE', () => `/v1/jobs/${jobA.id}`],
    ['GET', () => `/v1/jobs/${jobA.id}/runs`],
    ['POST', () => `/v1/jobs/${jobA.id}/runs`],
    ['GET', () => `/v1/runs/${jobA.run.id}`],
    ['DELETE', () => `/v1/runs/${jobA.run.id}`],
    ['PUT', () => `/v1/runs/${jobA.run.id}/stop`],
    ['PUT', () => `/v1/runs/${jobA.run.id}/pause`],
    ['GET', () => `/v1/hosts/${hostA}`],
    ['GET', () => `/v1/hosts/${hostA}/links`],
    ['GET', () => `/v1/hosts/${hostA}/labels`],
    ['PUT', () => `/v1/hosts/${hostA}/labels`],
    ['DELETE', () => `/v1/hosts/${hostA}/labels?keys=owner`],
    ['GET', () => `/v1/links/${linkA}`],
    ['GET', () => `/v1/links/${linkA}/labels`],
    ['PUT', () => `/v1/links/${linkA}/labels`],
  ])('%s %s answers 404 exactly like a missing resource', async (method, path) => {
    const body = method === 'PUT' ? (path().endsWith('labels') ? { labels: { owner: 'b' } } : method === 'PUT' && path().includes('/jobs/') ? { name: 'stolen' } : undefined) : undefined
    const r = await api.call(method, path(), { ...B, body })
    expect(r.status).toBe(404)
    expect(r.body.error).toBe('not_found')
  })

  test("tenant A's data is untouched by B's attempts", async () => {
    const j = await api.get(`/v1/jobs/${jobA.id}`, A)
    expect(j.body.name).toBe('docs')
    const run = await api.get(`/v1/runs/${jobA.run.id}`, A)
    expect(run.body.status).toBe('pending')
    expect((await api.get(`/v1/hosts/${hostA}/labels`, A)).body).toEqual({ labels: { owner: 'a' } })
    expect((await api.get(`/v1/links/${linkA}/labels`, A)).body).toEqual({ labels: { owner: 'a' } })
  })

  test('lists never mix tenants, with or without filters', async () => {
    for (const path of ['/v1/jobs', '/v1/runs', '/v1/hosts', '/v1/links']) {
      const r = await api.get(path, B)
      expect(r.status).toBe(200)
      expect(r.body).toEqual({ data: [], next_page: null })
      expect((await api.get(path, A)).body.data.length).toBeGreaterThan(0)
    }
    expect((await api.get(`/v1/jobs${qs([['labels[env]', 'prod']])}`, B)).body.data).toEqual([])
    expect((await api.get(`/v1/runs${qs([['job_ids', jobA.id]])}`, B)).body.data).toEqual([])
    expect((await api.get(`/v1/hosts${qs([['labels[owner]', 'a']])}`, B)).body.data).toEqual([])
    expect((await api.get(`/v1/links${qs([['hosts', 'shared.example']])}`, B)).body.data).toEqual([])
    expect((await api.get(`/v1/links${qs([['labels[owner]', 'a']])}`, B)).body.data).toEqual([])
  })

  test('the same host and link in two tenants are two rows with their own labels', async () => {
    const hostB = (await api.put('/v1/hosts', { hosts: ['shared.example'] }, B)).body.data[0]
    expect(hostB.hash).toBe(hostA)
    expect(hostB.labels).toEqual({})
    await api.put(`/v1/hosts/${hostA}/labels`, { labels: { owner: 'b' } }, B)
    expect((await api.get(`/v1/hosts/${hostA}/labels`, A)).body).toEqual({ labels: { owner: 'a' } })
    expect((await api.get(`/v1/hosts/${hostA}/labels`, B)).body).toEqual({ labels: { owner: 'b' } })
    expect((await api.get(`/v1/hosts${qs([['labels[owner]', 'a']])}`, B)).body.data).toEqual([])
    expect((await api.get(`/v1/hosts${qs([['labels[owner]', 'b']])}`, A)).body.data).toEqual([])
  })

  test('a cursor from tenant A gives tenant B only its own rows', async () => {
    for (let i = 0; i < 3; i++) await api.post('/v1/jobs', job({ name: `a${i}` }), A)
    const page = (await api.get('/v1/jobs?per_page=1', A)).body.next_page
    expect(page).toBeString()
    expect((await api.get(`/v1/jobs?page=${page}`, B)).body.data).toEqual([])
  })
})
