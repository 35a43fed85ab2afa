import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { LOG_STEPS, type LogEntry } from '../../src/store/crawl-logs'
import { job, qs, testApi, type TestApi } from '../helpers/api'

let api: TestApi
beforeAll(() => {
  api = testApi()
})
afterAll(() => api.close())

const MIN = 60_000
const HOUR = 60 * MIN
const DAY = 24 * HOUR
// Sunday 2026-01-04 23:00Z: the entries cross a day and a week boundary (weeks start Monday).
const BASE = Date.UTC(2026, 0, 4, 23, 0, 0)
const HOSTS = ['a.example', 'b.example', 'c.example']

type Model = LogEntry & { id: string; i: number }
type Run = { id: string; job_id: string; seq: number; entries: Model[] }

async function newRun(tenant = 'acme', id?: string): Promise<Run> {
  const j = (await api.post('/v1/jobs', job(), { tenant })).body
  const run = (await api.post(`/v1/jobs/${j.id}/runs`, id ? { id } : undefined, { tenant })).body
  return { id: run.id, job_id: j.id, seq: await api.runSeq(tenant, run.id), entries: [] }
}

const hash = (i: number) => (i.toString(16).padStart(8, '0') + 'f'.repeat(32)).slice(0, 32)

/** Entry i of a fixture run: every field varies with i, and pairs of entries share a time. */
function fixture(run: Run, i: number, occurredAt = BASE + Math.floor(i / 2) * 74_000): LogEntry {
  const step = LOG_STEPS[i % 7]!
  const status = i % 10 === 3 ? 'error' : i % 10 === 7 ? 'skipped' : i % 25 === 0 ? 'retried' : 'ok'
  const host = HOSTS[i % 3]!
  const e: LogEntry = { run_seq: run.seq, url: `https://${host}/p/${i}?q=a,b`, url_hash: hash(i), host, step, status, occurred_at: occurredAt }
  if (status === 'error') {
    e.error_reason = i % 20 === 3 ? 'timeout' : 'http_status'
    e.error_detail = `failure ${i}`
  }
  if (status === 'skipped') e.error_reason = 'robots_disallowed'
  if (step === 'parse' || step === 'extract') e.pipeline_id = i % 3 === 0 ? 'main' : 'alt'
  if (step === 'fetch') e.http_status = e.error_reason === 'http_status' ? 503 : i % 4 === 0 ? 404 : 200
  if (step === 'fetch' || step === 'parse' || step === 'robots') e.latency_ms = ((i * 7919) % 997) + (i % 3) * 0.25
  if (i % 6 !== 0) e.depth = i % 4
  if (i % 5 !== 0) e.parent_url_hash = hash(i - 1)
  return e
}

/** Writes the entries as a crawl batch does, in order, and keeps them with their ids. */
async function write(run: Run, entries: LogEntry[]) {
  const ids = await api.writeLogs(entries)
  entries.forEach((e, k) => run.entries.push({ ...e, id: ids[k]!, i: run.entries.length }))
}

/** The API shape of a model entry, absent fields left out. */
function shape(run: Run, m: Model) {
  const { run_seq: _, i: __, occurred_at, id, ...rest } = m
  return { id, run_id: run.id, job_id: run.job_id, ...rest, occurred_at: new Date(occurred_at).toISOString() }
}
/** Most recent first; entries of one instant in reverse write order. */
const newestFirst = (ms: Model[]) => [...ms].sort((a, b) => b.occurred_at - a.occurred_at || b.i - a.i)

async function walk(path: string, perPage: number, during?: () => Promise<void>) {
  const seen: string[] = []
  let cursor: string | null = null
  let pages = 0
  do {
    const sep = path.includes('?') ? '&' : '?'
    const r = await api.get(`${path}${sep}per_page=${perPage}${cursor ? `&page=${cursor}` : ''}`)
    expect(r.status).toBe(200)
    expect(r.body.data.length).toBeLessThanOrEqual(perPage)
    seen.push(...r.body.data.map((x: { id: string }) => x.id))
    cursor = r.body.next_page
    pages++
    await during?.()
  } while (cursor)
  return { seen, pages }
}

let main: Run
beforeAll(async () => {
  main = await newRun()
  await write(
    main,
    Array.from({ length: 250 }, (_, i) => fixture(main, i)),
  )
})

describe('GET /v1/runs/{run_id}/logs', () => {
  test('most recent first, in SPEC shape, 20 by default', async () => {
    const r = await api.get(`/v1/runs/${main.id}/logs`)
    expect(r.status).toBe(200)
    const expected = newestFirst(main.entries)
    expect(r.body.data).toHaveLength(20)
    expect(r.body.next_page).toEqual(expect.any(String))
    expect(r.body.data.map((e: { id: string }) => e.id)).toEqual(expected.slice(0, 20).map((m) => m.id))
    // Strict: absent fields are left out, never null, and nothing else is there.
    for (const [k, got] of r.body.data.entries()) expect(got).toStrictEqual(shape(main, expected[k]!))
    const full = r.body.data.find((e: any) => e.error_detail && e.http_status && e.depth !== undefined && e.parent_url_hash)
    expect(Object.keys(full)).toEqual([
      'id',
      'run_id',
      'job_id',
      'url',
      'url_hash',
      'host',
      'step',
      'status',
      'error_reason',
      'error_detail',
      'http_status',
      'latency_ms',
      'depth',
      'parent_url_hash',
      'occurred_at',
    ])
  })

  test('walks 250 entries in pages of 20: each once, in order', async () => {
    const { seen, pages } = await walk(`/v1/runs/${main.id}/logs`, 20)
    expect(pages).toBe(13)
    expect(seen).toEqual(newestFirst(main.entries).map((m) => m.id))
    const all = await walk(`/v1/runs/${main.id}/logs`, 100)
    expect(all.pages).toBe(3)
    expect(all.seen).toEqual(seen)
  })

  test('entries written mid-walk neither repeat nor hide the others', async () => {
    const run = await newRun()
    await write(
      run,
      Array.from({ length: 250 }, (_, i) => fixture(run, i)),
    )
    const before = newestFirst(run.entries).map((m) => m.id)
    let k = 250
    const late: string[] = []
    const backdated: string[] = []
    const { seen } = await walk(`/v1/runs/${run.id}/logs`, 20, async () => {
      // newer than everything: ahead of the cursor, so not on later pages
      await write(run, [fixture(run, k++, BASE + DAY), fixture(run, k++, BASE + DAY)])
      late.push(run.entries.at(-1)!.id, run.entries.at(-2)!.id)
      // older than everything: still ahead of the walk, so found at its end
      await write(run, [fixture(run, k, BASE - HOUR - k++)])
      backdated.push(run.entries.at(-1)!.id)
    })
    expect(new Set(seen).size).toBe(seen.length)
    expect(seen.slice(0, 250)).toEqual(before)
    expect(seen.length).toBeGreaterThan(250)
    expect(seen.slice(250)).toEqual(backdated.slice(0, seen.length - 250)) // each is newer than the one after it
    for (const id of late) expect(seen).not.toContain(id)
    expect((await walk(`/v1/runs/${run.id}/logs`, 100)).seen).toEqual(newestFirst(run.entries).map((m) => m.id))
  })

  const iso = (ms: number) => new Date(ms).toISOString()
  const t = (i: number) => BASE + Math.floor(i / 2) * 74_000
  test.each([
    ['hosts, one', [['hosts', 'a.example']], (m: Model) => m.host === 'a.example'],
    ['hosts, as spelled otherwise', [['hosts', 'B.Example.']], (m: Model) => m.host === 'b.example'],
    [
      'hosts, several',
      [
        ['hosts', 'a.example'],
        ['hosts', 'c.example'],
      ],
      (m: Model) => m.host !== 'b.example',
    ],
    ['steps', [['steps', 'fetch']], (m: Model) => m.step === 'fetch'],
    [
      'steps, several',
      [
        ['steps', 'fetch'],
        ['steps', 'parse'],
      ],
      (m: Model) => m.step === 'fetch' || m.step === 'parse',
    ],
    ['statuses, one rare', [['statuses', 'error']], (m: Model) => m.status === 'error'],
    [
      'statuses, rare ones',
      [
        ['statuses', 'skipped'],
        ['statuses', 'retried'],
      ],
      (m: Model) => m.status === 'skipped' || m.status === 'retried',
    ],
    [
      'statuses with ok',
      [
        ['statuses', 'ok'],
        ['statuses', 'retried'],
      ],
      (m: Model) => m.status === 'ok' || m.status === 'retried',
    ],
    ['error_reasons', [['error_reasons', 'timeout']], (m: Model) => m.error_reason === 'timeout'],
    [
      'error_reasons, several',
      [
        ['error_reasons', 'timeout'],
        ['error_reasons', 'robots_disallowed'],
      ],
      (m: Model) => m.error_reason === 'timeout' || m.error_reason === 'robots_disallowed',
    ],
    ['pipeline_ids', [['pipeline_ids', 'main']], (m: Model) => m.pipeline_id === 'main'],
    ['occurred_after is strict', [['occurred_after', iso(t(200))]], (m: Model) => m.occurred_at > t(200)],
    ['occurred_before is strict', [['occurred_before', iso(t(40))]], (m: Model) => m.occurred_at < t(40)],
    [
      'a range, in another zone',
      [
        ['occurred_after', '2026-01-05T00:10:00+00:00'],
        ['occurred_before', '2026-01-05T02:00:00+01:00'],
      ],
      (m: Model) => m.occurred_at > BASE + HOUR + 10 * MIN && m.occurred_at < BASE + 2 * HOUR,
    ],
    [
      'filters combine',
      [
        ['hosts', 'b.example'],
        ['statuses', 'error'],
        ['steps', 'fetch'],
        ['steps', 'robots'],
      ],
      (m: Model) => m.host === 'b.example' && m.status === 'error' && (m.step === 'fetch' || m.step === 'robots'),
    ],
    [
      'error reasons with a host and a range',
      [
        ['error_reasons', 'http_status'],
        ['hosts', 'a.example'],
        ['occurred_after', iso(t(20))],
      ],
      (m: Model) => m.error_reason === 'http_status' && m.host === 'a.example' && m.occurred_at > t(20),
    ],
    ['nothing matches', [['hosts', 'z.example']], () => false],
  ] as [string, [string, string][], (m: Model) => boolean][])('filter: %s', async (_name, pairs, keep) => {
    const expected = newestFirst(main.entries.filter(keep)).map((m) => m.id)
    expect(expected.length === 0 || expected.length < 250).toBe(true)
    const { seen } = await walk(`/v1/runs/${main.id}/logs${qs(pairs)}`, 7)
    expect(seen).toEqual(expected)
  })
})

/** Start of the UTC bucket of `ms`, computed with Date rather than the arithmetic under test. */
function bucketOf(window: string, ms: number): number {
  const d = new Date(ms)
  const midnight = Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate())
  if (window === 'week') return midnight - ((d.getUTCDay() + 6) % 7) * DAY
  if (window === 'day') return midnight
  if (window === 'hour') return midnight + d.getUTCHours() * HOUR
  return midnight + d.getUTCHours() * HOUR + d.getUTCMinutes() * MIN
}
const WIDTH: Record<string, number> = { minute: MIN, hour: HOUR, day: DAY, week: 7 * DAY }

function expectedMetrics(entries: Model[], window: string, dims: string[]) {
  const buckets = new Map<number, Map<string, Record<string, unknown>>>()
  for (const m of entries) {
    const b = bucketOf(window, m.occurred_at)
    const values = Object.fromEntries(dims.map((d) => [d, (m as Record<string, unknown>)[d] ?? null]))
    const groups = buckets.get(b) ?? new Map()
    buckets.set(b, groups)
    const key = JSON.stringify(values)
    const g = groups.get(key) ?? { ...values, count: 0 }
    g.count = (g.count as number) + 1
    groups.set(key, g)
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
const key = (g: Record<string, unknown>) => JSON.stringify(Object.entries(g).sort())
const canonical = (groups: Record<string, unknown>[]) => [...groups].sort((a, b) => (key(a) < key(b) ? -1 : 1))

describe('GET /v1/runs/{run_id}/metrics', () => {
  test.each(['minute', 'hour', 'day', 'week'])('window %s, by nothing, by step, by step and status', async (window) => {
    for (const dims of [[], ['step'], ['step', 'status']]) {
      const r = await api.get(`/v1/runs/${main.id}/metrics${qs([['window', window], ...dims.map((d) => ['group_by', d] as [string, string])])}`)
      expect(r.status).toBe(200)
      expect(r.body.window).toBe(window)
      expect(r.body.group_by).toEqual(dims)
      for (const b of r.body.buckets) {
        const counts = b.groups.map((g: { count: number }) => g.count)
        expect(counts).toEqual([...counts].sort((x: number, y: number) => y - x)) // largest group first
      }
      expect(r.body.buckets.map((b: any) => ({ ...b, groups: canonical(b.groups) }))).toEqual(expectedMetrics(main.entries, window, dims))
    }
  })

  test('buckets align to UTC; weeks start on Monday', async () => {
    const starts = async (window: string) => (await api.get(`/v1/runs/${main.id}/metrics?window=${window}`)).body.buckets.map((b: any) => [b.start, b.end, b.count])
    expect(await starts('week')).toEqual([
      ['2025-12-29T00:00:00.000Z', '2026-01-05T00:00:00.000Z', 98], // Sunday 23:00..23:59: 49 instants, 2 entries each
      ['2026-01-05T00:00:00.000Z', '2026-01-12T00:00:00.000Z', 152],
    ])
    expect((await starts('day')).map((s: string[]) => s[0])).toEqual(['2026-01-04T00:00:00.000Z', '2026-01-05T00:00:00.000Z'])
    expect((await starts('hour')).map((s: string[]) => s[0])).toEqual(['2026-01-04T23:00:00.000Z', '2026-01-05T00:00:00.000Z', '2026-01-05T01:00:00.000Z']) // the last entry is at 01:32:56
  })

  test.each([
    ['a step', [['filters[step]', 'fetch']], ['status'], (m: Model) => m.step === 'fetch'],
    ['an HTTP status, grouped by host', [['filters[http_status]', '404']], ['host'], (m: Model) => m.http_status === 404],
    ['a host as spelled otherwise', [['filters[host]', 'C.EXAMPLE']], ['step', 'http_status'], (m: Model) => m.host === 'c.example'],
    ['an error reason, by host', [['filters[error_reason]', 'timeout']], ['host'], (m: Model) => m.error_reason === 'timeout'],
    ['a rare status, by error reason', [['filters[status]', 'error']], ['error_reason'], (m: Model) => m.status === 'error'],
    [
      'two dimensions',
      [
        ['filters[step]', 'parse'],
        ['filters[pipeline_id]', 'main'],
      ],
      ['host'],
      (m: Model) => m.step === 'parse' && m.pipeline_id === 'main',
    ],
    ['as JSON', [['filters', '{"step":"robots","status":"ok"}']], ['host'], (m: Model) => m.step === 'robots' && m.status === 'ok'],
    [
      'and a range',
      [
        ['filters[status]', 'ok'],
        ['occurred_after', new Date(BASE + HOUR).toISOString()],
        ['occurred_before', new Date(BASE + 2 * HOUR).toISOString()],
      ],
      ['pipeline_id'],
      (m: Model) => m.status === 'ok' && m.occurred_at > BASE + HOUR && m.occurred_at < BASE + 2 * HOUR,
    ],
  ] as [string, [string, string][], string[], (m: Model) => boolean][])('filters: %s', async (_name, pairs, dims, keep) => {
    for (const window of ['minute', 'hour']) {
      const r = await api.get(`/v1/runs/${main.id}/metrics${qs([['window', window], ...pairs, ...dims.map((d) => ['group_by', d] as [string, string])])}`)
      expect(r.status).toBe(200)
      const expected = expectedMetrics(main.entries.filter(keep), window, dims)
      expect(expected.length).toBeGreaterThan(0)
      expect(r.body.buckets.map((b: any) => ({ ...b, groups: canonical(b.groups) }))).toEqual(expected)
    }
  })

  test('a group of entries without the dimension is null; http_status is a number', async () => {
    const r = await api.get(`/v1/runs/${main.id}/metrics?window=week&group_by=http_status`)
    const groups = r.body.buckets[1].groups
    expect(groups.map((g: any) => g.http_status).sort()).toEqual([200, 404, 503, null])
  })
})

const rank = (sorted: number[], p: number) => sorted[Math.ceil((p * sorted.length) / 100) - 1]!

function expectedLatency(entries: Model[], window: string) {
  const groups = new Map<number, Map<string, number[]>>()
  for (const m of entries) {
    if (m.latency_ms === undefined) continue
    const b = bucketOf(window, m.occurred_at)
    const steps = groups.get(b) ?? new Map<string, number[]>()
    groups.set(b, steps)
    steps.set(m.step, [...(steps.get(m.step) ?? []), m.latency_ms])
  }
  return [...groups]
    .sort((a, b) => a[0] - b[0])
    .map(([b, steps]) => ({
      start: new Date(b).toISOString(),
      end: new Date(b + WIDTH[window]!).toISOString(),
      steps: [...steps]
        .sort((x, y) => (x[0] < y[0] ? -1 : 1))
        .map(([step, values]) => {
          const v = [...values].sort((x, y) => x - y)
          return { step, count: v.length, p50: rank(v, 50), p90: rank(v, 90), p95: rank(v, 95), p99: rank(v, 99), max: v.at(-1) }
        }),
    }))
}

describe('GET /v1/runs/{run_id}/latency', () => {
  test.each(['minute', 'hour', 'day', 'week'])('nearest-rank percentiles per %s and step', async (window) => {
    const r = await api.get(`/v1/runs/${main.id}/latency?window=${window}`)
    expect(r.status).toBe(200)
    expect(r.body).toEqual({ window, buckets: expectedLatency(main.entries, window) })
  })

  test('with many values: p50 of 1..1000 is 500, p99 990, p95 950', async () => {
    const run = await newRun()
    await write(
      run,
      Array.from({ length: 1000 }, (_, i) => ({ ...fixture(run, 0), step: 'fetch' as const, latency_ms: 1000 - i, occurred_at: BASE + i })),
    )
    await write(run, [{ ...fixture(run, 1), step: 'parse', latency_ms: undefined }])
    const r = await api.get(`/v1/runs/${run.id}/latency?window=hour`)
    expect(r.body.buckets).toEqual([{ start: '2026-01-04T23:00:00.000Z', end: '2026-01-05T00:00:00.000Z', steps: [{ step: 'fetch', count: 1000, p50: 500, p90: 900, p95: 950, p99: 990, max: 1000 }] }])
  })

  test.each([
    ['steps', [['steps', 'fetch']], (m: Model) => m.step === 'fetch'],
    [
      'steps, several',
      [
        ['steps', 'fetch'],
        ['steps', 'robots'],
      ],
      (m: Model) => m.step === 'fetch' || m.step === 'robots',
    ],
    ['hosts', [['hosts', 'A.example']], (m: Model) => m.host === 'a.example'],
    [
      'hosts, several, with a step',
      [
        ['hosts', 'a.example'],
        ['hosts', 'b.example'],
        ['steps', 'parse'],
      ],
      (m: Model) => m.host !== 'c.example' && m.step === 'parse',
    ],
    [
      'a range',
      [
        ['occurred_after', new Date(BASE + 30 * MIN).toISOString()],
        ['occurred_before', new Date(BASE + 90 * MIN).toISOString()],
      ],
      (m: Model) => m.occurred_at > BASE + 30 * MIN && m.occurred_at < BASE + 90 * MIN,
    ],
  ] as [string, [string, string][], (m: Model) => boolean][])('filter: %s', async (_name, pairs, keep) => {
    const r = await api.get(`/v1/runs/${main.id}/latency${qs([['window', 'hour'], ...pairs])}`)
    expect(r.status).toBe(200)
    const expected = expectedLatency(main.entries.filter(keep), 'hour')
    expect(expected.length).toBeGreaterThan(0)
    expect(r.body.buckets).toEqual(expected)
  })
})

describe('tenancy and existence', () => {
  const paths = (id: string) => [`/v1/runs/${id}/logs`, `/v1/runs/${id}/metrics?window=day`, `/v1/runs/${id}/latency?window=day`]

  test("another tenant's run and an unknown run are 404", async () => {
    for (const path of [...paths(main.id), ...paths(crypto.randomUUID())]) {
      const r = await api.get(path, { tenant: path.includes(main.id) ? 'other' : 'acme' })
      expect(r.status).toBe(404)
      expect(r.body).toEqual({ error: 'not_found', message: 'run not found' })
    }
  })

  test('two tenants with the same run id see only their own entries', async () => {
    const theirs = await newRun('other', main.id)
    await write(theirs, [fixture(theirs, 0, BASE + 10 * DAY)])
    const ours = (await walk(`/v1/runs/${main.id}/logs`, 100)).seen
    expect(ours).toHaveLength(250)
    expect(ours).not.toContain(theirs.entries[0]!.id)
    const r = await api.get(`/v1/runs/${main.id}/logs`, { tenant: 'other' })
    expect(r.body.data.map((e: any) => [e.id, e.run_id, e.job_id])).toEqual([[theirs.entries[0]!.id, main.id, theirs.job_id]])
    expect((await api.get(`/v1/runs/${main.id}/metrics?window=week`, { tenant: 'other' })).body.buckets).toEqual([
      { start: '2026-01-12T00:00:00.000Z', end: '2026-01-19T00:00:00.000Z', count: 1, groups: [{ count: 1 }] },
    ])
  })

  test('deleting a run deletes its log; the routes then answer 404', async () => {
    const run = await newRun()
    await write(
      run,
      Array.from({ length: 30 }, (_, i) => fixture(run, i)),
    )
    expect((await walk(`/v1/runs/${run.id}/logs`, 100)).seen).toHaveLength(30)
    expect((await api.del(`/v1/runs/${run.id}`)).status).toBe(204)
    // A deleted run cannot be read: what is left of its rows is counted instead.
    expect([await api.count('crawl_logs', 'run_seq = ?', [run.seq]), await api.count('visits', 'run_seq = ?', [run.seq])]).toEqual([0, 0])
    for (const path of paths(run.id)) expect((await api.get(path)).status).toBe(404)
  })
})

describe('422', () => {
  const STEPS = 'must be one of "schedule", "robots", "fetch", "parse", "extract", "store", "discover"'
  test.each([
    ['logs', [['per_page', '0']], [{ field: 'per_page', errors: ['must be >= 1'] }]],
    ['logs', [['per_page', '101']], [{ field: 'per_page', errors: ['must be <= 100'] }]],
    ['logs', [['per_page', '2.5']], [{ field: 'per_page', errors: ['must be an integer'] }]],
    [
      'logs',
      [
        ['steps', 'fetch'],
        ['steps', 'fetching'],
      ],
      [{ field: 'steps[1]', errors: [STEPS] }],
    ],
    ['logs', [['statuses', 'failed']], [{ field: 'statuses[0]', errors: ['must be one of "ok", "error", "skipped", "retried"'] }]],
    ['logs', [['error_reasons', 'nope']], [{ field: 'error_reasons[0]', errors: [expect.stringMatching(/^must be one of "timeout", "dns", .*"store_error", "host_unreachable", "interrupted"$/)] }]],
    ['logs', [['hosts', '']], [{ field: 'hosts[0]', errors: ['must not be empty'] }]],
    [
      'logs',
      [
        ['occurred_after', 'yesterday'],
        ['occurred_before', '2026-01-05'],
      ],
      [
        { field: 'occurred_after', errors: ['must be an RFC 3339 date-time'] },
        { field: 'occurred_before', errors: ['must be an RFC 3339 date-time'] },
      ],
    ],
    ['logs', [['page', 'garbage!']], [{ field: 'page', errors: ['is not a cursor this service issued'] }]],
    ['logs', [['level', 'error']], [{ field: 'level', errors: ['is not a known query parameter'] }]],
    ['logs', [['window', 'day']], [{ field: 'window', errors: ['is not a known query parameter'] }]],
    ['metrics', [], [{ field: 'window', errors: ['is required'] }]],
    ['metrics', [['window', 'month']], [{ field: 'window', errors: ['must be one of "minute", "hour", "day", "week"'] }]],
    [
      'metrics',
      [
        ['window', 'day'],
        ['window', 'hour'],
      ],
      [{ field: 'window', errors: ['must be given once'] }],
    ],
    [
      'metrics',
      [
        ['window', 'day'],
        ['group_by', 'url'],
      ],
      [{ field: 'group_by[0]', errors: ['must be one of "step", "status", "host", "error_reason", "pipeline_id", "http_status"'] }],
    ],
    [
      'metrics',
      [
        ['window', 'day'],
        ['group_by', 'step'],
        ['group_by', 'step'],
      ],
      [{ field: 'group_by', errors: ['must not repeat items'] }],
    ],
    [
      'metrics',
      [
        ['window', 'day'],
        ['filters[url]', 'x'],
      ],
      [{ field: 'filters[url]', errors: ['is not a known field'] }],
    ],
    [
      'metrics',
      [
        ['window', 'day'],
        ['filters[step]', 'fetching'],
      ],
      [{ field: 'filters[step]', errors: [STEPS] }],
    ],
    [
      'metrics',
      [
        ['window', 'day'],
        ['filters[http_status]', 'abc'],
      ],
      [{ field: 'filters[http_status]', errors: ['must be an HTTP status code (100..599)'] }],
    ],
    [
      'metrics',
      [
        ['window', 'day'],
        ['filters', 'step=fetch'],
      ],
      [{ field: 'filters', errors: ['must be given as filters[name]=value'] }],
    ],
    [
      'metrics',
      [
        ['window', 'day'],
        ['steps', 'fetch'],
      ],
      [{ field: 'steps', errors: ['is not a known query parameter'] }],
    ],
    ['latency', [], [{ field: 'window', errors: ['is required'] }]],
    [
      'latency',
      [
        ['window', 'day'],
        ['steps', 'nope'],
      ],
      [{ field: 'steps[0]', errors: [STEPS] }],
    ],
    [
      'latency',
      [
        ['window', 'day'],
        ['group_by', 'step'],
      ],
      [{ field: 'group_by', errors: ['is not a known query parameter'] }],
    ],
    [
      'latency',
      [
        ['window', 'day'],
        ['filters[step]', 'fetch'],
      ],
      [{ field: 'filters[step]', errors: ['is not a known query parameter'] }],
    ],
  ] as [string, [string, string][], unknown[]][])('%s %j', async (what, pairs, fields) => {
    const r = await api.get(`/v1/runs/${main.id}/${what}${qs(pairs)}`)
    expect(r.status).toBe(422)
    expect(r.body).toEqual({ error: 'validation', fields })
  })

  test('validation comes before existence; a bad run id is a 422 on run_id', async () => {
    const unknown = await api.get(`/v1/runs/${crypto.randomUUID()}/metrics?window=year`)
    expect(unknown.status).toBe(422)
    expect(unknown.body.fields).toEqual([{ field: 'window', errors: ['must be one of "minute", "hour", "day", "week"'] }])
    const badCursor = await api.get(`/v1/runs/${crypto.randomUUID()}/logs?page=%24%24`)
    expect(badCursor.status).toBe(422)
    const bad = await api.get('/v1/runs/nope/logs?per_page=0')
    expect(bad.body.fields).toEqual([
      { field: 'run_id', errors: ['must be a uuid'] },
      { field: 'per_page', errors: ['must be >= 1'] },
    ])
  })

  test("a cursor of another run's log is a 422 on page", async () => {
    const other = await newRun()
    await write(other, [fixture(other, 0), fixture(other, 1)])
    const cursor = (await api.get(`/v1/runs/${other.id}/logs?per_page=1`)).body.next_page
    const r = await api.get(`/v1/runs/${main.id}/logs?page=${cursor}`)
    expect(r.status).toBe(422)
    expect(r.body.fields).toEqual([{ field: 'page', errors: ['is not a cursor of this run'] }])
  })
})

describe('OpenAPI', () => {
  test('documents every query parameter of the three routes, with their encodings', async () => {
    const doc = (await api.get('/openapi.json', { tenant: null })).body
    const params = (path: string) => Object.fromEntries(doc.paths[path].get.parameters.map((p: any) => [`${p.in}:${p.name}`, p]))
    const logs = params('/v1/runs/{run_id}/logs')
    for (const name of ['page', 'per_page', 'hosts', 'steps', 'statuses', 'error_reasons', 'pipeline_ids', 'occurred_after', 'occurred_before']) expect(logs[`query:${name}`]).toBeDefined()
    expect(logs['query:per_page'].schema).toMatchObject({ minimum: 1, maximum: 100, default: 20 })
    expect(logs['query:steps']).toMatchObject({ style: 'form', explode: true, schema: { type: 'array' } })
    expect(logs['path:run_id'].schema.format).toBe('uuid')
    const metrics = params('/v1/runs/{run_id}/metrics')
    expect(metrics['query:window'].required).toBe(true)
    expect(metrics['query:group_by']).toMatchObject({ style: 'form', explode: true, schema: { type: 'array', uniqueItems: true } })
    expect(metrics['query:filters']).toMatchObject({ style: 'deepObject', explode: true, schema: { type: 'object' } })
    expect(Object.keys(metrics['query:filters'].schema.properties).sort()).toEqual(['error_reason', 'host', 'http_status', 'pipeline_id', 'status', 'step'])
    const latency = params('/v1/runs/{run_id}/latency')
    expect(
      Object.keys(latency)
        .filter((k) => k.startsWith('query:'))
        .sort(),
    ).toEqual(['query:hosts', 'query:occurred_after', 'query:occurred_before', 'query:steps', 'query:window'])
    // The response shapes are documented, not only the parameters.
    const body = (path: string) => doc.paths[path].get.responses['200'].content['application/json'].schema
    const metricsBody = body('/v1/runs/{run_id}/metrics')
    expect(metricsBody.required).toEqual(['window', 'group_by', 'buckets'])
    expect(metricsBody.properties.group_by.items.enum.sort()).toEqual(['error_reason', 'host', 'http_status', 'pipeline_id', 'status', 'step'])
    const bucket = metricsBody.properties.buckets.items
    expect(bucket.required).toEqual(['start', 'end', 'count', 'groups'])
    expect(bucket.properties.start).toMatchObject({ type: 'string', format: 'date-time' })
    expect(bucket.properties.groups.items).toMatchObject({ type: 'object', required: ['count'], properties: { count: { type: 'integer' } } })
    const latencyBody = body('/v1/runs/{run_id}/latency')
    expect(latencyBody.required).toEqual(['window', 'buckets'])
    const steps = latencyBody.properties.buckets.items.properties.steps.items
    expect(steps.required).toEqual(['step', 'count', 'p50', 'p90', 'p95', 'p99', 'max'])
    expect(steps.properties.step.enum).toContain('fetch')
    expect(body('/v1/runs/{run_id}/logs').properties.data.items.required).toContain('occurred_at')
  })
})
