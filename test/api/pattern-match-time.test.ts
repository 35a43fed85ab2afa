// Matching runs on the parse workers under their time limit: a pattern set at its size budget,
// tested against long paths, cannot hold up the thread that answers requests.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { testApi, type TestApi } from '../helpers/api'

let api: TestApi
let setId: string
beforeAll(async () => {
  api = testApi({}, { parseTimeoutMs: 300 })
  const host = (await api.put('/v1/hosts', { hosts: ['slow.example'] })).body.data[0].hash
  // Near the 1000-instruction budget each, and a worst case for re2js's matcher on a/b text.
  const patterns = Array.from({ length: 100 }, (_, i) => `[ab]*a[ab]{${890 + i}}[ab]*$`)
  const r = await api.post(`/v1/hosts/${host}/patterns`, { category: 'others', patterns: { format: 'regex', patterns } })
  expect(r.body.id).toBeString()
  setId = r.body.id
})
afterAll(() => api.close())

test('a match over the time limit is a 500 timeout, and other requests are answered meanwhile', async () => {
  const paths = Array.from({ length: 20 }, (_, i) => `/${'ab'.repeat(4000)}${i}`)
  const events: string[] = []
  const match = api.post(`/v1/patterns/${setId}/match`, { paths }).then((r) => (events.push('match'), r))
  await Bun.sleep(20)
  const list = await api.get('/v1/patterns')
  events.push('list')
  expect(list.status).toBe(200)
  expect(list.body.data.map((s: { id: string }) => s.id)).toEqual([setId])
  const r = await match
  expect(events).toEqual(['list', 'match'])
  expect(r.status).toBe(500)
  expect(r.body).toEqual({ error: 'timeout', message: 'matching took longer than 0.3s' })
})

test('the pool goes on after the timeout: a small set answers from a fresh worker', async () => {
  const host = (await api.put('/v1/hosts', { hosts: ['fast.example'] })).body.data[0].hash
  const set = await api.post(`/v1/hosts/${host}/patterns`, { category: 'products', patterns: { format: 'url_pattern', patterns: ['/p/:id'] } })
  const r = await api.post(`/v1/patterns/${set.body.id}/match`, { paths: ['/p/1', '/b'] })
  expect(r.status).toBe(200)
  expect(r.body.results).toEqual([
    { path: '/p/1', url: 'https://fast.example/p/1', matched: true, patterns: ['/p/:id'], category: 'products' },
    { path: '/b', url: 'https://fast.example/b', matched: false, patterns: [], category: null },
  ])
})
