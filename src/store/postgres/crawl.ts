import type { CrawlStore, RobotsRecord, RunCounters } from '../crawl-store'
import { journalRuns, RunJournal } from '../fetch-journal'
import { pgSharedCrawl } from './cluster'
import { commitBatch, type Sent } from './crawl-commit'
import { errorCounts } from './crawl-frontier'
import { loggedSince, writeLogs } from './crawl-logs'
import { pgRunLeases } from './crawl-runs'
import { first, numeric, type Pg } from './pg'

/**
 * The crawl engine's store on PostgreSQL; `journalDir` is this process's local fetch-journal
 * folder (null: none). Many processes crawl each run together (decision 112): they join it as
 * workers (crawl-runs.ts), lease its host queues (cluster.ts), and commit their batches one at
 * a time under the run row's lock, each adding its own progress (crawl-commit.ts).
 */
export function pgCrawlStore(sql: Pg, journalDir: string | null): CrawlStore {
  /** Per run this process executes: what its commits last sent, so each adds only its own progress. */
  const sent = new Map<number, Sent>()
  return {
    shared: pgSharedCrawl(sql),
    ...pgRunLeases(sql),

    async resume(runSeq) {
      // Nothing is reclaimed: other processes may have rows of this run in flight. What a
      // process that died had taken goes back to the queue when its hosts are claimed (cluster.ts).
      // Nothing is queued locally either: rows reach this process through the hosts it claims.
      const counters = first<RunCounters>(await sql`SELECT queued, visited, failed, bytes, fetched, depth_cut FROM runs WHERE seq = ${runSeq}`) as RunCounters
      const errors = await errorCounts(sql, runSeq)
      // Copies: the engine counts on the objects it is given.
      sent.set(runSeq, { counters: { ...counters }, errors: { ...errors } })
      const hashes = ((await sql`SELECT hash FROM frontier WHERE run_seq = ${runSeq}`.values()) as [string][]).map((r) => r[0])
      return { counters, errorCounts: errors, hashes, maxSeq: hashes.length, queued: [], hostFailures: [] }
    },
    robots: async (runSeq, host) => first<RobotsRecord>(await sql`SELECT robots_status AS status, robots_body AS body FROM run_hosts WHERE run_seq = ${runSeq} AND host = ${host}`),
    saveRobots: async (runSeq, host, rec) =>
      void (await sql`INSERT INTO run_hosts (run_seq, host, robots_status, robots_body) VALUES (${runSeq}, ${host}, ${rec.status}, ${rec.body})
        ON CONFLICT (run_seq, host) DO UPDATE SET robots_status = excluded.robots_status, robots_body = excluded.robots_body`),
    loggedSince: (runSeq, urlHash, step, since) => loggedSince(sql, runSeq, urlHash, step, since),
    pageFetched: async (runSeq) => first<{ yes: boolean }>(await sql`SELECT EXISTS (SELECT 1 FROM visits WHERE run_seq = ${runSeq} AND status < 400) AS yes`)!.yes === true,

    async commit(runSeq, owner, batch, end) {
      const out = await commitBatch(sql, runSeq, owner, batch, sent.get(runSeq) ?? { counters: zero(), errors: {} }, end)
      if (end || !out.held) sent.delete(runSeq)
      else sent.set(runSeq, out.sent)
      return { held: out.held, counters: out.counters }
    },
    /** Which of these blob keys an artifact row (of any tenant) names: those bodies must stay. */
    async claimedBodies(keys) {
      if (!keys.length) return new Set()
      const rows = numeric<{ blob_key: string }>(await sql`SELECT DISTINCT blob_key FROM artifacts WHERE blob_key = ANY(${sql.array(keys, 'text')})`)
      return new Set(rows.map((r) => r.blob_key))
    },
    async writeLogs(entries) {
      await sql.begin((tx) => writeLogs(tx, entries))
    },

    journal: (runSeq) => RunJournal.open(journalDir, runSeq),
    journalRuns: () => journalRuns(journalDir),
  }
}

const zero = (): RunCounters => ({ queued: 0, visited: 0, failed: 0, bytes: 0, fetched: 0, depth_cut: 0 })
