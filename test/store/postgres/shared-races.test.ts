// A run's host queues and rows on PostgreSQL when several processes ask for them at the same
// moment (decision 112): what the shared crawl contract shows one call at a time holds for calls
// at once. Each "process" is a store over a pool of its own on one database.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import type { SQL } from 'bun'
import type { HostGrant, SharedCrawl } from '../../../src/store/crawl-store'
import { openPostgres } from '../../../src/store/postgres/open'
import { numeric } from '../../../src/store/postgres/pg'
import { postgresStore } from '../../../src/store/postgres/store'
import type { Store } from '../../../src/store/types'
import { clusterPort, freshDatabase } from '../../helpers/postgres'
import { batchOf, entryAt, href, zeroCounters as zero } from '../../helpers/crawl-batch'

// The throwaway cluster starts before the tests, which are timed without it.
beforeAll(() => void clusterPort(), 120_000)
const opened: SQL[] = []
afterAll(async () => {
  await Promise.all(opened.map((sql) => sql.close()))
})

const A = 'acme'

type Process = { sql: SQL; store: Store; shared: SharedCrawl; owner: string }

async function processes(n: number): Promise<Process[]> {
  const url = freshDatabase()
  const out: Process[] = []
  for (let i = 0; i < n; i++) {
    const sql = await openPostgres(url)
    opened.push(sql)
    const store = postgresStore(sql, { journalDir: null })
    out.push({ sql, store, shared: store.crawl.shared!, owner: `race:${i}` })
  }
  return out
}

/** A run of `p` (its first worker) with these [host, path] rows queued; the other processes join it. */
async function runOf(p: Process, rows: [string, string][], join: Process[] = []): Promise<number> {
  const { runSeq } = await p.store.jobs.create(A, { id: crypto.randomUUID(), name: 'j', config: {}, labels: {} }, { id: crypto.randomUUID(), config: {}, lease: { owner: p.owner, ms: 60_000 } })
  const seq = runSeq!
  const out = await p.store.crawl.commit(
    seq,
    p.owner,
    batchOf({ links: rows.map(([h, x]) => href(h, x)), enqueued: [{ entries: rows.map(([h, x]) => entryAt(h, x)), first: 1, done: false }], counters: { ...zero, queued: rows.length } }),
  )
  expect(out.held).toBe(true)
  const now = Date.now()
  for (const q of join) expect(await q.store.crawl.claimRun(seq, q.owner, now, now + 60_000)).toBe(true)
  return seq
}

describe('a shared run claimed and taken by processes at once', () => {
  test("claims at once: each of a run's hosts goes to exactly one process", async () => {
    const ps = await processes(4)
    for (let round = 0; round < 5; round++) {
      // Hosts of their own each round: the ceiling counts the earlier rounds' holders.
      const hosts = Array.from({ length: 12 }, (_, i) => `h${i}.r${round}.example`)
      const seq = await runOf(ps[0]!, [...hosts.map((h): [string, string] => [h, '/']), ...hosts.map((h): [string, string] => [h, '/2'])], ps.slice(1))
      const now = Date.now()
      // A claim may come back short while another locks hosts it then leaves (up to `want`): the
      // processes claim at once until no host is left, as their engines do at each look.
      const granted: string[][] = ps.map(() => [])
      for (let tries = 0; (await ps[0]!.shared.outlook(seq, now)).freeHosts > 0; tries++) {
        expect(tries).toBeLessThan(10)
        const grants = await Promise.all(ps.map((p) => p.shared.claimHosts(seq, p.owner, 5, now, now + 60_000, 2, 8)))
        grants.forEach((g, i) => granted[i]!.push(...g.map((x) => x.host)))
      }
      expect(granted.flat().sort()).toEqual([...hosts].sort())
      for (const [i, p] of ps.entries()) expect((await p.shared.renewHosts(seq, p.owner, now + 60_000))!.sort()).toEqual(granted[i]!.sort())
      expect(await ps[0]!.shared.outlook(seq, now)).toEqual({ remaining: 1, freeHosts: 0, workers: 4 })
    }
  })

  test('claims of one host by four runs at once share its ceiling: their slots add up to it, no more', async () => {
    const ps = await processes(4)
    for (let round = 0; round < 5; round++) {
      const host = `shared-${round}.example`
      const seqs: number[] = []
      for (const p of ps) seqs.push(await runOf(p, [[host, '/']]))
      const now = Date.now()
      const grants: HostGrant[][] = await Promise.all(ps.map((p, i) => p.shared.claimHosts(seqs[i]!, p.owner, 1, now, now + 60_000, 3, 5)))
      const slots = grants.map((g) => g[0]?.slots ?? 0)
      expect(slots.reduce((x, y) => x + y, 0)).toBe(5)
      for (const n of slots) expect(n).toBeLessThanOrEqual(3)
      const held = numeric<{ n: number }>(await ps[0]!.sql`SELECT coalesce(sum(slots), 0)::int AS n FROM run_hosts WHERE host = ${host} AND owner IS NOT NULL`)
      expect(held[0]!.n).toBe(5)
    }
  })

  test("takes at once by a host's holder: each row once, every row taken", async () => {
    const [p] = await processes(1)
    const rows = Array.from({ length: 40 }, (_, i): [string, string] => ['a.example', `/${i}`])
    const seq = await runOf(p!, rows)
    const now = Date.now()
    expect(await p!.shared.claimHosts(seq, p!.owner, 1, now, now + 60_000, 8, 8)).toHaveLength(1)
    const taken = await Promise.all(Array.from({ length: 8 }, () => p!.shared.take(seq, p!.owner, [{ host: 'a.example', n: 7 }], now)))
    const urls = taken.flat().map((r) => r.url)
    expect(urls).toHaveLength(40)
    expect(new Set(urls).size).toBe(40)
    for (const t of taken) expect(t.map((r) => r.seq)).toEqual([...t.map((r) => r.seq)].sort((x, y) => x - y))
  })

  test("a lapsed worker's host claimed by three processes at once: one gets it and names its taken rows, once", async () => {
    const ps = await processes(4)
    const [dead, ...rest] = ps as [Process, ...Process[]]
    for (let round = 0; round < 5; round++) {
      const T = Date.now()
      // A host of its own each round: the ceiling counts the earlier rounds' holders.
      const host = `lapsed-${round}.example`
      const seq = await runOf(dead, [
        [host, '/1'],
        [host, '/2'],
        [host, '/3'],
      ])
      for (const q of rest) expect(await q.store.crawl.claimRun(seq, q.owner, T, T + 120_000)).toBe(true)
      expect(await dead.shared.claimHosts(seq, dead.owner, 1, T, T + 60_000, 2, 8)).toHaveLength(1)
      const taken = await dead.shared.take(seq, dead.owner, [{ host, n: 2 }], T)
      expect(taken).toHaveLength(2)
      const L = T + 90_000
      const grants = (await Promise.all(rest.map((q) => q.shared.claimHosts(seq, q.owner, 5, L, L + 60_000, 2, 8)))).flat()
      expect(grants).toHaveLength(1)
      expect(grants[0]!.interrupted.map((r) => r.seq).sort((x, y) => x - y)).toEqual(taken.map((r) => r.seq))
    }
  })

  test('two processes queueing overlapping URLs at once: one row a URL, and the run counts each once', async () => {
    const ps = await processes(2)
    const [one, two] = ps as [Process, Process]
    for (let round = 0; round < 10; round++) {
      const seq = await runOf(one, [], [two])
      // Each process starts from the stored counters, as an execution does.
      for (const p of ps) await p.store.crawl.resume(seq)
      const paths = (from: number) => Array.from({ length: 100 }, (_, i): [string, string] => [`h${(from + i) % 7}.example`, `/${from + i}`])
      const found = [paths(0), paths(50)]
      const outs = await Promise.all(
        ps.map((p, i) =>
          p.store.crawl.commit(
            seq,
            p.owner,
            batchOf({
              links: found[i]!.map(([h, x]) => href(h, x)),
              enqueued: [{ entries: found[i]!.map(([h, x]) => entryAt(h, x)), first: 1, done: false }],
              counters: { ...zero, queued: 100 },
            }),
          ),
        ),
      )
      expect(outs.every((o) => o.held)).toBe(true)
      const [row] = numeric<{ rows: number; urls: number; queued: number }>(
        await one.sql`SELECT (SELECT count(*) FROM frontier WHERE run_seq = ${seq}) AS rows, (SELECT count(DISTINCT url) FROM frontier WHERE run_seq = ${seq}) AS urls,
          (SELECT queued FROM runs WHERE seq = ${seq}) AS queued`,
      )
      expect(row).toEqual({ rows: 150, urls: 150, queued: 150 })
      // The later commit answers the run's count; both rows' hosts can be claimed.
      expect(Math.max(...outs.map((o) => o.counters.queued))).toBe(150)
      expect(await one.shared.outlook(seq, Date.now())).toEqual({ remaining: 1, freeHosts: 7, workers: 2 })
    }
  })
})
