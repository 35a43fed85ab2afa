import type { Claimed, CrawlStore, RobotsRecord, RunCounters } from '../crawl-store'
import { journalRuns, RunJournal } from '../fetch-journal'
import { commitBatch } from './crawl-commit'
import { errorCounts, reclaim } from './crawl-frontier'
import { loggedSince, writeLogs } from './crawl-logs'
import { pgRunLeases } from './crawl-runs'
import { first, numeric, type Pg } from './pg'

/**
 * The crawl engine's store on PostgreSQL (the port of sqlite-crawl-store.ts); `journalDir` is
 * this process's local fetch-journal folder (null: none). Many processes may run executions
 * against one database: a run's rows are written only by the holder of its lease, and a batch
 * only after the lease is checked under the run row's lock (crawl-commit.ts).
 */
export function pgCrawlStore(sql: Pg, journalDir: string | null): CrawlStore {
  return {
    ...pgRunLeases(sql),

    resume: (runSeq) =>
      // One transaction: the leases given back and the state read are one step, as in SQLite.
      sql.begin(async (tx) => {
        await reclaim(tx, runSeq)
        const counters = first<RunCounters>(await tx`SELECT queued, visited, failed, bytes, fetched, depth_cut FROM runs WHERE seq = ${runSeq}`) as RunCounters
        const hashes = ((await tx`SELECT hash FROM frontier WHERE run_seq = ${runSeq}`.values()) as [string][]).map((r) => r[0])
        const maxSeq = first<{ n: number }>(await tx`SELECT coalesce(max(seq), 0) AS n FROM frontier WHERE run_seq = ${runSeq}`)!.n
        const queued = numeric<Claimed & { not_before: number }>(
          await tx`SELECT seq, hash, url, host, depth, parent, kind, attempts, not_before FROM frontier WHERE run_seq = ${runSeq} AND state IN (0, 1) ORDER BY seq`,
        )
        const hostFailures = numeric<{ host: string; failures: number }>(await tx`SELECT host, failures FROM run_hosts WHERE run_seq = ${runSeq} AND failures > 0 ORDER BY host`)
        return { counters, errorCounts: await errorCounts(tx, runSeq), hashes, maxSeq, queued, hostFailures }
      }),
    robots: async (runSeq, host) => first<RobotsRecord>(await sql`SELECT robots_status AS status, robots_body AS body FROM run_hosts WHERE run_seq = ${runSeq} AND host = ${host}`),
    saveRobots: async (runSeq, host, rec) =>
      void (await sql`INSERT INTO run_hosts (run_seq, host, robots_status, robots_body) VALUES (${runSeq}, ${host}, ${rec.status}, ${rec.body})
        ON CONFLICT (run_seq, host) DO UPDATE SET robots_status = excluded.robots_status, robots_body = excluded.robots_body`),
    loggedSince: (runSeq, urlHash, step, since) => loggedSince(sql, runSeq, urlHash, step, since),
    pageFetched: async (runSeq) => first<{ yes: boolean }>(await sql`SELECT EXISTS (SELECT 1 FROM visits WHERE run_seq = ${runSeq} AND status < 400) AS yes`)!.yes === true,

    commit: (runSeq, owner, batch, end) => commitBatch(sql, runSeq, owner, batch, end),
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
