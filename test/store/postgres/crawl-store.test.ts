// The crawl engine's store on PostgreSQL where several processes share one database: what the
// engine-neutral contract (test/store/crawl-contract.ts) cannot show with one store. Each "process"
// is a pool of its own over the same database.
import { afterAll, describe, expect, test } from 'bun:test'
import type { SQL } from 'bun'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { hostHash, linkHash } from '../../../src/core/url'
import { createStore } from '../../../src/store'
import type { CrawlBatch, FrontierMark, NewArtifact, RunCounters } from '../../../src/store/crawl-store'
import { openDatabase } from '../../../src/store/db'
import { pgCrawlStore } from '../../../src/store/postgres/crawl'
import { foldMoves } from '../../../src/store/postgres/crawl-frontier'
import { openPostgres } from '../../../src/store/postgres/open'
import { numeric } from '../../../src/store/postgres/pg'
import { freshDatabase } from '../../helpers/postgres'
import { pageRecord } from '../../helpers/page-record'

const opened: SQL[] = []
const dirs: string[] = []
afterAll(async () => {
  await Promise.all(opened.map((sql) => sql.close()))
  for (const d of dirs) rmSync(d, { recursive: true, force: true })
})

const A = 'acme'
const zero: RunCounters = { queued: 0, visited: 0, failed: 0, bytes: 0, fetched: 0, depth_cut: 0 }
const url = (p: string) => `https://a.example${p}`
const entry = (p: string) => ({ hash: linkHash(url(p)), url: url(p), host: 'a.example', depth: 0, parent: null, kind: 0 })
const batchOf = (over: Partial<CrawlBatch> = {}): CrawlBatch => ({
  links: [],
  enqueued: [],
  marks: [],
  hostFailures: new Map(),
  pages: [],
  logs: [],
  artifacts: [],
  counters: zero,
  errorCounts: null,
  ...over,
})

/** A database and `n` processes' pools over it. */
async function processes(n: number): Promise<SQL[]> {
  const url = freshDatabase()
  const pools: SQL[] = []
  for (let i = 0; i < n; i++) pools.push(await openPostgres(url))
  opened.push(...pools)
  return pools
}

/** A run written as the API would (a job and its run), pending or leased to `owner` until `until`. */
async function run(sql: SQL, lease: { owner: string; until: number } | null = null): Promise<{ seq: number; id: string }> {
  const now = Date.now()
  const [job] = numeric<{ seq: number }>(
    await sql`INSERT INTO jobs (tenant, id, name, config, created_at, updated_at) VALUES (${A}, ${crypto.randomUUID()}, 'docs', '{}', ${now}, ${now}) RETURNING seq`,
  )
  const id = crypto.randomUUID()
  const [row] = numeric<{ seq: number }>(
    await sql`INSERT INTO runs (tenant, id, job_seq, job_id, status, config, created_at, started_at, lease_owner, lease_until)
      VALUES (${A}, ${id}, ${job!.seq}, 'job', ${lease ? 'running' : 'pending'}, '{}', ${now}, ${lease ? now : null}, ${lease?.owner ?? null}, ${lease?.until ?? null}) RETURNING seq`,
  )
  return { seq: row!.seq, id }
}

describe('CrawlStore on PostgreSQL across processes', () => {
  test('two owners racing for one pending run: one takes it', async () => {
    const [p1, p2] = await processes(2)
    const one = pgCrawlStore(p1!, null)
    const two = pgCrawlStore(p2!, null)
    for (let i = 0; i < 20; i++) {
      const { seq } = await run(p1!)
      const now = Date.now()
      const won = await Promise.all([one.claimRun(seq, 'one', now, now + 60_000), two.claimRun(seq, 'two', now, now + 60_000)])
      expect(won.filter(Boolean)).toHaveLength(1)
      const holder = (await one.run(seq))!.lease_owner
      expect(holder).toBe(won[0] ? 'one' : 'two')
      expect((await two.status(seq))!.status).toBe('running')
    }
  })

  test('a commit by a process whose lease lapsed and was taken by another writes nothing', async () => {
    const [p1, p2] = await processes(2)
    const stalled = pgCrawlStore(p1!, null)
    const taker = pgCrawlStore(p2!, null)
    const now = Date.now()
    const { seq } = await run(p1!, { owner: 'stalled', until: now - 1 })
    expect(await taker.claimRun(seq, 'taker', now, now + 60_000)).toBe(true)
    const out = await stalled.commit(
      seq,
      'stalled',
      batchOf({
        links: [url('/')],
        enqueued: [{ entries: [entry('/'), entry('/a')], first: 1, done: false }],
        marks: [{ seq: 1, to: 'done' }],
        hostFailures: new Map([['a.example', 3]]),
        pages: [pageRecord(linkHash(url('/')), hostHash('a.example'))],
        counters: { ...zero, visited: 1 },
        errorCounts: { dns: 1 },
      }),
      { finish: { reason: 'max_urls', outcome: null }, failQueued: true },
    )
    expect(out.held).toBe(false)
    const counted = numeric<{ n: number }>(await p2!`SELECT (SELECT count(*) FROM frontier) + (SELECT count(*) FROM run_hosts) + (SELECT count(*) FROM links) + (SELECT count(*) FROM visits) AS n`)
    expect(counted[0]!.n).toBe(0)
    const row = numeric(await p2!`SELECT status, visited, error_counts, lease_owner FROM runs WHERE seq = ${seq}`)[0]
    expect(row).toEqual({ status: 'running', visited: 0, error_counts: '{}', lease_owner: 'taker' })
    expect((await taker.resume(seq)).hashes).toEqual([])
  })

  test('a run taken while a commit waits for its row: the commit sees the new holder and writes nothing', async () => {
    const [p1, p2] = await processes(2)
    const stalled = pgCrawlStore(p1!, null)
    const now = Date.now()
    const { seq } = await run(p1!, { owner: 'stalled', until: now - 1 })
    let release!: () => void
    const released = new Promise<void>((r) => (release = r))
    let locked!: () => void
    const isLocked = new Promise<void>((r) => (locked = r))
    // Another process's claim, its row lock held open until the commit below is waiting on it.
    const claim = p2!.begin(async (tx) => {
      const taken = await tx`UPDATE runs SET lease_owner = 'taker', lease_until = ${now + 60_000} WHERE seq = ${seq} AND lease_until < ${now}`
      expect(taken.count).toBe(1)
      locked()
      await released
    })
    await isLocked
    const commit = stalled.commit(seq, 'stalled', batchOf({ enqueued: [{ entries: [entry('/')], first: 1, done: false }], counters: { ...zero, queued: 1 } }))
    // The commit is blocked on the run row; let the claim finish.
    await Bun.sleep(100)
    release()
    await claim
    expect((await commit).held).toBe(false)
    expect(numeric<{ n: number }>(await p1!`SELECT count(*) AS n FROM frontier`)[0]!.n).toBe(0)
    expect(numeric<{ queued: number }>(await p1!`SELECT queued FROM runs WHERE seq = ${seq}`)[0]!.queued).toBe(0)
  })

  test("batches, resume and an end leave what SQLite's statements, one after the other, leave", async () => {
    const [pg] = await processes(1)
    const dir = mkdtempSync(join(tmpdir(), 'trawl-crawl-pg-'))
    dirs.push(dir)
    const liteDb = openDatabase(dir)
    const lite = createStore(liteDb)
    const pgStore = pgCrawlStore(pg!, null)
    const pgRun = await run(pg!, { owner: 'o', until: Date.now() + 60_000 })
    const liteRun = (await lite.jobs.create(A, { id: crypto.randomUUID(), name: 'docs', config: {}, labels: {} }, { id: crypto.randomUUID(), config: {}, lease: { owner: 'o', ms: 60_000 } })).runSeq!
    const paths = Array.from({ length: 12 }, (_, i) => `/${i + 1}`)
    const nb = (k: number) => Date.now() + k * 1000
    const marks: FrontierMark[] = [
      { seq: 1, to: 'requeued', notBefore: nb(2) },
      { seq: 1, to: 'requeued', notBefore: nb(3) },
      { seq: 1, to: 'done' },
      { seq: 2, to: 'failed' },
      { seq: 2, to: 'requeued', notBefore: nb(4) },
      { seq: 2, to: 'failed' },
      { seq: 2, to: 'requeued', notBefore: nb(5) },
      { seq: 3, to: 'done' },
      { seq: 3, to: 'failed' },
      { seq: 4, to: 'failed' },
      { seq: 4, to: 'done' },
      { seq: 5, to: 'requeued', notBefore: nb(6) },
      { seq: 11, to: 'done' }, // enqueued in this batch
      { seq: 99, to: 'done' }, // no such row
    ]
    const batches = [
      batchOf({
        enqueued: [{ entries: paths.slice(0, 10).map(entry), first: 1, done: false }],
        marks: [{ seq: 2, to: 'requeued', notBefore: nb(1) }],
        hostFailures: new Map([
          ['a.example', 1],
          ['b.example', 2],
        ]),
        counters: { ...zero, queued: 10 },
        errorCounts: { dns: 2, http_404: 2 },
      }),
      batchOf({
        // seq 10 again: the row already there stays as it is.
        enqueued: [
          { entries: paths.slice(10).map(entry), first: 11, done: true },
          { entries: [entry('/other')], first: 10, done: true },
        ],
        marks,
        hostFailures: new Map([
          ['a.example', 0],
          ['c.example', 4],
        ]),
        counters: { ...zero, queued: 9, visited: 3, failed: 1, bytes: 10, fetched: 3, depth_cut: 1 },
      }),
    ]
    const frontierOf = async () => ({
      lite: liteDb.query('SELECT seq, hash, url, state, attempts, not_before, lease_until FROM frontier WHERE run_seq = ? ORDER BY seq').all(liteRun),
      pg: numeric(await pg!`SELECT seq, hash, url, state, attempts, not_before, lease_until FROM frontier WHERE run_seq = ${pgRun.seq} ORDER BY seq`),
    })
    for (const b of batches) expect(await pgStore.commit(pgRun.seq, 'o', b)).toEqual(await lite.crawl.commit(liteRun, 'o', b))
    const moved = await frontierOf()
    expect(moved.pg).toEqual(moved.lite)
    expect(moved.pg).toHaveLength(12)
    expect(foldMoves(marks).seqs).toEqual([1, 2, 3, 4, 5, 11, 99])

    // Leased rows (a process that died) go back to the queue on resume.
    liteDb.query('UPDATE frontier SET state = 1, lease_until = 5 WHERE run_seq = ? AND seq IN (6, 7)').run(liteRun)
    await pg!`UPDATE frontier SET state = 1, lease_until = 5 WHERE run_seq = ${pgRun.seq} AND seq IN (6, 7)`
    const [pgState, liteState] = [await pgStore.resume(pgRun.seq), await lite.crawl.resume(liteRun)]
    expect({ ...pgState, hashes: pgState.hashes.sort() }).toEqual({ ...liteState, hashes: liteState.hashes.sort() })
    expect(pgState.queued.map((q) => q.seq)).toEqual([2, 5, 6, 7, 8, 9, 10])

    await pgStore.saveRobots(pgRun.seq, 'a.example', { status: 404, body: null })
    await lite.crawl.saveRobots(liteRun, 'a.example', { status: 404, body: null })
    for (const host of ['a.example', 'b.example', 'z.example']) expect(await pgStore.robots(pgRun.seq, host)).toEqual(await lite.crawl.robots(liteRun, host))

    // The end: seq 6 in flight, the rest queued, all failed and counted.
    liteDb.query('UPDATE frontier SET state = 1 WHERE run_seq = ? AND seq = 6').run(liteRun)
    await pg!`UPDATE frontier SET state = 1 WHERE run_seq = ${pgRun.seq} AND seq = 6`
    const last = batchOf({ marks: [{ seq: 8, to: 'done' }], counters: { ...zero, queued: 5, visited: 4 } })
    const end = { finish: { reason: 'max_empty_evaluations', outcome: 'stalled' }, failQueued: true }
    const ended = await pgStore.commit(pgRun.seq, 'o', last, end)
    expect(ended).toEqual(await lite.crawl.commit(liteRun, 'o', last, end))
    expect(ended.counters).toMatchObject({ queued: 0, failed: 7 })
    const runRow = 'status, stop_reason, outcome, lease_owner, lease_until, queued, visited, failed, bytes, fetched, depth_cut, error_counts'
    expect(numeric(await pg!.unsafe(`SELECT ${runRow} FROM runs WHERE seq = $1`, [pgRun.seq]))).toEqual(liteDb.query(`SELECT ${runRow} FROM runs WHERE seq = ?`).all(liteRun))
    const endRows = await frontierOf()
    expect(endRows.pg).toEqual(endRows.lite)
    expect(await pgStore.commit(pgRun.seq, 'o', last)).toEqual(await lite.crawl.commit(liteRun, 'o', last))
    liteDb.close()
  })

  test('a commit of 300 pages with 20 links each', async () => {
    const [sql] = await processes(1)
    const store = pgCrawlStore(sql!, null)
    const { seq, id } = await run(sql!, { owner: 'o', until: Date.now() + 60_000 })
    const pagePaths = Array.from({ length: 300 }, (_, i) => `/p${i}`)
    const linksOf = (i: number) => Array.from({ length: 20 }, (_, j) => `/p${i}/l${j}`)
    const seeds = batchOf({ links: pagePaths.map(url), enqueued: [{ entries: pagePaths.map(entry), first: 1, done: false }] })
    expect((await store.commit(seq, 'o', seeds)).held).toBe(true)
    const found = pagePaths.flatMap((_, i) => linksOf(i))
    const artifacts: NewArtifact[] = pagePaths.map((p, i) => ({
      tenant: A,
      id: Bun.randomUUIDv7(),
      run_id: id,
      url_hash: linkHash(url(p)),
      blob_key: `runs/${id}/${i}`,
      kind: 'raw',
      pipeline_id: null,
      content_type: 'text/html',
      size: 3000,
      checksum: 'xxh64:0',
      created_at: Date.now(),
    }))
    const batch = batchOf({
      links: found.map(url),
      enqueued: [{ entries: found.map(entry), first: 301, done: false }],
      marks: pagePaths.map((_, i) => ({ seq: i + 1, to: 'done' as const })),
      pages: pagePaths.map((p, i) =>
        pageRecord(linkHash(url(p)), hostHash('a.example'), {
          visited_at: Date.now(),
          logged: 15,
          fetch_at: Date.now(),
          fetch_ms: 10,
          parse_ms: 2,
          store_ms: 1,
          pipeline_id: 'default',
          children: linksOf(i).map((l) => linkHash(url(l))),
        }),
      ),
      artifacts,
      counters: { ...zero, queued: found.length, visited: 300, fetched: 300, bytes: 900_000 },
    })
    const started = performance.now()
    const out = await store.commit(seq, 'o', batch)
    const ms = performance.now() - started
    console.log(`commit of 300 pages with 20 links each (6,000 links, 6,000 frontier rows, 300 visits, 300 artifacts): ${ms.toFixed(0)} ms`)
    expect(out.held).toBe(true)
    const n = numeric<{ links: number; frontier: number; visits: number; artifacts: number }>(
      await sql!`SELECT (SELECT count(*) FROM links) AS links, (SELECT count(*) FROM frontier WHERE run_seq = ${seq}) AS frontier,
        (SELECT count(*) FROM visits WHERE run_seq = ${seq}) AS visits, (SELECT count(*) FROM artifacts) AS artifacts`,
    )[0]
    expect(n).toEqual({ links: 6300, frontier: 6300, visits: 300, artifacts: 300 })
  })
})
