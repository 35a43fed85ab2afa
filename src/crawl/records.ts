import type { BlobStore } from '../blob/blob-store'
import type { Store } from '../store'
import type { Claimed } from '../store/frontier'
import type { LogEntry } from '../store/crawl-logs'
import type { RunJournal } from '../store/fetch-journal'
import { runPrefix } from '../blob/run-bodies'

export type LogReason = NonNullable<LogEntry['error_reason']>
type RunRef = { seq: number; id: string; tenant: string }
/** A crawl log entry as the engine writes it: the run and the time are filled in here. */
export type EngineLog = Omit<LogEntry, 'run_seq' | 'occurred_at'>

/**
 * Everything a run records about the pages it visits (design.md §5, "What a run records"):
 * crawl logs (batched by their writer), visits, edges, catalogue links and artifacts. The engine
 * calls these inside its own transactions where several must land together.
 */
export class RunRecords {
  private readonly logs: ReturnType<Store['crawlLogs']['writer']>
  private lost = false
  private closed = false

  constructor(
    private readonly store: Store,
    private readonly run: RunRef,
  ) {
    // Flushed by the engine's commits only (manual): entries land with the rows they describe.
    this.logs = store.crawlLogs.writer({ manual: true })
  }

  /**
   * Buffers an entry (committed with the engine's next batch); `at` is when it happened, now by
   * default. False when it was not taken: the run went to another process, or the records are
   * closed (a fetch that ended after the execution's last commit; its journal entry stays open
   * for the next execution to log).
   */
  log(entry: EngineLog, at = Date.now()): boolean {
    if (this.lost || this.closed) return false
    this.logs.add({ ...entry, run_seq: this.run.seq, occurred_at: at } as LogEntry)
    return true
  }

  /**
   * The run went to another process: what is buffered and whatever is logged from here on
   * describe fetches the new holder will make again, so none of it is written.
   */
  lose() {
    this.lost = true
    this.logs.discard()
  }

  /** Catalogue rows for URLs the run met (hosts and links of the tenant). */
  links(urls: string[]) {
    if (urls.length) this.store.links.ensure(this.run.tenant, urls)
  }

  edges(parent: string, children: string[]) {
    if (children.length) this.store.runGraph.recordEdges(this.run.seq, parent, children, Date.now())
  }

  visit(c: Claimed, hostHash: string, status: number | null, at: number) {
    this.store.runGraph.recordVisit(this.run.seq, c.hash, hostHash, c.depth, status, at)
  }

  /**
   * Puts the body in the blob store (durable first, and named in the run's journal before it
   * is put, so a body whose row never commits is found and deleted); answers the write of its
   * catalogue row, for the engine to commit with the page's other rows.
   */
  async artifact(urlHash: string, kind: 'raw' | 'parsed' | 'asset', pipelineId: string | null, body: Uint8Array, contentType: string, blobs: BlobStore, journal: RunJournal): Promise<() => void> {
    // Time-ordered (v7) ids: the artifact's and its blob's index entries are appended, not
    // scattered over random pages that every batch would write back.
    const id = Bun.randomUUIDv7()
    // No tenant id in the key (design.md §3: they never appear in paths or keys); the v7 artifact
    // id is unique on its own, the run id groups a run's bodies.
    const key = `${runPrefix(this.run.id)}${id}`
    const entry = journal.startBody(key)
    const info = await blobs.put(key, body, contentType)
    const row = {
      tenant: this.run.tenant,
      id,
      run_id: this.run.id,
      url_hash: urlHash,
      blob_key: key,
      kind,
      pipeline_id: pipelineId,
      content_type: contentType,
      size: info.size,
      checksum: info.checksum,
      created_at: Date.now(),
    }
    return () => {
      this.store.artifacts.insert(row)
      journal.logged(entry)
    }
  }

  flush() {
    this.logs.flush()
  }

  close() {
    this.closed = true
    this.logs.close() // after lose(), nothing is buffered: this writes nothing
  }
}
