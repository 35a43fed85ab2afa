/**
 * The lean page record (migration 013, decision 101): recordPages writes one visit row per page,
 * its children and the successful entries it stands for; the run's visits, edges and crawl log
 * read them back. Also migration 013 on a database crawled before it.
 */
import { afterAll, describe, expect, spyOn, test } from 'bun:test'
import { Database } from 'bun:sqlite'
import { rmSync } from 'node:fs'
import { createSqliteRepositories } from '../../src/store'
import { migrate } from '../../src/store/db'
import { databaseAt } from '../helpers/old-database'
import { MAX_CHILDREN, type PageRecord } from '../../src/store/page-records'
import { job, testApi } from '../helpers/api'
import { pageRecord } from '../helpers/page-record'

const api = testApi()
const dirs: string[] = []
afterAll(() => {
  api.close()
  dirs.forEach((dir) => rmSync(dir, { recursive: true, force: true }))
})

const T0 = Date.parse('2026-03-01T12:00:00.000Z')
type Link = { hash: string; url: string; host: { hash: string; domain: string } }

async function newRun(tenant = 'acme') {
  const id = (await api.post('/v1/jobs?create_run=true', job(), { tenant })).body.run.id as string
  return { id, seq: (api.db.query('SELECT seq FROM runs WHERE id = ? AND tenant = ?').get(id, tenant) as { seq: number }).seq }
}
const links = async (urls: string[], tenant = 'acme'): Promise<Link[]> => (await api.put('/v1/links', { urls }, { tenant })).body.data
const page = (l: Link, over: Partial<PageRecord> = {}): PageRecord => pageRecord(l.hash, l.host.hash, { visited_at: T0, ...over })
async function all(path: string): Promise<any[]> {
  const out: any[] = []
  let cursor: string | null = null
  do {
    const r = await api.get(`${path}${path.includes('?') ? '&' : '?'}per_page=100${cursor ? `&page=${cursor}` : ''}`)
    expect(r.status).toBe(200)
    out.push(...r.body.data)
    cursor = r.body.next_page
  } while (cursor)
  return out
}
const pairs = (edges: any[]) => edges.map((e) => `${e.parent.url} > ${e.child.url}`)

describe('recordPages', () => {
  test('one visit row per page: a second record of a link by the run is ignored; children each once, in order', async () => {
    const run = await newRun()
    const [p, c1, c2] = await links(['https://w.example/', 'https://w.example/1', 'https://w.example/2'])
    api.repos.runGraph.recordPages(run.seq, [
      page(p!, { children: [c1!.hash, c2!.hash, c1!.hash] }),
      page(p!, { depth: 3, status: 500, visited_at: T0 + 1, children: [c2!.hash] }),
      page(c1!, { depth: 1, visited_at: T0 + 2, children: [] }),
    ])
    api.repos.runGraph.recordPages(run.seq, [page(c1!, { depth: 5, children: [p!.hash] }), page(c2!, { depth: 1, visited_at: T0 + 3, children: [p!.hash] })])
    expect((await all(`/v1/runs/${run.id}/links`)).map((v) => [v.url, v.depth, v.status])).toEqual([
      [p!.url, 0, 200],
      [c1!.url, 1, 200],
      [c2!.url, 1, 200],
    ])
    expect(pairs(await all(`/v1/runs/${run.id}/edges`))).toEqual([`${p!.url} > ${c1!.url}`, `${p!.url} > ${c2!.url}`, `${c2!.url} > ${p!.url}`])
  })

  test('long lists of children: each once, in the order first met', async () => {
    const run = await newRun()
    const ls = await links(Array.from({ length: 71 }, (_, i) => `https://long.example/${i}`))
    const children = Array.from({ length: 80 }, (_, i) => ls[1 + (i % 70)]!.hash)
    api.repos.runGraph.recordPages(run.seq, [page(ls[0]!, { children })])
    expect((await all(`/v1/runs/${run.id}/edges`)).map((e) => e.child.hash)).toEqual(children.slice(0, 70))
  })

  test('a batch is one INSERT per 32 pages, and the rest in one more', async () => {
    const run = await newRun()
    const ls = await links(Array.from({ length: 70 }, (_, i) => `https://batch.example/${i}`))
    const executed: number[] = []
    const count = (st: any) => {
      const run = st.run.bind(st)
      st.run = (...params: unknown[]) => {
        executed.push(params.length / 16)
        return run(...params)
      }
      return st
    }
    const db = new Database(api.db.filename)
    try {
      const prepare = db.prepare.bind(db)
      const query = db.query.bind(db)
      spyOn(db, 'prepare').mockImplementation(((sql: string) => count(prepare(sql))) as any)
      spyOn(db, 'query').mockImplementation(((sql: string) => (sql.startsWith('INSERT OR IGNORE INTO visits') ? count(query(sql)) : query(sql))) as any)
      const repos = createSqliteRepositories(db)
      repos.runGraph.recordPages(
        run.seq,
        ls.map((l, i) => page(l, { visited_at: T0 + i })),
      )
    } finally {
      db.close()
    }
    expect(executed).toEqual([32, 32, 6])
    expect((await all(`/v1/runs/${run.id}/links`)).map((v) => v.hash)).toEqual(ls.map((l) => l.hash))
  })

  test('joins the caller’s transaction', async () => {
    const run = await newRun()
    const [p, c] = await links(['https://w.example/tx', 'https://w.example/tx/1'])
    expect(() =>
      api.repos.transaction(() => {
        api.repos.runGraph.recordPages(run.seq, [page(p!, { children: [c!.hash], logged: 15, fetch_at: T0 })])
        throw new Error('batch failed')
      }),
    ).toThrow('batch failed')
    expect(await all(`/v1/runs/${run.id}/links`)).toEqual([])
    expect(await all(`/v1/runs/${run.id}/logs`)).toEqual([])
  })

  test('refuses what it could not read back: a child that is not a link hash, logged bits past discover', async () => {
    const run = await newRun()
    const [p] = await links(['https://w.example/bad'])
    expect(() => api.repos.runGraph.recordPages(run.seq, [page(p!, { children: ['short'] })])).toThrow(TypeError)
    expect(() => api.repos.runGraph.recordPages(run.seq, [page(p!, { logged: 16 })])).toThrow(TypeError)
    expect(MAX_CHILDREN).toBeGreaterThan(100_000)
  })
})

describe('edges read from children', () => {
  test('a page of edges may end inside a parent’s children; a hash spelled across two children is no child', async () => {
    const run = await newRun()
    // X appears in P's children text across c1 and c2, at no child's place.
    const x = '0123456789abcdef'.repeat(2)
    const kids = ['f'.repeat(30) + '01', '23456789abcdef0123456789abcdef' + 'aa', 'c'.repeat(32), 'd'.repeat(32), 'e'.repeat(32)]
    const p = '9'.repeat(32)
    api.db.exec(`INSERT INTO hosts (tenant, hash, domain, created_at) VALUES ('acme', '${'8'.repeat(32)}', 'kids.example', 0)`)
    const hostSeq = (api.db.query(`SELECT seq FROM hosts WHERE tenant = 'acme' AND domain = 'kids.example'`).get() as { seq: number }).seq
    for (const [i, hash] of [p, x, ...kids].entries())
      api.db.query(`INSERT INTO links (tenant, hash, url, host_seq, created_at) VALUES ('acme', ?, ?, ?, 0)`).run(hash, `https://kids.example/${i}`, hostSeq)
    const rec = (hash: string, at: number, children: string[]) => ({ ...page({ hash, url: '', host: { hash: '8'.repeat(32), domain: 'kids.example' } }), visited_at: at, children })
    api.repos.runGraph.recordPages(run.seq, [rec(p, T0, kids), rec(x, T0 + 1, [p])])
    const all = [...kids.map((k) => `${p}>${k}`), `${x}>${p}`]
    const g = api.repos.runGraph
    for (const perPage of [1, 2, 4]) {
      const seen: string[] = []
      let after: number | undefined
      do {
        const got = g.edges('acme', run.seq, {}, after, perPage)
        expect(got.data.length).toBeLessThanOrEqual(perPage)
        seen.push(...got.data.map((e) => `${e.parent.hash}>${e.child.hash}`))
        after = got.next ?? undefined
      } while (after !== undefined)
      expect(seen).toEqual(all)
    }
    // The first page of two ends at P's second child: the next starts at its third.
    const first = g.edges('acme', run.seq, {}, undefined, 2)
    expect(g.edges('acme', run.seq, {}, first.next!, 2).data.map((e) => e.child.hash)).toEqual([kids[2]!, kids[3]!])
    expect(g.edges('acme', run.seq, { url_hashes: [x] }, undefined, 10).data.map((e) => `${e.parent.hash}>${e.child.hash}`)).toEqual([`${x}>${p}`])
    expect(g.edges('acme', run.seq, { url_hashes: [kids[1]!] }, undefined, 10).data.map((e) => e.child.hash)).toEqual([kids[1]!])
  })
})

describe('what a page record stands for in the crawl log', () => {
  test('each logged bit is an ok entry of its step, shaped as a stored one would be', async () => {
    const run = await newRun()
    const [p, c] = await links(['http://[::1]:8080/p', 'https://w.example/child'])
    api.repos.runGraph.recordPages(run.seq, [
      page(c!, { depth: 1, parent: p!.hash, status: 301, visited_at: T0 + 900, logged: 1, fetch_at: T0 + 880, fetch_ms: 12.5 }),
      page(p!, { depth: 0, visited_at: T0 + 1000, logged: 15, fetch_at: T0 + 100, fetch_ms: 40.25, parse_ms: 10.5, store_ms: 3.25, pipeline_id: 'main', children: [c!.hash] }),
    ])
    const entries = await all(`/v1/runs/${run.id}/logs`)
    const common = { run_id: run.id, job_id: expect.any(String), url: p!.url, url_hash: p!.hash, host: '[::1]', status: 'ok', depth: 0 }
    // The host is the URL's host name without its port, as the catalogue and the engine's rows
    // name it: a bracketed IPv6 literal stays bracketed.
    expect(p!.host.domain).toBe('[::1]')
    expect(entries).toStrictEqual([
      { id: expect.any(String), ...common, step: 'discover', occurred_at: '2026-03-01T12:00:01.000Z' },
      {
        id: expect.any(String),
        run_id: run.id,
        job_id: expect.any(String),
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
    for (const e of entries) expect(e.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
    expect(new Set(entries.map((e) => e.id)).size).toBe(5)
    expect((await all(`/v1/runs/${run.id}/logs`)).map((e) => e.id)).toEqual(entries.map((e) => e.id))
    expect((await all(`/v1/runs/${run.id}/logs?hosts=[::1]`)).map((e) => e.step)).toEqual(['discover', 'store', 'parse', 'fetch'])
  })

  test('loggedSince sees an entry a visit row stands for, from its time on', async () => {
    const run = await newRun()
    const [p, q] = await links(['https://since.example/p', 'https://since.example/q'])
    api.repos.runGraph.recordPages(run.seq, [page(p!, { logged: 1 | 2, fetch_at: T0, parse_ms: 20, visited_at: T0 + 50 }), page(q!, { logged: 8, visited_at: T0 + 60 })])
    const since = (hash: string, step: 'fetch' | 'parse' | 'store' | 'discover' | 'robots', at: number) => api.repos.crawlLogs.loggedSince(run.seq, hash, step, at)
    expect([since(p!.hash, 'fetch', T0), since(p!.hash, 'fetch', T0 + 1)]).toEqual([true, false])
    expect([since(p!.hash, 'parse', T0 + 20), since(p!.hash, 'parse', T0 + 21)]).toEqual([true, false])
    expect([since(p!.hash, 'store', T0), since(p!.hash, 'discover', T0), since(p!.hash, 'robots', 0)]).toEqual([false, false, false])
    expect([since(q!.hash, 'discover', T0 + 60), since(q!.hash, 'fetch', 0)]).toEqual([true, false])
  })
})

describe('migration 013 on a database crawled before it', () => {
  test('old edges become their parents’ children, in the order found; old log rows read as before', () => {
    const db = databaseAt(12, dirs)
    try {
      db.exec(`INSERT INTO jobs (tenant, id, name, config, labels, created_at, updated_at) VALUES ('t', 'j', 'j', '{}', '{}', 0, 0)`)
      db.exec(`INSERT INTO runs (tenant, id, job_seq, job_id, config, labels, status, created_at) VALUES ('t', 'r', 1, 'j', '{}', '{}', 'finished', 0)`)
      db.exec(`INSERT INTO hosts (tenant, hash, domain, created_at) VALUES ('t', '${'e'.repeat(32)}', 'old.example', 0)`)
      const h = (c: string) => c.repeat(32)
      for (const c of ['a', 'b', 'c', 'd', 'f']) db.query(`INSERT INTO links (tenant, hash, url, host_seq, created_at) VALUES ('t', ?, ?, 1, 0)`).run(h(c), `https://old.example/${c}`)
      const visit = db.query(`INSERT INTO visits (run_seq, hash, host_hash, depth, status, visited_at) VALUES (1, ?, '${'e'.repeat(32)}', 0, 200, ?)`)
      visit.run(h('a'), 1000)
      visit.run(h('b'), 2000)
      visit.run(h('c'), 3000)
      // What recordEdges wrote: each parent's children in one statement, its range in edge_parents.
      const edge = db.query('INSERT INTO edges (run_seq, parent, child, created_at) VALUES (1, ?, ?, ?)')
      const range = db.query('INSERT INTO edge_parents (run_seq, parent, first_seq, last_seq) VALUES (1, ?, ?, ?)')
      for (const [parent, children, at] of [
        ['b', 'adf', 2000],
        ['a', 'bc', 1000],
      ] as const) {
        const first = Number(edge.run(h(parent), h(children[0]!), at).lastInsertRowid)
        for (const c of children.slice(1)) edge.run(h(parent), h(c), at)
        range.run(h(parent), first, first + children.length - 1)
      }
      const log = db.query(`INSERT INTO crawl_logs (run_seq, id, url, url_hash, host, step, status, error_reason, latency_ms, occurred_at) VALUES (1, ?, ?, ?, 'old.example', ?, ?, ?, ?, ?)`)
      log.run('l1', 'https://old.example/a', h('a'), 'fetch', 'ok', null, 30, 900)
      log.run('l2', 'https://old.example/a', h('a'), 'discover', 'ok', null, null, 1000)
      log.run('l3', 'https://old.example/b', h('b'), 'fetch', 'error', 'timeout', 50, 1900)
      migrate(db)

      const repos = createSqliteRepositories(db)
      const edges = repos.runGraph.edges('t', 1, {}, undefined, 100)
      expect(edges.data.map((e) => `${e.parent.url.slice(-1)}>${e.child.url.slice(-1)}@${e.created_at}`)).toEqual([
        'a>b@1970-01-01T00:00:01.000Z',
        'a>c@1970-01-01T00:00:01.000Z',
        'b>a@1970-01-01T00:00:02.000Z',
        'b>d@1970-01-01T00:00:02.000Z',
        'b>f@1970-01-01T00:00:02.000Z',
      ])
      expect(repos.runGraph.edges('t', 1, { url_hashes: [h('a')] }, undefined, 100).data.map((e) => `${e.parent.url.slice(-1)}>${e.child.url.slice(-1)}`)).toEqual(['a>b', 'a>c', 'b>a'])
      // The old rows stand for nothing (logged 0): the log is its rows, as it was.
      const list = repos.crawlLogs.list('t', 'r', {}, undefined, 100)!
      expect(list.data.map((e) => e.id)).toEqual(['l3', 'l2', 'l1'])
      expect(repos.crawlLogs.metrics('t', 'r', { window: 'day', group_by: ['step', 'status'] })!.buckets).toEqual([
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
      expect(repos.crawlLogs.latency('t', 'r', { window: 'day' })!.buckets[0]!.steps).toEqual([{ step: 'fetch', count: 2, p50: 30, p90: 50, p95: 50, p99: 50, max: 50 }])
      expect(db.query("SELECT name FROM sqlite_master WHERE name IN ('edges', 'edge_parents')").all()).toEqual([])
      expect(db.query('SELECT count(*) AS n FROM visits WHERE logged <> 0').get()).toEqual({ n: 0 })
    } finally {
      db.close()
    }
  })
})
