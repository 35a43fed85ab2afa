/**
 * The plans of the crawl log and run graph reads on PostgreSQL, as test/store/crawl-logs.test.ts
 * and test/api/run-graph.test.ts check SQLite's: over a database of many runs (one with many
 * rows, the others few, their rows interleaved), every statement a read sends reaches the run's
 * rows by an index, never by a scan of the table, and the selective filters drive their own
 * indexes. PostgreSQL picks each plan by the tables' statistics (analyzed here).
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { hostHash, linkHash } from '../../../src/core/url'
import type { LogEntry, LogFilter } from '../../../src/store/crawl-logs'
import { pgCrawlLogStore, pgRunGraphStore, recordPages, writeLogs } from '../../../src/store/postgres/crawl-logs'
import { openPostgres } from '../../../src/store/postgres/open'
import type { Pg } from '../../../src/store/postgres/pg'
import { freshDatabase } from '../../helpers/postgres'
import { pageRecord } from '../../helpers/page-record'

let sql: Pg
/** The statements the reads sent (those built at run time: every list, walk and aggregate). */
let sent: { text: string; params: unknown[] }[] = []
const capturing = (db: Pg): Pg =>
  new Proxy(db, {
    get: (t, k) => {
      if (k === 'unsafe')
        return (text: string, params: unknown[]) => {
          sent.push({ text, params })
          return t.unsafe(text, params)
        }
      if (k === 'begin') return (opts: string, fn: (tx: Pg) => unknown) => t.begin(opts, (tx) => fn(capturing(tx)))
      return Reflect.get(t, k)
    },
  })

const BASE = Date.UTC(2026, 0, 4, 23, 0, 0)
const RUNS = 40
const BIG = 1
const SMALL = 7
const url = (run: number, i: number) => `https://h${i % 3}.example/${run}/${i}`

beforeAll(async () => {
  sql = await openPostgres(freshDatabase())
  await sql`INSERT INTO jobs (tenant, id, name, config, created_at, updated_at) VALUES ('acme', 'job', 'docs', '{}', 0, 0)`
  for (let r = 1; r <= RUNS; r++) await sql`INSERT INTO runs (tenant, id, job_seq, job_id, status, config, created_at) VALUES ('acme', ${`run-${r}`}, 1, 'job', 'running', '{}', 0)`
  for (let h = 0; h < 3; h++) await sql`INSERT INTO hosts (tenant, hash, domain, created_at) VALUES ('acme', ${hostHash(`h${h}.example`)}, ${`h${h}.example`}, 0)`
  // Batches of every run in turn: the big run 100 pages a batch, the others 20 (the big run's
  // rows are a tenth of the tables').
  for (let b = 0; b < 10; b++) {
    for (let run = 1; run <= RUNS; run++) {
      const n = run === BIG ? 100 : 20
      const at = BASE + b * 60_000
      const ids = Array.from({ length: n }, (_, k) => b * n + k)
      await sql.begin(async (tx) => {
        const urls = ids.map((i) => url(run, i))
        await tx`INSERT INTO links (tenant, hash, url, host_seq, created_at)
          SELECT 'acme', u.hash, u.url, h.seq, 0 FROM unnest(${tx.array(urls.map(linkHash), 'TEXT')}::text[], ${tx.array(urls, 'TEXT')}::text[]) AS u (hash, url)
          JOIN hosts h ON h.tenant = 'acme' AND h.domain = split_part(split_part(u.url, '/', 3), ':', 1)`
        const pages = ids.map((i, k) =>
          pageRecord(linkHash(url(run, i)), hostHash(`h${i % 3}.example`), {
            visited_at: at + k * 10,
            logged: 15,
            fetch_at: at + k * 10 - 5,
            fetch_ms: 3,
            parse_ms: 1,
            store_ms: 1,
            children: k ? [linkHash(url(run, ids[k - 1]!))] : null,
          }),
        )
        await recordPages(tx, run, pages, 'acme')
        const entries: LogEntry[] = ids.map((i, k) => ({
          run_seq: run,
          url: url(run, i),
          url_hash: linkHash(url(run, i)),
          host: `h${i % 3}.example`,
          step: i % 2 ? 'robots' : 'schedule',
          status: i % 50 ? 'ok' : 'error',
          ...(i % 50 ? {} : { error_reason: 'timeout' as const }),
          latency_ms: 2,
          occurred_at: at + k * 10 + 3,
        }))
        await writeLogs(tx, entries)
      })
    }
  }
  await sql`ANALYZE`
}, 60_000)
afterAll(async () => {
  await sql.close()
})

/** The plan of each statement the reads sent, as EXPLAIN lines (with the values they were sent with). */
async function plans(read: () => Promise<unknown>): Promise<string[]> {
  sent = []
  await read()
  const out: string[] = []
  for (const s of sent) out.push((await sql.unsafe(`EXPLAIN ${s.text}`, s.params)).map((r: { 'QUERY PLAN': string }) => r['QUERY PLAN']).join('\n'))
  return out
}
// runs and hosts hold a few rows here, which a scan reads at once; in use their unique keys serve.
const SCAN = /Seq Scan on (visits|crawl_logs|links)\b/

describe.each([
  ['the big run', BIG],
  ['a small run', SMALL],
] as const)('%s', (_name, run) => {
  const logs = () => pgCrawlLogStore(capturing(sql))
  const graph = () => pgRunGraphStore(capturing(sql))
  const id = `run-${run}`

  test.each([
    ['the first page', {}],
    ['a host', { hosts: ['h1.example'] }],
    ['steps and statuses', { steps: ['fetch', 'robots'], statuses: ['ok'] }],
    ['a time range', { occurred_after: new Date(BASE + 3 * 60_000).toISOString(), occurred_before: new Date(BASE + 6 * 60_000).toISOString() }],
  ] as [string, LogFilter][])('the list, %s, and the pages after it: by index', async (_what, f) => {
    const store = logs()
    const first = (await store.list('acme', id, f, undefined, 20))!
    expect(first.next).not.toBeNull()
    for (const p of await plans(() => store.list('acme', id, f, first.next!, 20))) expect(p).not.toMatch(SCAN)
  })

  test('the list by error reason or status without ok: the partial indexes', async () => {
    const store = logs()
    const rowsOf = async (f: LogFilter) => (await plans(() => store.list('acme', id, f, undefined, 20))).filter((p) => p.includes('on crawl_logs t'))
    expect(await rowsOf({ error_reasons: ['timeout'] })).toEqual([expect.stringMatching(/crawl_logs_errors/)])
    expect(await rowsOf({ statuses: ['error', 'skipped'] })).toEqual([expect.stringMatching(/crawl_logs_not_ok/)])
  })

  test.each([
    ['metrics', (s: ReturnType<typeof pgCrawlLogStore>) => s.metrics('acme', id, { window: 'hour', group_by: ['step', 'host'], occurred_after: new Date(BASE + 30 * 60_000).toISOString() })],
    ['metrics of a host', (s: ReturnType<typeof pgCrawlLogStore>) => s.metrics('acme', id, { window: 'hour', filters: { host: 'h2.example' } })],
    ['metrics of an error reason', (s: ReturnType<typeof pgCrawlLogStore>) => s.metrics('acme', id, { window: 'day', filters: { error_reason: 'timeout' } })],
    ['latency', (s: ReturnType<typeof pgCrawlLogStore>) => s.latency('acme', id, { window: 'day', steps: ['fetch', 'robots'] })],
    ['latency of a range', (s: ReturnType<typeof pgCrawlLogStore>) => s.latency('acme', id, { window: 'day', occurred_before: new Date(BASE + 5 * 60_000).toISOString() })],
  ] as const)('%s: by index', async (_what, read) => {
    const store = logs()
    const sentPlans = await plans(() => read(store))
    expect(sentPlans.length).toBeGreaterThan(0)
    for (const p of sentPlans) expect(p).not.toMatch(SCAN)
  })

  test('visits and edges, filtered or not: by index', async () => {
    const g = graph()
    for (const read of [
      () => g.visits('acme', id, {}, 3, 20),
      () => g.visits('acme', id, { depth: [0], hosts: ['h0.example'] }, undefined, 20),
      () => g.visits('acme', id, { urls: [url(run, 3)] }, undefined, 20),
      () => g.edges('acme', id, {}, undefined, 20),
      () => g.edges('acme', id, { url_hashes: [linkHash(url(run, 3))] }, undefined, 20),
    ]) {
      const sentPlans = await plans(read)
      expect(sentPlans.length).toBeGreaterThan(0)
      for (const p of sentPlans) expect(p).not.toMatch(SCAN)
    }
  })

  if (run === SMALL)
    test('a small run’s visits are walked by visits_by_run', async () => {
      const store = logs()
      const first = (await store.list('acme', id, {}, undefined, 5))!
      const sentPlans = await plans(() => store.list('acme', id, {}, first.next!, 5))
      const walks = sent.filter((x) => x.text.includes('ORDER BY v.run_seq DESC, v.seq DESC')).map((x) => sentPlans[sent.indexOf(x)]!)
      expect(walks.length).toBeGreaterThan(0)
      for (const p of walks) expect(p).toMatch(/visits_by_run/)
    })
})
