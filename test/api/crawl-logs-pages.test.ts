/**
 * The crawl log of a run whose pages are page records (decision 101): its crawl_logs rows and
 * the ok entries its visit rows stand for are one log to every read (list, filters, pages,
 * metrics, latency), as if all were rows.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { LOG_STEPS, type LogEntry } from '../../src/store/crawl-logs'
import { job, qs, testApi, type TestApi } from '../helpers/api'
import { logPageRecords, type LoggedLink } from '../helpers/log-pages'

let api: TestApi
beforeAll(() => {
  api = testApi()
})
afterAll(() => api.close())

const MIN = 60_000
const HOUR = 60 * MIN
const BASE = Date.UTC(2026, 0, 4, 23, 40, 0)
const HOSTS = ['a.example', 'b.example', 'c.example']
const PAGE_STEPS = ['fetch', 'parse', 'store', 'discover'] as const

/** An entry as the test expects it, with what orders it: its time, then pages' entries before rows, then the later written. */
type Model = Omit<LogEntry, 'run_seq'> & { id?: string; order: [number, number, number] }
type Run = { id: string; job_id: string; seq: number; entries: Model[]; pages: number; rows: number }

async function newRun(): Promise<Run> {
  const j = (await api.post('/v1/jobs', job())).body
  const run = (await api.post(`/v1/jobs/${j.id}/runs`)).body
  return { id: run.id, job_id: j.id, seq: await api.runSeq('acme', run.id), entries: [], pages: 0, rows: 0 }
}

/** Records pages i of `ids` as one batch (logPageRecords) and keeps the entries they stand for. */
async function recordPages(run: Run, ids: number[], start: number, slow = new Set<number>()) {
  const urls = ids.map((i) => `https://${HOSTS[i % 3]}/page/${i}`)
  const ls: LoggedLink[] = []
  for (let k = 0; k < urls.length; k += 255) ls.push(...(await api.put('/v1/links', { urls: urls.slice(k, k + 255) })).body.data)
  const records = logPageRecords(ls, ids, start, slow)
  records.forEach((r, k) => {
    const l = ls[k]!
    const seq = run.pages++
    PAGE_STEPS.forEach((step, s) => {
      if (!(r.logged & (1 << s))) return
      // A page not parsed (no parse bit) stored its body right after the fetch.
      const fetchAt = r.fetch_at!
      const parsed = r.parse_ms ?? 0
      const at = s === 0 ? fetchAt : s === 1 ? Math.round(fetchAt + parsed) : s === 2 ? Math.round(fetchAt + parsed + r.store_ms!) : r.visited_at
      const m: Model = { url: l.url, url_hash: l.hash, host: l.host.domain, step, status: 'ok', occurred_at: at, order: [at, 1, seq * 4 + s] }
      if (s === 1) m.pipeline_id = r.pipeline_id!
      if (s === 0) m.http_status = r.status!
      if (s < 3) m.latency_ms = [r.fetch_ms, r.parse_ms, r.store_ms][s]!
      m.depth = r.depth
      if (r.parent) m.parent_url_hash = r.parent
      run.entries.push(m)
    })
  })
  await api.recordPages(run.seq, records)
}

/** Rows of the log: every step and status, some at the same instants as pages' entries. */
async function writeRows(run: Run, n: number, start: number, spacing: number) {
  const written: LogEntry[] = []
  const firstRow = run.rows
  for (let j = 0; j < n; j++) {
    const i = run.rows
    const step = LOG_STEPS[i % 7]!
    const status = i % 10 === 3 ? 'error' : i % 10 === 7 ? 'skipped' : i % 6 === 0 ? 'retried' : 'ok'
    const host = HOSTS[i % 3]!
    const e: LogEntry = { run_seq: run.seq, url: `https://${host}/row/${i}`, url_hash: (i.toString(16) + 'e'.repeat(32)).slice(0, 32), host, step, status, occurred_at: start + j * spacing }
    if (status === 'error') e.error_reason = i % 20 === 3 ? 'timeout' : 'http_status'
    if (status === 'skipped') e.error_reason = 'robots_disallowed'
    if (step === 'parse' || step === 'extract') e.pipeline_id = i % 3 === 0 ? 'main' : 'alt'
    if (step === 'fetch') e.http_status = status === 'error' ? 503 : 200
    if (step !== 'discover' && step !== 'schedule') e.latency_ms = (i * 31) % 700
    e.depth = i % 4
    written.push(e)
    run.rows++
  }
  const ids = await api.writeLogs(written)
  written.forEach((e, k) => {
    const { run_seq: _, ...rest } = e
    run.entries.push({ ...rest, order: [e.occurred_at, 0, firstRow + k], id: ids[k]! })
  })
}

const newestFirst = (ms: Model[]) => [...ms].sort((a, b) => b.order[0] - a.order[0] || b.order[1] - a.order[1] || b.order[2] - a.order[2])
/** What the list shows of an entry; a row's id is its own, a page entry's is checked apart. */
const shown = (m: Model) => {
  const { order: _, occurred_at, ...rest } = m
  return { ...rest, occurred_at: new Date(occurred_at).toISOString() }
}

async function walk(path: string, perPage: number, during?: () => Promise<void>) {
  const seen: any[] = []
  let cursor: string | null = null
  do {
    const r = await api.get(`${path}${path.includes('?') ? '&' : '?'}per_page=${perPage}${cursor ? `&page=${cursor}` : ''}`)
    expect(r.status).toBe(200)
    expect(r.body.data.length).toBeLessThanOrEqual(perPage)
    seen.push(...r.body.data)
    cursor = r.body.next_page
    await during?.()
  } while (cursor)
  return seen
}
const withoutRunIds = (e: any) => {
  const { run_id: _, job_id: __, ...rest } = e
  if (!rest.id.includes('-8000-8')) return rest
  const { id: ___, ...page } = rest
  return page
}

let main: Run
beforeAll(async () => {
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
    const expected = newestFirst(main.entries).map(shown)
    expect(expected.length).toBeGreaterThan(800)
    for (const perPage of [1, 7, 20, 100]) {
      const seen = await walk(`/v1/runs/${main.id}/logs`, perPage)
      expect(seen.map(withoutRunIds)).toEqual(expected)
      expect(new Set(seen.map((e) => e.id)).size).toBe(seen.length)
      expect(seen.every((e) => e.run_id === main.id && e.job_id === main.job_id)).toBe(true)
    }
  })

  const iso = (ms: number) => new Date(ms).toISOString()
  test.each([
    ['hosts, one', [['hosts', 'b.example']], (m: Model) => m.host === 'b.example'],
    [
      'hosts, several, as spelled otherwise',
      [
        ['hosts', 'A.example'],
        ['hosts', 'c.example.'],
      ],
      (m: Model) => m.host !== 'b.example',
    ],
    ['steps, a page step', [['steps', 'fetch']], (m: Model) => m.step === 'fetch'],
    [
      'steps, two of a page',
      [
        ['steps', 'parse'],
        ['steps', 'discover'],
      ],
      (m: Model) => m.step === 'parse' || m.step === 'discover',
    ],
    ['steps, none of a page', [['steps', 'robots']], (m: Model) => m.step === 'robots'],
    ['statuses, ok', [['statuses', 'ok']], (m: Model) => m.status === 'ok'],
    ['statuses, error', [['statuses', 'error']], (m: Model) => m.status === 'error'],
    [
      'statuses, ok and retried',
      [
        ['statuses', 'ok'],
        ['statuses', 'retried'],
      ],
      (m: Model) => m.status === 'ok' || m.status === 'retried',
    ],
    ['error_reasons', [['error_reasons', 'timeout']], (m: Model) => m.error_reason === 'timeout'],
    ['pipeline_ids', [['pipeline_ids', 'main']], (m: Model) => m.pipeline_id === 'main'],
    ['occurred_after', [['occurred_after', iso(BASE + 5_000)]], (m: Model) => m.occurred_at > BASE + 5_000],
    ['occurred_before', [['occurred_before', iso(BASE + 3_000)]], (m: Model) => m.occurred_at < BASE + 3_000],
    [
      'a range',
      [
        ['occurred_after', iso(BASE + 4_321)],
        ['occurred_before', iso(BASE + 6_000)],
      ],
      (m: Model) => m.occurred_at > BASE + 4_321 && m.occurred_at < BASE + 6_000,
    ],
    [
      'filters combine',
      [
        ['hosts', 'a.example'],
        ['steps', 'fetch'],
        ['steps', 'store'],
        ['statuses', 'ok'],
        ['occurred_after', iso(BASE + 1_000)],
      ],
      (m: Model) => m.host === 'a.example' && (m.step === 'fetch' || m.step === 'store') && m.status === 'ok' && m.occurred_at > BASE + 1_000,
    ],
    ['nothing matches', [['pipeline_ids', 'none']], () => false],
  ] as [string, [string, string][], (m: Model) => boolean][])('filter: %s', async (_name, pairs, keep) => {
    const expected = newestFirst(main.entries.filter(keep))
    const seen = await walk(`/v1/runs/${main.id}/logs${qs(pairs)}`, 7)
    expect(seen.map(withoutRunIds)).toEqual(expected.map(shown))
  })

  test('pages recorded mid-walk, newer than the walk, are not on its later pages; none repeats', async () => {
    const run = await newRun()
    await writeRows(run, 40, BASE, 50)
    await recordPages(
      run,
      Array.from({ length: 40 }, (_, i) => 1000 + i),
      BASE,
    )
    const before = newestFirst(run.entries).map(shown)
    let n = 2000
    const seen = await walk(`/v1/runs/${run.id}/logs`, 9, async () => {
      await recordPages(run, [n++], BASE + HOUR)
    })
    expect(seen.map(withoutRunIds)).toEqual(before)
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
    const expected = newestFirst(run.entries).map(shown)
    for (const perPage of [3, 20]) {
      const seen = await walk(`/v1/runs/${run.id}/logs`, perPage)
      expect(seen.map(withoutRunIds)).toEqual(expected)
    }
    const before = BASE - 29_000
    const earlier = newestFirst(run.entries.filter((m) => m.occurred_at < before)).map(shown)
    expect(earlier.filter((m) => !m.id).length).toBeGreaterThan(0)
    expect((await walk(`/v1/runs/${run.id}/logs?occurred_before=${new Date(before).toISOString()}`, 4)).map(withoutRunIds)).toEqual(earlier)
  })

  test('a cursor of a page entry of another run, or of no entry, is a 422 on page', async () => {
    const other = await newRun()
    await recordPages(other, [5000, 5001], BASE)
    const cursor = (await api.get(`/v1/runs/${other.id}/logs?per_page=1`)).body.next_page
    expect((await api.get(`/v1/runs/${other.id}/logs?page=${cursor}`)).status).toBe(200)
    const r = await api.get(`/v1/runs/${main.id}/logs?page=${cursor}`)
    expect(r.status).toBe(422)
    expect(r.body.fields).toEqual([{ field: 'page', errors: ['is not a cursor of this run'] }])
  })

  // How few visits a deep page reads is the SQLite engine's: test/store/sqlite-crawl-log-reads.test.ts.
})

/** Start of the UTC bucket of `ms`, computed with Date rather than the arithmetic under test. */
function bucketOf(window: string, ms: number): number {
  const d = new Date(ms)
  const midnight = Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate())
  if (window === 'day') return midnight
  if (window === 'hour') return midnight + d.getUTCHours() * HOUR
  return midnight + d.getUTCHours() * HOUR + d.getUTCMinutes() * MIN
}
const WIDTH: Record<string, number> = { minute: MIN, hour: HOUR, day: 24 * HOUR }
const key = (g: Record<string, unknown>) => JSON.stringify(Object.entries(g).sort())
const canonical = (groups: Record<string, unknown>[]) => [...groups].sort((a, b) => (key(a) < key(b) ? -1 : 1))

function expectedMetrics(entries: Model[], window: string, dims: string[]) {
  const buckets = new Map<number, Map<string, Record<string, unknown>>>()
  for (const m of entries) {
    const b = bucketOf(window, m.occurred_at)
    const values = Object.fromEntries(dims.map((d) => [d, (m as Record<string, unknown>)[d] ?? null]))
    const groups = buckets.get(b) ?? new Map()
    buckets.set(b, groups)
    const g = groups.get(JSON.stringify(values)) ?? { ...values, count: 0 }
    g.count = (g.count as number) + 1
    groups.set(JSON.stringify(values), g)
  }
  return [...buckets]
    .sort((a, b) => a[0] - b[0])
    .map(([b, groups]) => ({
      start: new Date(b).toISOString(),
      end: new Date(b + WIDTH[window]!).toISOString(),
      count: [...groups.values()].reduce((s, g) => s + (g.count as number), 0),
      groups: canonical([...groups.values()]),
    }))
}

describe('metrics', () => {
  test.each([
    ['nothing', [], []],
    ['step and status', [], ['step', 'status']],
    ['host', [], ['host']],
    ['pipeline and HTTP status', [], ['pipeline_id', 'http_status']],
    ['a page step', [['filters[step]', 'store']], ['host']],
    ['a step of rows only', [['filters[step]', 'robots']], ['status']],
    ['an HTTP status', [['filters[http_status]', '301']], ['step']],
    ['a host as spelled otherwise', [['filters[host]', 'B.EXAMPLE']], ['step', 'status']],
    ['ok', [['filters[status]', 'ok']], ['step']],
    ['an error reason', [['filters[error_reason]', 'timeout']], ['host']],
    ['a pipeline', [['filters[pipeline_id]', 'main']], ['step']],
    [
      'a range',
      [
        ['occurred_after', new Date(BASE + 2_500).toISOString()],
        ['occurred_before', new Date(BASE + 7_000).toISOString()],
      ],
      ['step'],
    ],
  ] as [string, [string, string][], string[]][])('%s', async (_name, pairs, dims) => {
    const filters = Object.fromEntries(pairs.filter(([k]) => k.startsWith('filters[')).map(([k, v]) => [k.slice(8, -1), k.includes('http_status') ? Number(v) : v.toLowerCase()]))
    const after = pairs.find(([k]) => k === 'occurred_after')?.[1]
    const before = pairs.find(([k]) => k === 'occurred_before')?.[1]
    const keep = (m: Model) =>
      Object.entries(filters).every(([k, v]) => (m as Record<string, unknown>)[k] === v) &&
      (after === undefined || m.occurred_at > Date.parse(after)) &&
      (before === undefined || m.occurred_at < Date.parse(before))
    for (const window of ['minute', 'hour']) {
      const r = await api.get(`/v1/runs/${main.id}/metrics${qs([['window', window], ...pairs, ...dims.map((d) => ['group_by', d] as [string, string])])}`)
      expect(r.status).toBe(200)
      const expected = expectedMetrics(main.entries.filter(keep), window, dims)
      expect(expected.length).toBeGreaterThan(0)
      expect(r.body.buckets.map((b: any) => ({ ...b, groups: canonical(b.groups) }))).toEqual(expected)
    }
  })
})

const rank = (sorted: number[], p: number) => sorted[Math.ceil((p * sorted.length) / 100) - 1]!

describe('latency', () => {
  test.each([
    ['every step', [], () => true],
    [
      'page steps',
      [
        ['steps', 'parse'],
        ['steps', 'store'],
      ],
      (m: Model) => m.step === 'parse' || m.step === 'store',
    ],
    ['a host', [['hosts', 'c.example']], (m: Model) => m.host === 'c.example'],
    [
      'a range',
      [
        ['occurred_after', new Date(BASE + 1_000).toISOString()],
        ['occurred_before', new Date(BASE + 4_000).toISOString()],
      ],
      (m: Model) => m.occurred_at > BASE + 1_000 && m.occurred_at < BASE + 4_000,
    ],
  ] as [string, [string, string][], (m: Model) => boolean][])('%s', async (_name, pairs, keep) => {
    const r = await api.get(`/v1/runs/${main.id}/latency${qs([['window', 'hour'], ...pairs])}`)
    expect(r.status).toBe(200)
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
            return { step, count: v.length, p50: rank(v, 50), p90: rank(v, 90), p95: rank(v, 95), p99: rank(v, 99), max: v.at(-1) }
          }),
      }))
    expect(expected.length).toBeGreaterThan(0)
    expect(r.body.buckets).toEqual(expected)
  })
})
