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
import type { Claimed, CrawlBatch, CrawlEnd, FrontierMark, NewArtifact } from '../../../src/store/crawl-store'
import { openDatabase } from '../../../src/store/db'
import { pgCrawlStore } from '../../../src/store/postgres/crawl'
import { foldMoves } from '../../../src/store/postgres/crawl-frontier'
import { openPostgres } from '../../../src/store/postgres/open'
import { numeric } from '../../../src/store/postgres/pg'
import { freshDatabase } from '../../helpers/postgres'
import { pageRecord } from '../../helpers/page-record'
import { batchOf, entryAt, zeroCounters as zero } from '../../helpers/crawl-batch'

const opened: SQL[] = []
const dirs: string[] = []
afterAll(async () => {
  await Promise.all(opened.map((sql) => sql.close()))
  for (const d of dirs) rmSync(d, { recursive: true, force: true })
})

const A = 'acme'
const url = (p: string) => `https://a.example${p}`
const entry = (p: string) => entryAt('a.example', p)

const bySeq = <T extends { seq: number }>(rows: T[]) => [...rows].sort((x, y) => x.seq - y.seq)

/** A database and `n` processes' pools over it. */
async function processes(n: number): Promise<SQL[]> {
  const url = freshDatabase()
  const pools: SQL[] = []
  for (let i = 0; i < n; i++) pools.push(await openPostgres(url))
  opened.push(...pools)
  return pools
}

/** A run written as the API would (a job and its run), pending, or running with `owner` its worker until `until`. */
async function run(sql: SQL, lease: { owner: string; until: number } | null = null): Promise<{ seq: number; id: string }> {
  const now = Date.now()
  const [job] = numeric<{ seq: number }>(
    await sql`INSERT INTO jobs (tenant, id, name, config, created_at, updated_at) VALUES (${A}, ${crypto.randomUUID()}, 'docs', '{}', ${now}, ${now}) RETURNING seq`,
  )
  const id = crypto.randomUUID()
  const [row] = numeric<{ seq: number }>(
    await sql`INSERT INTO runs (tenant, id, job_seq, job_id, status, config, created_at, started_at)
      VALUES (${A}, ${id}, ${job!.seq}, 'job', ${lease ? 'running' : 'pending'}, '{}', ${now}, ${lease ? now : null}) RETURNING seq`,
  )
  if (lease) await sql`INSERT INTO run_workers (run_seq, owner, lease_until) VALUES (${row!.seq}, ${lease.owner}, ${lease.until})`
  return { seq: row!.seq, id }
}

const workersOf = async (sql: SQL, seq: number) => numeric<{ owner: string }>(await sql`SELECT owner FROM run_workers WHERE run_seq = ${seq} ORDER BY owner`).map((r) => r.owner)

describe('CrawlStore on PostgreSQL across processes', () => {
  test('two owners racing for one pending run both join it: it moves to running once, started once; another pending run stays pending', async () => {
    const [p1, p2, p3] = await processes(3)
    const one = pgCrawlStore(p1!, null)
    const two = pgCrawlStore(p2!, null)
    // Every insert and status move of a run is announced once (002-cluster.sql): a move made twice would be heard twice.
    const heard: string[] = []
    const subscription = await p3!.listen('trawl_runs', (payload) => heard.push(payload))
    const raced: number[] = []
    const others: number[] = []
    for (let i = 0; i < 20; i++) {
      const { seq } = await run(p1!)
      const other = await run(p1!)
      const now = Date.now()
      const joined = await Promise.all([one.claimRun(seq, 'one', now, now + 60_000), two.claimRun(seq, 'two', now + 1, now + 60_000)])
      expect(joined).toEqual([true, true])
      const row = (await one.run(seq))!
      expect(row).toMatchObject({ status: 'running', lease_owner: null })
      expect([now, now + 1]).toContain(row.started_at!)
      expect(
        (await two.heldRunning(now))
          .filter((h) => h.seq === seq)
          .map((h) => h.lease_owner)
          .sort(),
      ).toEqual(['one', 'two'])
      expect(await workersOf(p1!, seq)).toEqual(['one', 'two'])
      expect((await two.status(other.seq))!.status).toBe('pending')
      raced.push(seq)
      others.push(other.seq)
    }
    // Notifications arrive in commit order: once the last insert's is heard, every earlier one was.
    const last = await run(p1!)
    for (let waited = 0; !heard.includes(String(last.seq)); waited += 10) {
      if (waited > 5_000) throw new Error('the last run insert was never heard')
      await Bun.sleep(10)
    }
    await subscription.unlisten()
    const times = (seq: number) => heard.filter((h) => h === String(seq)).length
    expect(raced.map(times)).toEqual(raced.map(() => 2))
    expect(others.map(times)).toEqual(others.map(() => 1))
  })

  test('a commit by an owner that is no longer a worker writes nothing: one declared dead by another, one that ended its part', async () => {
    const [p1, p2] = await processes(2)
    const stalled = pgCrawlStore(p1!, null)
    const taker = pgCrawlStore(p2!, null)
    const now = Date.now()
    const { seq } = await run(p1!, { owner: 'stalled', until: now - 1 })
    expect(await taker.claimRun(seq, 'taker', now, now + 60_000, 'stalled')).toBe(true)
    const batch = batchOf({
      links: [url('/')],
      enqueued: [{ entries: [entry('/'), entry('/a')], first: 1, done: false }],
      marks: [{ seq: 1, to: 'done' }],
      hostFailures: new Map([['a.example', 3]]),
      pages: [pageRecord(linkHash(url('/')), hostHash('a.example'))],
      counters: { ...zero, visited: 1 },
      errorCounts: { dns: 1 },
    })
    const nothingWritten = async () => {
      const counted = numeric<{ n: number }>(await p2!`SELECT (SELECT count(*) FROM frontier) + (SELECT count(*) FROM run_hosts) + (SELECT count(*) FROM links) + (SELECT count(*) FROM visits) AS n`)
      expect(counted[0]!.n).toBe(0)
      const row = numeric(await p2!`SELECT status, visited, error_counts, lease_owner FROM runs WHERE seq = ${seq}`)[0]
      expect(row).toEqual({ status: 'running', visited: 0, error_counts: '{}', lease_owner: null })
      expect((await taker.resume(seq)).hashes).toEqual([])
    }
    const out = await stalled.commit(seq, 'stalled', batch, { finish: { reason: 'max_urls', outcome: null }, failQueued: true })
    expect(out).toEqual({ held: false, counters: batch.counters })
    await nothingWritten()
    expect(await workersOf(p2!, seq)).toEqual(['taker'])
    // The taker ends its part, the run going on: it is no worker either.
    expect((await taker.commit(seq, 'taker', batchOf(), { finish: null, failQueued: false })).held).toBe(true)
    expect((await taker.commit(seq, 'taker', batch)).held).toBe(false)
    await nothingWritten()
    expect(await workersOf(p2!, seq)).toEqual([])
  })

  test('a worker declared dead while its commit waits for the run row: the commit sees it is no worker and writes nothing', async () => {
    const [p1, p2] = await processes(2)
    const stalled = pgCrawlStore(p1!, null)
    const now = Date.now()
    const { seq } = await run(p1!, { owner: 'stalled', until: now - 1 })
    let release!: () => void
    const released = new Promise<void>((r) => (release = r))
    let locked!: () => void
    const isLocked = new Promise<void>((r) => (locked = r))
    // Another process's claimRun naming 'stalled' dead (its statements), the run row's lock held open until the commit below waits on it.
    const claim = p2!.begin(async (tx) => {
      const joined = await tx`UPDATE runs SET status = 'running', started_at = coalesce(started_at, ${now}) WHERE seq = ${seq} AND status IN ('pending', 'running')`
      expect(joined.count).toBe(1)
      await tx`DELETE FROM run_workers WHERE run_seq = ${seq} AND owner = 'stalled'`
      await tx`INSERT INTO run_workers (run_seq, owner, lease_until) VALUES (${seq}, 'taker', ${now + 60_000})`
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

  test("one process's batches, resume, rows of a process that died and an end leave what SQLite's statements leave, row for row", async () => {
    const [pg] = await processes(1)
    const dir = mkdtempSync(join(tmpdir(), 'trawl-crawl-pg-'))
    dirs.push(dir)
    const liteDb = openDatabase(dir)
    const lite = createStore(liteDb)
    const pgStore = pgCrawlStore(pg!, null)
    const shared = pgStore.shared!
    const pgRun = await run(pg!, { owner: 'o', until: Date.now() + 60_000 })
    const liteRun = (await lite.jobs.create(A, { id: crypto.randomUUID(), name: 'docs', config: {}, labels: {} }, { id: crypto.randomUUID(), config: {}, lease: { owner: 'o', ms: 60_000 } })).runSeq!
    // An execution starts with a resume: the PostgreSQL process counts from the stored counters on.
    expect(await pgStore.resume(pgRun.seq)).toEqual(await lite.crawl.resume(liteRun))
    const paths = Array.from({ length: 12 }, (_, i) => `/${i + 1}`)
    const nb = (k: number) => Date.now() + 60_000 + k * 1000
    const frontierOf = async () => ({
      lite: liteDb.query('SELECT hash, url, state, attempts, not_before, lease_until FROM frontier WHERE run_seq = ? ORDER BY seq').all(liteRun),
      pg: numeric(await pg!`SELECT hash, url, state, attempts, not_before, lease_until FROM frontier WHERE run_seq = ${pgRun.seq} ORDER BY seq`),
    })
    const hostsOf = async () => ({
      lite: liteDb.query('SELECT host, failures, robots_status, robots_body FROM run_hosts WHERE run_seq = ? ORDER BY host').all(liteRun),
      pg: numeric(await pg!`SELECT host, failures, robots_status, robots_body FROM run_hosts WHERE run_seq = ${pgRun.seq} ORDER BY host`),
    })
    // Each engine numbers rows its own way (PostgreSQL from a sequence): moves are made by URL.
    const seqsOf = async () => ({
      lite: new Map((liteDb.query('SELECT url, seq FROM frontier WHERE run_seq = ?').all(liteRun) as { url: string; seq: number }[]).map((r) => [r.url, r.seq])),
      pg: new Map(numeric<{ url: string; seq: number }>(await pg!`SELECT url, seq FROM frontier WHERE run_seq = ${pgRun.seq}`).map((r) => [r.url, r.seq])),
    })
    const both = async (batch: (engine: 'pg' | 'lite') => CrawlBatch, end?: CrawlEnd) => {
      const out = await pgStore.commit(pgRun.seq, 'o', batch('pg'), end)
      expect(out).toEqual(await lite.crawl.commit(liteRun, 'o', batch('lite'), end))
      return out
    }

    await both(() =>
      batchOf({
        enqueued: [{ entries: paths.slice(0, 10).map(entry), first: 1, done: false }],
        hostFailures: new Map([
          ['a.example', 1],
          ['b.example', 2],
        ]),
        counters: { ...zero, queued: 10 },
        errorCounts: { dns: 2, http_404: 2 },
      }),
    )
    const seqs = await seqsOf()
    const moves: [string, FrontierMark['to'], number?][] = [
      ['/2', 'requeued', nb(1)],
      ['/1', 'requeued', nb(2)],
      ['/1', 'requeued', nb(3)],
      ['/1', 'done'],
      ['/2', 'failed'],
      ['/2', 'requeued', nb(4)],
      ['/2', 'failed'],
      ['/2', 'requeued', nb(5)],
      ['/3', 'done'],
      ['/3', 'failed'],
      ['/4', 'failed'],
      ['/4', 'done'],
      ['/5', 'requeued', nb(6)],
    ]
    const marksOf = (engine: 'pg' | 'lite'): FrontierMark[] => [
      ...moves.map(([p, to, notBefore]): FrontierMark => {
        const seq = seqs[engine].get(url(p))!
        return to === 'requeued' ? { seq, to, notBefore: notBefore! } : { seq, to }
      }),
      { seq: 1_000_000, to: 'done' }, // no such row
    ]
    expect(foldMoves(marksOf('pg')).seqs).toEqual([...new Set(moves.map(([p]) => seqs.pg.get(url(p))!)), 1_000_000])
    await both((engine) =>
      batchOf({
        enqueued: [{ entries: paths.slice(10).map(entry), first: 11, done: true }],
        marks: marksOf(engine),
        hostFailures: new Map([
          ['a.example', 0],
          ['c.example', 4],
        ]),
        counters: { ...zero, queued: 9, visited: 3, failed: 1, bytes: 10, fetched: 3, depth_cut: 1 },
      }),
    )
    const moved = await frontierOf()
    expect(moved.pg).toEqual(moved.lite)
    expect(moved.pg).toHaveLength(12)
    const hosts = await hostsOf()
    expect(hosts.pg).toEqual(hosts.lite)

    // Resume: the same counters, error counts and seen set; rows and host failures reach a PostgreSQL process through the hosts it claims.
    const [pgState, liteState] = [await pgStore.resume(pgRun.seq), await lite.crawl.resume(liteRun)]
    expect({ ...pgState, hashes: pgState.hashes.sort() }).toEqual({ ...liteState, hashes: liteState.hashes.sort(), queued: [], hostFailures: [] })

    // Rows a process that died had in flight come back: SQLite's resume requeues them; on PostgreSQL
    // the next claim of their host does, and names them.
    liteDb.query('UPDATE frontier SET state = 1, lease_until = 5 WHERE run_seq = ? AND seq IN (?, ?)').run(liteRun, seqs.lite.get(url('/6'))!, seqs.lite.get(url('/7'))!)
    await pg!`UPDATE frontier SET state = 1, lease_until = 5, taken_by = 'dead' WHERE run_seq = ${pgRun.seq} AND url IN (${url('/6')}, ${url('/7')})`
    const now = Date.now()
    const [grant, ...more] = await shared.claimHosts(pgRun.seq, 'o', 5, now, now + 60_000, 2, 8)
    expect(more).toEqual([])
    expect(grant).toMatchObject({ host: 'a.example', failures: 0 })
    expect(bySeq(grant!.interrupted).map((r) => [r.url, r.taken_at])).toEqual([
      [url('/6'), 5],
      [url('/7'), 5],
    ])
    const liteQueued = (await lite.crawl.resume(liteRun)).queued
    const due = await shared.take(pgRun.seq, 'o', [{ host: 'a.example', n: 100 }], now)
    const fields = ({ hash, url, host, depth, parent, kind, attempts }: Claimed) => ({ hash, url, host, depth, parent, kind, attempts })
    expect(due.map(fields)).toEqual(liteQueued.filter((q) => q.not_before <= now).map(fields))
    expect(due.map((r) => r.url)).toEqual(['/6', '/7', '/8', '/9', '/10'].map(url))
    await shared.giveBack(
      pgRun.seq,
      'o',
      due.map((r) => r.seq),
    )
    const requeued = await frontierOf()
    expect(requeued.pg).toEqual(requeued.lite)

    await pgStore.saveRobots(pgRun.seq, 'a.example', { status: 404, body: null })
    await lite.crawl.saveRobots(liteRun, 'a.example', { status: 404, body: null })
    for (const host of ['a.example', 'b.example', 'z.example']) expect(await pgStore.robots(pgRun.seq, host)).toEqual(await lite.crawl.robots(liteRun, host))

    // The end: /6 in flight, the rest queued, all failed and counted. The counters are the
    // execution's totals (depth_cut is a flag an execution never clears).
    const [inFlight] = await shared.take(pgRun.seq, 'o', [{ host: 'a.example', n: 1 }], now)
    expect(inFlight!.url).toBe(url('/6'))
    liteDb.query('UPDATE frontier SET state = 1 WHERE run_seq = ? AND seq = ?').run(liteRun, seqs.lite.get(url('/6'))!)
    const lastCounters = { queued: 5, visited: 4, failed: 1, bytes: 10, fetched: 4, depth_cut: 1 }
    const last = (engine: 'pg' | 'lite') => batchOf({ marks: [{ seq: seqs[engine].get(url('/8'))!, to: 'done' }], counters: lastCounters })
    const ended = await both(last, { finish: { reason: 'max_empty_evaluations', outcome: 'stalled' }, failQueued: true })
    expect(ended.counters).toMatchObject({ queued: 0, failed: 7 })
    const runRow = 'status, stop_reason, outcome, lease_owner, lease_until, queued, visited, failed, bytes, fetched, depth_cut, error_counts'
    expect(numeric(await pg!.unsafe(`SELECT ${runRow} FROM runs WHERE seq = $1`, [pgRun.seq]))).toEqual(liteDb.query(`SELECT ${runRow} FROM runs WHERE seq = ?`).all(liteRun))
    const endRows = await frontierOf()
    expect(endRows.pg).toEqual(endRows.lite)
    expect(await pgStore.commit(pgRun.seq, 'o', last('pg'))).toEqual(await lite.crawl.commit(liteRun, 'o', last('lite')))
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
    // The rows as the engine gets them: its host claimed, its rows taken, in the order found.
    const now = Date.now()
    expect(await store.shared!.claimHosts(seq, 'o', 1, now, now + 60_000, 4, 8)).toHaveLength(1)
    const taken = await store.shared!.take(seq, 'o', [{ host: 'a.example', n: 300 }], now)
    expect(taken.map((r) => r.url)).toEqual(pagePaths.map(url))
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
      marks: taken.map((r) => ({ seq: r.seq, to: 'done' as const })),
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
