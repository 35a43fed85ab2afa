/**
 * The crawl log of a run whose pages are page records (decision 101) on PostgreSQL, as
 * test/api/crawl-logs-pages.test.ts tests it on SQLite: its crawl_logs rows and the ok entries
 * its visit rows stand for are one log to every read (list, filters, pages, metrics, latency).
 * Both engines get the same writes; each must answer what the model says, and both the same
 * (ids of the entries visit rows stand for included: both give visits the same seqs here).
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { LOG_STEPS, type CrawlLogEntry, type LatencyQuery, type LogEntry, type LogFilter, type LogStep, type MetricDimension, type MetricsQuery } from '../../../src/store/crawl-logs'
import type { PageRecord } from '../../../src/store/page-records'
import { pgCrawlLogStore } from '../../../src/store/postgres/crawl-logs'
import { openPostgres } from '../../../src/store/postgres/open'
import type { Pg } from '../../../src/store/postgres/pg'
import { bothEngines, closeEngines, comparable, links, newRuns, walk, type Engine, type Link } from './crawl-log-engines'

let engines: Engine[]
afterAll(closeEngines)

const MIN = 60_000
const HOUR = 60 * MIN
const BASE = Date.UTC(2026, 0, 4, 23, 40, 0)
const HOSTS = ['a.example', 'b.example', 'c.example']
const PAGE_STEPS = ['fetch', 'parse', 'store', 'discover'] as const

/** An entry as the test expects it, with what orders it: its time, then pages' entries before rows, then the later written. */
type Model = Omit<LogEntry, 'run_seq'> & { ids?: string[]; order: [number, number, number] }
type Run = { id: string; seqs: number[]; entries: Model[]; pages: number; rows: number }

async function newRun(): Promise<Run> {
  const runs = await newRuns(engines)
  return { id: runs[0]!.id, seqs: runs.map((r) => r.seq), entries: [], pages: 0, rows: 0 }
}

/**
 * Records pages i of `ids` (one batch, visited in that order from `start`) on both engines:
 * their times, bits, hosts and pipelines all vary with i, and their entries overlap in time
 * with other pages'. A page of `slow` was fetched 30 s before `start`.
 */
async function recordPages(run: Run, ids: number[], start: number, slow = new Set<number>()) {
  const urls = ids.map((i) => `https://${HOSTS[i % 3]}/page/${i}`)
  let ls: Link[] = []
  for (const e of engines) ls = await links(e, urls)
  const records: PageRecord[] = []
  let visitedAt = start
  ids.forEach((i, k) => {
    const l = ls[k]!
    const logged = [15, 15, 9, 1, 15, 11, 13, 15][i % 8]!
    const fetchAt = slow.has(i) ? start - 30_000 : start + k * 40 + (i % 7) * 13
    const parseMs = ((i * 17) % 50) + (i % 4) * 0.25
    const storeMs = ((i * 29) % 30) + (i % 2) * 0.5
    // Never back within a batch (the engine dates a record when it joins the batch).
    visitedAt = Math.max(visitedAt, fetchAt + Math.ceil(parseMs + storeMs) + (i % 5) * 60)
    const r: PageRecord = {
      hash: l.hash,
      host_hash: l.host.hash,
      depth: i % 4,
      parent: i % 5 === 0 ? null : ls[Math.max(0, k - 1)]!.hash,
      status: logged === 1 ? 301 : 200,
      visited_at: visitedAt,
      children: null,
      logged,
      fetch_at: fetchAt,
      fetch_ms: 100 + ((i * 7919) % 400) + (i % 3) * 0.25,
      parse_ms: logged & 2 ? parseMs : null,
      store_ms: logged & 4 ? storeMs : null,
      pipeline_id: logged & 2 ? (i % 3 === 0 ? 'main' : 'alt') : null,
    }
    records.push(r)
    const seq = run.pages++
    PAGE_STEPS.forEach((step, s) => {
      if (!(logged & (1 << s))) return
      const parsed = r.parse_ms ?? 0
      const at = s === 0 ? fetchAt : s === 1 ? Math.round(fetchAt + parsed) : s === 2 ? Math.round(fetchAt + parsed + storeMs) : visitedAt
      const m: Model = { url: l.url, url_hash: l.hash, host: l.host.domain, step, status: 'ok', occurred_at: at, order: [at, 1, seq * 4 + s] }
      if (s === 1) m.pipeline_id = r.pipeline_id!
      if (s === 0) m.http_status = r.status!
      if (s < 3) m.latency_ms = [r.fetch_ms, r.parse_ms, r.store_ms][s]!
      m.depth = r.depth
      if (r.parent) m.parent_url_hash = r.parent
      run.entries.push(m)
    })
  })
  for (const [k, e] of engines.entries()) await e.recordPages(run.seqs[k]!, records)
}

/** Rows of the log: every step and status, some at the same instants as pages' entries. */
async function writeRows(run: Run, n: number, start: number, spacing: number) {
  const entries: Omit<LogEntry, 'run_seq'>[] = []
  for (let j = 0; j < n; j++) {
    const i = run.rows++
    const step = LOG_STEPS[i % 7]!
    const status = i % 10 === 3 ? 'error' : i % 10 === 7 ? 'skipped' : i % 6 === 0 ? 'retried' : 'ok'
    const host = HOSTS[i % 3]!
    const e: Omit<LogEntry, 'run_seq'> = { url: `https://${host}/row/${i}`, url_hash: (i.toString(16) + 'e'.repeat(32)).slice(0, 32), host, step, status, occurred_at: start + j * spacing }
    if (status === 'error') e.error_reason = i % 20 === 3 ? 'timeout' : 'http_status'
    if (status === 'skipped') e.error_reason = 'robots_disallowed'
    if (step === 'parse' || step === 'extract') e.pipeline_id = i % 3 === 0 ? 'main' : 'alt'
    if (step === 'fetch') e.http_status = status === 'error' ? 503 : 200
    if (step !== 'discover' && step !== 'schedule') e.latency_ms = (i * 31) % 700
    e.depth = i % 4
    entries.push(e)
  }
  const ids: string[][] = []
  for (const [k, e] of engines.entries()) ids.push(await e.writeLogs(entries.map((x) => ({ ...x, run_seq: run.seqs[k]! }))))
  entries.forEach((e, j) => run.entries.push({ ...e, order: [e.occurred_at, 0, run.rows - n + j], ids: ids.map((x) => x[j]!) }))
}

const newestFirst = (ms: Model[]) => [...ms].sort((a, b) => b.order[0] - a.order[0] || b.order[1] - a.order[1] || b.order[2] - a.order[2])
/** What the list shows of an entry on engine k; a page entry's id is checked apart. */
const shown = (m: Model, k: number) => {
  const { order: _, occurred_at, ids, ...rest } = m
  return { ...(ids ? { id: ids[k]! } : {}), ...rest, occurred_at: new Date(occurred_at).toISOString() }
}
const withoutRunIds = (e: CrawlLogEntry) => {
  const { run_id: _, job_id: __, ...rest } = e
  if (!rest.id.includes('-8000-8')) return rest
  const { id: ___, ...page } = rest
  return page
}

/** Walks the run's log on both engines: each sees `expected`, each entry once; both the same entries (page ids too) and keys. */
async function expectWalk(run: Run, f: LogFilter, perPage: number, expected: Model[]) {
  const walks = []
  for (const [k, e] of engines.entries()) {
    const w = await walk((after) => e.logs.list('acme', run.id, f, after, perPage))
    expect(w.rows.map(withoutRunIds)).toEqual(expected.map((m) => shown(m, k)))
    expect(new Set(w.rows.map((x) => x.id)).size).toBe(w.rows.length)
    expect(w.rows.every((x) => x.run_id === run.id)).toBe(true)
    walks.push({ rows: w.rows.map(comparable), keys: w.keys })
  }
  expect(walks[1]).toEqual(walks[0]!)
}

let main: Run
beforeAll(async () => {
  engines = await bothEngines()
  main = await newRun()
  await writeRows(main, 120, BASE - 5_000, 97)
  await recordPages(
    main,
    Array.from({ length: 200 }, (_, i) => i),
    BASE,
  )
  // Another execution later, on a clock set back 3 s: visit times go back once.
  await recordPages(
    main,
    Array.from({ length: 60 }, (_, i) => 200 + i),
    BASE + 200 * 40 - 3_000,
  )
  await writeRows(main, 130, BASE + 2_000, 61)
})

describe('the list', () => {
  test('pages’ entries and rows interleave by time, newest first, in every page size: each once', async () => {
    const expected = newestFirst(main.entries)
    expect(expected.length).toBeGreaterThan(800)
    for (const perPage of [1, 7, 20, 100]) await expectWalk(main, {}, perPage, expected)
  }, 120_000)

  const iso = (ms: number) => new Date(ms).toISOString()
  test.each([
    ['hosts, one', { hosts: ['b.example'] }, (m: Model) => m.host === 'b.example'],
    ['hosts, several, as spelled otherwise', { hosts: ['A.example', 'c.example.'] }, (m: Model) => m.host !== 'b.example'],
    ['steps, a page step', { steps: ['fetch'] }, (m: Model) => m.step === 'fetch'],
    ['steps, two of a page', { steps: ['parse', 'discover'] }, (m: Model) => m.step === 'parse' || m.step === 'discover'],
    ['steps, none of a page', { steps: ['robots'] }, (m: Model) => m.step === 'robots'],
    ['statuses, ok', { statuses: ['ok'] }, (m: Model) => m.status === 'ok'],
    ['statuses, error', { statuses: ['error'] }, (m: Model) => m.status === 'error'],
    ['statuses, ok and retried', { statuses: ['ok', 'retried'] }, (m: Model) => m.status === 'ok' || m.status === 'retried'],
    ['error_reasons', { error_reasons: ['timeout'] }, (m: Model) => m.error_reason === 'timeout'],
    ['pipeline_ids', { pipeline_ids: ['main'] }, (m: Model) => m.pipeline_id === 'main'],
    ['occurred_after', { occurred_after: iso(BASE + 5_000) }, (m: Model) => m.occurred_at > BASE + 5_000],
    ['occurred_before', { occurred_before: iso(BASE + 3_000) }, (m: Model) => m.occurred_at < BASE + 3_000],
    ['a range', { occurred_after: iso(BASE + 4_321), occurred_before: iso(BASE + 6_000) }, (m: Model) => m.occurred_at > BASE + 4_321 && m.occurred_at < BASE + 6_000],
    [
      'filters combine',
      { hosts: ['a.example'], steps: ['fetch', 'store'], statuses: ['ok'], occurred_after: iso(BASE + 1_000) },
      (m: Model) => m.host === 'a.example' && (m.step === 'fetch' || m.step === 'store') && m.status === 'ok' && m.occurred_at > BASE + 1_000,
    ],
    ['nothing matches', { pipeline_ids: ['none'] }, () => false],
  ] as [string, LogFilter, (m: Model) => boolean][])('filter: %s', async (_name, f, keep) => {
    await expectWalk(main, f, 7, newestFirst(main.entries.filter(keep)))
  })

  test('pages recorded mid-walk, newer than the walk, are not on its later pages; none repeats', async () => {
    const run = await newRun()
    await writeRows(run, 40, BASE, 50)
    await recordPages(
      run,
      Array.from({ length: 40 }, (_, i) => 1000 + i),
      BASE,
    )
    const before = newestFirst(run.entries)
    let n = 2000
    const cursors: (number | undefined)[] = engines.map(() => undefined)
    const seen: CrawlLogEntry[][] = engines.map(() => [])
    for (;;) {
      const pages = []
      for (const [k, e] of engines.entries()) pages.push((await e.logs.list('acme', run.id, {}, cursors[k], 9))!)
      pages.forEach((p, k) => {
        seen[k]!.push(...p.data)
        cursors[k] = p.next ?? undefined
      })
      if (pages[0]!.next === null) break
      await recordPages(run, [n++], BASE + HOUR)
    }
    engines.forEach((_, k) => expect(seen[k]!.map(withoutRunIds)).toEqual(before.map((m) => shown(m, k))))
    expect(seen[1]!.map(comparable)).toEqual(seen[0]!.map(comparable))
  })

  test('a page whose entries precede its record by far is still found where its times put it', async () => {
    const run = await newRun()
    await recordPages(
      run,
      Array.from({ length: 500 }, (_, i) => 3000 + i),
      BASE,
      new Set([3499, 3250]),
    )
    await writeRows(run, 60, BASE - 40_000, 700)
    for (const perPage of [3, 20]) await expectWalk(run, {}, perPage, newestFirst(run.entries))
    const before = BASE - 29_000
    const earlier = newestFirst(run.entries.filter((m) => m.occurred_at < before))
    expect(earlier.filter((m) => !m.ids).length).toBeGreaterThan(0)
    await expectWalk(run, { occurred_before: new Date(before).toISOString() }, 4, earlier)
  }, 60_000)

  test('a cursor of a page entry of another run, or of an entry it does not stand for, is a validation error on page', async () => {
    const other = await newRun()
    await recordPages(other, [5002, 5003], BASE)
    for (const e of engines) {
      const first = (await e.logs.list('acme', other.id, {}, undefined, 1))!
      expect(first.next).toBeGreaterThan(2 ** 50)
      expect((await e.logs.list('acme', other.id, {}, first.next!, 1))!.data).toHaveLength(1)
      await expect(e.logs.list('acme', main.id, {}, first.next!, 1)).rejects.toThrow('is not a cursor of this run')
      // Page 5003 stands for its fetch entry only (logged 1): its store key is no entry.
      const [v] = await e.exec<{ seq: number }>('SELECT max(seq) AS seq FROM visits')
      await expect(e.logs.list('acme', other.id, {}, 2 ** 50 + v!.seq * 4 + 2, 1)).rejects.toThrow('is not a cursor of this run')
    }
  })
})

describe('reads', () => {
  test('a deep page reads the visits about its own time, not the run’s newer ones', async () => {
    const run = await newRun()
    await recordPages(
      run,
      Array.from({ length: 3000 }, (_, i) => 10_000 + i),
      BASE,
    )
    // The PostgreSQL engine's list over a client that counts the visit rows its walks read.
    const url = (await engines[1]!.exec<{ url: string }>("SELECT 'postgres://trawl@127.0.0.1:' || current_setting('port') || '/' || current_database() AS url"))[0]!.url
    const sql = await openPostgres(url)
    let read = 0
    const counted = (tx: Pg): Pg =>
      new Proxy(tx, {
        get: (t, k) =>
          k === 'unsafe'
            ? async (text: string, params: unknown[]) => {
                const rows = await t.unsafe(text, params)
                if (text.includes('FROM visits v WHERE') && text.includes('ORDER BY v.run_seq DESC, v.seq DESC')) read += rows.length
                return rows
              }
            : Reflect.get(t, k),
      })
    const logs = pgCrawlLogStore(new Proxy(sql, { get: (t, k) => (k === 'begin' ? (opts: string, fn: (tx: Pg) => unknown) => t.begin(opts, (tx) => fn(counted(tx))) : Reflect.get(t, k)) }))
    try {
      let after: number | undefined
      const pages: number[] = []
      for (let p = 0; p < 300; p++) {
        read = 0
        const page = (await logs.list('acme', run.id, {}, after, 20))!
        after = page.next ?? undefined
        pages.push(read)
      }
      // About 20 entries of pages that each stand for up to four: a few dozen visits a page,
      // never the thousands recorded after it.
      expect(Math.max(...pages)).toBeLessThan(400)
    } finally {
      await sql.close()
    }
  }, 60_000)
})

/** Start of the UTC bucket of `ms`, computed with Date rather than the arithmetic under test. */
const bucketOf = (window: string, ms: number) => ms - (ms % (window === 'minute' ? MIN : HOUR))
const key = (g: Record<string, unknown>) => JSON.stringify(Object.entries(g).sort())
const canonical = (groups: Record<string, unknown>[]) => [...groups].sort((a, b) => (key(a) < key(b) ? -1 : 1))

describe('metrics', () => {
  test.each([
    ['nothing', {}, []],
    ['step and status', {}, ['step', 'status']],
    ['host', {}, ['host']],
    ['pipeline and HTTP status', {}, ['pipeline_id', 'http_status']],
    ['a page step', { filters: { step: 'store' } }, ['host']],
    ['a step of rows only', { filters: { step: 'robots' } }, ['status']],
    ['an HTTP status', { filters: { http_status: '301' } }, ['step']],
    ['a host as spelled otherwise', { filters: { host: 'B.EXAMPLE' } }, ['step', 'status']],
    ['ok', { filters: { status: 'ok' } }, ['step']],
    ['an error reason', { filters: { error_reason: 'timeout' } }, ['host']],
    ['a pipeline', { filters: { pipeline_id: 'main' } }, ['step']],
    ['a range', { occurred_after: new Date(BASE + 2_500).toISOString(), occurred_before: new Date(BASE + 7_000).toISOString() }, ['step']],
  ] as [string, Omit<MetricsQuery, 'window'>, MetricDimension[]][])('%s', async (_name, q, dims) => {
    const filters = Object.fromEntries(Object.entries(q.filters ?? {}).map(([k, v]) => [k, k === 'http_status' ? Number(v) : v!.toLowerCase()]))
    const keep = (m: Model) =>
      Object.entries(filters).every(([k, v]) => (m as Record<string, unknown>)[k] === v) &&
      (q.occurred_after === undefined || m.occurred_at > Date.parse(q.occurred_after)) &&
      (q.occurred_before === undefined || m.occurred_at < Date.parse(q.occurred_before))
    for (const window of ['minute', 'hour'] as const) {
      const answers = []
      for (const e of engines) answers.push((await e.logs.metrics('acme', main.id, { ...q, window, group_by: dims }))!)
      expect(answers[1]).toEqual(answers[0]!)
      const buckets = new Map<number, Map<string, Record<string, unknown>>>()
      for (const m of main.entries.filter(keep)) {
        const b = bucketOf(window, m.occurred_at)
        const values = Object.fromEntries(dims.map((d) => [d, (m as Record<string, unknown>)[d] ?? null]))
        const groups = buckets.get(b) ?? new Map()
        buckets.set(b, groups)
        const g = groups.get(JSON.stringify(values)) ?? { ...values, count: 0 }
        g.count = (g.count as number) + 1
        groups.set(JSON.stringify(values), g)
      }
      const expected = [...buckets]
        .sort((a, b) => a[0] - b[0])
        .map(([b, groups]) => ({
          start: new Date(b).toISOString(),
          end: new Date(b + (window === 'minute' ? MIN : HOUR)).toISOString(),
          count: [...groups.values()].reduce((s, g) => s + (g.count as number), 0),
          groups: canonical([...groups.values()]),
        }))
      expect(expected.length).toBeGreaterThan(0)
      expect(answers[0]!.buckets.map((b) => ({ ...b, groups: canonical(b.groups) }))).toEqual(expected)
    }
  })
})

const rank = (sorted: number[], p: number) => sorted[Math.ceil((p * sorted.length) / 100) - 1]!

describe('latency', () => {
  test.each([
    ['every step', {}, () => true],
    ['page steps', { steps: ['parse', 'store'] }, (m: Model) => m.step === 'parse' || m.step === 'store'],
    ['a host', { hosts: ['c.example'] }, (m: Model) => m.host === 'c.example'],
    [
      'a range',
      { occurred_after: new Date(BASE + 1_000).toISOString(), occurred_before: new Date(BASE + 4_000).toISOString() },
      (m: Model) => m.occurred_at > BASE + 1_000 && m.occurred_at < BASE + 4_000,
    ],
  ] as [string, Omit<LatencyQuery, 'window'>, (m: Model) => boolean][])('%s', async (_name, q, keep) => {
    const answers = []
    for (const e of engines) answers.push((await e.logs.latency('acme', main.id, { ...q, window: 'hour' }))!)
    expect(answers[1]).toEqual(answers[0]!)
    const groups = new Map<number, Map<string, number[]>>()
    for (const m of main.entries.filter(keep)) {
      if (m.latency_ms === undefined) continue
      const b = bucketOf('hour', m.occurred_at)
      const steps = groups.get(b) ?? new Map<string, number[]>()
      groups.set(b, steps)
      steps.set(m.step, [...(steps.get(m.step) ?? []), m.latency_ms])
    }
    const expected = [...groups]
      .sort((a, b) => a[0] - b[0])
      .map(([b, steps]) => ({
        start: new Date(b).toISOString(),
        end: new Date(b + HOUR).toISOString(),
        steps: [...steps]
          .sort((x, y) => (x[0] < y[0] ? -1 : 1))
          .map(([step, values]) => {
            const v = [...values].sort((x, y) => x - y)
            return { step: step as LogStep, count: v.length, p50: rank(v, 50), p90: rank(v, 90), p95: rank(v, 95), p99: rank(v, 99), max: v.at(-1)! }
          }),
      }))
    expect(expected.length).toBeGreaterThan(0)
    expect(answers[0]!.buckets).toEqual(expected)
  })
})
