import { describe, expect, test } from 'bun:test'
import { metrics, pageCounters } from '../../src/metrics'
import { EXPOSITION_TYPE, formatValue, Registry } from '../../src/metrics/registry'
import { promtoolCheck, samples, valueOf } from '../helpers/promtool'

describe('exposition', () => {
  test('counters and gauges: HELP and TYPE lines, labels in their declared order, children in the order made', () => {
    const r = new Registry()
    const c = r.counter('app_things_total', 'Things done.', ['kind', 'result'])
    c.labels('a', 'ok').inc()
    c.labels('b', 'error').inc(2)
    c.labels('a', 'ok').inc(0.5)
    r.gauge('app_level', 'A level.').set(-3)
    expect(r.text()).toBe(
      [
        '# HELP app_things_total Things done.',
        '# TYPE app_things_total counter',
        'app_things_total{kind="a",result="ok"} 1.5',
        'app_things_total{kind="b",result="error"} 2',
        '# HELP app_level A level.',
        '# TYPE app_level gauge',
        'app_level -3',
        '',
      ].join('\n'),
    )
  })

  test('label values escape backslash, double quote and line feed; HELP escapes backslash and line feed only', () => {
    const r = new Registry()
    r.counter('app_odd_total', 'Say "hi" \\ then\nmore.', ['v']).labels('a\\b"c"\nd').inc()
    const text = r.text()
    expect(text).toContain('# HELP app_odd_total Say "hi" \\\\ then\\nmore.\n')
    expect(text).toContain('app_odd_total{v="a\\\\b\\"c\\"\\nd"} 1\n')
    expect(samples(text)[0]!.labels.v).toBe('a\\b"c"\nd')
  })

  test('a label whose value is empty is left out: what a setting turns off', () => {
    const r = new Registry()
    const c = r.counter('app_pages_total', 'Pages.', ['tenant', 'outcome'])
    c.labels('', 'visited').inc()
    c.labels('acme', 'visited').inc()
    c.labels('', '').inc()
    expect(r.text().split('\n').slice(2, 5)).toEqual(['app_pages_total{outcome="visited"} 1', 'app_pages_total{tenant="acme",outcome="visited"} 1', 'app_pages_total 1'])
  })

  test('an unlabelled metric shows 0 before anything happened; a labelled one shows no sample', () => {
    const r = new Registry()
    r.counter('app_a_total', 'A.')
    r.counter('app_b_total', 'B.', ['x'])
    expect(r.text()).toBe('# HELP app_a_total A.\n# TYPE app_a_total counter\napp_a_total 0\n# HELP app_b_total B.\n# TYPE app_b_total counter\n')
  })

  test('histogram: cumulative buckets with le last, +Inf, _sum and _count; a value on a bound falls in that bucket', () => {
    const r = new Registry()
    const h = r.histogram('app_duration_seconds', 'Durations.', ['step'], [0.1, 1, 10])
    const fetch = h.labels('fetch')
    for (const v of [0.05, 0.1, 0.5, 1, 3, 20]) fetch.observe(v)
    h.labels('parse').observe(0.2)
    expect(r.text().split('\n').slice(2)).toEqual([
      'app_duration_seconds_bucket{step="fetch",le="0.1"} 2',
      'app_duration_seconds_bucket{step="fetch",le="1"} 4',
      'app_duration_seconds_bucket{step="fetch",le="10"} 5',
      'app_duration_seconds_bucket{step="fetch",le="+Inf"} 6',
      'app_duration_seconds_sum{step="fetch"} 24.65',
      'app_duration_seconds_count{step="fetch"} 6',
      'app_duration_seconds_bucket{step="parse",le="0.1"} 0',
      'app_duration_seconds_bucket{step="parse",le="1"} 1',
      'app_duration_seconds_bucket{step="parse",le="10"} 1',
      'app_duration_seconds_bucket{step="parse",le="+Inf"} 1',
      'app_duration_seconds_sum{step="parse"} 0.2',
      'app_duration_seconds_count{step="parse"} 1',
      '',
    ])
  })

  test('values: infinities and NaN as the format spells them', () => {
    expect([Infinity, -Infinity, NaN, 0, 1e-7, 12345678901].map(formatValue)).toEqual(['+Inf', '-Inf', 'NaN', '0', '1e-7', '12345678901'])
  })

  test('names, labels and buckets the format cannot take are refused when the metric is made', () => {
    const r = new Registry()
    expect(() => r.counter('bad-name', 'x')).toThrow('not a Prometheus name')
    expect(() => r.counter('app_x_total', 'x', ['a-b'])).toThrow('not a Prometheus label name')
    expect(() => r.counter('app_y_total', 'x', ['__reserved'])).toThrow('not a Prometheus label name')
    expect(() => r.counter('app_z_total', 'x', ['a', 'a'])).toThrow('names a label twice')
    expect(() => r.histogram('app_h', 'x', ['le'], [1])).toThrow('cannot have a label named le')
    expect(() => r.histogram('app_h2', 'x', [], [1, 1])).toThrow('finite and increasing')
    r.counter('app_once_total', 'x', ['a'])
    expect(() => r.counter('app_once_total', 'x')).toThrow('registered twice')
    expect(() => r.counter('app_n_total', 'x', ['a', 'b']).labels('only-one')).toThrow('takes 2 label values')
  })
})

describe('collectors', () => {
  test('run before each exposition; one that throws is reported and the others still run; removed ones run no more', async () => {
    const r = new Registry()
    const g = r.gauge('app_read', 'Read at scrape time.')
    let reads = 0
    const remove = r.collect(() => g.set(++reads))
    r.collect(() => {
      throw new Error('database away')
    })
    const failures: unknown[] = []
    expect(valueOf(await r.expose((e) => failures.push(e)), 'app_read')).toBe(1)
    expect(valueOf(await r.expose((e) => failures.push(e)), 'app_read')).toBe(2)
    expect(failures.map(String)).toEqual(['Error: database away', 'Error: database away'])
    remove()
    expect(valueOf(await r.expose(), 'app_read')).toBe(2)
  })
})

describe('promtool check metrics', () => {
  test('passes on every kind of metric, escaped values included', async () => {
    const r = new Registry()
    r.counter('app_requests_total', 'Requests "quoted" \\ and\nwrapped.', ['route', 'status']).labels('/v1/runs/:run_id', '200').inc(3)
    r.counter('app_odd_total', 'Odd values.', ['v']).labels('a\\b"c"\nd').inc()
    r.gauge('app_queue_urls', 'Queued URLs.', ['tenant']).labels('').set(7)
    const h = r.histogram('app_request_duration_seconds', 'Durations.', ['route'], [0.01, 0.1, 1])
    h.labels('/a').observe(0.05)
    h.labels('/b').observe(Infinity)
    const result = await promtoolCheck(r.text())
    expect(result).toEqual({ code: 0, output: '' })
  })

  test("passes on trawl's own registry, process metrics and all", async () => {
    pageCounters('acme').visited.inc()
    const text = await metrics.expose()
    expect(await promtoolCheck(text)).toEqual({ code: 0, output: '' })
    for (const name of ['process_cpu_seconds_total', 'process_resident_memory_bytes', 'process_start_time_seconds']) expect(samples(text).some((s) => s.name === name)).toBe(true)
    expect(valueOf(text, 'process_resident_memory_bytes')).toBeGreaterThan(1_000_000)
    const start = valueOf(text, 'process_start_time_seconds')
    expect(start).toBeLessThanOrEqual(Date.now() / 1000)
    expect(start).toBeGreaterThan(Date.now() / 1000 - 3600)
    expect(EXPOSITION_TYPE).toBe('text/plain; version=0.0.4; charset=utf-8')
  })

  test('fails on text that breaks the format (the check can fail)', async () => {
    const broken = '# TYPE app_x_total counter\napp_x_total{a="unterminated} 1\n'
    const result = await promtoolCheck(broken)
    expect(result.code).not.toBe(0)
    expect(result.output).toContain('error while linting')
  })
})
