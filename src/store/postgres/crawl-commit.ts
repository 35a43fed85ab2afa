import { sortedCounts } from '../../core/counts'
import type { CrawlBatch, CrawlEnd, RunCounters } from '../crawl-store'
import { insertArtifacts } from './artifacts'
import { ensureLinks } from './catalogue'
import { recordPages, writeLogs } from './crawl-logs'
import { applyMarks, counts, enqueue, failQueued, saveHostFailures } from './crawl-frontier'
import { first, type Pg } from './pg'
import { finish } from './crawl-runs'

/** What one process last sent for a run: a batch's counters and error counts are its own, and the run's move by the difference. */
export type Sent = { counters: RunCounters; errors: Record<string, number> }

/**
 * Writes an execution's batch in one transaction if `owner` is still a worker of the run
 * (decision 112): false, and nothing written, when the run is gone or finished, or the process
 * is no longer one of its workers. The run row is locked first, so the commits of one run's
 * processes go one at a time: each adds its own progress to the run's counters and error counts,
 * and their frontier inserts, keyed by URL, cannot deadlock.
 */
export async function commitBatch(sql: Pg, runSeq: number, owner: string, batch: CrawlBatch, sent: Sent, end?: CrawlEnd): Promise<{ held: boolean; counters: RunCounters; sent: Sent }> {
  return sql.begin(async (tx) => {
    // Sent together, run in order: the worker check is a statement of its own, so its snapshot
    // is taken once the run row is locked and sees what a claim that held the row meanwhile did
    // (a subquery of the locking statement would see the rows as they were before the wait).
    const [locked, worker] = await Promise.all([
      tx`SELECT tenant, error_counts FROM runs WHERE seq = ${runSeq} FOR NO KEY UPDATE`,
      tx`SELECT 1 AS one FROM run_workers WHERE run_seq = ${runSeq} AND owner = ${owner}`,
    ])
    const run = first<{ tenant: string; error_counts: string }>(locked)
    if (!run || !first(worker)) return { held: false, counters: batch.counters, sent }
    const { tenant } = run
    // The run row is held from here to the commit, so the statements are sent together, as
    // far as one may go without another's rows: the client pipelines what is sent at once on
    // the transaction's connection, and the server runs it in the order sent. Page records and
    // artifact rows name their links' seqs, so they go after ensureLinks.
    const [queuedFix] = await Promise.all([
      // The engine counted every entry it enqueued as queued; another process may have queued
      // some first, and a fetched redirect target may have been queued here or there.
      enqueue(tx, runSeq, batch.enqueued),
      batch.links.length ? ensureLinks(tx, tenant, batch.links) : undefined,
      applyMarks(tx, runSeq, batch.marks),
      saveHostFailures(tx, runSeq, batch.hostFailures),
      batch.logs.length ? writeLogs(tx, batch.logs) : undefined,
    ])
    await Promise.all([batch.pages.length ? recordPages(tx, runSeq, batch.pages, tenant) : undefined, batch.artifacts.length ? insertArtifacts(tx, batch.artifacts) : undefined])

    // What this commit sends becomes the new baseline only if the transaction commits.
    const next: Sent = { ...sent }
    let errors = JSON.parse(run.error_counts) as Record<string, number>
    if (batch.errorCounts) {
      errors = added(errors, batch.errorCounts, sent.errors)
      next.errors = batch.errorCounts
    }
    const c = batch.counters
    const d = sent.counters
    const errorsText = batch.errorCounts ? JSON.stringify(sortedCounts(Object.entries(errors))) : null
    let counters = first<RunCounters>(
      await tx`UPDATE runs SET queued = queued + ${c.queued - d.queued + queuedFix}, visited = visited + ${c.visited - d.visited}, failed = failed + ${c.failed - d.failed},
        bytes = bytes + ${c.bytes - d.bytes}, fetched = fetched + ${c.fetched - d.fetched}, depth_cut = GREATEST(depth_cut, ${c.depth_cut}),
        error_counts = coalesce(${errorsText}::text, error_counts)
        WHERE seq = ${runSeq} RETURNING queued, visited, failed, bytes, fetched, depth_cut`,
    )!
    next.counters = counters
    if (end) {
      // What this process had taken and not settled goes back to the queue for the others.
      await tx`UPDATE frontier SET state = 0, taken_by = NULL, lease_until = NULL WHERE run_seq = ${runSeq} AND state = 1 AND taken_by = ${owner}`
      if (end.finish) {
        if (end.failQueued) {
          const n = await failQueued(tx, runSeq)
          if (n > 0) {
            errors = { ...errors, left_queued: (errors.left_queued ?? 0) + n }
            await tx`UPDATE runs SET error_counts = ${JSON.stringify(sortedCounts(Object.entries(errors)))} WHERE seq = ${runSeq}`
          }
        }
        const rows = await counts(tx, runSeq)
        counters = { ...counters, queued: rows.queued + rows.leased, failed: rows.failed }
        await tx`UPDATE runs SET queued = ${counters.queued}, failed = ${counters.failed} WHERE seq = ${runSeq}`
        await finish(tx, runSeq, end.finish.reason, Date.now(), end.finish.outcome)
      }
      await tx`DELETE FROM run_workers WHERE run_seq = ${runSeq} AND owner = ${owner}`
      await tx`UPDATE run_hosts SET owner = NULL, lease_until = NULL, slots = 0 WHERE run_seq = ${runSeq} AND owner = ${owner}`
    }
    return { held: true, counters, sent: next }
  })
}

/** The stored counts plus what `now` counted since `before` (both one process's totals). */
function added(stored: Record<string, number>, now: Record<string, number>, before: Record<string, number>): Record<string, number> {
  const out = { ...stored }
  for (const [reason, n] of Object.entries(now)) {
    const more = n - (before[reason] ?? 0)
    if (more) out[reason] = (out[reason] ?? 0) + more
  }
  return out
}
