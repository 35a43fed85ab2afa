import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { qs, snapshot, testApi, type TestApi } from '../helpers/api'

let api: TestApi
beforeAll(() => {
  api = testApi()
})
afterAll(() => api.close())

describe('PUT /v1/links', () => {
  test('normalizes, hashes, creates hosts, answers in order and dedupes spellings', async () => {
    const r = await api.put('/v1/links', {
      urls: ['HTTP://Example.COM:80/a/./b/../c?x=1#frag', 'http://example.com/a/c?x=1', 'https://bücher.example/'],
    })
    expect(r.status).toBe(200)
    expect(r.body.data).toEqual([
      {
        hash: 'ecdd3d64e0505ec8b45134cf86647189',
        url: 'http://example.com/a/c?x=1',
        host: { hash: 'a379a6f6eeafb9a55e378c118034e275', domain: 'example.com' },
        labels: {},
        created_at: expect.any(String),
      },
      {
        hash: '7971a8be6267ce24bde810901c82e8c4',
        url: 'https://xn--bcher-kva.example/',
        host: { hash: expect.any(String), domain: 'xn--bcher-kva.example' },
        labels: {},
        created_at: expect.any(String),
      },
    ])
    expect((await api.get('/v1/hosts/a379a6f6eeafb9a55e378c118034e275')).body.domain).toBe('example.com')
    expect(await snapshot(api)).toMatchObject({ links: 2, hosts: 2 })
    const again = await api.put('/v1/links', { urls: ['http://EXAMPLE.com/a/c?x=1'] })
    expect(again.body.data[0].created_at).toBe(r.body.data[0].created_at)
    expect(await snapshot(api)).toMatchObject({ links: 2, hosts: 2 })
  })

  test.each([
    [{ urls: [] }, 'urls', 'must have at least 1 item'],
    [{ urls: Array.from({ length: 256 }, (_, i) => `https://a.example/${i}`) }, 'urls', 'must have at most 255 items'],
    [{ urls: ['https://ok.example/', 'ftp://x.example/'] }, 'urls[1]', 'must be an absolute http(s) URL'],
    [{ urls: ['/relative'] }, 'urls[0]', 'must be an absolute http(s) URL'],
    [{ urls: [null] }, 'urls[0]', 'must be a string'],
    [{ url: ['https://a.example/'] }, 'url', 'is not a known field'],
  ])('%j is a 422 on %s and changes nothing', async (body, field, message) => {
    const before = await snapshot(api)
    const r = await api.put('/v1/links', body)
    expect(r.status).toBe(422)
    expect(r.body.fields).toContainEqual({ field, errors: [message] })
    expect(await snapshot(api)).toEqual(before)
  })
})

describe('GET /v1/links and one link', () => {
  test('every filter', async () => {
    await api.put('/v1/links', { urls: ['https://f.example/1', 'https://f.example/2', 'https://g.example/1'] })
    const hashOf = async (url: string) => (await api.get(`/v1/links${qs([['urls', url]])}`)).body.data[0].hash
    const g1 = await hashOf('https://g.example/1')
    const f2 = await hashOf('https://f.example/2')
    const urls = async (q: [string, string][]) => (await api.get(`/v1/links${qs(q)}`)).body.data.map((l: any) => l.url)

    expect(await urls([['per_page', '3']])).toEqual(['https://g.example/1', 'https://f.example/2', 'https://f.example/1'])
    expect(
      await urls([
        ['url_hashes', g1],
        ['url_hashes', f2],
      ]),
    ).toEqual(['https://g.example/1', 'https://f.example/2'])
    expect(await urls([['urls', 'HTTPS://F.example/1#x']])).toEqual(['https://f.example/1'])
    expect(await urls([['hosts', 'f.example']])).toEqual(['https://f.example/2', 'https://f.example/1'])
    const gHost = (await api.get(`/v1/links/${g1}`)).body.host.hash
    expect(await urls([['host_hashes', gHost]])).toEqual(['https://g.example/1'])
    await api.put(`/v1/links/${f2}/labels`, { labels: { type: 'article' } })
    expect(await urls([['labels[type]', 'article']])).toEqual(['https://f.example/2'])
    expect(
      await urls([
        ['labels[type]', 'article'],
        ['hosts', 'g.example'],
      ]),
    ).toEqual([])
    expect(
      await urls([
        ['hosts', 'f.example'],
        ['urls', 'https://g.example/1'],
      ]),
    ).toEqual([])
  })

  test('GET one; 404 unknown; labels round trip', async () => {
    const hash = 'ecdd3d64e0505ec8b45134cf86647189'
    expect((await api.get(`/v1/links/${hash}`)).body.url).toBe('http://example.com/a/c?x=1')
    expect((await api.get(`/v1/links/${'f'.repeat(32)}`)).status).toBe(404)
    expect((await api.get(`/v1/links/${'f'.repeat(32)}`)).body).toEqual({ error: 'not_found', message: 'link not found' })
    expect((await api.get(`/v1/links/XYZ`)).body.fields).toEqual([{ field: 'link_hash', errors: ['must be 32 lowercase hex characters'] }])
    const path = `/v1/links/${hash}/labels`
    expect((await api.put(path, { labels: { a: '1' } })).body).toEqual({ labels: { a: '1' } })
    expect((await api.put(path, { labels: { a: '2', b: '1' } })).body).toEqual({ labels: { a: '2', b: '1' } })
    expect((await api.get(path)).body).toEqual({ labels: { a: '2', b: '1' } })
    expect((await api.del(`${path}?keys=a`)).body).toEqual({ labels: { b: '1' } })
    expect((await api.get(`/v1/links/${hash}`)).body.labels).toEqual({ b: '1' })
    expect((await api.get(`/v1/links/${'f'.repeat(32)}/labels`)).status).toBe(404)
  })
})
