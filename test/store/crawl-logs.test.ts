import { afterAll, describe, expect, spyOn, test } from 'bun:test'
import { ValidationError } from '../../src/core/errors'
import { listStatement, LOG_STEPS, MAX_GROUPS, visitWalkStatement, type LogEntry, type LogFilter } from '../../src/store/crawl-logs'
import { job, testApi } from '../helpers/api'

const api = testApi()
afterAll(() => api.close())

/** A job and a run through the API; answers the run's id and its row seq (what the engine holds). */
async function newRun(tenant = 'acme') {
  const j = (await api.post('/v1/jobs', job(), { tenant })).body
  const run = (await api.post(`/v1/jobs/${j.id}/runs`, undefined, { tenant })).body
  const { seq } = api.db.query('SELECT seq FROM runs WHERE tenant = ? AND id = ?').get(tenant, run.id) as { seq: number }
  return { id: run.id as string, seq }
}
/** The run's entries, as the store reads them (a run's log is more than its crawl_logs rows). */
const countOf = (run: { id: string }) => api.repos.crawlLogs.metrics('acme', run.id, { window: 'week' })!.buckets.reduce((n, b) => n + b.count, 0)
/** A deleted run cannot be read: what is left of its rows is counted instead. */
const rowsLeft = (runSeq: number) =>
  (api.db.query('SELECT (SELECT count(*) FROM crawl_logs WHERE run_seq = ?1) + (SELECT count(*) FROM visits WHERE run_seq = ?1) AS n').get(runSeq) as { n: number }).n
const entry = (runSeq: number, i: number, over: Partial<LogEntry> = {}): LogEntry => ({
  run_seq: runSeq,
  url: `https://h${i % 100}.example/section/${i % 37}/page-${i}.html`,
  url_hash: (i.toString(16) + '0'.repeat(32)).slice(0, 32),
  host: `h${i % 100}.example`,
  step: LOG_STEPS[i % 7]!,
  status: i % 50 === 0 ? 'error' : 'ok',
  ...(i % 50 === 0 ? { error_reason: 'timeout' as const, error_detail: 'no response in 30s' } : {}),
  http_status: 200,
  latency_ms: (i * 7919) % 1000,
  depth: i % 4,
  parent_url_hash: 'ab'.repeat(16),
  occurred_at: 1_780_000_000_000 + i * 60_000,
  ...over,
})

/** The query plan of a list page, as EXPLAIN QUERY PLAN lines. */
function plan(f: LogFilter, after?: { occurred_at: number; seq: number }): string {
  const { sql, params } = listStatement(1, f, after, 20)
  return (api.db.query(`EXPLAIN QUERY PLAN ${sql}`).all(...params) as { detail: string }[]).map((r) => r.detail).join('\n')
}
const sorts = (p: string) => p.includes('TEMP B-TREE FOR ORDER BY')

// A page is an ordered index walk from the cursor, or a lookup of a few rare rows: never a
// scan of the table, and a sort only where several values of the driving filter are given.
describe('list query plans', () => {
  const at = { occurred_at: 1_780_000_000_000, seq: 99 }
  test.each([
    ['no filter', {}, /SEARCH t USING INDEX crawl_logs_by_time \(run_seq=\?\)/, null],
    ['no filter, from a cursor', {}, /SEARCH t USING INDEX crawl_logs_by_time \(run_seq=\? AND occurred_at<\?\)/, at],
    ['a time range', { occurred_after: '2026-05-01T00:00:00Z', occurred_before: '2026-06-01T00:00:00Z' }, /USING INDEX crawl_logs_by_time \(run_seq=\? AND occurred_at>\? AND occurred_at<\?\)/, null],
    [
      'steps, ok statuses and pipelines are tested along the time walk',
      { steps: ['fetch', 'parse'], statuses: ['ok', 'error'], pipeline_ids: ['main'] },
      /USING INDEX crawl_logs_by_time \(run_seq=\?\)/,
      null,
    ],
    ['one host', { hosts: ['a.example'] }, /USING INDEX crawl_logs_by_host \(run_seq=\? AND host=\? AND occurred_at<\?\)/, at],
    ['one error reason', { error_reasons: ['timeout'], hosts: ['a.example'] }, /USING INDEX crawl_logs_errors \(run_seq=\? AND error_reason=\? AND occurred_at<\?\)/, at],
    ['one non-ok status', { statuses: ['error'], steps: ['fetch'] }, /USING INDEX crawl_logs_not_ok \(run_seq=\? AND status=\?\)/, null],
  ] as [string, LogFilter, RegExp, typeof at | null][])('%s: an ordered walk, no sort', (_name, f, expected, after) => {
    const p = plan(f, after ?? undefined)
    expect(p).toMatch(expected)
    expect(sorts(p)).toBe(false)
  })

  test.each([
    ['several hosts', { hosts: ['a.example', 'b.example'] }, /USING INDEX crawl_logs_by_host \(run_seq=\? AND host=\?\)/],
    ['several error reasons', { error_reasons: ['dns', 'tls'] }, /USING INDEX crawl_logs_errors \(run_seq=\? AND error_reason=\?\)/],
    ['several non-ok statuses', { statuses: ['error', 'skipped'] }, /USING INDEX crawl_logs_not_ok \(run_seq=\? AND status=\?\)/],
  ] as [string, LogFilter, RegExp][])('%s: a lookup of those values, then a sort of the matches', (_name, f, expected) => {
    const p = plan(f)
    expect(p).toMatch(expected)
    expect(p).not.toMatch(/SCAN t\b/)
  })

  /** The plans of the statements `fn` runs over crawl_logs (captured, then EXPLAINed with dummy values). */
  function plansOf(fn: () => unknown): string[] {
    const spy = spyOn(api.db, 'query')
    try {
      fn()
      const sqls = spy.mock.calls.map((c) => c[0] as string).filter((s) => s.includes('FROM crawl_logs t'))
      return sqls.map((sql) => (api.db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...Array((sql.match(/\?/g) ?? []).length).fill(1)) as { detail: string }[]).map((r) => r.detail).join('\n'))
    } finally {
      spy.mockRestore()
    }
  }

  test.each([
    ['metrics', { window: 'hour', group_by: ['step', 'http_status'], filters: { status: 'ok' }, occurred_after: '2026-01-01T00:00:00Z' }, /crawl_logs_by_time \(run_seq=\? AND occurred_at>\?\)/],
    ['metrics of a host', { window: 'hour', filters: { host: 'a.example', step: 'fetch' } }, /crawl_logs_by_host \(run_seq=\? AND host=\?\)/],
    ['metrics of an error reason', { window: 'day', group_by: ['host'], filters: { error_reason: 'dns' } }, /crawl_logs_errors \(run_seq=\? AND error_reason=\?\)/],
    ['metrics of a non-ok status', { window: 'day', filters: { status: 'retried' } }, /crawl_logs_not_ok \(run_seq=\? AND status=\?\)/],
    ['latency', { window: 'day', steps: ['fetch'] }, /crawl_logs_by_time \(run_seq=\?\)/],
    ['latency of hosts', { window: 'day', hosts: ['a.example', 'b.example'] }, /crawl_logs_by_host \(run_seq=\? AND host=\?\)/],
  ] as [string, any, RegExp][])('%s reads the run through the fitting index, never the whole table', async (kind, q, expected) => {
    const run = await newRun()
    const plans = plansOf(() => (kind.startsWith('metrics') ? api.repos.crawlLogs.metrics('acme', run.id, q) : api.repos.crawlLogs.latency('acme', run.id, q)))
    expect(plans).toHaveLength(1)
    expect(plans[0]).toMatch(new RegExp(`SEARCH t USING (COVERING )?INDEX ${expected.source}`))
    expect(plans[0]).not.toMatch(/SCAN t\b/)
  })
})

describe('writer', () => {
  test('1,000 adds are two transactions, not a thousand', async () => {
    const run = await newRun()
    const writer = api.repos.crawlLogs.writer()
    const tx = spyOn(api.db, 'transaction')
    try {
      for (let i = 0; i < 1000; i++) writer.add(entry(run.seq, i))
      expect(tx).toHaveBeenCalledTimes(2)
      expect(writer.buffered).toBe(0)
      expect(countOf(run)).toBe(1000)
      expect(writer.stats).toEqual({ written: 1000, flushes: 2, dropped: 0 })
    } finally {
      tx.mockRestore()
      writer.close()
    }
  })

  test('a partial batch is written maxDelayMs after its first entry', async () => {
    const run = await newRun()
    const writer = api.repos.crawlLogs.writer({ maxDelayMs: 30 })
    for (let i = 0; i < 10; i++) writer.add(entry(run.seq, i))
    await Bun.sleep(10)
    writer.add(entry(run.seq, 10)) // later entries do not push the deadline back
    expect(countOf(run)).toBe(0)
    await Bun.sleep(40)
    expect(countOf(run)).toBe(11)
    expect(writer.stats.flushes).toBe(1)
    writer.close()
  })

  test("a manual writer (the engine's) writes only when flushed: past batchSize, past maxDelayMs", async () => {
    const run = await newRun()
    const writer = api.repos.crawlLogs.writer({ manual: true, batchSize: 5, maxDelayMs: 10 })
    for (let i = 0; i < 20; i++) writer.add(entry(run.seq, i))
    await Bun.sleep(40)
    expect(countOf(run)).toBe(0)
    expect(writer.buffered).toBe(20)
    expect(writer.flush()).toBe(20)
    expect(countOf(run)).toBe(20)
    writer.close()
  })

  test('discard drops what is buffered, writes nothing, and refuses more', async () => {
    const run = await newRun()
    const writer = api.repos.crawlLogs.writer({ maxDelayMs: 20 })
    writer.add(entry(run.seq, 1))
    writer.add(entry(run.seq, 2))
    expect(writer.discard()).toBe(2)
    await Bun.sleep(40) // the timer that was set writes nothing
    expect(countOf(run)).toBe(0)
    expect(writer.stats.dropped).toBe(2)
    expect(() => writer.add(entry(run.seq, 3))).toThrow('closed')
    writer.close()
    expect(countOf(run)).toBe(0)
  })

  test('close flushes what is buffered and refuses more', async () => {
    const run = await newRun()
    const writer = api.repos.crawlLogs.writer({ maxDelayMs: 60_000 })
    const ids = [writer.add(entry(run.seq, 1)), writer.add(entry(run.seq, 2))]
    expect(ids[0]).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
    expect(countOf(run)).toBe(0)
    writer.close()
    expect(countOf(run)).toBe(2)
    expect(() => writer.add(entry(run.seq, 3))).toThrow('closed')
  })

  test("flush inside the engine's transaction commits or rolls back with it", async () => {
    const run = await newRun()
    const writer = api.repos.crawlLogs.writer()
    writer.add(entry(run.seq, 1))
    expect(() =>
      api.repos.transaction(() => {
        writer.flush()
        expect(countOf(run)).toBe(1)
        throw new Error('the checkpoint failed')
      }),
    ).toThrow('the checkpoint failed')
    expect(countOf(run)).toBe(0)
    writer.add(entry(run.seq, 2))
    api.repos.transaction(() => writer.flush())
    expect(countOf(run)).toBe(1)
    writer.close()
  })

  test('entries of a run deleted meanwhile are dropped; the rest of the batch is written', async () => {
    const kept = await newRun()
    const gone = await newRun()
    const writer = api.repos.crawlLogs.writer({ maxDelayMs: 60_000 })
    writer.add(entry(kept.seq, 1))
    writer.add(entry(gone.seq, 2))
    writer.add(entry(kept.seq, 3))
    expect((await api.del(`/v1/runs/${gone.id}`)).status).toBe(204)
    expect(writer.flush()).toBe(2)
    expect(countOf(kept)).toBe(2)
    expect(writer.stats.dropped).toBe(1)
    writer.close()
  })

  test('an impossible entry is refused at add, not left to poison its batch', async () => {
    const run = await newRun()
    const writer = api.repos.crawlLogs.writer()
    expect(() => writer.add(entry(run.seq, 1, { step: 'fetching' as never }))).toThrow(TypeError)
    expect(() => writer.add(entry(run.seq, 1, { occurred_at: Number.NaN }))).toThrow(TypeError)
    expect(writer.buffered).toBe(0)
    writer.close()
  })

  test('a failing timer flush keeps its entries, reports the error and retries', async () => {
    const run = await newRun()
    const errors: unknown[] = []
    const writer = api.repos.crawlLogs.writer({ maxDelayMs: 5, onError: (err) => errors.push(err) })
    const tx = spyOn(api.db, 'transaction').mockImplementationOnce(() => {
      throw new Error('database is locked')
    })
    try {
      writer.add(entry(run.seq, 1))
      await Bun.sleep(15)
      expect(errors.map(String)).toEqual(['Error: database is locked'])
      expect(writer.buffered).toBe(1)
      await Bun.sleep(40) // the retry backs off to 10 ms, then 20 ms at most here
      expect(countOf(run)).toBe(1)
    } finally {
      tx.mockRestore()
      writer.close()
    }
  })

  test('throughput, and a run deletion takes its logs with it', async () => {
    const run = await newRun()
    const writer = api.repos.crawlLogs.writer()
    const n = 60_000
    const entries = Array.from({ length: n }, (_, i) => entry(run.seq, i))
    const started = performance.now()
    const cpu = process.cpuUsage()
    for (const e of entries) writer.add(e)
    writer.flush()
    const perSecond = Math.round(n / ((performance.now() - started) / 1000))
    const used = process.cpuUsage(cpu)
    const perCpuSecond = Math.round(n / ((used.user + used.system) / 1e6))
    // Wall time depends on what else the machine runs; CPU time is the writer's own cost.
    console.log(`crawl log writer: ${perSecond} entries/s wall, ${perCpuSecond} per CPU second (${n} entries, ${writer.stats.flushes} transactions)`)
    expect(countOf(run)).toBe(n)
    expect(writer.stats.flushes).toBe(n / 500)
    expect(perSecond).toBeGreaterThan(5_000) // far below what it does; only catches a regression to one transaction per entry
    writer.close()

    // 60,000 distinct minutes: more groups than an answer may hold.
    try {
      api.repos.crawlLogs.metrics('acme', run.id, { window: 'minute' })
      throw new Error('expected a 422')
    } catch (err) {
      expect(err).toBeInstanceOf(ValidationError)
      expect((err as ValidationError).fields).toEqual([{ field: 'window', errors: [expect.stringContaining(`more than ${MAX_GROUPS} groups`)] }])
    }
    expect(api.repos.crawlLogs.metrics('acme', run.id, { window: 'week' })!.buckets.reduce((s, b) => s + b.count, 0)).toBe(n)

    expect((await api.del(`/v1/runs/${run.id}`)).status).toBe(204)
    expect(rowsLeft(run.seq)).toBe(0)
  }, 60_000)
})

describe('list', () => {
  test('a cursor of another run, or of no entry, is a 422 on page', async () => {
    const a = await newRun()
    const b = await newRun()
    const writer = api.repos.crawlLogs.writer()
    for (let i = 0; i < 3; i++) writer.add(entry(a.seq, i))
    writer.close()
    const first = api.repos.crawlLogs.list('acme', a.id, {}, undefined, 2)!
    expect(first.next).not.toBeNull()
    expect(api.repos.crawlLogs.list('acme', a.id, {}, first.next!, 2)!.data).toHaveLength(1)
    for (const cursor of [first.next!, 10_000_000]) {
      expect(() => api.repos.crawlLogs.list('acme', b.id, {}, cursor, 2)).toThrow(ValidationError)
    }
  })

  test('an empty value list matches nothing; an unknown run answers null', async () => {
    const a = await newRun()
    const writer = api.repos.crawlLogs.writer()
    writer.add(entry(a.seq, 1))
    writer.close()
    expect(api.repos.crawlLogs.list('acme', a.id, { hosts: [] }, undefined, 20)).toEqual({ data: [], next: null })
    expect(api.repos.crawlLogs.list('other', a.id, {}, undefined, 20)).toBeNull()
    expect(api.repos.crawlLogs.metrics('other', a.id, { window: 'day' })).toBeNull()
    expect(api.repos.crawlLogs.latency('other', a.id, { window: 'day' })).toBeNull()
  })
})

// The entries visit rows stand for are read by a walk of the run's visits in seq order, within
// the seqs that can hold the range: never a scan of the table, never a sort of the visits.
describe('plans of the entries visit rows stand for', () => {
  const explain = (sql: string, params: unknown[]) => (api.db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...(params as never[])) as { detail: string }[]).map((r) => r.detail).join('\n')
  const WALK = /SEARCH v USING INDEX visits_by_run \(run_seq=\? AND seq>\? AND seq<\?\)/

  test('the list’s walk, with or without its filters', () => {
    for (const f of [{}, { hosts: ['a.example', 'b.example'], pipeline_ids: ['main'] }] as LogFilter[]) {
      const { sql, params } = visitWalkStatement(1, f, 15, 10, 1000, 64)
      const p = explain(sql, params)
      expect(p).toMatch(WALK)
      expect(p).not.toMatch(/SCAN v\b/)
      expect(p).not.toContain('TEMP B-TREE')
    }
  })

  test.each([
    ['metrics', { window: 'hour', group_by: ['step', 'host'], occurred_after: '2026-01-01T00:00:00Z' }, true],
    ['metrics of an error reason', { window: 'hour', filters: { error_reason: 'dns' } }, false],
    ['metrics of a step no visit row stands for', { window: 'hour', filters: { step: 'robots' } }, false],
    ['latency of hosts', { window: 'day', hosts: ['a.example'] }, true],
    ['latency of discover entries (none has a latency)', { window: 'day', steps: ['discover'] }, false],
  ] as [string, any, boolean][])('%s', async (kind, q, visits) => {
    const run = await newRun()
    const [l] = (await api.put('/v1/links', { urls: ['https://a.example/plan'] })).body.data
    api.repos.runGraph.recordPages(run.seq, [
      {
        hash: l.hash,
        host_hash: l.host.hash,
        depth: 0,
        parent: null,
        status: 200,
        visited_at: Date.now(),
        children: null,
        logged: 15,
        fetch_at: Date.now() - 9,
        fetch_ms: 5,
        parse_ms: 2,
        store_ms: 1,
        pipeline_id: 'main',
      },
    ])
    const spy = spyOn(api.db, 'query')
    let sqls: string[]
    try {
      if (kind.startsWith('metrics')) api.repos.crawlLogs.metrics('acme', run.id, q)
      else api.repos.crawlLogs.latency('acme', run.id, q)
      sqls = spy.mock.calls.map((c) => c[0] as string).filter((s) => s.includes('FROM crawl_logs t'))
    } finally {
      spy.mockRestore()
    }
    expect(sqls).toHaveLength(1)
    const p = explain(sqls[0]!, Array((sqls[0]!.match(/\?/g) ?? []).length).fill(1))
    expect(p).toMatch(/SEARCH t USING (COVERING )?INDEX crawl_logs_/)
    expect(p).not.toMatch(/SCAN (t|v)\b/)
    if (visits) expect(p).toMatch(WALK)
    else expect(p).not.toContain('visits_by_run')
  })
})
