import type { BlobStore } from '../blob/blob-store'
import { runPrefix } from '../blob/run-bodies'
import type { CrawlBatch, CrawlEnd, CrawlStore, FrontierEntry, FrontierMark, LogEntry, NewArtifact, PageRecord, RunCounters, RunJournal } from '../store/crawl-store'

export type LogReason = NonNullable<LogEntry['error_reason']>
/** A crawl log entry as the engine writes it: the run and the time are filled in here. */
export type EngineLog = Omit<LogEntry, 'run_seq' | 'occurred_at'>
type RunRef = { seq: number; id: string; tenant: string }

/** Commit at least this often (decision 102; the execution also commits on count). */
const COMMIT_MS = 250

/**
 * What an execution writes between two commits (design.md §5, "What a run records"), gathered as
 * plain data and handed to the store whole: pages with their children and successful steps, the
 * other log entries, frontier moves, catalogue URLs, artifact rows. The execution commits it on
 * time and on count (decision 102). A kill -9 loses the uncommitted batch, whose fetches the
 * journal names: the next holder logs them as interrupted and fetches their URLs again.
 */
/** A batch being built: the counters join it when it is committed, as they stand then. */
type Building = Omit<CrawlBatch, 'counters'>

export class PageBatch {
  private batch: Building = PageBatch.empty()
  /** Journal entries settled by the batch being built (their rows are in it). */
  private settles: number[] = []
  private lost = false
  private closed = false
  private lastCommit = Date.now()

  constructor(
    private readonly store: CrawlStore,
    private readonly run: RunRef,
    private readonly journal: RunJournal,
  ) {}

  private static empty(): Building {
    return { links: [], enqueued: [], marks: [], hostFailures: new Map(), pages: [], logs: [], artifacts: [], errorCounts: null }
  }

  /** Whether entries are still taken: false once the run went to another process or the batch closed. */
  get open(): boolean {
    return !this.lost && !this.closed
  }

  /**
   * Buffers an entry; `at` is when it happened, now by default. False when it was not taken (the
   * run went to another process, or the execution made its last commit): a fetch it settles then
   * stays open in the journal for the next execution to log.
   */
  log(entry: EngineLog, at = Date.now(), settles?: number): boolean {
    if (!this.open) return false
    this.batch.logs.push({ ...entry, run_seq: this.run.seq, occurred_at: at } as LogEntry)
    if (settles !== undefined) this.settles.push(settles)
    return true
  }

  /** A visited page; `settles` is its fetch's journal entry when the page record stands for the fetch's entry. */
  page(record: PageRecord, settles?: number) {
    if (!this.open) return
    this.batch.pages.push(record)
    if (settles !== undefined) this.settles.push(settles)
  }

  links(urls: string[]) {
    for (const u of urls) this.batch.links.push(u)
  }

  enqueue(entries: FrontierEntry[], first: number, done = false) {
    this.batch.enqueued.push({ entries, first, done })
  }

  mark(m: FrontierMark) {
    this.batch.marks.push(m)
  }

  hostFailures(host: string, failures: number) {
    this.batch.hostFailures.set(host, failures)
  }

  errorCounts(counts: Record<string, number>) {
    this.batch.errorCounts = counts
  }

  /**
   * Puts a body in the blob store (durable first, and named in the run's journal before it is put,
   * so a body whose row never commits is found and deleted); its row joins the batch.
   */
  async artifact(urlHash: string, kind: 'raw' | 'parsed' | 'asset', pipelineId: string | null, body: Uint8Array, contentType: string, blobs: BlobStore): Promise<NewArtifact> {
    // Time-ordered (v7) ids: the artifact's and its blob's index entries are appended, not
    // scattered over random pages that every batch would write back.
    const id = Bun.randomUUIDv7()
    // No tenant id in the key (design.md §3); the v7 id is unique on its own, the run id groups a run's bodies.
    const key = `${runPrefix(this.run.id)}${id}`
    const entry = this.journal.startBody(key)
    const info = await blobs.put(key, body, contentType)
    const row: NewArtifact = {
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
    this.batch.artifacts.push(row)
    this.settles.push(entry)
    return row
  }

  /**
   * A parsed artifact kept as the page's raw body (decision 103): a row naming `raw`'s blob, with
   * the parsed JSON's length and the base URL it is made again at when read. Nothing is put.
   */
  parsedOf(raw: NewArtifact, pipelineId: string, size: number, sourceUrl: string) {
    const id = Bun.randomUUIDv7()
    this.batch.artifacts.push({ ...raw, id, kind: 'parsed', pipeline_id: pipelineId, content_type: 'application/json', size, source_url: sourceUrl, created_at: Date.now() })
  }

  /** Whether nothing was added since the last commit. */
  get empty(): boolean {
    const b = this.batch
    return !b.pages.length && !b.logs.length && !b.links.length && !b.enqueued.length && !b.marks.length && !b.artifacts.length && !b.hostFailures.size && !b.errorCounts
  }

  /** Whether the batch is due on time: COMMIT_MS since the last commit. */
  due(now: number): boolean {
    return now - this.lastCommit >= COMMIT_MS
  }

  /**
   * Hands the batch to the store with the counters as they stand. False when the run is no
   * longer this execution's (deleted, or taken by another process): nothing was written, and
   * nothing logged from here on will be.
   */
  async commit(owner: string, counters: RunCounters, end?: CrawlEnd): Promise<{ held: boolean; counters: RunCounters }> {
    const batch: CrawlBatch = { ...this.batch, counters }
    const settles = this.settles
    this.batch = PageBatch.empty()
    this.settles = []
    this.lastCommit = Date.now()
    if (this.lost) return { held: false, counters }
    let out: { held: boolean; counters: RunCounters }
    try {
      out = await this.store.commit(this.run.seq, owner, batch, end)
    } catch (err) {
      // Nothing was written: its error counts are written with the next batch.
      if (batch.errorCounts && !this.batch.errorCounts) this.batch.errorCounts = batch.errorCounts
      throw err
    }
    if (out.held) this.journal.settle(settles)
    else this.lose()
    return out
  }

  /** The run went to another process: what is buffered describes fetches the new holder makes again. */
  lose() {
    this.lost = true
    this.batch = PageBatch.empty()
    this.settles = []
  }

  close() {
    this.closed = true
  }
}
