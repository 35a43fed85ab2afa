import { sortedCounts } from '../../core/counts'
import type { CrawlBatch, CrawlEnd, RunCounters } from '../crawl-store'
import { insertArtifacts } from './artifacts'
import { ensureLinks } from './catalogue'
import { recordPages, writeLogs } from './crawl-logs'
import { applyMarks, counts, enqueue, errorCounts as storedErrorCounts, failQueued, reclaim, saveCounters, saveHostFailures } from './crawl-frontier'
import { first, type Pg } from './pg'
import { finish } from './crawl-runs'

/**
 * Writes an execution's batch in one transaction if `owner` still holds the run (the port of
 * sqliteCrawlStore.commit): false, and nothing written, when the run is gone or another process
 * holds it.
 */
export async function commitBatch(sql: Pg, runSeq: number, owner: string, batch: CrawlBatch, end?: CrawlEnd): Promise<{ held: boolean; counters: RunCounters }> {
  let counters: RunCounters = batch.counters
  const held = await sql.begin(async (tx) => {
    // The run row stays locked until the commit: a claimRun or renew of another process waits for
    // it and then sees this lease, so no one can take the run between the check and the rows (a
    // run another process took may have given these seqs to other URLs). A process whose lease
    // lapsed and was taken meanwhile finds no row here.
    const run = first<{ tenant: string }>(await tx`SELECT tenant FROM runs WHERE seq = ${runSeq} AND lease_owner = ${owner} FOR UPDATE`)
    if (!run) return false
    const { tenant } = run
    if (batch.links.length) await ensureLinks(tx, tenant, batch.links)
    await enqueue(tx, runSeq, batch.enqueued)
    await applyMarks(tx, runSeq, batch.marks)
    await saveHostFailures(tx, runSeq, batch.hostFailures)
    if (batch.pages.length) await recordPages(tx, runSeq, batch.pages, tenant)
    if (batch.logs.length) await writeLogs(tx, batch.logs)
    if (batch.artifacts.length) await insertArtifacts(tx, batch.artifacts)
    let errorCounts = batch.errorCounts
    if (end) {
      // What is in flight goes back to the queue for whoever runs this next.
      await reclaim(tx, runSeq)
      if (end.failQueued) {
        const n = await failQueued(tx, runSeq)
        if (n > 0) {
          const stored = errorCounts ?? (await storedErrorCounts(tx, runSeq))
          errorCounts = sortedCounts(Object.entries({ ...stored, left_queued: (stored.left_queued ?? 0) + n }))
        }
      }
      const c = await counts(tx, runSeq)
      counters = { ...counters, queued: c.queued + c.leased, failed: c.failed }
      if (end.finish) await finish(tx, runSeq, end.finish.reason, Date.now(), end.finish.outcome)
      await tx`UPDATE runs SET lease_owner = NULL, lease_until = NULL WHERE seq = ${runSeq} AND lease_owner = ${owner}`
    }
    // The run's counters move with the rows they count, so a resumed run starts from both.
    await saveCounters(tx, runSeq, counters, errorCounts)
    return true
  })
  return { held, counters }
}
