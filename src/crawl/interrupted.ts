import type { Logger } from '../log'
import type { Store } from '../store'
import type { RunJournal } from '../store/fetch-journal'
import { RunRecords } from './records'
import type { BlobStore } from '../blob/blob-store'
import { deleteUnclaimed } from '../blob/run-bodies'

/** What an interrupted fetch's entry says: the page may have been served, and was not recorded. */
export const INTERRUPTED_DETAIL = 'trawl stopped (it was killed, crashed or shut down) while this fetch was in flight, before its answer was recorded; the server may have answered it'

/**
 * Crawl log entries for the fetches an earlier holder of the run sent and never recorded (the
 * journal's leftovers): one each, at the time the fetch started, `retried` for a page or
 * robots.txt (its URL is still queued, so it is fetched again) and `error` for a sitemap (read
 * once, at the start). A fetch whose entry did reach the database (a crash between the commit
 * and the journal's note of it) gets no second one. Answers how many were written.
 */
export function logInterrupted(store: Store, runSeq: number, journal: RunJournal, rec: RunRecords): number {
  let n = 0
  for (const o of journal.orphans()) {
    if (!store.crawlLogs.loggedSince(runSeq, o.url_hash, o.step, o.started_at)) {
      rec.log(
        {
          url: o.url,
          url_hash: o.url_hash,
          host: o.host,
          step: o.step,
          status: o.step === 'discover' ? 'error' : 'retried',
          error_reason: 'interrupted',
          error_detail: INTERRUPTED_DETAIL,
          ...(o.depth !== undefined ? { depth: o.depth } : {}),
          ...(o.parent_url_hash ? { parent_url_hash: o.parent_url_hash } : {}),
        },
        o.started_at,
      )
      n++
    }
    journal.logged(o.id)
  }
  return n
}

/**
 * Journals no execution will open again, or not soon: those of finished and paused runs get
 * their entries now and their uncommitted bodies deleted; those of deleted runs lose their
 * bodies. A running run's journal is its next execution's (this process's runner takes it, or
 * the process holding it has it open).
 */
export async function sweepJournals(store: Store, blobs: BlobStore, log: Logger, keepGoing: () => boolean = () => true): Promise<void> {
  for (const seq of store.journals.runs()) {
    if (!keepGoing()) return
    const run = store.frontier.run(seq)
    if (run && run.status !== 'finished' && run.status !== 'paused') continue
    const journal = store.journals.open(seq)
    let settled = false
    try {
      if (run) {
        const rec = new RunRecords(store, run)
        const n = logInterrupted(store, seq, journal, rec)
        store.transaction(() => rec.flush())
        rec.close()
        if (n) log.info('interrupted fetches logged', { run: run.id, fetches: n })
      }
      const bodies = journal.orphanBodies()
      if (bodies.length) await deleteUnclaimed(blobs, bodies.map((b) => b.key), store.artifacts, log)
      settled = true
    } catch (err) {
      log.warn('a run journal could not be swept; the next start tries again', { run: run?.id ?? null, error: String(err) })
    } finally {
      // Kept when something failed, so nothing it names is forgotten, and when a resume of the
      // paused run has meanwhile given it to an execution, which has it open now.
      if (settled && store.frontier.run(seq)?.status !== 'running') journal.close(true)
      else journal.abandon()
    }
  }
}
