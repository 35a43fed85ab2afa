import type { Logger } from '../log'
import type { CrawlStore, LogEntry } from '../store/crawl-store'
import type { JournalBody, RunJournal } from '../store/fetch-journal'
import type { EngineLog } from './page-batch'
import type { BlobStore } from '../blob/blob-store'
import { deleteRunBodies, deleteUnclaimed } from '../blob/run-bodies'

type Deps = { store: { crawl: CrawlStore }; blobs: BlobStore; log: Logger }
/** Where an execution's interrupted entries go: its batch, or straight to the store for a run no one executes. */
type LogSink = { log(entry: EngineLog, at: number, settles?: number): boolean }

/** What an interrupted fetch's entry says: the page may have been served, and was not recorded. */
export const INTERRUPTED_DETAIL = 'trawl stopped (it was killed, crashed or shut down) while this fetch was in flight, before its answer was recorded; the server may have answered it'

/** The entry of a fetch that was sent and never recorded: `retried` when its URL is fetched again, else `error`. */
export function interruptedEntry(
  where: Pick<EngineLog, 'url' | 'url_hash' | 'host' | 'depth' | 'parent_url_hash'>,
  step: EngineLog['step'],
  status: 'retried' | 'error',
  extra: Pick<EngineLog, 'latency_ms' | 'http_status'> = {},
): EngineLog {
  return { ...where, step, status, error_reason: 'interrupted', error_detail: INTERRUPTED_DETAIL, ...extra }
}

/**
 * Crawl log entries for the fetches an earlier holder of the run sent and never recorded (the
 * journal's leftovers): one each, at the time the fetch started, `retried` for a page or
 * robots.txt (its URL is still queued, so it is fetched again) and `error` for a sitemap (read
 * once, at the start). A fetch whose entry did reach the database (a crash between the commit
 * and the journal's note of it) gets no second one. Answers how many were written.
 */
export async function logInterrupted(store: CrawlStore, runSeq: number, journal: RunJournal, rec: LogSink, runFinished = false): Promise<number> {
  let n = 0
  for (const o of journal.orphans()) {
    // A shared run's page fetches cut short are named by its frontier (rows taken and never
    // settled), and logged by the process that claims their host next; this journal would log
    // them a second time. Once the run is finished no one claims them: the journal logs them.
    if (store.shared && o.step === 'fetch' && !runFinished) {
      journal.logged(o.id)
      continue
    }
    if (!(await store.loggedSince(runSeq, o.url_hash, o.step, o.started_at))) {
      const where = { url: o.url, url_hash: o.url_hash, host: o.host, ...(o.depth !== undefined ? { depth: o.depth } : {}), ...(o.parent_url_hash ? { parent_url_hash: o.parent_url_hash } : {}) }
      rec.log(interruptedEntry(where, o.step, o.step === 'discover' ? 'error' : 'retried'), o.started_at, o.id)
      n++
    } else journal.logged(o.id)
  }
  return n
}

/**
 * Journals no execution will open again, or not soon: those of finished and paused runs get
 * their entries now and their uncommitted bodies deleted; those of deleted runs lose their
 * bodies. A running run's journal is its next execution's (this process's runner takes it, or
 * the process holding it has it open).
 */
export async function sweepJournals(store: CrawlStore, blobs: BlobStore, log: Logger, keepGoing: () => boolean = () => true): Promise<void> {
  for (const seq of store.journalRuns()) {
    if (!keepGoing()) return
    const run = await store.run(seq)
    if (run && run.status !== 'finished' && run.status !== 'paused') continue
    const journal = store.journal(seq)
    let settled = false
    try {
      if (run) {
        const entries: LogEntry[] = []
        const settles: number[] = []
        const sink: LogSink = {
          log(entry, at, id) {
            entries.push({ ...entry, run_seq: seq, occurred_at: at } as LogEntry)
            if (id !== undefined) settles.push(id)
            return true
          },
        }
        const n = await logInterrupted(store, seq, journal, sink, run.status === 'finished')
        await store.writeLogs(entries)
        for (const id of settles) journal.logged(id)
        if (n) log.info('interrupted fetches logged', { run: run.id, fetches: n })
      }
      await dropBodies({ store: { crawl: store }, blobs, log }, journal, journal.orphanBodies())
      settled = true
    } catch (err) {
      log.warn('a run journal could not be swept; the next start tries again', { run: run?.id ?? null, error: String(err) })
    } finally {
      // Kept when something failed, so nothing it names is forgotten, and when a resume of the
      // paused run has meanwhile given it to an execution, which has it open now.
      if (settled && (await store.run(seq))?.status !== 'running') journal.close(true)
      else journal.abandon()
    }
  }
}

/**
 * Deletes journalled bodies that no artifact row names, and marks them settled (by the journal's
 * next commit, or its closing). A body is journalled before its put may begin, so none of those
 * a row will still name is lost: the caller asks only about bodies whose writer can commit no more.
 */
export async function dropBodies({ store: { crawl }, blobs, log }: Deps, journal: RunJournal, bodies: JournalBody[]): Promise<void> {
  if (!bodies.length) return
  await deleteUnclaimed(
    blobs,
    bodies.map((b) => b.key),
    { claimed: (keys) => crawl.claimedBodies(keys) },
    log,
  )
  for (const b of bodies) journal.logged(b.id)
}

/**
 * The end of an execution's journal: the bodies whose rows were not committed (a stop, a lost
 * lease, the run deleted, a failed commit) are deleted, and the journal closed. A deleted run's
 * prefix is emptied too, for a body put after the delete listed it. After a lost lease the new
 * holder reads and writes the journal: nothing more is written to it.
 */
export async function closeJournal(deps: Deps, run: { seq: number; id: string }, journal: RunJournal, lostLease: boolean): Promise<void> {
  const { blobs, log } = deps
  const crawl = deps.store.crawl
  const gone = !(await crawl.run(run.seq))
  await dropBodies(deps, journal, journal.openBodies()).catch((err) =>
    log.warn('bodies without artifact rows could not be deleted; the next execution tries again', { run: run.id, error: String(err) }),
  )
  if (gone)
    await deleteRunBodies(blobs, run.id, { claimed: (keys) => crawl.claimedBodies(keys) }, log).catch((err) =>
      log.warn('the bodies of a deleted run could not all be deleted', { run: run.id, error: String(err) }),
    )
  if (lostLease) return journal.abandon()
  // What dropBodies settled is written as settled, unless the run is gone (then the journal goes).
  journal.committed()
  journal.close(gone)
}
