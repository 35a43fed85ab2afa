// End-to-end: the crawl engine in the compiled binary (design.md §1 shutdown, §5 run engine).
// What this guards: a run survives `kill -9` and SIGTERM of `trawl serve` without fetching a
// page twice except the ones in flight at the moment, `paused` survives a restart, two serve
// processes on one data dir (each run held by one of them; a killed holder's run taken over),
// the one-shot `trawl crawl` command (summary, progress on a pipe and on a terminal, Ctrl-C, bad
// arguments), the address guard's default for crawls and TRAWL_MAX_ACTIVE_RUNS. Only 127.0.0.1
// fixture sites started here are contacted.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { Database } from 'bun:sqlite'
import type { Subprocess } from 'bun'
import { statSync } from 'node:fs'
import { join } from 'node:path'
import { BINARY, cleanup, ensureBinary, startTrawl, runBinary, tempDir, trawlEnv, type Trawl } from '../helpers/binary'
import { inspectStore, onPostgres, recordedAnything, sqliteOnlyTest, sqliteOnlyDescribe } from '../helpers/binary-engine'
import { counts, createRun, finished, getRun, OPEN, site, stopSites, visitedUrls, waitFor, WHOLE } from '../helpers/e2e-crawl'

const procs = new Set<Subprocess>()

beforeAll(async () => {
  await ensureBinary()
}, 120_000)
afterAll(async () => {
  for (const p of procs) p.kill('SIGKILL')
  await Promise.all([...procs].map((p) => p.exited))
  stopSites()
  await cleanup()
})

// ------------------------------------------------------------------ restarts of trawl serve

describe('trawl serve restarts mid-crawl', () => {
  test('kill -9 mid-crawl: the restart resumes at once and every page is visited exactly once', async () => {
    const s = site(300, 30)
    const concurrency = 4
    const first = await startTrawl({ env: OPEN })
    const runId = await createRun(first.api, s.url(0), WHOLE(concurrency))
    await waitFor('a third of the site to be fetched', () => s.pageHits() >= 100, 20_000, 5)
    const killAt = Date.now()
    await first.kill9()
    const atKill = new Map(s.hits)
    const hitsAtKill = s.pageHits()
    expect(hitsAtKill).toBeLessThan(s.n) // really mid-crawl

    const restartedAt = Date.now()
    const second = await startTrawl({ dataDir: first.dataDir, env: OPEN })
    // The dead holder's pid is gone: its lease is not waited out (15 s), the run goes on now.
    await waitFor('a fetch after the restart', () => s.pageHits() > hitsAtKill, 5_000, 10)
    expect(Date.now() - restartedAt).toBeLessThan(5_000)
    const run = await finished(second.api, runId, 40_000)
    expect(run.status).toBe('finished')
    expect(run.stop_reason).toBe('max_empty_evaluations') // the crawl completed; no link cut by depth

    // The run's records: each page once, every page.
    const visited = await visitedUrls(second.api, runId)
    const dupes = [...counts(visited)].filter(([, c]) => c > 1)
    expect(dupes).toEqual([])
    expect(visited.slice().sort()).toEqual(s.pages().sort())

    // The fixture: each page at most twice; the second fetches only of pages in flight at the kill.
    const twice = [...s.hits].filter(([p, c]) => p.startsWith('/p/') && c > 1)
    const firstAsked = twice.map(([p]) => killAt - s.arrivals.find((a) => a.path === p)!.at).sort((a, b) => a - b)
    expect(twice.filter(([, c]) => c > 2)).toEqual([])
    expect(twice.length, `${twice.length} pages fetched again; first asked for this many ms before the kill: ${firstAsked.join(' ')}`).toBeLessThanOrEqual(concurrency)
    for (const [p] of twice) expect(atKill.get(p)).toBe(1) // refetched: it had been requested before the kill
    expect(s.hits.get('/robots.txt') ?? 0).toBeLessThanOrEqual(2)

    // The run's counters agree with its records.
    expect(run.stats).toMatchObject({ visited: s.n, queued: 0, failed: 0 })
    expect((await second.stop()).code).toBe(0)
  }, 60_000)

  test('kill -9 twice with max_urls: after the restarts the run still stops at exactly max_urls visited pages', async () => {
    const s = site(300, 30)
    const first = await startTrawl({ env: OPEN })
    const runId = await createRun(first.api, s.url(0), { limits: { max_depth: 50, max_urls: 150 }, politeness: { concurrency: 4, per_host_concurrency: 4 } })
    // Each kill comes a few hundred ms into an execution, between two of its counter saves.
    await waitFor('40 pages fetched', () => s.pageHits() >= 40, 20_000, 5)
    await first.kill9()
    const middle = await startTrawl({ dataDir: first.dataDir, env: OPEN })
    const atRestart = s.pageHits()
    await waitFor('40 more pages fetched', () => s.pageHits() >= atRestart + 40, 20_000, 5)
    await middle.kill9()
    // What the kills left: the run's counters should agree with its visits.
    const left = await inspectStore(first.dataDir, async (db) => ({
      counter: (await db.query<{ visited: number }>('SELECT visited FROM runs WHERE id = ?', [runId]))[0]!.visited,
      visits: (await db.query<{ n: number }>('SELECT count(*) AS n FROM visits'))[0]!.n,
    }))
    const second = await startTrawl({ dataDir: first.dataDir, env: OPEN })
    const run = await finished(second.api, runId, 30_000)
    expect(run.stop_reason).toBe('max_urls')
    const visited = await visitedUrls(second.api, runId)
    // max_urls: this many URLs got a response and were recorded; no more are fetched.
    expect(visited.length, `after the kills: runs.visited ${left.counter}, visits ${left.visits}`).toBe(150)
    expect(run.stats.visited).toBe(150)
    // Pages asked for but never recorded: at most the ones in flight at each of the two kills.
    const distinct = [...s.hits.keys()].filter((p) => p.startsWith('/p/')).length
    expect(distinct).toBeLessThanOrEqual(150 + 2 * 4)
    expect((await second.stop()).code).toBe(0)
  }, 60_000)

  test('SIGTERM checkpoints: leases released, in-flight URLs requeued, nothing else fetched twice', async () => {
    const s = site(200, 30)
    const concurrency = 4
    const first = await startTrawl({ env: OPEN })
    const runId = await createRun(first.api, s.url(0), WHOLE(concurrency))
    await waitFor('a third of the site to be fetched', () => s.pageHits() >= 60, 20_000, 5)
    const t0 = Date.now()
    const exit = await first.stop()
    expect(exit.code).toBe(0)
    expect(Date.now() - t0).toBeLessThan(10_000) // exits promptly on a loaded machine too
    const hitsAtStop = s.pageHits()
    expect(hitsAtStop).toBeLessThan(s.n)

    // What the checkpoint left in the database: a running run nobody holds, no leased URL.
    const left = await inspectStore(first.dataDir, async (db) => ({
      run: (await db.query<{ status: string; lease_owner: string | null; visited: number }>('SELECT status, lease_owner, visited FROM runs WHERE id = ?', [runId]))[0]!,
      leased: (await db.query<{ n: number }>('SELECT count(*) AS n FROM frontier WHERE state = 1'))[0]!.n,
      visits: (await db.query<{ n: number }>('SELECT count(*) AS n FROM visits'))[0]!.n,
    }))
    expect(left.run.status).toBe('running')
    expect(left.run.lease_owner).toBeNull()
    expect(left.leased).toBe(0)
    expect(left.run.visited).toBe(left.visits)

    const second = await startTrawl({ dataDir: first.dataDir, env: OPEN })
    const run = await finished(second.api, runId, 30_000)
    expect(run.stop_reason).toBe('max_empty_evaluations')
    const visited = await visitedUrls(second.api, runId)
    expect([...counts(visited)].filter(([, c]) => c > 1)).toEqual([])
    expect(visited.slice().sort()).toEqual(s.pages().sort())
    expect(run.stats.visited).toBe(s.n)
    const twice = [...s.hits].filter(([p, c]) => p.startsWith('/p/') && c > 1)
    expect(twice.filter(([, c]) => c > 2)).toEqual([])
    expect(twice.length, `fetched again: ${twice.map(([p]) => p).join(' ')}`).toBeLessThanOrEqual(concurrency)
    expect(s.hits.get('/robots.txt')).toBe(1) // kept in the database, not fetched again
    expect((await second.stop()).code).toBe(0)
  }, 60_000)

  test('a paused run stays paused across a restart, then resumes and fetches nothing twice', async () => {
    const s = site(120, 30)
    const first = await startTrawl({ env: OPEN })
    const runId = await createRun(first.api, s.url(0), WHOLE(4))
    await waitFor('some pages fetched', () => s.pageHits() >= 30, 20_000, 5)
    const paused = await first.api.put(`/v1/runs/${runId}/pause`)
    expect(paused.status).toBe(200)
    expect(paused.body.status).toBe('paused')
    // In-flight fetches complete; then nothing more is asked for.
    await Bun.sleep(600)
    const settled = s.pageHits()
    await Bun.sleep(700)
    expect(s.pageHits()).toBe(settled)
    expect((await first.stop()).code).toBe(0)

    const second = await startTrawl({ dataDir: first.dataDir, env: OPEN })
    await Bun.sleep(1_500) // three runner polls
    expect((await getRun(second.api, runId)).status).toBe('paused')
    expect(s.pageHits()).toBe(settled)

    const resumed = await second.api.put(`/v1/runs/${runId}/resume`)
    expect(resumed.status).toBe(200)
    expect(resumed.body.status).toBe('running')
    const run = await finished(second.api, runId, 30_000)
    expect(run.stop_reason).toBe('max_empty_evaluations')
    const visited = await visitedUrls(second.api, runId)
    expect(visited.slice().sort()).toEqual(s.pages().sort())
    // A pause lets in-flight fetches finish and records them: no page is ever fetched twice.
    expect([...s.hits].filter(([, c]) => c > 1)).toEqual([])
    expect(run.stats.visited).toBe(s.n)
    expect((await second.stop()).code).toBe(0)
  }, 60_000)
})

// ------------------------------------------------------------------ serve settings

/** Ids of the runs a serve process started (its `run started` log lines). */
const runsStarted = (t: Trawl) => new Set([...t.stderr().matchAll(/ run started run="([^"]+)"/g)].map((m) => m[1]!))

// One holder a run is the SQLite engine's way; on PostgreSQL every process joins a run and they
// share its host queues (decision 112), which test/cluster covers.
sqliteOnlyDescribe('two trawl serve processes on one data dir', () => {
  test('each run is crawled by one process at a time: four runs split two and two (TRAWL_MAX_ACTIVE_RUNS=2), every page fetched once', async () => {
    // Slow pages one at a time: a run lasts 6 s, so a process holding two cannot take a third
    // before the other process's runner (polling every 500 ms) has claimed the rest.
    const four = [0, 1, 2, 3].map(() => site(20, 300))
    const env = { ...OPEN, TRAWL_MAX_ACTIVE_RUNS: '2' }
    const a = await startTrawl({ env })
    const b = await startTrawl({ dataDir: a.dataDir, env })
    const ids: string[] = []
    for (const s of four) ids.push(await createRun(a.api, s.url(0), WHOLE(1)))

    for (const [i, id] of ids.entries()) {
      const run = await finished(b.api, id, 40_000)
      expect(run.stop_reason).toBe('max_empty_evaluations')
      expect(run.stats).toMatchObject({ visited: 20, queued: 0, failed: 0 })
      expect((await visitedUrls(b.api, id)).sort()).toEqual(four[i]!.pages().sort())
    }
    // No page was fetched by both: each exactly once, robots.txt once per run.
    for (const s of four) {
      expect([...s.hits].filter(([p, c]) => p.startsWith('/p/') && c !== 1)).toEqual([])
      expect(s.pageHits()).toBe(20)
      expect(s.hits.get('/robots.txt')).toBe(1)
    }
    // Who crawled what: each run started in one process only, two in each.
    const byA = runsStarted(a)
    const byB = runsStarted(b)
    expect([...byA].filter((id) => byB.has(id))).toEqual([])
    expect([...byA, ...byB].sort()).toEqual(ids.slice().sort())
    expect([byA.size, byB.size]).toEqual([2, 2])
    expect((await a.stop()).code).toBe(0)
    expect((await b.stop()).code).toBe(0)
  }, 60_000)

  test('kill -9 of the process crawling a run: the other process, already up, takes it over and finishes it, no page visited twice', async () => {
    const s = site(300, 30)
    const concurrency = 4
    const a = await startTrawl({ env: OPEN })
    const b = await startTrawl({ dataDir: a.dataDir, env: OPEN })
    const runId = await createRun(a.api, s.url(0), WHOLE(concurrency))
    await waitFor('a third of the site to be fetched', () => s.pageHits() >= 100, 20_000, 5)
    // The run went to whichever runner claimed it first; that one is killed.
    const [holder, other] = runsStarted(a).has(runId) ? [a, b] : [b, a]
    expect(runsStarted(other).has(runId)).toBe(false)
    const killAt = Date.now()
    await holder.kill9()
    const atKill = new Map(s.hits)
    const hitsAtKill = s.pageHits()
    expect(hitsAtKill).toBeLessThan(s.n)

    // The dead holder's pid is gone, so the other process need not wait out the 15 s lease.
    await waitFor('a fetch by the other process', () => s.pageHits() > hitsAtKill, 5_000, 10)
    expect(Date.now() - killAt).toBeLessThan(5_000)
    const run = await finished(other.api, runId, 40_000)
    expect(run.stop_reason).toBe('max_empty_evaluations')
    expect(run.stats).toMatchObject({ visited: s.n, queued: 0, failed: 0 })
    expect(runsStarted(other).has(runId)).toBe(true)

    const visited = await visitedUrls(other.api, runId)
    expect([...counts(visited)].filter(([, c]) => c > 1)).toEqual([])
    expect(visited.slice().sort()).toEqual(s.pages().sort())
    // Fetched again: only pages in flight at the kill (asked for before it, at most `concurrency`).
    const twice = [...s.hits].filter(([p, c]) => p.startsWith('/p/') && c > 1)
    expect(twice.filter(([, c]) => c > 2)).toEqual([])
    expect(twice.length).toBeLessThanOrEqual(concurrency)
    for (const [p] of twice) expect(atKill.get(p)).toBe(1)
    expect((await other.stop()).code).toBe(0)
  }, 60_000)
})

describe('trawl serve settings', () => {
  test('by default a crawl of a 127.0.0.1 seed finishes without reaching it: its fetches are logged as blocked_address', async () => {
    const s = site(5, 0)
    const trawl = await startTrawl()
    const runId = await createRun(trawl.api, s.url(0), WHOLE(2))
    const run = await finished(trawl.api, runId, 15_000)
    expect(run.status).toBe('finished')
    expect(s.arrivals).toEqual([]) // not even robots.txt
    const logs = await trawl.api.get(`/v1/runs/${runId}/logs?error_reasons=blocked_address&per_page=100`)
    expect(logs.status).toBe(200)
    expect(logs.body.data.length).toBeGreaterThan(0)
    for (const e of logs.body.data) expect(e.error_reason).toBe('blocked_address')
    // The seed itself is reported as blocked, not as something robots.txt said.
    expect(logs.body.data.map((e: { url: string; step: string }) => `${e.step} ${e.url}`)).toContain(`fetch ${s.url(0)}`)
    const disallowed = await trawl.api.get(`/v1/runs/${runId}/logs?error_reasons=robots_disallowed&per_page=100`)
    expect(disallowed.body.data).toEqual([])
    // A fetch that got no answer is still a visit of the run, with status null (decision 58).
    const visits = await trawl.api.get(`/v1/runs/${runId}/links?per_page=100`)
    expect(visits.body.data.map((l: { url: string; status: number | null }) => [l.url, l.status])).toEqual([[s.url(0), null]])
    await trawl.stop()
  }, 30_000)

  test('TRAWL_MAX_ACTIVE_RUNS=1: a second run stays pending until the first finishes', async () => {
    const s = site(40, 20)
    const other = site(5, 0)
    const trawl = await startTrawl({ env: { ...OPEN, TRAWL_MAX_ACTIVE_RUNS: '1' } })
    const a = await createRun(trawl.api, s.url(0), WHOLE(2))
    await waitFor('the first run to start', async () => (await getRun(trawl.api, a)).status === 'running', 5_000)
    const b = await createRun(trawl.api, other.url(0), WHOLE(2))
    for (let i = 0; i < 5; i++) {
      await Bun.sleep(200)
      const first = await getRun(trawl.api, a)
      if (first.status === 'finished') break
      expect((await getRun(trawl.api, b)).status).toBe('pending')
      expect(other.arrivals).toEqual([])
    }
    const ra = await finished(trawl.api, a, 20_000)
    const rb = await finished(trawl.api, b, 20_000)
    expect(Date.parse(rb.started_at)).toBeGreaterThanOrEqual(Date.parse(ra.finished_at))
    expect(Math.min(...other.arrivals.map((x) => x.at))).toBeGreaterThanOrEqual(Date.parse(ra.finished_at))
    expect((await visitedUrls(trawl.api, b)).length).toBe(5)
    await trawl.stop()
  }, 40_000)

  sqliteOnlyTest(
    "the checkpoint thread runs in the binary: a finished crawl's rows reach trawl.db and blobs.db while serve is up",
    async () => {
      // SQLite's own checkpoint waits for 64 MiB of WAL, which this small crawl never writes; the
      // thread copies the frames back within a pass or two of the last commit.
      const s = site(60, 0)
      const trawl = await startTrawl({ env: OPEN })
      const runId = await createRun(trawl.api, s.url(0), WHOLE(4))
      await finished(trawl.api, runId, 20_000)
      for (const file of ['trawl.db', 'blobs.db']) {
        const path = join(trawl.dataDir, file)
        await waitFor(
          `${file} to hold every page of its WAL`,
          () => {
            const reader = new Database(path, { readonly: true })
            try {
              const { page_count } = reader.query('PRAGMA page_count').get() as { page_count: number }
              const { page_size } = reader.query('PRAGMA page_size').get() as { page_size: number }
              return statSync(path).size === page_count * page_size && page_count > 10
            } finally {
              reader.close()
            }
          },
          5_000,
        )
      }
      await trawl.stop()
    },
    30_000,
  )
})

// ------------------------------------------------------------------ trawl crawl

/** Spawns the binary with its output collected; the test may signal it. */
async function spawnCrawl(args: string[], dataDir: string, env: Record<string, string> = {}) {
  const proc = Bun.spawn([BINARY, ...args, '--data-dir', dataDir], { cwd: tempDir(), env: await trawlEnv(dataDir, env), stdin: 'ignore', stdout: 'pipe', stderr: 'pipe' })
  procs.add(proc)
  const out = { stdout: '', stderr: '' }
  const drain = async (stream: ReadableStream<Uint8Array>, key: 'stdout' | 'stderr') => {
    const d = new TextDecoder()
    for await (const chunk of stream) out[key] += d.decode(chunk, { stream: true })
  }
  const done = Promise.all([drain(proc.stdout, 'stdout'), drain(proc.stderr, 'stderr'), proc.exited]).then(() => {
    procs.delete(proc)
    return { code: proc.exitCode, signal: proc.signalCode, ...out }
  })
  const timer = setTimeout(() => proc.kill('SIGKILL'), 30_000)
  void done.finally(() => clearTimeout(timer))
  return { proc, out, done }
}

const SUMMARY = /^finished: (\w+) after \d+(\.\d+)?s: visited (\d+), failed (\d+), queued (\d+), .+$/m
const PROGRESS = /^visited \d+\s+queued \d+\s+failed \d+\s+\d+(\.\d+)? pages\/s$/m

describe('trawl crawl', () => {
  test('--max-urls: a summary with the stop reason on stdout, progress on stderr, exit 0; the run is in the data dir for serve', async () => {
    const s = site(100, 40)
    const dataDir = tempDir()
    const r = await runBinary(['crawl', s.url(0), '--max-urls', '25', '--max-depth', '20', '--data-dir', dataDir], {}, 30_000)
    expect(r.stderr).toMatch(PROGRESS)
    expect(r.code).toBe(0)
    const m = SUMMARY.exec(r.stdout)
    expect(m, r.stdout + r.stderr).not.toBeNull()
    expect(m![1]).toBe('max_urls')
    expect(Number(m![3])).toBe(25)
    // max_urls: this many URLs got a response, and no more were fetched.
    expect(s.pageHits()).toBe(25)
    expect([...s.hits].filter(([, c]) => c > 1)).toEqual([])

    const trawl = await startTrawl({ dataDir })
    const runs = await trawl.api.get('/v1/runs', { tenant: 'local' })
    expect(runs.status).toBe(200)
    expect(runs.body.data).toHaveLength(1)
    const run = runs.body.data[0]
    expect(run.status).toBe('finished')
    expect(run.stop_reason).toBe('max_urls')
    expect(run.stats.visited).toBe(25)
    expect(run.config.seeds).toEqual([s.url(0)])
    expect((await visitedUrls(trawl.api, run.id, 'local')).length).toBe(25)
    // Nothing more is crawled when serve starts: the run is finished.
    await Bun.sleep(700)
    expect(s.pageHits()).toBe(25)
    await trawl.stop()
  }, 45_000)

  // SQLite: the run is leased to the command and serve never takes it. PostgreSQL: every process
  // joins every run (decision 112), serve too, and the pages are still fetched once, within max_urls.
  test("on a data dir a running serve uses: the run is created leased to the command; SQLite's serve never takes it, PostgreSQL's helps", async () => {
    const s = site(100, 40)
    const serve = await startTrawl({ env: OPEN })
    const r = await runBinary(['crawl', s.url(0), '--max-urls', '30', '--max-depth', '20', '--data-dir', serve.dataDir], OPEN, 30_000)
    expect(r.code, r.stdout + r.stderr).toBe(0)
    const m = SUMMARY.exec(r.stdout)
    expect(m![1]).toBe('max_urls')
    expect(Number(m![3])).toBe(30)
    expect(s.pageHits()).toBe(30)
    expect([...s.hits].filter(([, c]) => c > 1)).toEqual([])
    // serve sees the run, finished; on SQLite it never started it.
    const runs = await serve.api.get('/v1/runs', { tenant: 'local' })
    expect(runs.body.data.map((x: { status: string; stop_reason: string }) => [x.status, x.stop_reason])).toEqual([['finished', 'max_urls']])
    if (!onPostgres()) expect(runsStarted(serve).size).toBe(0)
    expect((await serve.stop()).code).toBe(0)
  }, 45_000)

  test('--max-depth and --tenant: the whole shallow site, stop reason max_depth', async () => {
    const s = site(31, 0)
    const dataDir = tempDir()
    const r = await runBinary(['crawl', s.url(0), '--max-depth', '2', '--data-dir', dataDir, '--tenant', 'team-a'], {}, 20_000)
    expect(r.code).toBe(0)
    const m = SUMMARY.exec(r.stdout)
    expect(m, r.stdout + r.stderr).not.toBeNull()
    expect(m![1]).toBe('max_depth')
    // Depth 0..2 of the tree (pages 0..6) plus the cross links found on the way.
    const fetched = [...s.hits.keys()].filter((p) => p.startsWith('/p/'))
    for (const i of [0, 1, 2, 3, 4, 5, 6]) expect(fetched).toContain(`/p/${i}`)
    expect(Number(m![3])).toBe(fetched.length)
    const trawl = await startTrawl({ dataDir })
    expect((await trawl.api.get('/v1/runs', { tenant: 'local' })).body.data).toEqual([])
    const runs = await trawl.api.get('/v1/runs', { tenant: 'team-a' })
    expect(runs.body.data).toHaveLength(1)
    expect(runs.body.data[0].stop_reason).toBe('max_depth')
    await trawl.stop()
  }, 40_000)

  // How progress is drawn does not depend on the store: SQLite's pass covers it.
  sqliteOnlyTest(
    'on a terminal the progress line is redrawn in place (carriage return, erase line), then ends with a newline before the summary',
    async () => {
      const s = site(120, 40)
      let seen = ''
      const decoder = new TextDecoder()
      // A pseudo-terminal: the child's stdout and stderr are both the terminal, as in a shell.
      const terminal = new Bun.Terminal({ cols: 200, rows: 24, data: (_t, bytes) => void (seen += decoder.decode(bytes, { stream: true })) })
      try {
        const dataDir = tempDir()
        const proc = Bun.spawn([BINARY, 'crawl', s.url(0), '--max-urls', '60', '--max-depth', '20', '--concurrency', '2', '--per-host-concurrency', '2', '--data-dir', dataDir], {
          cwd: tempDir(),
          env: await trawlEnv(dataDir, OPEN),
          terminal,
        })
        procs.add(proc)
        const timer = setTimeout(() => proc.kill('SIGKILL'), 30_000)
        expect(await proc.exited).toBe(0)
        clearTimeout(timer)
        procs.delete(proc)
        await waitFor('the summary on the terminal', () => /finished: max_urls after/.test(seen), 5_000, 20)
      } finally {
        terminal.close()
      }
      // The terminal turns each \n into \r\n; what matters is how progress is drawn between them.
      const text = seen.replaceAll('\r\n', '\n')
      const progress = [...text.matchAll(/\r\x1b\[K(visited \d+\s+queued \d+\s+failed \d+\s+\d+(\.\d+)? pages\/s)/g)].map((m) => m[1]!)
      expect(progress.length, JSON.stringify(text)).toBeGreaterThanOrEqual(2) // 60 pages, two at a time, 40 ms each: well over a second
      // Redrawn in place: no progress line stands on a line of its own.
      expect(text).not.toMatch(/^visited \d+\s+queued/m)
      const visitedCounts = progress.map((l) => Number(/^visited (\d+)/.exec(l)![1]))
      expect(visitedCounts).toEqual(visitedCounts.slice().sort((a, b) => a - b))
      // The last redraw is closed by a newline, and the summary starts a line of its own.
      expect(text).toMatch(/pages\/s\n(.*\n)*finished: max_urls after \d+(\.\d+)?s: visited 60, failed 0, queued \d+, .+\n/)
    },
    40_000,
  )

  // Each signal ends the run the same way once caught: on PostgreSQL one of them shows the stop is recorded.
  const signals = [
    ['SIGINT', 'Ctrl-C'],
    ['SIGTERM', 'a supervisor'],
    ['SIGHUP', 'a closed terminal'],
  ] as const
  test.each(onPostgres() ? signals.slice(0, 1) : signals)(
    '%s (%s) stops the run with stop reason manual; nothing is fetched after it',
    async (signal) => {
      const s = site(400, 50)
      const dataDir = tempDir()
      const c = await spawnCrawl(['crawl', s.url(0), '--max-depth', '50'], dataDir)
      await waitFor('the crawl to be under way', () => s.pageHits() >= 10, 15_000, 10)
      c.proc.kill(signal)
      const sentAt = Date.now()
      const r = await c.done
      expect(Date.now() - sentAt).toBeLessThan(10_000) // exits promptly on a loaded machine too
      // 128 + the signal's number, as a shell reports it: 130 for Ctrl-C (docs/crawl.md).
      expect(r.code).toBe(128 + { SIGHUP: 1, SIGINT: 2, SIGTERM: 15 }[signal])
      expect(r.stdout).toContain('\noutcome: stopped (stopped before the end)\n')
      const m = SUMMARY.exec(r.stdout)
      expect(m, r.stdout + r.stderr).not.toBeNull()
      expect(m![1]).toBe('manual')
      // Fetches started before the signal may still arrive a moment later; none start after it.
      // (A crawl that kept going would show arrivals every few tens of ms; a second covers the
      // signal's delivery and the child's turn on a loaded machine.)
      expect(s.arrivals.filter((a) => a.at > sentAt + 1000)).toEqual([])
      expect(s.pageHits()).toBeLessThan(s.n)

      const trawl = await startTrawl({ dataDir, env: OPEN })
      const runs = await trawl.api.get('/v1/runs', { tenant: 'local' })
      expect(runs.body.data).toHaveLength(1)
      const run = runs.body.data[0]
      expect(run.status).toBe('finished')
      expect(run.stop_reason).toBe('manual')
      expect(Number(m![3])).toBe(run.stats.visited)
      const before = s.pageHits()
      await Bun.sleep(700)
      expect(s.pageHits()).toBe(before) // serve does not pick a stopped run up
      await trawl.stop()
    },
    40_000,
  )

  // Refused before the store is opened, whichever it is: SQLite's pass covers them.
  sqliteOnlyTest.each([
    [[], 'no URL'],
    [['http://127.0.0.1:1/', 'http://127.0.0.1:2/'], 'two URLs'],
    [['ftp://127.0.0.1/'], 'not http(s)'],
    [['not a url'], 'not a URL'],
    [['http://127.0.0.1:1/', '--max-urls', 'ten'], 'max-urls not a number'],
    [['http://127.0.0.1:1/', '--max-urls', '0'], 'max-urls 0'],
    [['http://127.0.0.1:1/', '--max-urls', '-3'], 'max-urls negative'],
    [['http://127.0.0.1:1/', '--max-depth', '1.5'], 'max-depth fractional'],
    [['http://127.0.0.1:1/', '--max-depth', '100000'], 'max-depth too big'],
    [['http://127.0.0.1:1/', '--tenant', 'has space'], 'bad tenant'],
    [['http://127.0.0.1:1/', '--frobnicate'], 'unknown flag'],
  ] as [string[], string][])('bad arguments (%p, %s) exit 2 with one line and create nothing', async (args) => {
    const dataDir = tempDir()
    const r = await runBinary(['crawl', ...args, '--data-dir', dataDir])
    expect(r.code).toBe(2)
    expect(r.stdout).toBe('')
    expect(r.stderr.trimEnd().split('\n')).toHaveLength(1)
    expect(r.stderr).toStartWith('trawl: ')
    expect(await recordedAnything(dataDir)).toBe(false)
  })
})
