import type { BlobStore, InlineBlob } from '../blob/blob-store'
import { checksumOf } from '../blob/checksum'
import type { Claimed } from '../store/frontier'
import { logRow, type LogEntry, type LogRow } from '../store/crawl-logs'
import type { CrawlOp } from '../store/crawl-batch'

export type LogReason = NonNullable<LogEntry['error_reason']>
type RunRef = { seq: number; id: string; tenant: string }
type ArtifactKind = 'raw' | 'parsed' | 'asset'
/** A crawl log entry as the engine writes it: the run and the time are filled in here. */
export type EngineLog = Omit<LogEntry, 'run_seq' | 'occurred_at'>

/**
 * Everything a run records about the pages it visits (DESIGN §5 "per URL the run records"):
 * crawl logs, visits, edges, catalogue links and artifacts, as the writes (src/store/crawl-batch.ts)
 * and log rows the engine commits in its batches, so that entries land with the rows they describe.
 */
export class RunRecords {
  private logs: LogRow[] = []
  private lost = false

  constructor(private readonly run: RunRef) {}

  log(entry: EngineLog) {
    if (this.lost) return
    this.logs.push(logRow({ ...entry, run_seq: this.run.seq, occurred_at: Date.now() } as LogEntry))
  }

  /** The log rows since the last call, for the next batch. */
  takeLogs(): LogRow[] {
    const rows = this.logs
    this.logs = []
    return rows
  }

  /**
   * The run went to another process: what is buffered and whatever is logged from here on
   * describe fetches the new holder will make again, so none of it is written.
   */
  lose() {
    this.lost = true
    this.logs = []
  }

  /** Catalogue rows for URLs the run met (hosts and links of the tenant). */
  links(urls: string[]): CrawlOp {
    return { op: 'links', urls }
  }

  edges(parent: string, children: string[]): CrawlOp {
    return { op: 'edges', parent, children, at: Date.now() }
  }

  visit(c: Claimed, hostHash: string, status: number | null, at: number): CrawlOp {
    return { op: 'visit', hash: c.hash, hostHash, depth: c.depth, status, at }
  }

  /**
   * Puts the body in the blob store (durable first); answers the write of its catalogue row, for
   * the engine to commit with the page's other rows.
   */
  async artifact(urlHash: string, kind: ArtifactKind, pipelineId: string | null, body: Uint8Array, contentType: string, blobs: BlobStore): Promise<CrawlOp> {
    const { id, key } = this.newArtifact()
    const info = await blobs.put(key, body, contentType)
    return this.artifactOp(id, key, urlHash, kind, pipelineId, contentType, info.size, info.checksum)
  }

  /**
   * The artifact row and its body as a blob row, both for the engine's next batch: the disk
   * store's small bodies commit with the page's rows (crawl-batch.ts), not through a put.
   */
  artifactWithBody(urlHash: string, kind: ArtifactKind, pipelineId: string | null, body: Uint8Array, contentType: string): { op: CrawlOp; blob: InlineBlob } {
    const { id, key } = this.newArtifact()
    const checksum = checksumOf(body)
    return {
      op: this.artifactOp(id, key, urlHash, kind, pipelineId, contentType, body.byteLength, checksum),
      blob: { key, size: body.byteLength, checksum, content_type: contentType, body },
    }
  }

  private newArtifact() {
    // Time-ordered (v7) ids: the artifact's and its blob's index entries are appended, not
    // scattered over random pages that every batch would write back.
    const id = Bun.randomUUIDv7()
    return { id, key: `t/${this.run.tenant}/${this.run.id}/${id}` }
  }

  private artifactOp(id: string, key: string, urlHash: string, kind: ArtifactKind, pipelineId: string | null, contentType: string, size: number, checksum: string): CrawlOp {
    const row = { tenant: this.run.tenant, id, run_id: this.run.id, url_hash: urlHash, blob_key: key, kind, pipeline_id: pipelineId, content_type: contentType, size, checksum, created_at: Date.now() }
    return { op: 'artifact', row }
  }
}
