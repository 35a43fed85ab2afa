// End-to-end: how `trawl crawl` and `trawl serve` tell a run's ending (docs/crawl.md, "Outcomes"
// and "trawl crawl"). A seed that could not be fetched (refused, no such name, a blocked address)
// is a failed URL with its reason and the outcome failed, and the command exits 1 with the counts
// by reason; a small site crawled to its end exits 0, complete. The flags --include, --exclude,
// --sitemaps, --delay and --same-domain change what is crawled. Only 127.0.0.1 sites started here
// and names under .invalid, which never resolve, are asked for.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { gapFloor } from '../helpers/arrivals'
import { cleanup, ensureBinary, runBinary, startTrawl, tempDir } from '../helpers/binary'
import { inspectStore, onPostgres, recordedAnything, sqliteOnlyTest } from '../helpers/binary-engine'
import { crawlSite, withSite } from '../helpers/crawl-site'
import { createRun, finished } from '../helpers/e2e-crawl'

beforeAll(async () => {
  await ensureBinary()
}, 120_000)

afterAll(async () => {
  await cleanup()
})

/**
 * What the second pass (PostgreSQL, scripts/test.ts) leaves to SQLite's, for time: what the store
 * takes no part in beyond what the other tests here show there: how the command reads its flags,
 * which URLs it keeps, how it names a fetch error.
 */
const storeNeutral = sqliteOnlyTest

const SUMMARY = /^finished: (\w+) after \d+(\.\d+)?s: visited (\d+), failed (\d+), queued (\d+), .+$/m

/** A port nothing listens on: a server is started there and stopped. */
async function closedPort(): Promise<number> {
  const probe = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: () => new Response('') })
  const port = probe.port!
  await probe.stop(true)
  return port
}

/** The run the command left in its data dir, as the runs table holds it. */
const storedRun = (dataDir: string) =>
  inspectStore(dataDir, async (store) => {
    const rows = await store.query<any>('SELECT id, stop_reason, outcome, error_counts, visited, failed, config FROM runs')
    expect(rows).toHaveLength(1)
    return { ...rows[0], error_counts: JSON.parse(rows[0].error_counts), config: JSON.parse(rows[0].config) }
  })

/** The lines after the summary: the outcome, then the failed URLs by reason. */
const tail = (stdout: string) => stdout.slice(stdout.indexOf('\noutcome: ') + 1)

describe('trawl crawl: a seed that could not be fetched exits 1 with its reason', () => {
  test('connection refused: failed 1, outcome failed, the count by reason; the run in the data dir says the same', async () => {
    const dataDir = tempDir()
    const seed = `http://127.0.0.1:${await closedPort()}/`
    const r = await runBinary(['crawl', seed, '--data-dir', dataDir], {}, 20_000)
    expect(r.code, r.stdout + r.stderr).toBe(1)
    const m = SUMMARY.exec(r.stdout)!
    // SPEC's stop reason is what it was; the outcome and the counts tell the truth.
    expect([m[1], m[3], m[4]]).toEqual(['empty_seed', '0', '1'])
    expect(tail(r.stdout)).toBe('outcome: failed (no page could be fetched)\nerrors by reason:\n  connect  1\n')
    expect(await storedRun(dataDir)).toMatchObject({ stop_reason: 'empty_seed', outcome: 'failed', error_counts: { connect: 1 }, visited: 0, failed: 1 })
    // Through the API of a serve on that data dir: the run, its failed URL and the fetch's log entry.
    const trawl = await startTrawl({ dataDir })
    const runs = await trawl.api.get('/v1/runs?outcomes=failed', { tenant: 'local' })
    expect(runs.body.data.map((x: any) => [x.stop_reason, x.outcome, x.error_counts, x.stats.failed])).toEqual([['empty_seed', 'failed', { connect: 1 }, 1]])
    const id = runs.body.data[0].id
    const links = await trawl.api.get(`/v1/runs/${id}/links`, { tenant: 'local' })
    expect(links.body.data.map((l: any) => [l.url, l.status])).toEqual([[seed, null]])
    const logs = await trawl.api.get(`/v1/runs/${id}/logs?steps=fetch`, { tenant: 'local' })
    expect(logs.body.data.map((l: any) => [l.url, l.status, l.error_reason])).toEqual([[seed, 'error', 'connect']])
    await trawl.stop()
  }, 40_000)

  storeNeutral(
    'a name that does not resolve: dns',
    async () => {
      const dataDir = tempDir()
      const r = await runBinary(['crawl', 'http://no-such-seed.invalid/', '--data-dir', dataDir], {}, 20_000)
      expect(r.code, r.stdout + r.stderr).toBe(1)
      expect(SUMMARY.exec(r.stdout)![4]).toBe('1')
      expect(tail(r.stdout)).toBe('outcome: failed (no page could be fetched)\nerrors by reason:\n  dns  1\n')
      expect(await storedRun(dataDir)).toMatchObject({ outcome: 'failed', error_counts: { dns: 1 }, failed: 1 })
    },
    30_000,
  )

  storeNeutral(
    'TRAWL_ALLOW_PRIVATE_NETWORKS=false and a 127.0.0.1 seed: blocked_address, nothing reached',
    () =>
      withSite(crawlSite({ pages: { '/': {} } }), async (site) => {
        const dataDir = tempDir()
        const r = await runBinary(['crawl', site.url('/'), '--data-dir', dataDir], { TRAWL_ALLOW_PRIVATE_NETWORKS: 'false' }, 20_000)
        expect(r.code, r.stdout + r.stderr).toBe(1)
        expect(tail(r.stdout)).toBe('outcome: failed (no page could be fetched)\nerrors by reason:\n  blocked_address  1\n')
        expect(site.requests).toEqual([])
      }),
    30_000,
  )
})

describe('trawl serve: a seed the address guard blocks', () => {
  test(
    'private networks not allowed (the default), seed 127.0.0.1: a failed URL with blocked_address, outcome failed',
    () =>
      withSite(crawlSite({ pages: { '/': {} } }), async (site) => {
        const trawl = await startTrawl()
        const id = await createRun(trawl.api, site.url('/'))
        const run = await finished(trawl.api, id, 15_000)
        expect([run.status, run.outcome, run.error_counts, run.stats.failed, run.stats.visited]).toEqual(['finished', 'failed', { blocked_address: 1 }, 1, 0])
        const logs = await trawl.api.get(`/v1/runs/${id}/logs?steps=fetch`)
        expect(logs.body.data.map((l: any) => [l.url, l.status, l.error_reason])).toEqual([[site.url('/'), 'error', 'blocked_address']])
        const failedRuns = await trawl.api.get('/v1/runs?outcomes=failed')
        expect(failedRuns.body.data.map((x: any) => x.id)).toEqual([id])
        expect(site.requests).toEqual([])
        await trawl.stop()
      }),
    30_000,
  )
})

describe('trawl crawl: a site crawled to its end exits 0', () => {
  test(
    'outcome complete, the 404 counted by status',
    () =>
      withSite(crawlSite({ pages: { '/': { links: ['/a', '/b', '/missing'] }, '/a': { links: ['/b'] }, '/b': {} } }), async (site) => {
        const dataDir = tempDir()
        const r = await runBinary(['crawl', site.url('/'), '--data-dir', dataDir], {}, 20_000)
        expect(r.code, r.stdout + r.stderr).toBe(0)
        const m = SUMMARY.exec(r.stdout)!
        expect([m[1], m[3], m[4]]).toEqual(['max_empty_evaluations', '4', '0'])
        expect(tail(r.stdout)).toBe('outcome: complete (nothing was left to visit)\nerrors by reason:\n  http_404  1\n')
        expect(await storedRun(dataDir)).toMatchObject({ outcome: 'complete', error_counts: { http_404: 1 } })
      }),
    30_000,
  )

  test(
    'a depth limit that cut links: limited, exit 0, and no error lines',
    () =>
      withSite(crawlSite({ pages: { '/': { links: ['/a'] }, '/a': { links: ['/b'] }, '/b': {} } }), async (site) => {
        const r = await runBinary(['crawl', site.url('/'), '--max-depth', '1', '--data-dir', tempDir()], {}, 20_000)
        expect(r.code, r.stdout + r.stderr).toBe(0)
        expect(tail(r.stdout)).toBe('outcome: limited (max_depth kept links out of the crawl)\n')
        expect(site.hits('/b')).toBe(0)
      }),
    30_000,
  )
})

describe('trawl crawl: the scope and politeness flags', () => {
  const docsSite = () =>
    crawlSite({
      pages: {
        '/': { links: ['/docs/a', '/docs/b', '/blog/x', '/docs/private/c'] },
        '/docs/a': { links: ['/docs/a2', '/blog/y'] },
        '/docs/b': {},
        '/docs/a2': {},
        '/docs/private/c': {},
        '/blog/x': {},
        '/blog/y': {},
      },
    })
  const fetched = (site: ReturnType<typeof crawlSite>) =>
    site
      .pageRequests()
      .map((r) => r.path)
      .sort()

  storeNeutral(
    'without flags every page is crawled',
    () =>
      withSite(docsSite(), async (site) => {
        const r = await runBinary(['crawl', site.url('/'), '--data-dir', tempDir()], {}, 20_000)
        expect(r.code, r.stdout + r.stderr).toBe(0)
        expect(fetched(site)).toEqual(['/', '/blog/x', '/blog/y', '/docs/a', '/docs/a2', '/docs/b', '/docs/private/c'])
      }),
    30_000,
  )

  storeNeutral(
    '--include (repeated) keeps the URLs one pattern matches, --exclude (repeated) drops those any matches',
    () =>
      withSite(docsSite(), async (site) => {
        const dataDir = tempDir()
        const r = await runBinary(['crawl', site.url('/'), '--include', '/docs/', '--include', ':\\d+/$', '--exclude', '/private/', '--exclude', '/a2$', '--data-dir', dataDir], {}, 20_000)
        expect(r.code, r.stdout + r.stderr).toBe(0)
        expect(fetched(site)).toEqual(['/', '/docs/a', '/docs/b'])
        expect(SUMMARY.exec(r.stdout)![3]).toBe('3')
        expect((await storedRun(dataDir)).config.scope).toMatchObject({ domains: 'same_host', include: ['/docs/', ':\\d+/$'], exclude: ['/private/', '/a2$'] })
      }),
    30_000,
  )

  test(
    '--sitemaps: a page only the sitemap names is crawled too',
    () =>
      withSite(
        crawlSite({
          pages: { '/': { links: ['/linked'] }, '/linked': {}, '/hidden': {} },
          robots: 'User-agent: *\nAllow: /\n',
          sitemaps: { '/sitemap.xml': { urls: ['http://127.0.0.1:{port}/hidden'] } },
        }),
        async (site) => {
          const without = await runBinary(['crawl', site.url('/'), '--data-dir', tempDir()], {}, 20_000)
          expect(without.code).toBe(0)
          expect(site.hits('/hidden')).toBe(0)
          expect(site.hits('/sitemap.xml')).toBe(0)
          const dataDir = tempDir()
          const r = await runBinary(['crawl', site.url('/'), '--sitemaps', '--data-dir', dataDir], {}, 20_000)
          expect(r.code, r.stdout + r.stderr).toBe(0)
          expect(site.hits('/hidden')).toBe(1)
          expect(site.hits('/sitemap.xml')).toBe(1)
          expect((await storedRun(dataDir)).config.sitemaps).toBe(true)
        },
      ),
    40_000,
  )

  // The two spellings differ only in parsing: on PostgreSQL one shows the delay holds across the run's host queue.
  const delays = [
    ['300ms', '300ms'],
    ['0.3', '300ms'],
  ]
  test.each(onPostgres() ? delays.slice(0, 1) : delays)(
    '--delay %s: requests to the host start at least 300 ms apart',
    (flag, stored) =>
      withSite(crawlSite({ pages: { '/': { links: ['/a', '/b', '/c'] }, '/a': {}, '/b': {}, '/c': {} } }), async (site) => {
        const dataDir = tempDir()
        const r = await runBinary(['crawl', site.url('/'), '--delay', flag, '--data-dir', dataDir], {}, 20_000)
        expect(r.code, r.stdout + r.stderr).toBe(0)
        expect(site.pageRequests()).toHaveLength(4)
        // On arrival (gapFloor says why not 300 ms itself); without the delay they follow within a few ms.
        for (const gap of site.gaps()) expect(gap).toBeGreaterThanOrEqual(gapFloor(300))
        expect((await storedRun(dataDir)).config.politeness.delay).toBe(stored)
      }),
    30_000,
  )

  storeNeutral(
    "--same-domain: the run takes the seed's registrable domain as its scope (subdomains followed: test/crawl/crawl-command.test.ts)",
    () =>
      withSite(crawlSite({ pages: { '/': {} } }), async (site) => {
        const dataDir = tempDir()
        const r = await runBinary(['crawl', site.url('/'), '--same-domain', '--data-dir', dataDir], {}, 20_000)
        expect(r.code, r.stdout + r.stderr).toBe(0)
        expect((await storedRun(dataDir)).config.scope.domains).toBe('same_domain')
      }),
    30_000,
  )

  // Refused before the store is opened, whichever it is.
  storeNeutral.each([
    [['--delay', 'soon'], /^trawl: --delay: must be a duration such as 500ms or 2s, or a number of seconds, got "soon"$/],
    [['--delay', '2h'], /^trawl: --delay: must be at most 1h, got "2h"$/],
    [['--delay', '-1'], /^trawl: .*--delay/],
    [['--include', '('], /^trawl: --include: "\(" is not a valid RE2 regular expression/],
    [['--exclude', 'a(?=b)'], /^trawl: --exclude: "a\(\?=b\)" is not a valid RE2 regular expression/],
    [['--include', '/docs/'], /^trawl: crawl: the seed http:\/\/127\.0\.0\.1:1\/ matches no --include pattern, so nothing would be crawled$/],
    [['--exclude', '127'], /^trawl: crawl: the seed http:\/\/127\.0\.0\.1:1\/ matches an? --exclude pattern, so nothing would be crawled$/],
    [['--same-domain=yes'], /^trawl: .*--same-domain/],
    [['--sitemap'], /^trawl: unknown flag --sitemap for crawl; did you mean --sitemaps\?$/],
  ] as [string[], RegExp][])('bad flags %p exit 2 with one line and create nothing', async (args, line) => {
    const dataDir = tempDir()
    const r = await runBinary(['crawl', 'http://127.0.0.1:1/', ...args, '--data-dir', dataDir])
    expect(r.code).toBe(2)
    expect(r.stdout).toBe('')
    expect(r.stderr.trimEnd().split('\n')).toHaveLength(1)
    expect(r.stderr.trimEnd()).toMatch(line)
    expect(await recordedAnything(dataDir)).toBe(false)
  })
})
