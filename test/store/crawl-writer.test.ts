// The crawl writer (src/store/crawl-writer.ts): batches of the engine committed on a thread of
// its own through its own connections to trawl.db and blobs.db, in order, whole or not at all;
// a lost lease writes nothing; a thread that cannot start leaves the batches to the caller.
import { afterAll, describe, expect, test } from 'bun:test'
import { renameSync } from 'node:fs'
import { join } from 'node:path'
import type { InlineBlob } from '../../src/blob/blob-store'
import { checksumOf } from '../../src/blob/checksum'
import type { CommitResult, CrawlBatch, CrawlOp } from '../../src/store/crawl-batch'
import { logRow } from '../../src/store/crawl-logs'
import { InlineCrawlWriter, ThreadedCrawlWriter, type CrawlWriter } from '../../src/store/crawl-writer'
import { DONE, FAILED, QUEUED, type FrontierEntry } from '../../src/store/frontier'
import { job, testApi, type TestApi } from '../helpers/api'

const OWNER = 'test-host:1:writer'
const apis: TestApi[] = []
const writers: CrawlWriter[] = []
afterAll(async () => {
  for (const w of writers) await w.close()
  for (const a of apis) a.close()
})

function env() {
  const api = testApi()
  apis.push(api)
  return api
}

function threaded(api: TestApi, onFailure?: (m: string) => void) {
  const w = new ThreadedCrawlWriter(api.store, api.blobs.inlineRows ?? null, onFailure)
  writers.push(w)
  return w
}

/** A run leased to OWNER; answers its id and seq. */
async function leasedRun(api: TestApi, tenant = 'acme') {
  const j = (await api.post('/v1/jobs', job(), { tenant })).body
  const run = (await api.post(`/v1/jobs/${j.id}/runs`, undefined, { tenant })).body
  const seq = api.store.frontier.runSeq(tenant, run.id)!
  expect(api.store.frontier.claimRun(seq, OWNER, Date.now(), Date.now() + 60_000)).toBe(true)
  return { id: run.id as string, seq, tenant }
}

const hashOf = (i: number) => (i.toString(16) + 'f'.repeat(16)).slice(0, 16)
const entry = (i: number): FrontierEntry => ({ hash: hashOf(i), url: `https://site.example/p${i}`, host: 'site.example', depth: 1, parent: null, kind: 0 })
const counters = (visited: number) => ({ queued: 0, visited, failed: 0, bytes: visited * 10, fetched: visited, depth_cut: 0 })

function batch(run: { seq: number; tenant: string }, ops: CrawlOp[], extra: Partial<CrawlBatch> = {}): CrawlBatch {
  return { run: run.seq, tenant: run.tenant, owner: OWNER, ops, logs: [], counters: counters(0), blobs: [], ...extra }
}

function body(text: string): Uint8Array {
  return new TextEncoder().encode(text)
}

function blobRow(key: string, bytes: Uint8Array): InlineBlob {
  return { key, size: bytes.byteLength, checksum: checksumOf(bytes), content_type: 'text/html', body: bytes }
}

function artifactOp(run: { id: string; tenant: string }, id: string, key: string, bytes: Uint8Array): CrawlOp {
  return {
    op: 'artifact',
    row: { tenant: run.tenant, id, run_id: run.id, url_hash: hashOf(1), blob_key: key, kind: 'raw', pipeline_id: null, content_type: 'text/html', size: bytes.byteLength, checksum: checksumOf(bytes), created_at: Date.now() },
  }
}

/** Commits and waits for the answer. */
function commit(w: CrawlWriter, b: CrawlBatch): Promise<{ result: CommitResult | null; error?: unknown }> {
  return new Promise((resolve) => w.commit(b, (result, error) => resolve({ result, error })))
}

const states = (api: TestApi, seq: number) =>
  Object.fromEntries((api.db.query('SELECT seq, state FROM frontier WHERE run_seq = ? ORDER BY seq').all(seq) as { seq: number; state: number }[]).map((r) => [r.seq, r.state]))

async function blobText(api: TestApi, key: string): Promise<string | null> {
  const got = await api.blobs.get(key)
  return got ? new Response(got.stream).text() : null
}

describe('ThreadedCrawlWriter', () => {
  test('a batch lands whole: frontier rows, catalogue links, the visit, edges, logs, counters, the artifact row and its body in blobs.db', async () => {
    const api = env()
    const w = threaded(api)
    const run = await leasedRun(api)
    const bytes = body('<html>page one</html>')
    const key = `t/${run.tenant}/${run.id}/a1`
    const log = logRow({ run_seq: run.seq, url: 'https://site.example/p1', url_hash: hashOf(1), host: 'site.example', step: 'fetch', status: 'ok', http_status: 200, occurred_at: Date.now() })
    const { result, error } = await commit(w, batch(run, [
      { op: 'links', urls: ['https://site.example/p1', 'https://site.example/p2'] },
      { op: 'enqueue', entries: [entry(1), entry(2)], first: 1 },
      { op: 'visit', hash: hashOf(1), hostHash: 'hh', depth: 1, status: 200, at: Date.now() },
      { op: 'done', seq: 1 },
      { op: 'edges', parent: hashOf(1), children: [hashOf(2)], at: Date.now() },
      artifactOp(run, 'a1', key, bytes),
    ], { logs: [log], counters: counters(1), blobs: [blobRow(key, bytes)] }))
    expect(error).toBeUndefined()
    expect(result).toBe('ok')
    expect(w.mode).toBe('thread')
    expect(states(api, run.seq)).toEqual({ 1: DONE, 2: QUEUED })
    expect((api.db.query('SELECT count(*) AS n FROM links WHERE tenant = ?').get(run.tenant) as { n: number }).n).toBe(2)
    expect(api.db.query('SELECT status FROM visits WHERE run_seq = ?').all(run.seq)).toEqual([{ status: 200 }])
    expect(api.db.query('SELECT parent, child FROM edges WHERE run_seq = ?').all(run.seq)).toEqual([{ parent: hashOf(1), child: hashOf(2) }])
    expect(api.db.query('SELECT id, step, http_status FROM crawl_logs WHERE run_seq = ?').all(run.seq)).toEqual([{ id: log[1], step: 'fetch', http_status: 200 }])
    expect(api.store.frontier.counters(run.seq)).toEqual(counters(1))
    expect(api.store.artifacts.get(run.tenant, 'a1')?.blob_key).toBe(key)
    expect(await blobText(api, key)).toBe('<html>page one</html>')
  })

  test('batches commit in the order given, each answered once', async () => {
    const api = env()
    const w = threaded(api)
    const run = await leasedRun(api)
    const answers: (CommitResult | null)[] = []
    const last = new Promise<void>((resolve) => {
      w.commit(batch(run, [{ op: 'enqueue', entries: [entry(1), entry(2), entry(3)], first: 1 }]), (r) => answers.push(r))
      w.commit(batch(run, [{ op: 'done', seq: 2 }]), (r) => answers.push(r))
      w.commit(batch(run, [{ op: 'failed', seq: 3 }, { op: 'requeue', seq: 1, notBefore: 5 }]), (r) => answers.push(r))
      w.commit(batch(run, [{ op: 'done', seq: 3 }], { counters: counters(2) }), (r) => {
        answers.push(r)
        resolve()
      })
    })
    await last
    await Bun.sleep(20) // the messages of commits already known from the shared count come after; they are not answered twice
    expect(answers).toEqual(['ok', 'ok', 'ok', 'ok'])
    expect(states(api, run.seq)).toEqual({ 1: QUEUED, 2: DONE, 3: DONE })
    expect(api.db.query('SELECT attempts, not_before FROM frontier WHERE run_seq = ? AND seq = 1').get(run.seq)).toEqual({ attempts: 1, not_before: 5 })
    expect(api.store.frontier.counters(run.seq).visited).toBe(2)
  })

  test('a run held by another owner: the answer is lost, and nothing of the batch is written, not its bodies either', async () => {
    const api = env()
    const w = threaded(api)
    const run = await leasedRun(api)
    api.db.run('UPDATE runs SET lease_owner = ? WHERE seq = ?', ['other-host:2:x', run.seq])
    const bytes = body('taken')
    const key = `t/${run.tenant}/${run.id}/lost`
    const log = logRow({ run_seq: run.seq, url: 'https://site.example/p1', url_hash: hashOf(1), host: 'site.example', step: 'fetch', status: 'ok', occurred_at: Date.now() })
    const { result } = await commit(w, batch(run, [{ op: 'enqueue', entries: [entry(1)], first: 1 }, artifactOp(run, 'lost', key, bytes)], { logs: [log], blobs: [blobRow(key, bytes)], counters: counters(9) }))
    expect(result).toBe('lost')
    expect(states(api, run.seq)).toEqual({})
    expect((api.db.query('SELECT count(*) AS n FROM crawl_logs WHERE run_seq = ?').get(run.seq) as { n: number }).n).toBe(0)
    expect(api.store.frontier.counters(run.seq).visited).toBe(0)
    expect(await blobText(api, key)).toBeNull()
  })

  test('a batch that fails rolls back whole and is answered with the error; the thread goes on with the next', async () => {
    const api = env()
    const w = threaded(api)
    const run = await leasedRun(api)
    const bytes = body('x')
    const first = await commit(w, batch(run, [artifactOp(run, 'dup', `t/${run.tenant}/${run.id}/d1`, bytes)]))
    expect(first.result).toBe('ok')
    // The same artifact id again: the insert fails, after the batch's enqueue.
    const failed = await commit(w, batch(run, [{ op: 'enqueue', entries: [entry(7)], first: 7 }, artifactOp(run, 'dup', `t/${run.tenant}/${run.id}/d2`, bytes)]))
    expect(failed.result).toBeNull()
    expect(String(failed.error)).toContain('UNIQUE')
    expect(states(api, run.seq)).toEqual({})
    const next = await commit(w, batch(run, [{ op: 'enqueue', entries: [entry(8)], first: 8 }]))
    expect(next.result).toBe('ok')
    expect(states(api, run.seq)).toEqual({ 8: QUEUED })
  })

  test('poll learns of a landed commit from shared memory, before its message could arrive', async () => {
    const api = env()
    const w = threaded(api)
    const run = await leasedRun(api)
    expect((await commit(w, batch(run, []))).result).toBe('ok') // the thread is up
    let answer: CommitResult | null | undefined
    w.commit(batch(run, [{ op: 'enqueue', entries: [entry(1)], first: 1 }]), (r) => (answer = r))
    // No await in this loop: the event loop never turns, so only poll can tell.
    const deadline = Date.now() + 10_000
    while (answer === undefined && Date.now() < deadline) {
      Bun.sleepSync(1)
      w.poll()
    }
    expect(answer).toBe('ok')
    expect(states(api, run.seq)).toEqual({ 1: QUEUED })
  })

  test("once the thread is up, a whole body's buffer is handed over (not copied); a view of a larger buffer is copied and left alone", async () => {
    const api = env()
    const w = threaded(api)
    const run = await leasedRun(api)
    expect((await commit(w, batch(run, []))).result).toBe('ok')
    await Bun.sleep(20) // its messages (the ready one first) are read
    const whole = body('whole body')
    const shared = body('0123456789')
    const view = shared.subarray(2, 6)
    const keys = [`t/${run.tenant}/${run.id}/whole`, `t/${run.tenant}/${run.id}/view`]
    const done = commit(w, batch(run, [], { blobs: [blobRow(keys[0]!, whole), blobRow(keys[1]!, view)] }))
    expect(whole.byteLength).toBe(0) // detached: it went to the thread
    expect(new TextDecoder().decode(shared)).toBe('0123456789')
    expect((await done).result).toBe('ok')
    expect(await blobText(api, keys[0]!)).toBe('whole body')
    expect(await blobText(api, keys[1]!)).toBe('2345')
  })

  test('close waits for the batches given before it', async () => {
    const api = env()
    const w = new ThreadedCrawlWriter(api.store, api.blobs.inlineRows ?? null)
    const run = await leasedRun(api)
    const answers: (CommitResult | null)[] = []
    for (let i = 1; i <= 5; i++) w.commit(batch(run, [{ op: 'enqueue', entries: [entry(i)], first: i }]), (r) => answers.push(r))
    await w.close()
    expect(answers).toEqual(['ok', 'ok', 'ok', 'ok', 'ok'])
    expect(Object.keys(states(api, run.seq))).toHaveLength(5)
    expect(w.mode).toBe('inline')
  })

  test('a thread that cannot open the database: its batches and every later one commit on the caller thread, in order, bodies intact', async () => {
    const api = env()
    const run = await leasedRun(api)
    // This connection keeps the file open under its new name; the thread finds no trawl.db.
    renameSync(join(api.dir, 'trawl.db'), join(api.dir, 'moved.db'))
    renameSync(join(api.dir, 'trawl.db-wal'), join(api.dir, 'moved.db-wal'))
    const failures: string[] = []
    const w = threaded(api, (m) => failures.push(m))
    const bytes = body('kept for the caller')
    const key = `t/${run.tenant}/${run.id}/fb`
    const answers: (CommitResult | null)[] = []
    const both = Promise.all([
      new Promise<void>((r) => w.commit(batch(run, [{ op: 'enqueue', entries: [entry(1), entry(2)], first: 1 }, artifactOp(run, 'fb', key, bytes)], { blobs: [blobRow(key, bytes)] }), (x) => (answers.push(x), r()))),
      new Promise<void>((r) => w.commit(batch(run, [{ op: 'done', seq: 2 }]), (x) => (answers.push(x), r()))),
    ])
    await both
    expect(failures).toHaveLength(1)
    expect(w.mode).toBe('inline')
    expect(answers).toEqual(['ok', 'ok'])
    expect(states(api, run.seq)).toEqual({ 1: QUEUED, 2: DONE })
    expect(await blobText(api, key)).toBe('kept for the caller')
    // Later commits happen here at once.
    let later = null as CommitResult | null
    w.commit(batch(run, [{ op: 'failed', seq: 1 }]), (r) => (later = r))
    expect(later).toBe('ok')
    expect(states(api, run.seq)[1]).toBe(FAILED)
  })
})

describe('InlineCrawlWriter', () => {
  test('commits before commit() returns; no blob store means a batch with bodies fails whole', async () => {
    const api = env()
    const run = await leasedRun(api)
    const w = new InlineCrawlWriter(api.store, null)
    expect(w.blobRowMax).toBeNull()
    let answer = null as CommitResult | null
    w.commit(batch(run, [{ op: 'enqueue', entries: [entry(1)], first: 1 }]), (r) => (answer = r))
    expect(answer).toBe('ok')
    let error: unknown = null
    const bytes = body('b')
    w.commit(batch(run, [{ op: 'done', seq: 1 }], { blobs: [blobRow('t/x/y/z', bytes)] }), (_, e) => (error = e))
    expect(String(error)).toContain('no blob store')
    expect(states(api, run.seq)).toEqual({ 1: QUEUED })
  })
})
