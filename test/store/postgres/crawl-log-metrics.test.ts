/**
 * A run's metrics and latency on PostgreSQL, as test/api/crawl-logs.test.ts tests them on
 * SQLite: the same buckets (UTC, weeks from Monday), group order and nearest-rank percentiles,
 * checked against a model and against the SQLite engine's answer.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import type { LatencyQuery, LogStep, MetricDimension, MetricsQuery } from '../../../src/store/crawl-logs'
import { bothEngines, closeEngines, type Engine } from './crawl-log-engines'
import { BASE, DAY, fixture, HOUR, MIN, newRun, same, write, type Model, type Run } from './crawl-log-fixture'

let engines: Engine[]
let main: Run
beforeAll(async () => {
  engines = await bothEngines()
  main = await newRun(engines)
  await write(
    engines,
    main,
    Array.from({ length: 250 }, (_, i) => fixture(i)),
  )
})
afterAll(closeEngines)

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
const metricsOf = (q: MetricsQuery) => same(engines, async (e) => (await e.logs.metrics('acme', main.id, q))!)

describe('metrics', () => {
  test.each(['minute', 'hour', 'day', 'week'] as const)('window %s, by nothing, by step, by step and status; groups largest first, as SQLite orders them', async (window) => {
    for (const dims of [[], ['step'], ['step', 'status'], ['http_status', 'pipeline_id']] as MetricDimension[][]) {
      const m = await metricsOf({ window, group_by: dims })
      expect(m.window).toBe(window)
      expect(m.group_by).toEqual(dims)
      for (const b of m.buckets) {
        const counts = b.groups.map((g) => g.count)
        expect(counts).toEqual([...counts].sort((x, y) => y - x))
      }
      expect(m.buckets.map((b) => ({ ...b, groups: canonical(b.groups) }))).toEqual(expectedMetrics(main.entries, window, dims))
    }
  })

  test('buckets align to UTC; weeks start on Monday', async () => {
    const starts = async (window: MetricsQuery['window']) => (await metricsOf({ window })).buckets.map((b) => [b.start, b.end, b.count])
    expect(await starts('week')).toEqual([
      ['2025-12-29T00:00:00.000Z', '2026-01-05T00:00:00.000Z', 98],
      ['2026-01-05T00:00:00.000Z', '2026-01-12T00:00:00.000Z', 152],
    ])
    expect((await starts('day')).map((s) => s[0])).toEqual(['2026-01-04T00:00:00.000Z', '2026-01-05T00:00:00.000Z'])
    expect((await starts('hour')).map((s) => s[0])).toEqual(['2026-01-04T23:00:00.000Z', '2026-01-05T00:00:00.000Z', '2026-01-05T01:00:00.000Z'])
  })

  test('instants before the epoch and before the first Monday land in their own buckets', async () => {
    const run = await newRun(engines)
    const times = [-1, -DAY - 1, 0, 3 * DAY + 1, 4 * DAY, -7 * DAY + 5]
    await write(
      engines,
      run,
      times.map((t, i) => fixture(i, t)),
    )
    for (const window of ['minute', 'day', 'week'] as const) {
      const m = await same(engines, async (e) => (await e.logs.metrics('acme', run.id, { window }))!)
      expect(m.buckets.map((b) => ({ ...b, groups: canonical(b.groups) }))).toEqual(expectedMetrics(run.entries, window, []))
    }
  })

  test.each([
    ['a step', { step: 'fetch' }, ['status'], (m: Model) => m.step === 'fetch'],
    ['an HTTP status, grouped by host', { http_status: '404' }, ['host'], (m: Model) => m.http_status === 404],
    ['a host as spelled otherwise', { host: 'C.EXAMPLE' }, ['step', 'http_status'], (m: Model) => m.host === 'c.example'],
    ['an error reason, by host', { error_reason: 'timeout' }, ['host'], (m: Model) => m.error_reason === 'timeout'],
    ['a rare status, by error reason', { status: 'error' }, ['error_reason'], (m: Model) => m.status === 'error'],
    ['two dimensions', { step: 'parse', pipeline_id: 'main' }, ['host'], (m: Model) => m.step === 'parse' && m.pipeline_id === 'main'],
    ['a step and a status', { step: 'robots', status: 'ok' }, ['host'], (m: Model) => m.step === 'robots' && m.status === 'ok'],
  ] as [string, MetricsQuery['filters'], MetricDimension[], (m: Model) => boolean][])('filters: %s', async (_name, filters, dims, keep) => {
    for (const window of ['minute', 'hour'] as const) {
      const m = await metricsOf({ window, filters, group_by: dims })
      const expected = expectedMetrics(main.entries.filter(keep), window, dims)
      expect(expected.length).toBeGreaterThan(0)
      expect(m.buckets.map((b) => ({ ...b, groups: canonical(b.groups) }))).toEqual(expected)
    }
  })

  test('filters and a range', async () => {
    const keep = (m: Model) => m.status === 'ok' && m.occurred_at > BASE + HOUR && m.occurred_at < BASE + 2 * HOUR
    const m = await metricsOf({
      window: 'minute',
      filters: { status: 'ok' },
      group_by: ['pipeline_id'],
      occurred_after: new Date(BASE + HOUR).toISOString(),
      occurred_before: new Date(BASE + 2 * HOUR).toISOString(),
    })
    expect(m.buckets.map((b) => ({ ...b, groups: canonical(b.groups) }))).toEqual(expectedMetrics(main.entries.filter(keep), 'minute', ['pipeline_id']))
  })

  test('a group of entries without the dimension is null; http_status is a number', async () => {
    const m = await metricsOf({ window: 'week', group_by: ['http_status'] })
    expect(m.buckets[1]!.groups.map((g) => g.http_status).sort()).toEqual([200, 404, 503, null])
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
          return { step: step as LogStep, count: v.length, p50: rank(v, 50), p90: rank(v, 90), p95: rank(v, 95), p99: rank(v, 99), max: v.at(-1)! }
        }),
    }))
}
const latencyOf = (q: LatencyQuery, run = main) => same(engines, async (e) => (await e.logs.latency('acme', run.id, q))!)

describe('latency', () => {
  test.each(['minute', 'hour', 'day', 'week'] as const)('nearest-rank percentiles per %s and step', async (window) => {
    expect(await latencyOf({ window })).toEqual({ window, buckets: expectedLatency(main.entries, window) })
  })

  test('with many values: p50 of 1..1000 is 500, p99 990, p95 950', async () => {
    const run = await newRun(engines)
    await write(
      engines,
      run,
      Array.from({ length: 1000 }, (_, i) => ({ ...fixture(0), step: 'fetch' as const, latency_ms: 1000 - i, occurred_at: BASE + i })),
    )
    await write(engines, run, [{ ...fixture(1), step: 'parse', latency_ms: undefined }])
    expect((await latencyOf({ window: 'hour' }, run)).buckets).toEqual([
      { start: '2026-01-04T23:00:00.000Z', end: '2026-01-05T00:00:00.000Z', steps: [{ step: 'fetch', count: 1000, p50: 500, p90: 900, p95: 950, p99: 990, max: 1000 }] },
    ])
  })

  test.each([
    ['steps', { steps: ['fetch'] }, (m: Model) => m.step === 'fetch'],
    ['steps, several', { steps: ['fetch', 'robots'] }, (m: Model) => m.step === 'fetch' || m.step === 'robots'],
    ['hosts', { hosts: ['A.example'] }, (m: Model) => m.host === 'a.example'],
    ['hosts, several, with a step', { hosts: ['a.example', 'b.example'], steps: ['parse'] }, (m: Model) => m.host !== 'c.example' && m.step === 'parse'],
    [
      'a range',
      { occurred_after: new Date(BASE + 30 * MIN).toISOString(), occurred_before: new Date(BASE + 90 * MIN).toISOString() },
      (m: Model) => m.occurred_at > BASE + 30 * MIN && m.occurred_at < BASE + 90 * MIN,
    ],
  ] as [string, Omit<LatencyQuery, 'window'>, (m: Model) => boolean][])('filter: %s', async (_name, q, keep) => {
    const expected = expectedLatency(main.entries.filter(keep), 'hour')
    expect(expected.length).toBeGreaterThan(0)
    expect((await latencyOf({ window: 'hour', ...q })).buckets).toEqual(expected)
  })
})
