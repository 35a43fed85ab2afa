/**
 * Page records on PostgreSQL (decision 101), as test/store/page-records.test.ts tests them on
 * SQLite: recordPages writes one visit row per page with its children and the successful entries
 * it stands for; the run's visits, edges and crawl log read them back. Each scenario runs on both
 * engines, which must answer alike.
 */
import { afterEach, beforeEach, describe, expect, test } from 'bun:test'
import { MAX_CHILDREN, type PageRecord } from '../../../src/store/page-records'
import { pageRecord } from '../../helpers/page-record'
import { bothEngines, closeEngines, links, newRuns, sameOnBoth, walk, type Engine, type Link } from './crawl-log-engines'

// Fresh databases for each test, so that both engines give the same seqs (and keys) to its rows.
let engines: Engine[]
beforeEach(async () => {
  engines = await bothEngines()
})
afterEach(closeEngines)

const T0 = Date.parse('2026-03-01T12:00:00.000Z')
const page = (l: Link, over: Partial<PageRecord> = {}): PageRecord => pageRecord(l.hash, l.host.hash, { visited_at: T0, ...over })
/** The same links on both engines (their rows are alike, so are these). */
const linksOnBoth = async (urls: string[], tenant = 'acme') => {
  let out: Link[] = []
  for (const e of engines) out = await links(e, urls, tenant)
  return out
}
const visitsOf = (e: Engine, runId: string) => walk((after) => e.graph.visits('acme', runId, {}, after, 2))
const edgesOf = (e: Engine, runId: string, perPage = 2) => walk((after) => e.graph.edges('acme', runId, {}, after, perPage))
const logsOf = (e: Engine, runId: string, path: { hosts?: string[] } = {}) => walk((after) => e.logs.list('acme', runId, path, after, 2))
const pairs = (edges: { parent: { url: string }; child: { url: string } }[]) => edges.map((x) => `${x.parent.url} > ${x.child.url}`)

describe('recordPages', () => {
  test('one visit row per page: a second record of a link by the run is ignored; children each once, in order', async () => {
    const runs = await newRuns(engines)
    const [p, c1, c2] = await linksOnBoth(['https://w.example/', 'https://w.example/1', 'https://w.example/2'])
    for (const [i, e] of engines.entries()) {
      await e.recordPages(runs[i]!.seq, [
        page(p!, { children: [c1!.hash, c2!.hash, c1!.hash] }),
        page(p!, { depth: 3, status: 500, visited_at: T0 + 1, children: [c2!.hash] }),
        page(c1!, { depth: 1, visited_at: T0 + 2, children: [] }),
      ])
      await e.recordPages(runs[i]!.seq, [page(c1!, { depth: 5, children: [p!.hash] }), page(c2!, { depth: 1, visited_at: T0 + 3, children: [p!.hash] })])
    }
    const visits = await sameOnBoth(engines, async (e, i) => (await visitsOf(e, runs[i]!.id)).rows)
    expect(visits.map((v) => [v.url, v.depth, v.status])).toEqual([
      [p!.url, 0, 200],
      [c1!.url, 1, 200],
      [c2!.url, 1, 200],
    ])
    // PostgreSQL spends a seq on each record it ignores: the keys differ, not the rows.
    const edges = await sameOnBoth(engines, async (e, i) => (await edgesOf(e, runs[i]!.id)).rows)
    expect(pairs(edges)).toEqual([`${p!.url} > ${c1!.url}`, `${p!.url} > ${c2!.url}`, `${c2!.url} > ${p!.url}`])
  })

  test('long lists of children: each once, in the order first met', async () => {
    const runs = await newRuns(engines)
    const ls = await linksOnBoth(Array.from({ length: 71 }, (_, i) => `https://long.example/${i}`))
    const children = Array.from({ length: 80 }, (_, i) => ls[1 + (i % 70)]!.hash)
    for (const [i, e] of engines.entries()) await e.recordPages(runs[i]!.seq, [page(ls[0]!, { children })])
    const edges = await sameOnBoth(engines, async (e, i) => await edgesOf(e, runs[i]!.id, 100))
    expect(edges.rows.map((x) => x.child.hash)).toEqual(children.slice(0, 70))
  })

  test('a batch of hundreds of pages: its rows in the batch’s order', async () => {
    const runs = await newRuns(engines)
    const ls = await linksOnBoth(Array.from({ length: 300 }, (_, i) => `https://batch.example/${i}`))
    for (const [i, e] of engines.entries())
      await e.recordPages(
        runs[i]!.seq,
        ls.map((l, k) => page(l, { visited_at: T0 + k, children: [ls[(k + 1) % 300]!.hash] })),
      )
    const visits = await sameOnBoth(engines, async (e, i) => await walk((after) => e.graph.visits('acme', runs[i]!.id, {}, after, 100)))
    expect(visits.rows.map((v) => v.hash)).toEqual(ls.map((l) => l.hash))
    expect(visits.keys).toHaveLength(3)
  })

  test('joins the caller’s transaction', async () => {
    const runs = await newRuns(engines)
    const [p, c] = await linksOnBoth(['https://w.example/tx', 'https://w.example/tx/1'])
    for (const [i, e] of engines.entries()) {
      const entry = { run_seq: runs[i]!.seq, url: c!.url, url_hash: c!.hash, host: 'w.example', step: 'fetch' as const, status: 'error' as const, error_reason: 'dns' as const, occurred_at: T0 }
      await e.failingBatch(runs[i]!.seq, [page(p!, { children: [c!.hash], logged: 15, fetch_at: T0 })], [entry])
      expect((await visitsOf(e, runs[i]!.id)).rows).toEqual([])
      expect((await logsOf(e, runs[i]!.id)).rows).toEqual([])
    }
  })

  test('refuses what it could not read back: a child that is not a link hash, logged bits past discover', async () => {
    const runs = await newRuns(engines)
    const [p] = await linksOnBoth(['https://w.example/bad'])
    for (const [i, e] of engines.entries()) {
      await expect(e.recordPages(runs[i]!.seq, [page(p!, { children: ['short'] })])).rejects.toThrow(TypeError)
      await expect(e.recordPages(runs[i]!.seq, [page(p!, { logged: 16 })])).rejects.toThrow(TypeError)
      await expect(e.recordPages(runs[i]!.seq, [page(p!, { logged: 1.5 })])).rejects.toThrow(TypeError)
      expect((await visitsOf(e, runs[i]!.id)).rows).toEqual([])
    }
    expect(MAX_CHILDREN).toBeGreaterThan(100_000)
  })
})

describe('edges read from children', () => {
  test('a page of edges may end inside a parent’s children; a hash spelled across two children is no child', async () => {
    // X appears in P's children text across c1 and c2, at no child's place.
    const x = '0123456789abcdef'.repeat(2)
    const kids = ['f'.repeat(30) + '01', '23456789abcdef0123456789abcdef' + 'aa', 'c'.repeat(32), 'd'.repeat(32), 'e'.repeat(32)]
    const p = '9'.repeat(32)
    const host = { hash: '8'.repeat(32), domain: 'kids.example' }
    const runs = await newRuns(engines)
    for (const [i, e] of engines.entries()) {
      const [h] = await e.exec<{ seq: number }>("INSERT INTO hosts (tenant, hash, domain, created_at) VALUES ('acme', ?, 'kids.example', 0) RETURNING seq", [host.hash])
      for (const [k, hash] of [p, x, ...kids].entries())
        await e.exec("INSERT INTO links (tenant, hash, url, host_seq, created_at) VALUES ('acme', ?, ?, ?, 0)", [hash, `https://kids.example/${k}`, h!.seq])
      const rec = (hash: string, at: number, children: string[]) => page({ hash, url: '', host }, { visited_at: at, children })
      await e.recordPages(runs[i]!.seq, [rec(p, T0, kids), rec(x, T0 + 1, [p])])
    }
    const all = [...kids.map((k) => `${p}>${k}`), `${x}>${p}`]
    const ends = (edges: { parent: { hash: string }; child: { hash: string } }[]) => edges.map((y) => `${y.parent.hash}>${y.child.hash}`)
    for (const perPage of [1, 2, 4]) {
      const seen = await sameOnBoth(engines, (e, i) => walk((after) => e.graph.edges('acme', runs[i]!.id, {}, after, perPage)))
      expect(ends(seen.rows)).toEqual(all)
    }
    await sameOnBoth(engines, async (e, i) => {
      // The first page of two ends at P's second child: the next starts at its third.
      const firstPage = (await e.graph.edges('acme', runs[i]!.id, {}, undefined, 2))!
      expect(firstPage.next).toBe((await e.exec<{ seq: number }>('SELECT seq FROM visits WHERE run_seq = ? AND hash = ?', [runs[i]!.seq, p]))[0]!.seq * MAX_CHILDREN + 1)
      expect((await e.graph.edges('acme', runs[i]!.id, {}, firstPage.next!, 2))!.data.map((y) => y.child.hash)).toEqual([kids[2]!, kids[3]!])
      expect(ends((await e.graph.edges('acme', runs[i]!.id, { url_hashes: [x] }, undefined, 10))!.data)).toEqual([`${x}>${p}`])
      expect((await e.graph.edges('acme', runs[i]!.id, { url_hashes: [kids[1]!] }, undefined, 10))!.data.map((y) => y.child.hash)).toEqual([kids[1]!])
    })
  })
})

describe('what a page record stands for in the crawl log', () => {
  test('each logged bit is an ok entry of its step, shaped as a stored one would be', async () => {
    const runs = await newRuns(engines)
    const [p, c] = await linksOnBoth(['http://[::1]:8080/p', 'https://w.example/child'])
    for (const [i, e] of engines.entries())
      await e.recordPages(runs[i]!.seq, [
        page(c!, { depth: 1, parent: p!.hash, status: 301, visited_at: T0 + 900, logged: 1, fetch_at: T0 + 880, fetch_ms: 12.5 }),
        page(p!, { depth: 0, visited_at: T0 + 1000, logged: 15, fetch_at: T0 + 100, fetch_ms: 40.25, parse_ms: 10.5, store_ms: 3.25, pipeline_id: 'main', children: [c!.hash] }),
      ])
    const { rows: entries } = await sameOnBoth(engines, (e, i) => logsOf(e, runs[i]!.id))
    const run = runs[0]!
    const common = { run_id: run.id, job_id: run.job_id, url: p!.url, url_hash: p!.hash, host: '[::1]', status: 'ok' as const, depth: 0 }
    expect(p!.host.domain).toBe('[::1]')
    expect(entries).toStrictEqual([
      { id: expect.any(String), ...common, step: 'discover', occurred_at: '2026-03-01T12:00:01.000Z' },
      {
        id: expect.any(String),
        run_id: run.id,
        job_id: run.job_id,
        url: c!.url,
        url_hash: c!.hash,
        host: 'w.example',
        step: 'fetch',
        status: 'ok',
        http_status: 301,
        latency_ms: 12.5,
        depth: 1,
        parent_url_hash: p!.hash,
        occurred_at: '2026-03-01T12:00:00.880Z',
      },
      // fetch_at + parse_ms + store_ms = 113.75, rounded
      { id: expect.any(String), ...common, step: 'store', latency_ms: 3.25, occurred_at: '2026-03-01T12:00:00.114Z' },
      // fetch_at + parse_ms = 110.5, rounded (half up)
      { id: expect.any(String), ...common, step: 'parse', pipeline_id: 'main', latency_ms: 10.5, occurred_at: '2026-03-01T12:00:00.111Z' },
      { id: expect.any(String), ...common, step: 'fetch', http_status: 200, latency_ms: 40.25, occurred_at: '2026-03-01T12:00:00.100Z' },
    ])
    // Ids: version 8, never a stored row's (random v4 or v7), the same at every read.
    for (const x of entries) expect(x.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
    expect(new Set(entries.map((x) => x.id)).size).toBe(5)
    await sameOnBoth(engines, async (e, i) => expect((await logsOf(e, runs[i]!.id)).rows.map((x) => x.id)).toEqual(entries.map((x) => x.id)))
    const byHost = await sameOnBoth(engines, async (e, i) => (await logsOf(e, runs[i]!.id, { hosts: ['[::1]'] })).rows.map((x) => x.step))
    expect(byHost).toEqual(['discover', 'store', 'parse', 'fetch'])
    // The same times in the aggregates, computed in SQL.
    const metrics = await sameOnBoth(engines, (e, i) => e.logs.metrics('acme', runs[i]!.id, { window: 'minute', group_by: ['step', 'http_status'] }))
    expect(metrics!.buckets.map((b) => b.count)).toEqual([5])
    const latency = await sameOnBoth(engines, (e, i) => e.logs.latency('acme', runs[i]!.id, { window: 'minute', occurred_after: '2026-03-01T12:00:00.110Z' }))
    expect(latency!.buckets[0]!.steps.map((s) => [s.step, s.max])).toEqual([
      ['fetch', 12.5],
      ['parse', 10.5],
      ['store', 3.25],
    ])
  })

  test('loggedSince sees an entry a visit row stands for, from its time on', async () => {
    const runs = await newRuns(engines)
    const [p, q] = await linksOnBoth(['https://since.example/p', 'https://since.example/q'])
    await sameOnBoth(engines, async (e, i) => {
      const seq = runs[i]!.seq
      await e.recordPages(seq, [page(p!, { logged: 1 | 2, fetch_at: T0, parse_ms: 20, visited_at: T0 + 50 }), page(q!, { logged: 8, visited_at: T0 + 60 })])
      const since = (hash: string, step: string, at: number) => e.loggedSince(seq, hash, step, at)
      expect([await since(p!.hash, 'fetch', T0), await since(p!.hash, 'fetch', T0 + 1)]).toEqual([true, false])
      expect([await since(p!.hash, 'parse', T0 + 20), await since(p!.hash, 'parse', T0 + 21)]).toEqual([true, false])
      expect([await since(p!.hash, 'store', T0), await since(p!.hash, 'discover', T0), await since(p!.hash, 'robots', 0)]).toEqual([false, false, false])
      expect([await since(q!.hash, 'discover', T0 + 60), await since(q!.hash, 'fetch', 0)]).toEqual([true, false])
      // A row of the step counts from its time on, whatever the visit row stands for.
      await e.writeLogs([{ run_seq: seq, url: q!.url, url_hash: q!.hash, host: 'since.example', step: 'robots', status: 'ok', occurred_at: T0 + 70 }])
      expect([await since(q!.hash, 'robots', T0 + 70), await since(q!.hash, 'robots', T0 + 70.5), await since(q!.hash, 'robots', T0 + 71)]).toEqual([true, true, false])
    })
  })

  test('a visit row standing for nothing (logged 0) adds nothing to the log: the log is its rows', async () => {
    const runs = await newRuns(engines)
    const [a, b] = await linksOnBoth(['https://old.example/a', 'https://old.example/b'])
    await sameOnBoth(engines, async (e, i) => {
      const seq = runs[i]!.seq
      await e.recordPages(seq, [page(a!, { visited_at: 1000 }), page(b!, { visited_at: 2000 })])
      const row = (url: Link, step: 'fetch' | 'discover', status: 'ok' | 'error', latency: number | undefined, at: number) => ({
        run_seq: seq,
        url: url.url,
        url_hash: url.hash,
        host: 'old.example',
        step,
        status,
        ...(status === 'error' ? { error_reason: 'timeout' as const } : {}),
        ...(latency === undefined ? {} : { latency_ms: latency }),
        occurred_at: at,
      })
      await e.writeLogs([row(a!, 'fetch', 'ok', 30, 900), row(a!, 'discover', 'ok', undefined, 1000), row(b!, 'fetch', 'error', 50, 1900)])
      expect((await e.logs.list('acme', runs[i]!.id, {}, undefined, 100))!.data.map((x) => [x.url, x.step])).toEqual([
        [b!.url, 'fetch'],
        [a!.url, 'discover'],
        [a!.url, 'fetch'],
      ])
      expect((await e.logs.metrics('acme', runs[i]!.id, { window: 'day', group_by: ['step', 'status'] }))!.buckets).toEqual([
        {
          start: '1970-01-01T00:00:00.000Z',
          end: '1970-01-02T00:00:00.000Z',
          count: 3,
          groups: [
            { step: 'discover', status: 'ok', count: 1 },
            { step: 'fetch', status: 'error', count: 1 },
            { step: 'fetch', status: 'ok', count: 1 },
          ],
        },
      ])
      expect((await e.logs.latency('acme', runs[i]!.id, { window: 'day' }))!.buckets[0]!.steps).toEqual([{ step: 'fetch', count: 2, p50: 30, p90: 50, p95: 50, p99: 50, max: 50 }])
    })
  })
})
