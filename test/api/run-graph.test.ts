import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { hostHash } from '../../src/core/url'
import type { PageRecord } from '../../src/store/page-records'
import { job, qs, testApi, type TestApi } from '../helpers/api'
import { pageRecord } from '../helpers/page-record'

let api: TestApi
const T0 = Date.parse('2026-03-01T12:00:00.000Z')
const A = 'a.example'
const B = 'b.example'

type Link = { hash: string; url: string; host: { hash: string; domain: string } }
const newRun = async (tenant = 'acme') => (await api.post('/v1/jobs?create_run=true', job(), { tenant })).body.run.id as string
const seqOf = (tenant: string, run: string) => api.runSeq(tenant, run)
/** Upserts the URLs as the engine does before it records visits and edges; answers the links in order. */
const links = async (urls: string[], tenant = 'acme'): Promise<Link[]> => (await api.put('/v1/links', { urls }, { tenant })).body.data
/** A page record as the engine writes it: the visit, and its children (the edges from it). */
const visit = (l: Link, depth: number, status: number | null, at: number, children: Link[] = []): PageRecord =>
  pageRecord(l.hash, l.host.hash, { depth, status, visited_at: at, children: children.map((c) => c.hash) })

beforeAll(() => {
  api = testApi()
})
afterAll(() => api.close())

// The write (recordPages) is tested in test/store/page-records.test.ts.

const runIdOf = async (seq: number) => (await api.one<{ id: string }>('SELECT id FROM runs WHERE seq = ?', [seq]))!.id

describe('GET /v1/runs/{run_id}/links', () => {
  let run: string
  let ls: Link[]
  beforeAll(async () => {
    run = await newRun()
    ls = await links([`https://${A}/`, `https://${A}/a`, `https://${B}/`, `https://${B}/b?x=1`, `https://${A}/fail`])
    await api.put(`/v1/links/${ls[1]!.hash}/labels`, { labels: { type: 'article' } })
    const seq = await seqOf('acme', run)
    const depths = [0, 1, 1, 2, 2]
    const statuses = [200, 200, 301, 404, null]
    await api.recordPages(
      seq,
      ls.map((l, i) => visit(l, depths[i]!, statuses[i]!, T0 + i * 1000)),
    )
    // another run and another tenant visit the same links
    const other = await seqOf('acme', await newRun())
    await api.recordPages(other, [visit(ls[0]!, 0, 200, T0)])
    const [foreign] = await links([`https://${A}/`], 'other')
    await api.recordPages(await seqOf('other', await newRun('other')), [visit(foreign!, 0, 200, T0)])
  })
  const visited = async (q: [string, string | number][]) => {
    const r = await api.get(`/v1/runs/${run}/links${qs(q)}`)
    expect(r.status).toBe(200)
    return r.body.data.map((v: any) => ls.findIndex((l) => l.hash === v.hash))
  }

  test('answers visited links in visit order: the link shape plus depth, visited_at and status', async () => {
    const r = await api.get(`/v1/runs/${run}/links?per_page=2`)
    expect(r.status).toBe(200)
    expect(r.body.data).toEqual([
      {
        hash: ls[0]!.hash,
        url: `https://${A}/`,
        host: { hash: hostHash(A), domain: A },
        labels: {},
        created_at: expect.any(String),
        depth: 0,
        visited_at: '2026-03-01T12:00:00.000Z',
        status: 200,
      },
      expect.objectContaining({ hash: ls[1]!.hash, labels: { type: 'article' }, depth: 1, visited_at: '2026-03-01T12:00:01.000Z' }),
    ])
    expect(r.body.next_page).toEqual(expect.any(String))
    const rest = await api.get(`/v1/runs/${run}/links?per_page=10&page=${r.body.next_page}`)
    expect(rest.body.data.map((v: any) => v.status)).toEqual([301, 404, null])
    expect(rest.body.next_page).toBeNull()
  })

  test('every filter', async () => {
    expect(await visited([])).toEqual([0, 1, 2, 3, 4])
    expect(await visited([['depth', 1]])).toEqual([1, 2])
    expect(
      await visited([
        ['depth', 0],
        ['depth', 2],
      ]),
    ).toEqual([0, 3, 4])
    expect(await visited([['visited_after', '2026-03-01T12:00:01Z']])).toEqual([2, 3, 4])
    expect(await visited([['visited_before', '2026-03-01T12:00:01Z']])).toEqual([0])
    expect(
      await visited([
        ['visited_after', '2026-03-01T12:00:00Z'],
        ['visited_before', '2026-03-01T12:00:03Z'],
      ]),
    ).toEqual([1, 2])
    expect(
      await visited([
        ['url_hashes', ls[3]!.hash],
        ['url_hashes', ls[0]!.hash],
      ]),
    ).toEqual([0, 3])
    expect(await visited([['urls', `HTTPS://${B.toUpperCase()}:443/b?x=1#frag`]])).toEqual([3])
    expect(await visited([['host_hashes', hostHash(B)]])).toEqual([2, 3])
    expect(await visited([['hosts', A.toUpperCase()]])).toEqual([0, 1, 4])
    expect(
      await visited([
        ['hosts', A],
        ['hosts', B],
      ]),
    ).toEqual([0, 1, 2, 3, 4])
    expect(await visited([['hosts', 'nowhere.example']])).toEqual([])
    // filters combine with AND
    expect(
      await visited([
        ['hosts', A],
        ['depth', 2],
      ]),
    ).toEqual([4])
    expect(
      await visited([
        ['url_hashes', ls[0]!.hash],
        ['url_hashes', ls[1]!.hash],
        ['depth', 1],
      ]),
    ).toEqual([1])
    expect(
      await visited([
        ['urls', `https://${A}/`],
        ['hosts', B],
      ]),
    ).toEqual([])
    expect(
      await visited([
        ['url_hashes', ls[2]!.hash],
        ['host_hashes', hostHash(B)],
        ['visited_after', '2026-03-01T12:00:01Z'],
      ]),
    ).toEqual([2])
  })

  test('pages of a selective filter keep visit order', async () => {
    const q = ls.map((l) => ['url_hashes', l.hash] as [string, string]).reverse()
    const first = await api.get(`/v1/runs/${run}/links${qs([...q, ['per_page', 3]])}`)
    const second = await api.get(`/v1/runs/${run}/links${qs([...q, ['per_page', 3], ['page', first.body.next_page]])}`)
    expect([...first.body.data, ...second.body.data].map((v: any) => v.hash)).toEqual(ls.map((l) => l.hash))
    expect(second.body.next_page).toBeNull()
  })

  test('404 for an unknown run or another tenant’s; 422 for bad input', async () => {
    expect((await api.get(`/v1/runs/${crypto.randomUUID()}/links`)).body).toEqual({ error: 'not_found', message: 'run not found' })
    expect((await api.get(`/v1/runs/${run}/links`, { tenant: 'other' })).status).toBe(404)
    for (const [q, field, message] of [
      ['depth=-1', 'depth[0]', 'must be >= 0'],
      ['depth=one', 'depth[0]', 'must be an integer'],
      ['depth=1.5', 'depth[0]', 'must be an integer'],
      ['visited_after=soon', 'visited_after', 'must be an RFC 3339 date-time'],
      ['per_page=101', 'per_page', 'must be <= 100'],
      ['url_hashes=abc', 'url_hashes[0]', 'must be 32 lowercase hex characters'],
      ['page=xyz', 'page', 'is not a cursor this service issued'],
      ['labels[a]=b', 'labels[a]', 'is not a known query parameter'],
    ]) {
      const r = await api.get(`/v1/runs/${run}/links?${q}`)
      expect(r.status).toBe(422)
      expect(r.body.fields).toEqual([{ field, errors: [expect.stringContaining(message!)] }])
    }
    expect((await api.get('/v1/runs/not-a-uuid/links')).body.fields).toEqual([{ field: 'run_id', errors: ['must be a uuid'] }])
  })
})

describe('GET /v1/runs/{run_id}/edges', () => {
  let run: string
  let ls: Link[]
  beforeAll(async () => {
    run = await newRun()
    // 0 → 1, 2, 3; 1 → 0, 3; 3 → 3 (a page linking itself); 2 → 4
    ls = await links([`https://${A}/`, `https://${A}/a`, `https://${B}/`, `https://${B}/b`, `https://c.example/`])
    const seq = await seqOf('acme', run)
    const [l0, l1, l2, l3, l4] = ls as [Link, Link, Link, Link, Link]
    await api.recordPages(seq, [visit(l0, 0, 200, T0, [l1, l2, l3]), visit(l1, 1, 200, T0 + 1000, [l0, l3]), visit(l3, 1, 200, T0 + 2000, [l3]), visit(l2, 1, 200, T0 + 3000, [l4])])
    await api.recordPages(await seqOf('acme', await newRun()), [visit(l4, 0, 200, T0, [l0])])
  })
  const pairs = async (q: [string, string | number][]) => {
    const r = await api.get(`/v1/runs/${run}/edges${qs(q)}`)
    expect(r.status).toBe(200)
    const at = (l: any) => ls.findIndex((x) => x.hash === l.hash)
    return r.body.data.map((e: any) => `${at(e.parent)}>${at(e.child)}`)
  }

  test('answers edges in discovery order, each end a full link', async () => {
    const r = await api.get(`/v1/runs/${run}/edges?per_page=1`)
    expect(r.body.data).toEqual([
      {
        parent: { hash: ls[0]!.hash, url: `https://${A}/`, host: { hash: hostHash(A), domain: A }, labels: {}, created_at: expect.any(String) },
        // the link's labels now (set by the visits tests above), not a copy from the crawl
        child: { hash: ls[1]!.hash, url: `https://${A}/a`, host: { hash: hostHash(A), domain: A }, labels: { type: 'article' }, created_at: expect.any(String) },
        created_at: '2026-03-01T12:00:00.000Z',
      },
    ])
    expect(await pairs([])).toEqual(['0>1', '0>2', '0>3', '1>0', '1>3', '3>3', '2>4'])
  })

  test('every filter keeps the edges touching a matching link, at either end', async () => {
    expect(await pairs([['url_hashes', ls[3]!.hash]])).toEqual(['0>3', '1>3', '3>3'])
    expect(await pairs([['url_hashes', ls[1]!.hash]])).toEqual(['0>1', '1>0', '1>3'])
    // an edge matching at both ends comes once
    expect(
      await pairs([
        ['url_hashes', ls[0]!.hash],
        ['url_hashes', ls[1]!.hash],
      ]),
    ).toEqual(['0>1', '0>2', '0>3', '1>0', '1>3'])
    expect(await pairs([['urls', `https://C.example`]])).toEqual(['2>4'])
    expect(await pairs([['host_hashes', hostHash(B)]])).toEqual(['0>2', '0>3', '1>3', '3>3', '2>4'])
    expect(await pairs([['hosts', 'c.example']])).toEqual(['2>4'])
    expect(
      await pairs([
        ['hosts', 'C.EXAMPLE'],
        ['hosts', A],
      ]),
    ).toEqual(['0>1', '0>2', '0>3', '1>0', '1>3', '2>4'])
    expect(await pairs([['hosts', 'nowhere.example']])).toEqual([])
    expect(await pairs([['host_hashes', 'f'.repeat(32)]])).toEqual([])
    // several filters: each must hold, possibly at different ends (edges between A and B links)
    expect(
      await pairs([
        ['hosts', A],
        ['hosts', A],
        ['host_hashes', hostHash(B)],
      ]),
    ).toEqual(['0>2', '0>3', '1>3'])
    expect(
      await pairs([
        ['url_hashes', ls[0]!.hash],
        ['urls', `https://${B}/b`],
      ]),
    ).toEqual(['0>3'])
    expect(
      await pairs([
        ['url_hashes', ls[3]!.hash],
        ['hosts', A],
      ]),
    ).toEqual(['0>3', '1>3'])
  })

  test('pages of the url filter keep discovery order', async () => {
    const q: [string, string | number][] = [
      ['url_hashes', ls[0]!.hash],
      ['url_hashes', ls[3]!.hash],
      ['per_page', 2],
    ]
    const seen: string[] = []
    let page: string | null = null
    do {
      const r = await api.get(`/v1/runs/${run}/edges${qs(page ? [...q, ['page', page]] : q)}`)
      const at = (l: any) => ls.findIndex((x) => x.hash === l.hash)
      seen.push(...r.body.data.map((e: any) => `${at(e.parent)}>${at(e.child)}`))
      page = r.body.next_page
    } while (page)
    expect(seen).toEqual(['0>1', '0>2', '0>3', '1>0', '1>3', '3>3'])
  })

  test('404 for an unknown run or another tenant’s; 422 for bad input', async () => {
    expect((await api.get(`/v1/runs/${crypto.randomUUID()}/edges`)).status).toBe(404)
    expect((await api.get(`/v1/runs/${run}/edges`, { tenant: 'other' })).body).toEqual({ error: 'not_found', message: 'run not found' })
    const r = await api.get(`/v1/runs/${run}/edges?depth=1&per_page=0`)
    expect(r.status).toBe(422)
    expect(r.body.fields).toEqual([
      { field: 'depth', errors: ['is not a known query parameter'] },
      { field: 'per_page', errors: ['must be >= 1'] },
    ])
  })
})

describe('pagination and run deletion', () => {
  test('walks 250 visits and 250 edges, each exactly once, in order', async () => {
    const run = await newRun()
    const seq = await seqOf('acme', run)
    const ls = await links(Array.from({ length: 251 }, (_, i) => `https://p${i % 7}.example/page/${i}`))
    const other = await seqOf('acme', await newRun())
    for (const [i, l] of ls.slice(0, 250).entries()) {
      // 250 parents (a page's children are recorded once), each pointing at the next page and at ls[250].
      await api.recordPages(seq, [visit(l, i % 4, 200, T0 + i, [ls[(i + 1) % 250]!, ls[250]!])])
      if (i % 10 === 0) await api.recordPages(other, [visit(l, 0, 200, T0)])
    }
    const walk = async (path: string, id: (x: any) => string) => {
      const seen: string[] = []
      let cursor: string | null = null
      let pages = 0
      do {
        const r = await api.get(`${path}${path.includes('?') ? '&' : '?'}per_page=11${cursor ? `&page=${cursor}` : ''}`)
        expect(r.status).toBe(200)
        seen.push(...r.body.data.map(id))
        cursor = r.body.next_page
        pages++
      } while (cursor)
      return { seen, pages }
    }
    const visits = await walk(`/v1/runs/${run}/links`, (v) => v.hash)
    expect(visits.seen).toEqual(ls.slice(0, 250).map((l) => l.hash))
    expect(visits.pages).toBe(23)
    const deep = await walk(`/v1/runs/${run}/links?depth=3&hosts=p2.example`, (v) => v.hash)
    expect(deep.seen).toEqual(
      ls
        .slice(0, 250)
        .filter((_, i) => i % 4 === 3 && i % 7 === 2)
        .map((l) => l.hash),
    )
    const edges = await walk(`/v1/runs/${run}/edges`, (e) => `${e.parent.hash}>${e.child.hash}`)
    expect(edges.seen).toEqual(ls.slice(0, 250).flatMap((l, i) => [`${l.hash}>${ls[(i + 1) % 250]!.hash}`, `${l.hash}>${ls[250]!.hash}`]))
    const touching = await walk(`/v1/runs/${run}/edges?url_hashes=${ls[250]!.hash}`, (e) => e.parent.hash)
    expect(touching.seen).toEqual(ls.slice(0, 250).map((l) => l.hash))
    // Parent and child ends at once: ls[7] points at ls[8] and ls[250], ls[6] points at ls[7].
    const both = await walk(`/v1/runs/${run}/edges?url_hashes=${ls[7]!.hash}`, (e) => `${e.parent.hash}>${e.child.hash}`)
    expect(both.seen).toEqual([`${ls[6]!.hash}>${ls[7]!.hash}`, `${ls[7]!.hash}>${ls[8]!.hash}`, `${ls[7]!.hash}>${ls[250]!.hash}`])
  })

  test('deleting a run deletes its visits and edges; its lists then answer 404', async () => {
    const run = await newRun()
    const seq = await seqOf('acme', run)
    const [p, c] = await links(['https://d.example/', 'https://d.example/1'])
    await api.recordPages(seq, [visit(p!, 0, 200, T0, [c!])])
    expect((await api.get(`/v1/runs/${run}/edges`)).body.data).toHaveLength(1)
    expect((await api.del(`/v1/runs/${run}`)).status).toBe(204)
    expect((await api.get(`/v1/runs/${run}/links`)).status).toBe(404)
    expect((await api.get(`/v1/runs/${run}/edges`)).status).toBe(404)
    // Counted by the run's seq, past the route's check that the run exists: nothing is left
    // (a run's edges are its visits' children, so no visit row is no edge either).
    expect(await api.count('visits', 'run_seq = ?', [seq])).toBe(0)
  })
})

// The query plans of these lists are the SQLite engine's: test/store/sqlite-plans.test.ts.

describe('OpenAPI', () => {
  test('documents every query parameter of both routes', async () => {
    const doc = (await api.get('/openapi.json', { tenant: null })).body
    const names = (path: string) =>
      doc.paths[path].get.parameters
        .filter((p: any) => p.in === 'query')
        .map((p: any) => p.name)
        .sort()
    expect(names('/v1/runs/{run_id}/links')).toEqual(['depth', 'host_hashes', 'hosts', 'page', 'per_page', 'url_hashes', 'urls', 'visited_after', 'visited_before'])
    expect(names('/v1/runs/{run_id}/edges')).toEqual(['host_hashes', 'hosts', 'page', 'per_page', 'url_hashes', 'urls'])
    const depth = doc.paths['/v1/runs/{run_id}/links'].get.parameters.find((p: any) => p.name === 'depth')
    expect(depth).toMatchObject({ style: 'form', explode: true, schema: { type: 'array', items: { type: 'integer', minimum: 0 } } })
    expect(names('/v1/artifacts')).toEqual(
      ['blob_keys', 'content_types', 'created_after', 'created_before', 'exclude_ids', 'include_ids', 'kinds', 'page', 'per_page', 'pipeline_ids', 'run_ids', 'url_hashes'].sort(),
    )
  })
})
