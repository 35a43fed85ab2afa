import type { Store } from '.'
import type { InlineBlob } from '../blob/blob-store'
import type { NewArtifact } from './artifacts'
import type { LogRow } from './crawl-logs'
import { QUEUED, type FrontierEntry, type RunCounters } from './frontier'

/**
 * One write of a crawl, as plain data: what the engine decides while it crawls, applied later
 * in a batch (CRAWL-NOTES: one transaction for many pages). Plain data, not closures, so that a
 * batch can cross to the writer thread (src/store/crawl-writer.ts).
 */
export type CrawlOp =
  /** Catalogue rows (hosts and links of the run's tenant) for URLs the run met. */
  | { op: 'links'; urls: string[] }
  /** Frontier rows with seqs from `first`, in `state` (queued unless said). */
  | { op: 'enqueue'; entries: FrontierEntry[]; first: number; state?: number }
  | { op: 'done' | 'failed'; seq: number }
  | { op: 'requeue'; seq: number; notBefore: number }
  | { op: 'host_failures'; host: string; failures: number }
  | { op: 'visit'; hash: string; hostHash: string; depth: number; status: number | null; at: number }
  | { op: 'edges'; parent: string; children: string[]; at: number }
  | { op: 'artifact'; row: NewArtifact }

/**
 * What one commit of a run writes: its ops in order, its log rows, its counters as they stand,
 * and the bodies its artifact rows point at, as rows of the disk blob store (`blobs`).
 */
export type CrawlBatch = { run: number; tenant: string; owner: string; ops: CrawlOp[]; logs: LogRow[]; counters: RunCounters; blobs: InlineBlob[] }

/** Commits blob rows in blobs.db (InlineRows.write, or the writer thread's own connection). */
export type BlobRowWriter = (rows: readonly InlineBlob[]) => void

/** Whether a commit was written, or found that `owner` no longer holds the run (nothing written). */
export type CommitResult = 'ok' | 'lost'

/** Applies a batch's writes inside the caller's transaction (no lease check). */
export function applyCrawlBatch(store: Store, b: Omit<CrawlBatch, 'owner'>) {
  const { frontier } = store
  for (const o of b.ops) {
    switch (o.op) {
      case 'links':
        if (o.urls.length) store.links.ensure(b.tenant, o.urls)
        break
      case 'enqueue':
        frontier.enqueue(b.run, o.entries, o.first, o.state ?? QUEUED)
        break
      case 'done':
        frontier.done(b.run, o.seq)
        break
      case 'failed':
        frontier.failed(b.run, o.seq)
        break
      case 'requeue':
        frontier.requeue(b.run, o.seq, o.notBefore)
        break
      case 'host_failures':
        frontier.saveHostFailures(b.run, o.host, o.failures)
        break
      case 'visit':
        store.runGraph.recordVisit(b.run, o.hash, o.hostHash, o.depth, o.status, o.at)
        break
      case 'edges':
        if (o.children.length) store.runGraph.recordEdges(b.run, o.parent, o.children, o.at)
        break
      case 'artifact':
        store.artifacts.insert(o.row)
        break
    }
  }
  store.crawlLogs.insertRows(b.logs)
  // The run's counters move with the rows they count, so a resumed run starts from both.
  frontier.saveCounters(b.run, b.counters)
}

/**
 * Commits a batch in one transaction (blob rows in one of their own just before), if its owner still holds the run: a deleted run took its
 * rows with it, and a run another process took over (this one stalled past its lease) is not
 * the owner's to write, as its seqs may now name other URLs. The lease is asked under the write
 * lock, so no other process can take it between the check and the rows. `andThen` runs in the
 * same transaction after the batch (the end of a run).
 */
export function commitCrawlBatch(store: Store, b: CrawlBatch, writeBlobs: BlobRowWriter | null, andThen?: () => void): CommitResult {
  return store.transaction(() => {
    if (!store.frontier.holds(b.run, b.owner)) return 'lost'
    // The bodies commit first, in blobs.db, so that no committed artifact row points at a body
    // that is not there. A failure after it leaves rows no artifact names, as a crash between
    // a put and its artifact row always could.
    if (b.blobs.length) {
      if (!writeBlobs) throw new Error('a crawl batch carries blob rows, and this writer has no blob store to write them to')
      writeBlobs(b.blobs)
    }
    applyCrawlBatch(store, b)
    andThen?.()
    return 'ok'
  })
}
