/**
 * The crawl log on PostgreSQL, as test/api/crawl-logs.test.ts and test/store/crawl-logs.test.ts
 * test it on SQLite: entries written by writeLogs inside a transaction, read by pgCrawlLogStore.
 * Every read is made on both engines: each must answer what the model says, and both the same.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { ValidationError } from '../../../src/core/errors'
import { MAX_GROUPS, type CrawlLogEntry, type LogEntry, type LogFilter } from '../../../src/store/crawl-logs'
import type { Page } from '../../../src/store/types'
import { bothEngines, closeEngines, comparable, deleteRun, walk, type Engine } from './crawl-log-engines'
import { BASE, DAY, fixture, hash, HOUR, iso, MIN, newestFirst, newRun as newRunOn, same as sameOn, write as writeOn, type Model, type Run } from './crawl-log-fixture'

let engines: Engine[]
afterAll(closeEngines)

/** The API shape of a model entry on engine k, absent fields left out. */
function shape(run: Run, m: Model, k: number): CrawlLogEntry {
  const { ids, i: _, occurred_at, ...rest } = m
  return { id: ids[k]!, run_id: run.id, job_id: run.job_id, ...rest, occurred_at: iso(occurred_at) }
}

/** Walks the run's list on every engine: each must see `expected` (model entries), in pages of perPage; both the same pages. */
async function expectWalk(run: Run, f: LogFilter, perPage: number, expected: Model[], tenant = 'acme') {
  const walks = []
  for (const [k, e] of engines.entries()) {
    const w = await walk((after) => e.logs.list(tenant, run.id, f, after, perPage))
    expect(w.rows.map((x) => x.id)).toEqual(expected.map((m) => m.ids[k]!))
    walks.push({ rows: w.rows.map(comparable), pages: w.keys.length })
  }
  expect(walks[1]).toEqual(walks[0]!)
  return walks[0]!
}
const newRun = (tenant = 'acme', id?: string) => newRunOn(engines, tenant, id)
const write = (run: Run, entries: Omit<LogEntry, 'run_seq'>[]) => writeOn(engines, run, entries)
const same = <T>(read: (e: Engine) => Promise<T>) => sameOn(engines, read)

let main: Run
beforeAll(async () => {
  engines = await bothEngines()
  main = await newRun()
  await write(
    main,
    Array.from({ length: 250 }, (_, i) => fixture(i)),
  )
})

describe('list', () => {
  test('most recent first, in SPEC shape, 20 a page, each once in every page size', async () => {
    const expected = newestFirst(main.entries)
    for (const [k, e] of engines.entries()) {
      const first = (await e.logs.list('acme', main.id, {}, undefined, 20))!
      expect(first.data).toHaveLength(20)
      expect(first.next).toEqual(expect.any(Number))
      for (const [j, got] of first.data.entries()) expect(got).toStrictEqual(shape(main, expected[j]!, k))
      // Ids as the SQLite writer makes them: random v4 uuids.
      expect(first.data[0]!.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
    }
    expect((await expectWalk(main, {}, 20, expected)).pages).toBe(13)
    expect((await expectWalk(main, {}, 100, expected)).pages).toBe(3)
    expect((await expectWalk(main, {}, 7, expected)).pages).toBe(36)
  })

  test('entries written mid-walk neither repeat nor hide the others', async () => {
    const run = await newRun()
    await write(
      run,
      Array.from({ length: 250 }, (_, i) => fixture(i)),
    )
    const before = newestFirst(run.entries)
    let n = 250
    const late: Model[] = []
    const backdated: Model[] = []
    // Both engines walk in step: the same writes between the same pages.
    const cursors: (number | undefined)[] = engines.map(() => undefined)
    const seen: string[][] = engines.map(() => [])
    for (;;) {
      const pages: Page<CrawlLogEntry>[] = []
      for (const [k, e] of engines.entries()) pages.push((await e.logs.list('acme', run.id, {}, cursors[k], 20))!)
      expect(pages[1]!.data.map(comparable)).toEqual(pages[0]!.data.map(comparable))
      pages.forEach((p, k) => {
        seen[k]!.push(...p.data.map((x) => x.id))
        cursors[k] = p.next ?? undefined
      })
      expect(pages[1]!.next === null).toBe(pages[0]!.next === null)
      if (pages[0]!.next === null) break
      // newer than everything: ahead of the cursor, so not on later pages
      await write(run, [fixture(n++, BASE + DAY), fixture(n++, BASE + DAY)])
      late.push(...run.entries.slice(-2))
      // older than everything: still ahead of the walk, so found at its end
      await write(run, [fixture(n, BASE - HOUR - n++)])
      backdated.push(run.entries.at(-1)!)
    }
    for (const [k] of engines.entries()) {
      expect(new Set(seen[k]).size).toBe(seen[k]!.length)
      expect(seen[k]!.slice(0, 250)).toEqual(before.map((m) => m.ids[k]!))
      expect(seen[k]!.length).toBeGreaterThan(250)
      expect(seen[k]!.slice(250)).toEqual(backdated.slice(0, seen[k]!.length - 250).map((m) => m.ids[k]!))
      for (const m of late) expect(seen[k]).not.toContain(m.ids[k]!)
    }
    await expectWalk(run, {}, 100, newestFirst(run.entries))
  })

  const t = (i: number) => BASE + Math.floor(i / 2) * 74_000
  test.each([
    ['hosts, one', { hosts: ['a.example'] }, (m: Model) => m.host === 'a.example'],
    ['hosts, as spelled otherwise', { hosts: ['B.Example.'] }, (m: Model) => m.host === 'b.example'],
    ['hosts, several', { hosts: ['a.example', 'c.example'] }, (m: Model) => m.host !== 'b.example'],
    ['steps', { steps: ['fetch'] }, (m: Model) => m.step === 'fetch'],
    ['steps, several', { steps: ['fetch', 'parse'] }, (m: Model) => m.step === 'fetch' || m.step === 'parse'],
    ['statuses, one rare', { statuses: ['error'] }, (m: Model) => m.status === 'error'],
    ['statuses, rare ones', { statuses: ['skipped', 'retried'] }, (m: Model) => m.status === 'skipped' || m.status === 'retried'],
    ['statuses with ok', { statuses: ['ok', 'retried'] }, (m: Model) => m.status === 'ok' || m.status === 'retried'],
    ['error_reasons', { error_reasons: ['timeout'] }, (m: Model) => m.error_reason === 'timeout'],
    ['error_reasons, several', { error_reasons: ['timeout', 'robots_disallowed'] }, (m: Model) => m.error_reason === 'timeout' || m.error_reason === 'robots_disallowed'],
    ['pipeline_ids', { pipeline_ids: ['main'] }, (m: Model) => m.pipeline_id === 'main'],
    ['occurred_after is strict', { occurred_after: iso(t(200)) }, (m: Model) => m.occurred_at > t(200)],
    ['occurred_before is strict', { occurred_before: iso(t(40)) }, (m: Model) => m.occurred_at < t(40)],
    [
      'a range, in another zone',
      { occurred_after: '2026-01-05T00:10:00+00:00', occurred_before: '2026-01-05T02:00:00+01:00' },
      (m: Model) => m.occurred_at > BASE + HOUR + 10 * MIN && m.occurred_at < BASE + 2 * HOUR,
    ],
    [
      'filters combine',
      { hosts: ['b.example'], statuses: ['error'], steps: ['fetch', 'robots'] },
      (m: Model) => m.host === 'b.example' && m.status === 'error' && (m.step === 'fetch' || m.step === 'robots'),
    ],
    [
      'error reasons with a host and a range',
      { error_reasons: ['http_status'], hosts: ['a.example'], occurred_after: iso(t(20)) },
      (m: Model) => m.error_reason === 'http_status' && m.host === 'a.example' && m.occurred_at > t(20),
    ],
    ['nothing matches', { hosts: ['z.example'] }, () => false],
  ] as [string, LogFilter, (m: Model) => boolean][])('filter: %s', async (_name, f, keep) => {
    const expected = newestFirst(main.entries.filter(keep))
    expect(expected.length === 0 || expected.length < 250).toBe(true)
    await expectWalk(main, f, 7, expected)
  })

  test('a cursor of another run, or of no entry, is a validation error on page', async () => {
    const other = await newRun()
    await write(other, [fixture(0), fixture(1), fixture(2)])
    await same(async (e) => {
      const first = (await e.logs.list('acme', other.id, {}, undefined, 2))!
      expect((await e.logs.list('acme', other.id, {}, first.next!, 2))!.data).toHaveLength(1)
      for (const cursor of [first.next!, 10_000_000, 2 ** 50 + 5]) {
        const err = await e.logs.list('acme', main.id, {}, cursor, 2).then(
          () => null,
          (x: unknown) => x,
        )
        expect(err).toBeInstanceOf(ValidationError)
        expect((err as ValidationError).fields).toEqual([{ field: 'page', errors: ['is not a cursor of this run'] }])
      }
      return first.data.map(comparable)
    })
  })

  test('an empty value list matches nothing; an unknown run, or another tenant’s, answers null', async () => {
    await same(async (e) => {
      expect(await e.logs.list('acme', main.id, { hosts: [] }, undefined, 20)).toEqual({ data: [], next: null })
      expect(await e.logs.latency('acme', main.id, { window: 'day', steps: [] })).toEqual({ window: 'day', buckets: [] })
      for (const [tenant, id] of [
        ['other', main.id],
        ['acme', crypto.randomUUID()],
      ]) {
        expect(await e.logs.list(tenant!, id!, {}, undefined, 20)).toBeNull()
        expect(await e.logs.metrics(tenant!, id!, { window: 'day' })).toBeNull()
        expect(await e.logs.latency(tenant!, id!, { window: 'day' })).toBeNull()
        expect((await e.logs.errorsOf(tenant!, id!, [hash(3)], BASE + DAY)).size).toBe(0)
      }
    })
  })

  test('two tenants with the same run id see only their own entries', async () => {
    const theirs = await newRun('other', main.id)
    await write(theirs, [fixture(0, BASE + 10 * DAY)])
    expect((await expectWalk(main, {}, 100, newestFirst(main.entries))).rows).toHaveLength(250)
    await expectWalk(theirs, {}, 100, theirs.entries, 'other')
    const metrics = await same((e) => e.logs.metrics('other', main.id, { window: 'week' }))
    expect(metrics!.buckets).toEqual([{ start: '2026-01-12T00:00:00.000Z', end: '2026-01-19T00:00:00.000Z', count: 1, groups: [{ count: 1 }] }])
  })
})

describe('errorsOf', () => {
  test('the last error entry of each URL at or before upTo, a fetch step’s before any other; only the run’s', async () => {
    const run = await newRun()
    const err = (url: number, step: LogEntry['step'], reason: LogEntry['error_reason'], at: number): Omit<LogEntry, 'run_seq'> => ({
      url: `https://e.example/${url}`,
      url_hash: hash(url),
      host: 'e.example',
      step,
      status: 'error',
      error_reason: reason,
      error_detail: `${step} ${reason}`,
      occurred_at: at,
    })
    await write(run, [
      err(1, 'parse', 'parse_error', BASE),
      err(1, 'fetch', 'timeout', BASE + 1),
      err(1, 'store', 'store_error', BASE + 2),
      err(2, 'fetch', 'dns', BASE),
      err(2, 'fetch', 'tls', BASE + 5),
    ])
    await write(run, [{ ...fixture(3), url_hash: hash(3), status: 'ok' }, err(4, 'parse', 'parse_error', BASE + 9)])
    const found = await same(async (e) => [...(await e.logs.errorsOf('acme', run.id, [hash(1), hash(2), hash(3), hash(4), hash(9)], BASE + 4.9))])
    expect(found).toEqual([
      [hash(1), { reason: 'timeout', detail: 'fetch timeout' }],
      [hash(2), { reason: 'dns', detail: 'fetch dns' }],
    ])
    const later = await same(async (e) => [...(await e.logs.errorsOf('acme', run.id, [hash(2), hash(4)], BASE + 60_000))])
    expect(later).toEqual([
      [hash(2), { reason: 'tls', detail: 'fetch tls' }],
      [hash(4), { reason: 'parse_error', detail: 'parse parse_error' }],
    ])
    expect(await same(async (e) => (await e.logs.errorsOf('acme', main.id, [hash(1)], BASE + DAY)).size)).toBe(0)
    expect(await same(async (e) => (await e.logs.errorsOf('acme', run.id, [], BASE + DAY)).size)).toBe(0)
  })
})

describe('writing', () => {
  test('entries of a run deleted meanwhile are dropped; the rest of the batch is written', async () => {
    const kept = await newRun()
    const gone = await newRun()
    for (const [k, e] of engines.entries()) await deleteRun(e, gone.seqs[k]!)
    for (const [k, e] of engines.entries()) {
      await e.writeLogs([
        { ...fixture(1), run_seq: kept.seqs[k]! },
        { ...fixture(2), run_seq: gone.seqs[k]! },
        { ...fixture(3), run_seq: kept.seqs[k]! },
      ])
      const rows = await e.exec<{ run_seq: number; url: string }>('SELECT run_seq, url FROM crawl_logs WHERE run_seq IN (?, ?) ORDER BY seq', [kept.seqs[k]!, gone.seqs[k]!])
      expect(rows).toEqual([
        { run_seq: kept.seqs[k]!, url: fixture(1).url },
        { run_seq: kept.seqs[k]!, url: fixture(3).url },
      ])
    }
  })

  test('an impossible entry is refused, and nothing of its batch written', async () => {
    const run = await newRun()
    for (const [k, e] of engines.entries()) {
      for (const bad of [{ step: 'fetching' as never }, { status: 'failed' as never }, { occurred_at: Number.NaN }]) {
        await expect(
          e.writeLogs([
            { ...fixture(1), run_seq: run.seqs[k]! },
            { ...fixture(2), ...bad, run_seq: run.seqs[k]! },
          ]),
        ).rejects.toThrow(TypeError)
      }
      expect(await e.exec('SELECT 1 FROM crawl_logs WHERE run_seq = ?', [run.seqs[k]!])).toEqual([])
    }
  })

  test('a run deletion takes its log with it', async () => {
    const run = await newRun()
    await write(
      run,
      Array.from({ length: 30 }, (_, i) => fixture(i)),
    )
    for (const [k, e] of engines.entries()) {
      await deleteRun(e, run.seqs[k]!)
      expect(await e.exec('SELECT 1 FROM crawl_logs WHERE run_seq = ?', [run.seqs[k]!])).toEqual([])
      expect(await e.logs.list('acme', run.id, {}, undefined, 10)).toBeNull()
    }
  })

  test('60,000 entries in one batch; 60,000 distinct minutes are more groups than an answer may hold', async () => {
    const run = await newRun()
    const n = 60_000
    await write(
      run,
      Array.from({ length: n }, (_, i) => ({ ...fixture(i), occurred_at: 1_780_000_000_000 + i * 60_000 })),
    )
    for (const e of engines) {
      const err = await e.logs.metrics('acme', run.id, { window: 'minute' }).then(
        () => null,
        (x: unknown) => x,
      )
      expect(err).toBeInstanceOf(ValidationError)
      expect((err as ValidationError).fields).toEqual([{ field: 'window', errors: [expect.stringContaining(`more than ${MAX_GROUPS} groups`)] }])
      const weeks = (await e.logs.metrics('acme', run.id, { window: 'week' }))!
      expect(weeks.buckets.reduce((s, b) => s + b.count, 0)).toBe(n)
    }
    await same((e) => e.logs.metrics('acme', run.id, { window: 'week', group_by: ['step', 'status', 'http_status'] }))
    await same((e) => e.logs.latency('acme', run.id, { window: 'week' }))
  }, 60_000)
})
