import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { qs, snapshot, testApi, type TestApi } from '../helpers/api'

let api: TestApi
beforeAll(() => {
  api = testApi()
})
afterAll(() => api.close())

const EXAMPLE = 'a379a6f6eeafb9a55e378c118034e275' // host hash of example.com (a test vector of docs/api.md)

describe('PUT /v1/hosts', () => {
  test('inserts normalized domains and answers them in order', async () => {
    const r = await api.put('/v1/hosts', { hosts: ['Example.COM', 'bücher.example.', 'sub.example.com'] })
    expect(r.status).toBe(200)
    expect(r.body.data.map((h: any) => [h.domain, h.hash])).toEqual([
      ['example.com', EXAMPLE],
      ['xn--bcher-kva.example', expect.stringMatching(/^[0-9a-f]{32}$/)],
      ['sub.example.com', expect.stringMatching(/^[0-9a-f]{32}$/)],
    ])
    expect(r.body.data[0]).toEqual({ hash: EXAMPLE, domain: 'example.com', labels: {}, created_at: expect.any(String) })
  })

  test('upserting again keeps one row per domain and its created_at', async () => {
    const first = (await api.get(`/v1/hosts/${EXAMPLE}`)).body
    const before = (await snapshot(api)).hosts
    const r = await api.put('/v1/hosts', { hosts: ['example.com', 'EXAMPLE.com'] })
    expect(r.body.data).toEqual([first])
    expect((await snapshot(api)).hosts).toBe(before)
  })

  test.each([
    [{ hosts: [] }, 'hosts', 'must have at least 1 item'],
    [{ hosts: Array.from({ length: 256 }, (_, i) => `h${i}.example`) }, 'hosts', 'must have at most 255 items'],
    [{ hosts: ['ok.example', 'bad host'] }, 'hosts[1]', 'is not a valid domain'],
    [{ hosts: ['example.com:8080'] }, 'hosts[0]', 'is not a valid domain'],
    [{ hosts: ['https://example.com/'] }, 'hosts[0]', 'is not a valid domain'],
    [{ hosts: [42] }, 'hosts[0]', 'must be a string'],
    [{}, 'hosts', 'is required'],
  ])('%j is a 422 on %s and changes nothing', async (body, field, message) => {
    const before = await snapshot(api)
    const r = await api.put('/v1/hosts', body)
    expect(r.status).toBe(422)
    expect(r.body.error).toBe('validation')
    expect(r.body.fields).toContainEqual({ field, errors: [message] })
    expect(await snapshot(api)).toEqual(before)
  })
})

describe('GET /v1/hosts', () => {
  test('filters by hashes, domains and labels, newest first', async () => {
    await api.put('/v1/hosts', { hosts: ['f1.example', 'f2.example', 'f3.example'] })
    const all = (await api.get('/v1/hosts?per_page=100')).body.data.map((h: any) => h.domain)
    expect(all.slice(0, 3)).toEqual(['f3.example', 'f2.example', 'f1.example'])

    const f2 = all.indexOf('f2.example')
    const f2hash = (await api.get('/v1/hosts?per_page=100')).body.data[f2].hash
    expect((await api.get(`/v1/hosts${qs([['host_hashes', f2hash]])}`)).body.data.map((h: any) => h.domain)).toEqual(['f2.example'])
    expect(
      (
        await api.get(
          `/v1/hosts${qs([
            ['hosts', 'F1.example'],
            ['hosts', 'f3.example'],
          ])}`,
        )
      ).body.data.map((h: any) => h.domain),
    ).toEqual(['f3.example', 'f1.example'])

    await api.put(`/v1/hosts/${f2hash}/labels`, { labels: { env: 'prod', team: 'a' } })
    const byLabel = await api.get(`/v1/hosts${qs([['labels[env]', 'prod']])}`)
    expect(byLabel.body).toEqual({ data: [expect.objectContaining({ domain: 'f2.example', labels: { env: 'prod', team: 'a' } })], next_page: null })
    expect(
      (
        await api.get(
          `/v1/hosts${qs([
            ['labels[env]', 'prod'],
            ['labels[team]', 'b'],
          ])}`,
        )
      ).body.data,
    ).toEqual([])
    expect(
      (
        await api.get(
          `/v1/hosts${qs([
            ['labels[env]', 'prod'],
            ['labels[team]', 'a'],
          ])}`,
        )
      ).body.data,
    ).toHaveLength(1)
  })
})

describe('one host, its links and labels', () => {
  test('GET a host; 404 for an unknown hash; 422 for a malformed one', async () => {
    expect((await api.get(`/v1/hosts/${EXAMPLE}`)).body.domain).toBe('example.com')
    const missing = await api.get(`/v1/hosts/${'0'.repeat(32)}`)
    expect(missing.status).toBe(404)
    expect(missing.body).toEqual({ error: 'not_found', message: 'host not found' })
    const bad = await api.get('/v1/hosts/xyz')
    expect(bad.status).toBe(422)
    expect(bad.body.fields).toEqual([{ field: 'host_hash', errors: ['must be 32 lowercase hex characters'] }])
  })

  test('links of a host, with url and label filters', async () => {
    await api.put('/v1/links', { urls: ['https://example.com/a', 'https://example.com/b', 'https://other.example/a'] })
    const r = await api.get(`/v1/hosts/${EXAMPLE}/links?per_page=100`)
    expect(r.status).toBe(200)
    expect(r.body.data.map((l: any) => l.url)).toEqual(['https://example.com/b', 'https://example.com/a'])
    expect(r.body.data.every((l: any) => l.host.hash === EXAMPLE && l.host.domain === 'example.com')).toBe(true)
    const one = await api.get(`/v1/hosts/${EXAMPLE}/links${qs([['urls', 'HTTPS://EXAMPLE.com:443/a']])}`)
    expect(one.body.data.map((l: any) => l.url)).toEqual(['https://example.com/a'])
    const hash = one.body.data[0].hash
    expect((await api.get(`/v1/hosts/${EXAMPLE}/links${qs([['url_hashes', hash]])}`)).body.data).toHaveLength(1)
    await api.put(`/v1/links/${hash}/labels`, { labels: { kind: 'doc' } })
    expect((await api.get(`/v1/hosts/${EXAMPLE}/links${qs([['labels[kind]', 'doc']])}`)).body.data.map((l: any) => l.hash)).toEqual([hash])
    expect((await api.get(`/v1/hosts/${'0'.repeat(32)}/links`)).status).toBe(404)
    const badFilter = await api.get(`/v1/hosts/${EXAMPLE}/links${qs([['hosts', 'x']])}`)
    expect(badFilter.status).toBe(422)
    expect(badFilter.body.fields).toEqual([{ field: 'hosts', errors: ['is not a known query parameter'] }])
  })

  test('labels: get, merge (replacing existing keys), delete by keys', async () => {
    const path = `/v1/hosts/${EXAMPLE}/labels`
    expect((await api.get(path)).body).toEqual({ labels: {} })
    expect((await api.put(path, { labels: { a: '1', b: '2' } })).body).toEqual({ labels: { a: '1', b: '2' } })
    expect((await api.put(path, { labels: { b: '3', c: '4' } })).body).toEqual({ labels: { a: '1', b: '3', c: '4' } })
    const del = await api.del(
      `${path}${qs([
        ['keys', 'a'],
        ['keys', 'c'],
        ['keys', 'absent'],
      ])}`,
    )
    expect(del.status).toBe(200)
    expect(del.body).toEqual({ labels: { b: '3' } })
    expect((await api.get(`/v1/hosts/${EXAMPLE}`)).body.labels).toEqual({ b: '3' })
    // the label index follows the edits
    expect((await api.get(`/v1/hosts${qs([['labels[b]', '2']])}`)).body.data).toEqual([])
    expect((await api.get(`/v1/hosts${qs([['labels[b]', '3']])}`)).body.data.map((h: any) => h.hash)).toEqual([EXAMPLE])
    expect((await api.get(`/v1/hosts${qs([['labels[a]', '1']])}`)).body.data).toEqual([])
  })

  test('label errors', async () => {
    const path = `/v1/hosts/${EXAMPLE}/labels`
    const before = (await api.get(path)).body
    const cases: [unknown, string, string][] = [
      [{ labels: { a: 1 } }, 'labels.a', 'must be a string'],
      [{ labels: 'x' }, 'labels', 'must be an object'],
      [{ labels: { '': 'x' } }, 'labels.', 'is not a valid key (1 to 128 characters)'],
      [{}, 'labels', 'is required'],
      [{ labels: {}, extra: 1 }, 'extra', 'is not a known field'],
    ]
    for (const [body, field, message] of cases) {
      const r = await api.put(path, body)
      expect(r.status).toBe(422)
      expect(r.body.fields).toContainEqual({ field, errors: [message] })
    }
    const noKeys = await api.del(path)
    expect(noKeys.status).toBe(422)
    expect(noKeys.body.fields).toEqual([{ field: 'keys', errors: ['is required'] }])
    const tooMany = await api.put(path, { labels: Object.fromEntries(Array.from({ length: 64 }, (_, i) => [`k${i}`, 'v'])) })
    expect(tooMany.status).toBe(422)
    expect(tooMany.body.fields).toEqual([{ field: 'labels', errors: ['would leave more than 64 labels'] }])
    expect((await api.get(path)).body).toEqual(before)
    expect((await api.put(`/v1/hosts/${'0'.repeat(32)}/labels`, { labels: { a: 'b' } })).status).toBe(404)
    expect((await api.del(`/v1/hosts/${'0'.repeat(32)}/labels?keys=a`)).status).toBe(404)
    expect((await api.get(`/v1/hosts/${'0'.repeat(32)}/labels`)).status).toBe(404)
  })
})
