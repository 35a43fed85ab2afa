// End-to-end: what a crawl records when the compiled binary is killed with SIGKILL mid-crawl,
// three times, and restarted on the same data dir. Every fetch the fixture saw is in the crawl
// log (the fetch journal, crawl.md), and no page body outlives the run it belongs to (the blob
// sweep and run deletion, configuration.md). Only 127.0.0.1 fixture sites started here are
// contacted.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { cleanup, ensureBinary, startTrawl } from '../helpers/binary'
import { inspectStore } from '../helpers/binary-engine'
import { createRun, finished, OPEN, site, stopSites, visitedUrls, waitFor, WHOLE, type Api } from '../helpers/e2e-crawl'

beforeAll(async () => {
  await ensureBinary()
}, 120_000)
afterAll(async () => {
  stopSites()
  await cleanup()
})

/** Every entry of a run's crawl log (paged through, 100 at a time). */
async function allLogs(api: Api, runId: string, query = ''): Promise<{ url: string; step: string; status: string; error_reason?: string; occurred_at: string }[]> {
  const out = []
  let page: string | null = null
  for (;;) {
    const r = await api.get(`/v1/runs/${runId}/logs?per_page=100${query}${page ? `&page=${encodeURIComponent(page)}` : ''}`)
    expect(r.status).toBe(200)
    out.push(...r.body.data)
    page = r.body.next_page
    if (!page) return out
  }
}

/** The blob keys under the run's prefix, and the blob keys its artifact rows name, sorted (read while serve runs). */
const bodiesAndRows = (dataDir: string, runId: string): Promise<{ bodies: string[]; rows: string[] }> =>
  inspectStore(dataDir, async (store) => ({
    bodies: await store.blobKeys(`runs/${runId}/`),
    rows: (await store.query<{ blob_key: string }>('SELECT blob_key FROM artifacts WHERE run_id = ? ORDER BY blob_key', [runId])).map((r) => r.blob_key),
  }))

describe('three kill -9 mid-crawl', () => {
  test('every fetch the server saw is in the crawl log, and every body stored has its artifact row until the job is deleted', async () => {
    const s = site(600, 25)
    const concurrency = 8
    let trawl = await startTrawl({ env: OPEN })
    const dataDir = trawl.dataDir
    const runId = await createRun(trawl.api, s.url(0), WHOLE(concurrency))
    for (let kill = 0; kill < 3; kill++) {
      const target = s.pageHits() + 80
      await waitFor(`${target} page requests`, () => s.pageHits() >= target, 20_000, 5)
      await trawl.kill9()
      trawl = await startTrawl({ dataDir, env: OPEN })
    }
    const run = await finished(trawl.api, runId, 60_000)
    expect(run.stop_reason).toBe('max_empty_evaluations')
    // Each page visited once, every page.
    expect((await visitedUrls(trawl.api, runId)).sort()).toEqual(s.pages().sort())

    const fetches = await allLogs(trawl.api, runId, '&steps=fetch')
    const logged = new Map<string, number>()
    for (const e of fetches) logged.set(new URL(e.url).pathname, (logged.get(new URL(e.url).pathname) ?? 0) + 1)
    const twice = [...s.hits].filter(([p, c]) => p.startsWith('/p/') && c > 1).map(([p]) => p)
    expect(twice.length).toBeGreaterThan(0) // the kills did catch fetches in flight
    // No fetch the server saw is missing from the log.
    const missing = [...s.hits].filter(([p, c]) => p.startsWith('/p/') && (logged.get(p) ?? 0) < c).map(([p, c]) => `${p}: server ${c}, log ${logged.get(p) ?? 0}`)
    expect(missing).toEqual([])
    // The log holds no more than the server saw, but for a fetch journalled in the moment before
    // a kill that never reached the server: at most the slots in flight at each kill.
    const extra = [...logged].reduce((n, [p, c]) => n + c - (s.hits.get(p) ?? 0), 0)
    expect(extra).toBeLessThanOrEqual(3 * concurrency)
    // Each page fetched twice: one interrupted entry (retried) and one that got it.
    for (const p of twice) {
      const entries = fetches.filter((e) => new URL(e.url).pathname === p)
      expect(
        entries.map((e) => `${e.status} ${e.error_reason ?? ''}`.trim()).sort(),
        `${p}: asked ${s.hits.get(p)} times; logged ${entries.map((e) => `${e.occurred_at} ${e.status}`).join(', ')}`,
      ).toEqual(['ok', 'retried interrupted'])
    }
    // robots.txt likewise: every time it was asked, it is in the log.
    const robots = await allLogs(trawl.api, runId, '&steps=robots')
    expect(robots.length).toBeGreaterThanOrEqual(s.hits.get('/robots.txt') ?? 0)

    // No body without its row: the bodies the kills left uncatalogued were deleted, so the blob store
    // holds exactly the bodies the artifacts name (a page each, raw and parsed; the parsed
    // artifact names the raw body it is made again from, decision 103).
    const { bodies, rows } = await bodiesAndRows(dataDir, runId)
    expect(rows.length).toBe(2 * s.n)
    expect(bodies).toEqual([...new Set(rows)])
    expect(bodies.length).toBe(s.n)
    // Deleting the job takes every body of its run with it.
    const jobId = (await trawl.api.get(`/v1/runs/${runId}`)).body.job_id
    expect((await trawl.api.del(`/v1/jobs/${jobId}`)).status).toBe(204)
    expect(await bodiesAndRows(dataDir, runId)).toEqual({ bodies: [], rows: [] })
    expect((await trawl.stop()).code).toBe(0)
  }, 120_000)
})
