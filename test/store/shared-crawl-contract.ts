import { beforeEach, describe, expect, test } from 'bun:test'
import { linkHash } from '../../src/core/url'
import type { Store } from '../../src/store'
import type { Claimed, CrawlBatch, CrawlEnd, SharedCrawl } from '../../src/store/crawl-store'
import { batchOf, entryAt, href, zeroCounters as zero } from '../helpers/crawl-batch'

export const A = 'acme'
export const O1 = 'shared-contract:1:one'
export const O2 = 'shared-contract:2:two'
const O3 = 'shared-contract:3:three'
const O4 = 'shared-contract:4:four'
const urlsOf = (rows: Claimed[]) => rows.map((r) => r.url)
const slotsOf = (grants: { host: string; slots: number }[]) => Object.fromEntries(grants.map((g) => [g.host, g.slots]))
const bySeq = <T extends { seq: number }>(rows: T[]) => [...rows].sort((x, y) => x.seq - y.seq)
const a = 'a.example'
const b = 'b.example'
const both = (n: number) => [
  { host: a, n },
  { host: b, n },
]

/** A run leased to `owner` at its creation, with these [host, path] rows queued in this order. */
export async function runOf(store: Store, owner: string, rows: [string, string][], ms = 60_000): Promise<{ seq: number; runId: string }> {
  const created = await store.jobs.create(A, { id: crypto.randomUUID(), name: 'docs', config: {}, labels: {} }, { id: crypto.randomUUID(), config: {}, lease: { owner, ms } })
  const seq = created.runSeq!
  const out = await store.crawl.commit(
    seq,
    owner,
    batchOf({
      links: rows.map(([h, p]) => href(h, p)),
      enqueued: [{ entries: rows.map(([h, p]) => entryAt(h, p)), first: 1, done: false }],
      counters: { ...zero, queued: rows.length },
    }),
  )
  expect(out.held).toBe(true)
  return { seq, runId: created.run!.id }
}

/**
 * What a store shared by many processes must do (`store.crawl.shared`, decision 112): runs are
 * joined by workers, host queues are leased under a per-host ceiling over every run, rows are
 * taken as they start, and what a worker that died had taken comes back, named, to the next holder
 * of its host. Registered for every engine; each test checks nothing where `store.crawl.shared`
 * is absent (a store of one process, which crawl-contract.ts covers). Times are given to the
 * store as `now`, so leases lapse without waiting.
 */
export function sharedCrawlContract(name: string, make: () => Promise<Store>) {
  describe(`SharedCrawl contract: ${name}`, () => {
    let store: Store
    beforeEach(async () => {
      store = await make()
    })
    const sharedTest = (title: string, fn: (s: SharedCrawl) => Promise<void>) =>
      test(title, async () => {
        const s = store.crawl.shared
        if (s) await fn(s)
      })
    const commit = (seq: number, owner: string, batch: CrawlBatch, end?: CrawlEnd) => store.crawl.commit(seq, owner, batch, end)

    sharedTest('claimHosts: free host queues with work, up to want, each with the slots the per-host ceiling leaves over every run', async (s) => {
      const T = Date.now()
      const one = await runOf(store, O1, [
        [a, '/1'],
        [b, '/1'],
        ['c.example', '/1'],
      ])
      // A host whose one row was fetched already (a redirect's target) has no work.
      await commit(one.seq, O1, batchOf({ links: [href('d.example', '/')], enqueued: [{ entries: [entryAt('d.example', '/')], first: 4, done: true }], counters: { ...zero, queued: 3 } }))
      // Only a worker of the run claims.
      expect(await s.claimHosts(one.seq, O2, 5, T, T + 60_000, 3, 4)).toEqual([])
      const first = await s.claimHosts(one.seq, O1, 2, T, T + 60_000, 3, 4)
      expect(first).toHaveLength(2)
      const rest = await s.claimHosts(one.seq, O1, 5, T, T + 60_000, 3, 4)
      const grants = [...first, ...rest]
      expect(grants.map((g) => g.host).sort()).toEqual([a, b, 'c.example'])
      for (const g of grants) expect(g).toEqual({ host: g.host, slots: 3, nextAt: 0, failures: 0, interrupted: [] })
      expect(await s.claimHosts(one.seq, O1, 5, T, T + 60_000, 3, 4)).toEqual([])
      expect((await s.renewHosts(one.seq, O1, T + 60_000))!.sort()).toEqual([a, b, 'c.example'])

      // Another run on a.example: the ceiling (4) leaves it 1 of the 3 slots it may have there.
      const two = await runOf(store, O2, [
        [a, '/2'],
        ['e.example', '/2'],
      ])
      expect(slotsOf(await s.claimHosts(two.seq, O2, 5, T, T + 60_000, 3, 4))).toEqual({ [a]: 1, 'e.example': 3 })
      // A third: nothing is left of a.example.
      const three = await runOf(store, O3, [[a, '/3']], 180_000)
      expect(await s.claimHosts(three.seq, O3, 5, T, T + 120_000, 3, 4)).toEqual([])
      // A host given back frees its slots.
      await s.releaseHosts(one.seq, O1, [{ host: a, nextAt: 0 }])
      expect(slotsOf(await s.claimHosts(three.seq, O3, 5, T, T + 120_000, 3, 4))).toEqual({ [a]: 3 })
      // Only live holders count: run two's lease on a.example lapses after T + 60 s, run three's holds.
      const four = await runOf(store, O4, [[a, '/4']], 180_000)
      expect(await s.claimHosts(four.seq, O4, 5, T, T + 120_000, 3, 4)).toEqual([])
      expect(slotsOf(await s.claimHosts(four.seq, O4, 5, T + 60_001, T + 120_000, 3, 4))).toEqual({ [a]: 1 })
    })

    sharedTest("take: due rows of held hosts only, in seq order, each once across owners; giveBack puts back only the owner's own", async (s) => {
      const T = Date.now()
      const found: [string, string][] = [
        [a, '/1'],
        [b, '/1'],
        [a, '/2'],
        [b, '/2'],
        [a, '/3'],
        [b, '/3'],
        [a, '/4'],
      ]
      const { seq } = await runOf(store, O1, found)
      expect(await store.crawl.claimRun(seq, O2, T, T + 60_000)).toBe(true)
      expect(await s.take(seq, O1, both(10), T)).toEqual([])
      expect((await s.claimHosts(seq, O1, 2, T, T + 60_000, 2, 8)).map((g) => g.host).sort()).toEqual([a, b])
      expect(await s.take(seq, O2, both(10), T)).toEqual([])
      // Across hosts in seq order, which is the order found; n rows at most of each host.
      const taken = await s.take(
        seq,
        O1,
        [
          { host: a, n: 2 },
          { host: b, n: 10 },
        ],
        T,
      )
      expect(urlsOf(taken)).toEqual([href(a, '/1'), href(b, '/1'), href(a, '/2'), href(b, '/2'), href(b, '/3')])
      expect(taken.map((r) => r.seq)).toEqual(bySeq(taken).map((r) => r.seq))
      expect(taken[0]).toEqual({ ...entryAt(a, '/1'), seq: taken[0]!.seq, attempts: 0 })
      expect(urlsOf(await s.take(seq, O1, both(10), T))).toEqual([href(a, '/3'), href(a, '/4')])
      expect(await s.take(seq, O1, both(10), T)).toEqual([])
      const seqOf = new Map(taken.map((r) => [r.url, r.seq]))

      // Only due rows: a/1 is to be fetched again from T + 5 s.
      await commit(seq, O1, batchOf({ marks: [{ seq: seqOf.get(href(a, '/1'))!, to: 'requeued', notBefore: T + 5_000 }] }))
      expect(await s.take(seq, O1, both(10), T + 4_999)).toEqual([])
      expect((await s.take(seq, O1, both(10), T + 5_000)).map((r) => [r.url, r.attempts])).toEqual([[href(a, '/1'), 1]])

      // O1 gives its hosts back while it lives: its rows stay its own, in flight, but for one it gives back.
      await s.giveBack(seq, O1, [seqOf.get(href(a, '/2'))!])
      await s.releaseHosts(seq, O1, [
        { host: a, nextAt: 0 },
        { host: b, nextAt: 0 },
      ])
      const grants = await s.claimHosts(seq, O2, 5, T, T + 60_000, 2, 8)
      expect(grants.map((g) => [g.host, g.interrupted]).sort()).toEqual([
        [a, []],
        [b, []],
      ])
      // Another owner cannot give O1's rows back.
      await s.giveBack(seq, O2, [seqOf.get(href(b, '/2'))!, seqOf.get(href(b, '/3'))!])
      expect(urlsOf(await s.take(seq, O2, both(10), T + 5_000))).toEqual([href(a, '/2')])
      expect(await s.take(seq, O2, both(10), T + 5_000)).toEqual([])
      // O1 can, holding no host: they go to the holder.
      await s.giveBack(seq, O1, [seqOf.get(href(b, '/3'))!, seqOf.get(href(b, '/2'))!])
      expect(urlsOf(await s.take(seq, O2, both(10), T + 5_000))).toEqual([href(b, '/2'), href(b, '/3')])
      expect(await s.outlook(seq, T)).toEqual({ remaining: 1, freeHosts: 0, workers: 2 })
    })

    sharedTest("a lapsed worker's taken rows come back, named, to the next holder of their host; never while it lives", async (s) => {
      const T = Date.now()
      const { seq } = await runOf(store, O1, [
        [a, '/1'],
        [a, '/2'],
        [a, '/3'],
        [b, '/1'],
      ])
      expect(await store.crawl.claimRun(seq, O2, T, T + 120_000)).toBe(true)
      expect(await s.claimHosts(seq, O1, 5, T, T + 60_000, 2, 8)).toHaveLength(2)
      const taken = await s.take(seq, O1, [{ host: a, n: 2 }], T + 10)
      expect(urlsOf(taken)).toEqual([href(a, '/1'), href(a, '/2')])
      // While O1 lives, its hosts are not free.
      expect(await s.claimHosts(seq, O2, 5, T + 1_000, T + 120_000, 2, 8)).toEqual([])
      expect(await s.outlook(seq, T + 1_000)).toEqual({ remaining: 1, freeHosts: 0, workers: 2 })
      // Once its leases lapsed, they are, and what it had taken is queued again and named, with when it was taken.
      const L = T + 90_000
      expect(await s.outlook(seq, L)).toEqual({ remaining: 1, freeHosts: 2, workers: 1 })
      const grants = new Map((await s.claimHosts(seq, O2, 5, L, L + 60_000, 2, 8)).map((g) => [g.host, g]))
      expect([...grants.keys()].sort()).toEqual([a, b])
      expect(bySeq(grants.get(a)!.interrupted)).toEqual(taken.map((r) => ({ ...r, taken_at: T + 10 })))
      expect(grants.get(b)!.interrupted).toEqual([])
      expect(urlsOf(await s.take(seq, O2, both(10), L))).toEqual([href(a, '/1'), href(a, '/2'), href(a, '/3'), href(b, '/1')])
      expect(await s.outlook(seq, L)).toEqual({ remaining: 1, freeHosts: 0, workers: 1 })
    })

    sharedTest('a worker declared dead by a joining one stops being a worker at once: its hosts and taken rows go to the next claim, its commits write nothing', async (s) => {
      const T = Date.now()
      const { seq } = await runOf(store, O1, [
        [a, '/1'],
        [a, '/2'],
      ])
      expect(await s.claimHosts(seq, O1, 5, T, T + 60_000, 2, 8)).toHaveLength(1)
      const [first] = await s.take(seq, O1, [{ host: a, n: 1 }], T + 10)
      expect(await store.crawl.claimRun(seq, O2, T, T + 60_000, O1)).toBe(true)
      expect(await store.crawl.renew(seq, O1, T + 60_000)).toBe(false)
      expect(await s.renewHosts(seq, O1, T + 60_000)).toBeNull()
      expect(await s.outlook(seq, T)).toEqual({ remaining: 1, freeHosts: 1, workers: 1 })
      expect(await s.claimHosts(seq, O2, 5, T, T + 60_000, 2, 8)).toEqual([{ host: a, slots: 2, nextAt: 0, failures: 0, interrupted: [{ ...first!, taken_at: T + 10 }] }])
      expect((await commit(seq, O1, batchOf({ marks: [{ seq: first!.seq, to: 'done' }] }))).held).toBe(false)
      expect(urlsOf(await s.take(seq, O2, both(10), T))).toEqual([href(a, '/1'), href(a, '/2')])
    })

    sharedTest('releaseHosts: only its holder gives a host back; the next holder gets its next start, never moved earlier', async (s) => {
      const T = Date.now()
      const { seq } = await runOf(store, O1, [
        [a, '/1'],
        [b, '/1'],
      ])
      expect(await store.crawl.claimRun(seq, O2, T, T + 60_000)).toBe(true)
      expect(await s.claimHosts(seq, O1, 5, T, T + 60_000, 2, 8)).toHaveLength(2)
      await s.releaseHosts(seq, O2, [{ host: a, nextAt: T + 9_000 }])
      expect((await s.renewHosts(seq, O1, T + 60_000))!.sort()).toEqual([a, b])
      await s.releaseHosts(seq, O1, [{ host: a, nextAt: T + 5_000 }])
      expect(await s.renewHosts(seq, O1, T + 60_000)).toEqual([b])
      expect(await s.take(seq, O1, both(10), T)).toHaveLength(1)
      expect(await s.claimHosts(seq, O2, 5, T, T + 60_000, 2, 8)).toEqual([{ host: a, slots: 2, nextAt: T + 5_000, failures: 0, interrupted: [] }])
      await s.releaseHosts(seq, O2, [{ host: a, nextAt: T + 1_000 }])
      expect((await s.claimHosts(seq, O1, 5, T, T + 60_000, 2, 8)).map((g) => [g.host, g.nextAt])).toEqual([[a, T + 5_000]])
      await s.releaseHosts(seq, O1, [{ host: a, nextAt: T + 7_000 }])
      expect((await s.claimHosts(seq, O2, 5, T, T + 60_000, 2, 8)).map((g) => [g.host, g.nextAt])).toEqual([[a, T + 7_000]])
    })

    sharedTest('renewHosts: the hosts a worker holds; null for an owner that is not or no longer a worker (it left; the run finished)', async (s) => {
      const T = Date.now()
      const { seq } = await runOf(store, O1, [
        [a, '/1'],
        [b, '/1'],
      ])
      expect(await store.crawl.claimRun(seq, O2, T, T + 60_000)).toBe(true)
      expect(await s.renewHosts(seq, O3, T + 60_000)).toBeNull()
      const [held] = await s.claimHosts(seq, O1, 1, T, T + 60_000, 2, 8)
      expect(await s.renewHosts(seq, O1, T + 90_000)).toEqual([held!.host])
      expect(await s.renewHosts(seq, O2, T + 90_000)).toEqual([])
      // Renewed: at T + 75 s both O1 and its host are still live.
      expect(await s.outlook(seq, T + 75_000)).toEqual({ remaining: 1, freeHosts: 1, workers: 2 })
      // O2 leaves: an end that leaves the run running.
      expect((await commit(seq, O2, batchOf(), { finish: null, failQueued: false })).held).toBe(true)
      expect(await s.renewHosts(seq, O2, T + 90_000)).toBeNull()
      expect(await s.claimHosts(seq, O2, 5, T, T + 60_000, 2, 8)).toEqual([])
      // Finished from outside: no worker, no host lease.
      await store.crawl.finish(seq, 'manual', Date.now(), 'stopped')
      expect(await s.renewHosts(seq, O1, T + 90_000)).toBeNull()
      expect(await s.take(seq, O1, both(10), T)).toEqual([])
      expect(await s.outlook(seq, T)).toEqual({ remaining: 1, freeHosts: 2, workers: 0 })
      expect(await store.crawl.claimRun(seq, O1, T, T + 60_000)).toBe(false)
    })

    sharedTest('outlook: whether a row is queued or in flight anywhere, hosts with work and no live holder, live workers', async (s) => {
      const T = Date.now()
      const { seq } = await runOf(store, O1, [
        [a, '/1'],
        [a, '/2'],
        [b, '/1'],
      ])
      expect(await s.outlook(seq, T)).toEqual({ remaining: 1, freeHosts: 2, workers: 1 })
      expect(await store.crawl.claimRun(seq, O2, T, T + 30_000)).toBe(true)
      expect(await s.outlook(seq, T)).toEqual({ remaining: 1, freeHosts: 2, workers: 2 })
      expect(await s.claimHosts(seq, O1, 5, T, T + 60_000, 2, 8)).toHaveLength(2)
      expect(await s.outlook(seq, T)).toEqual({ remaining: 1, freeHosts: 0, workers: 2 })
      const rows = await s.take(seq, O1, both(10), T)
      expect(rows).toHaveLength(3)
      const last = rows.find((r) => r.host === b)!
      await commit(seq, O1, batchOf({ marks: rows.filter((r) => r !== last).map((r) => ({ seq: r.seq, to: 'done' as const })) }))
      // b/1 is still in flight; a.example has no work left.
      expect(await s.outlook(seq, T)).toEqual({ remaining: 1, freeHosts: 0, workers: 2 })
      expect(await s.outlook(seq, T + 45_000)).toEqual({ remaining: 1, freeHosts: 0, workers: 1 })
      // O1's leases lapsed too: its host with a row in flight is free to claim.
      expect(await s.outlook(seq, T + 90_000)).toEqual({ remaining: 1, freeHosts: 1, workers: 0 })
      await commit(seq, O1, batchOf({ marks: [{ seq: last.seq, to: 'failed' }] }))
      expect(await s.outlook(seq, T)).toEqual({ remaining: 0, freeHosts: 0, workers: 2 })
    })

    sharedTest('frontier rows are keyed by URL: a URL queued already is skipped and not counted; a fetched redirect target settles its queued row', async (s) => {
      const T = Date.now()
      const { seq } = await runOf(store, O1, [
        [a, '/1'],
        [a, '/2'],
      ])
      expect(await store.crawl.claimRun(seq, O2, T, T + 60_000)).toBe(true)
      const again = await commit(
        seq,
        O2,
        batchOf({ links: [href(a, '/2'), href(a, '/3')], enqueued: [{ entries: [entryAt(a, '/2'), entryAt(a, '/3')], first: 1, done: false }], counters: { ...zero, queued: 4 } }),
      )
      expect(again.counters.queued).toBe(3)
      // A redirect's fetched target: a/1 was queued and is settled, a/4 is new and done.
      const settled = await commit(
        seq,
        O2,
        batchOf({ links: [href(a, '/1'), href(a, '/4')], enqueued: [{ entries: [entryAt(a, '/1'), entryAt(a, '/4')], first: 1, done: true }], counters: again.counters }),
      )
      expect(settled.counters.queued).toBe(2)
      const state = await store.crawl.resume(seq)
      expect(state.maxSeq).toBe(4)
      expect(state.hashes.sort()).toEqual(['/1', '/2', '/3', '/4'].map((p) => linkHash(href(a, p))).sort())
      expect(await s.claimHosts(seq, O1, 5, T, T + 60_000, 2, 8)).toHaveLength(1)
      const rows = await s.take(seq, O1, both(10), T)
      expect(urlsOf(rows)).toEqual([href(a, '/2'), href(a, '/3')])
      expect(new Set(rows.map((r) => r.seq)).size).toBe(2)
      // A fetched target whose row is in flight leaves it as it is: its taker settles it.
      const inFlight = await commit(seq, O2, batchOf({ enqueued: [{ entries: [entryAt(a, '/2')], first: 1, done: true }], counters: settled.counters }))
      expect(inFlight.counters.queued).toBe(2)
      expect(await s.outlook(seq, T)).toEqual({ remaining: 1, freeHosts: 0, workers: 2 })
    })

    sharedTest("an end gives back what its owner took and leaves another worker's rows in flight; a finishing end fails what is left anywhere and ends every worker", async (s) => {
      const T = Date.now()
      const { seq, runId } = await runOf(store, O1, [
        [a, '/1'],
        [a, '/2'],
        [b, '/1'],
        [b, '/2'],
      ])
      for (const o of [O2, O3]) expect(await store.crawl.claimRun(seq, o, T, T + 60_000)).toBe(true)
      const [h1] = await s.claimHosts(seq, O1, 1, T, T + 60_000, 2, 8)
      const [h2] = await s.claimHosts(seq, O2, 1, T, T + 60_000, 2, 8)
      const r1 = await s.take(seq, O1, [{ host: h1!.host, n: 10 }], T)
      const r2 = await s.take(seq, O2, [{ host: h2!.host, n: 10 }], T)
      expect([r1.length, r2.length]).toEqual([2, 2])
      expect((await commit(seq, O1, batchOf(), { finish: null, failQueued: false })).held).toBe(true)
      // O1's rows are queued again and its host free; O2's are still in flight.
      expect(await s.outlook(seq, T)).toEqual({ remaining: 1, freeHosts: 1, workers: 2 })
      expect(await s.claimHosts(seq, O3, 5, T, T + 60_000, 2, 8)).toEqual([{ host: h1!.host, slots: 2, nextAt: 0, failures: 0, interrupted: [] }])
      const r3 = await s.take(seq, O3, [{ host: h1!.host, n: 10 }], T)
      expect(r3).toEqual(r1)
      // O2's rows are not O3's to take, even once O2 gave its host back.
      await s.releaseHosts(seq, O2, [{ host: h2!.host, nextAt: 0 }])
      expect(await s.claimHosts(seq, O3, 5, T, T + 60_000, 2, 8)).toEqual([{ host: h2!.host, slots: 2, nextAt: 0, failures: 0, interrupted: [] }])
      expect(await s.take(seq, O3, [{ host: h2!.host, n: 10 }], T)).toEqual([])
      // A finishing end: what is left, in flight in O2 included, fails and is counted; no one works on the run.
      const out = await commit(seq, O3, batchOf({ marks: r3.map((r) => ({ seq: r.seq, to: 'done' as const })) }), {
        finish: { reason: 'max_urls', outcome: null },
        failQueued: true,
      })
      expect(out).toMatchObject({ held: true, counters: { queued: 0, failed: 2 } })
      expect((await store.runs.get(A, runId))!.error_counts).toEqual({ left_queued: 2 })
      expect(await s.renewHosts(seq, O2, T + 60_000)).toBeNull()
      expect(await s.outlook(seq, T)).toEqual({ remaining: 0, freeHosts: 0, workers: 0 })
      expect((await commit(seq, O2, batchOf({ marks: r2.map((r) => ({ seq: r.seq, to: 'done' as const })) }))).held).toBe(false)
    })
  })
}
