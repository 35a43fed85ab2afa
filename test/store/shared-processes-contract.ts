import { describe, expect, test } from 'bun:test'
import type { Store } from '../../src/store'
import type { RunCounters } from '../../src/store/crawl-store'
import { batchOf, zeroCounters as zero } from '../helpers/crawl-batch'
import { A, O1, O2, runOf } from './shared-crawl-contract'

/**
 * What two processes of a shared store do to a run's counters: each process remembers, per run,
 * the counters the store answered it last (or resume gave it; zero before either) and the error
 * counts it last sent, and a commit adds only the difference. The engine sends counters rebased on
 * the store's answer (src/crawl/commits.ts `rebased`) and error counts as its own running totals
 * from what it resumed with. `peer` opens another process's store on the same database.
 */
export function sharedProcessesContract(name: string, make: () => Promise<Store>, peer: (store: Store) => Promise<Store>) {
  describe(`SharedCrawl contract, two processes: ${name}`, () => {
    const plus = (c: RunCounters, d: Partial<RunCounters>): RunCounters => ({
      queued: c.queued + (d.queued ?? 0),
      visited: c.visited + (d.visited ?? 0),
      failed: c.failed + (d.failed ?? 0),
      bytes: c.bytes + (d.bytes ?? 0),
      fetched: c.fetched + (d.fetched ?? 0),
      depth_cut: Math.max(c.depth_cut, d.depth_cut ?? 0),
    })

    /** A run with O1 working on it in one process and O2 in another; null for a store that does not share runs. */
    async function twoWorkers() {
      const one = await make()
      if (!one.crawl.shared) return null
      const two = await peer(one)
      const { seq, runId } = await runOf(one, O1, [])
      const T = Date.now()
      expect(await two.crawl.claimRun(seq, O2, T, T + 60_000)).toBe(true)
      return { one, two, seq, runId }
    }

    test('counters: two processes committing in turns, each sending what it was answered plus what it counted since, end as the sum', async () => {
      const both = await twoWorkers()
      if (!both) return
      const { one, two, seq, runId } = both
      // O1 commits before any resume (zero as what it last had); O2 resumes after O1's first commit.
      let sum = zero
      const views = new Map<Store, RunCounters>([[one, zero]])
      const own: [Store, string, Partial<RunCounters>][] = [
        [one, O1, { queued: 3, visited: 1, fetched: 1, bytes: 100 }],
        [two, O2, { queued: 2, visited: 2, fetched: 2, bytes: 50, failed: 1, depth_cut: 1 }],
        [one, O1, { queued: -1, visited: 1, fetched: 1, bytes: 10 }],
        [two, O2, { queued: -2, visited: 2, failed: 1 }],
        [one, O1, { queued: 1, bytes: 5 }],
        [two, O2, {}],
        [one, O1, { visited: 1, fetched: 1 }],
      ]
      for (const [p, owner, d] of own) {
        if (!views.has(p)) {
          const resumed = await p.crawl.resume(seq)
          expect(resumed.counters).toEqual(sum)
          views.set(p, resumed.counters)
        }
        sum = plus(sum, d)
        const out = await p.crawl.commit(seq, owner, batchOf({ counters: plus(views.get(p)!, d) }))
        expect(out).toEqual({ held: true, counters: sum })
        views.set(p, out.counters)
      }
      // O1 sent depth_cut 0 after O2's 1: a flag once set stays.
      expect(sum).toEqual({ queued: 3, visited: 7, failed: 2, bytes: 165, fetched: 5, depth_cut: 1 })
      // O1's end (the run goes on) adds its last progress; O2's next commit still adds only its own.
      const ended = await one.crawl.commit(seq, O1, batchOf({ counters: plus(views.get(one)!, { visited: 1 }) }), { finish: null, failQueued: false })
      expect(ended.counters).toEqual((sum = plus(sum, { visited: 1 })))
      const after = await two.crawl.commit(seq, O2, batchOf({ counters: plus(views.get(two)!, { bytes: 1 }) }))
      expect(after.counters).toEqual((sum = plus(sum, { bytes: 1 })))
      expect((await one.runs.get(A, runId))!.stats).toEqual({ queued: sum.queued, visited: sum.visited, failed: sum.failed, bytes: sum.bytes })
    })

    test('error counts: each process sends its running counts from what it resumed with; the run adds what each counted since its last', async () => {
      const both = await twoWorkers()
      if (!both) return
      const { one, two, seq, runId } = both
      const stored = async () => (await two.runs.get(A, runId))!.error_counts
      const send = (p: Store, owner: string, errorCounts: Record<string, number> | null) => p.crawl.commit(seq, owner, batchOf({ errorCounts }))

      await send(one, O1, { dns: 1 })
      expect(await stored()).toEqual({ dns: 1 })
      const resumed = await two.crawl.resume(seq)
      expect(resumed.errorCounts).toEqual({ dns: 1 })
      await send(two, O2, { ...resumed.errorCounts, http_404: 2 })
      expect(await stored()).toEqual({ dns: 1, http_404: 2 })
      await send(one, O1, { dns: 2, timeout: 1 })
      expect(await stored()).toEqual({ dns: 2, http_404: 2, timeout: 1 })
      // Unchanged (null) keeps the stored counts; so does sending the same counts again.
      await send(two, O2, null)
      await send(one, O1, { dns: 2, timeout: 1 })
      expect(await stored()).toEqual({ dns: 2, http_404: 2, timeout: 1 })
      await send(two, O2, { dns: 3, http_404: 2 })
      const last = await stored()
      expect(last).toEqual({ dns: 4, http_404: 2, timeout: 1 })
      // Most frequent first, as SQLite keeps them.
      expect(Object.keys(last)).toEqual(['dns', 'http_404', 'timeout'])
      expect((await one.crawl.resume(seq)).errorCounts).toEqual(last)
    })
  })
}
