// Page records whose entries the crawl log reads back (decision 101), made alike for the API
// tests of the log (test/api/crawl-logs-pages.test.ts) and the SQLite engine's read counts
// (test/store/sqlite-crawl-log-reads.test.ts).
import type { PageRecord } from '../../src/store/page-records'

export type LoggedLink = { hash: string; url: string; host: { hash: string; domain: string } }

/**
 * Records of pages i of `ids` (one batch, visited in that order from `start`), link k the page of
 * ids[k]: their times, bits, hosts and pipelines all vary with i, and their entries overlap in
 * time with other pages'. A page of `slow` was fetched 30 s before `start`.
 */
export function logPageRecords(ls: LoggedLink[], ids: number[], start: number, slow = new Set<number>()): PageRecord[] {
  let visitedAt = start
  return ids.map((i, k) => {
    const l = ls[k]!
    const logged = [15, 15, 9, 1, 15, 11, 13, 15][i % 8]!
    // A slow page was fetched long before it was done (a stalled store, say).
    const fetchAt = slow.has(i) ? start - 30_000 : start + k * 40 + (i % 7) * 13
    const parseMs = ((i * 17) % 50) + (i % 4) * 0.25
    const storeMs = ((i * 29) % 30) + (i % 2) * 0.5
    // Never back within a batch (the engine dates a record when it joins the batch).
    visitedAt = Math.max(visitedAt, fetchAt + Math.ceil(parseMs + storeMs) + (i % 5) * 60)
    return {
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
  })
}
