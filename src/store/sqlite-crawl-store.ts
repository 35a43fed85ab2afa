import type { CrawlBatch, CrawlEnd, CrawlStore, RunCounters } from './crawl-store'
import type { LogEntry } from './crawl-logs'
import { sortedCounts } from '../core/counts'
import { DONE } from './frontier'
import type { SqliteRepositories } from './index'

type Repositories = SqliteRepositories

/**
 * The crawl engine's store on SQLite. SQLite is in-process and synchronous, so each method does
 * its work before it returns (an already settled promise); a batch is one IMMEDIATE transaction.
 */
export function sqliteCrawlStore(repos: Repositories): CrawlStore {
  const { frontier, crawlLogs, artifacts, links, runGraph } = repos
  // Entries are written by the commits below, inside their transactions (manual flush).
  const logWriter = crawlLogs.writer({ manual: true })
  const writeLogs = (entries: LogEntry[]) => {
    for (const e of entries) logWriter.add(e)
    logWriter.flush()
  }

  return {
    claimable: async (now, limit) => frontier.claimable(now, limit),
    run: async (seq) => frontier.run(seq),
    heldRunning: async (now) => frontier.heldRunning(now),
    claimRun: async (seq, owner, now, until, deadOwner = null) => frontier.claimRun(seq, owner, now, until, deadOwner),
    renew: async (seq, owner, until) => frontier.renew(seq, owner, until),
    status: async (seq) => frontier.status(seq),
    finish: async (seq, reason, now, outcome) => void frontier.finish(seq, reason, now, outcome),

    async resume(runSeq) {
      frontier.reclaim(runSeq)
      return {
        counters: frontier.counters(runSeq),
        errorCounts: frontier.errorCounts(runSeq),
        hashes: frontier.hashes(runSeq),
        maxSeq: frontier.maxSeq(runSeq),
        queued: frontier.queued(runSeq),
        hostFailures: frontier.hostFailures(runSeq),
      }
    },
    robots: async (runSeq, host) => frontier.robots(runSeq, host),
    saveRobots: async (runSeq, host, record) => frontier.saveRobots(runSeq, host, record),
    loggedSince: async (runSeq, urlHash, step, since) => crawlLogs.loggedSince(runSeq, urlHash, step as LogEntry['step'], since),
    pageFetched: async (runSeq) => frontier.pageFetched(runSeq),

    async commit(runSeq: number, owner: string, batch: CrawlBatch, end?: CrawlEnd) {
      let counters: RunCounters = batch.counters
      const held = repos.transaction(() => {
        // The lease is asked under the write lock: no other process can take the run between the
        // check and the rows (a run another process took may have given these seqs to other URLs).
        const tenant = frontier.heldBy(runSeq, owner)
        if (tenant === null) return false
        if (batch.links.length) links.ensure(tenant, batch.links)
        for (const e of batch.enqueued) frontier.enqueue(runSeq, e.entries, e.first, e.done ? DONE : undefined)
        for (const m of batch.marks) {
          if (m.to === 'requeued') frontier.requeue(runSeq, m.seq, m.notBefore)
          else if (m.to === 'done') frontier.done(runSeq, m.seq)
          else frontier.failed(runSeq, m.seq)
        }
        for (const [host, failures] of batch.hostFailures) frontier.saveHostFailures(runSeq, host, failures)
        if (batch.pages.length) runGraph.recordPages(runSeq, batch.pages, tenant)
        if (batch.logs.length) writeLogs(batch.logs)
        if (batch.artifacts.length) artifacts.insertMany(batch.artifacts)
        let errorCounts = batch.errorCounts
        if (end) {
          // What is in flight goes back to the queue for whoever runs this next.
          frontier.reclaim(runSeq)
          if (end.failQueued) {
            const n = frontier.failQueued(runSeq)
            if (n > 0) {
              const counts = errorCounts ?? frontier.errorCounts(runSeq)
              errorCounts = sortedCounts(Object.entries({ ...counts, left_queued: (counts.left_queued ?? 0) + n }))
            }
          }
          const c = frontier.counts(runSeq)
          counters = { ...counters, queued: c.queued + c.leased, failed: c.failed }
          if (end.finish) frontier.finish(runSeq, end.finish.reason, Date.now(), end.finish.outcome)
          frontier.release(runSeq, owner)
        }
        // The run's counters move with the rows they count, so a resumed run starts from both.
        frontier.saveCounters(runSeq, counters)
        if (errorCounts) frontier.saveErrorCounts(runSeq, errorCounts)
        return true
      })
      return { held, counters }
    },
    claimedBodies: async (keys) => artifacts.claimed(keys),
    async writeLogs(entries) {
      repos.transaction(() => writeLogs(entries))
    },

    journal: (runSeq) => repos.journals.open(runSeq),
    journalRuns: () => repos.journals.runs(),
  }
}
