import type { Store } from '.'
import type { InlineRows } from '../blob/blob-store'
import { workerUrl } from '../util/worker-url'
import { commitCrawlBatch, type CommitResult, type CrawlBatch } from './crawl-batch'
import type { Synchronous } from './wal'

export type WriterRequest =
  | { kind: 'open'; path: string; blobs: { path: string; synchronous: Synchronous } | null; acks: SharedArrayBuffer }
  | { kind: 'commit'; id: number; batch: PostedBatch }
  | { kind: 'close' }
export type WriterReply =
  | { kind: 'ready' }
  | { kind: 'failed'; message: string }
  | { kind: 'committed'; id: number; result: CommitResult }
  | { kind: 'error'; id: number; message: string }
  | { kind: 'closed' }

/** How a commit ended: its result, or the error that rolled it back. */
export type CommitDone = (result: CommitResult | null, error?: unknown) => void

/**
 * Commits the crawl engine's batches (src/store/crawl-batch.ts), in the order given. `done` is
 * called once the batch is in the database (or was refused for a lost lease, or failed), from
 * `commit` itself, from `poll`, or from a message of the writer thread.
 */
export interface CrawlWriter {
  commit(batch: CrawlBatch, done: CommitDone): void
  /** Calls `done` of the commits that have landed since (cheap: a caller may ask on every turn). */
  poll(): void
  /** Where commits happen now: on the writer thread, or on the caller's (no thread, or it failed). */
  readonly mode: 'thread' | 'inline'
  /** Bodies of at most this many bytes may ride in a batch's `blobs`; null: none may (no disk blob store). */
  readonly blobRowMax: number | null
  close(): Promise<void>
}

/** Commits on the calling thread, before `commit` returns: the writer of tests and the fallback. */
export class InlineCrawlWriter implements CrawlWriter {
  readonly mode = 'inline'
  readonly blobRowMax: number | null
  constructor(
    private readonly store: Store,
    private readonly blobs: InlineRows | null = null,
  ) {
    this.blobRowMax = blobs?.maxBytes ?? null
  }

  commit(batch: CrawlBatch, done: CommitDone) {
    let result: CommitResult
    try {
      result = commitCrawlBatch(this.store, batch, this.blobs?.write ?? null)
    } catch (err) {
      return done(null, err)
    }
    done(result)
  }

  poll() {}

  close(): Promise<void> {
    return Promise.resolve()
  }
}

/**
 * A batch as it crosses to the thread: JSON, and the bodies of its blob rows, whose buffers are
 * transferred rather than copied. Bun's structured clone of the batch itself cost the crawl
 * thread about an eighth of its time; JSON and transfers cost a fraction of that. A body that is
 * a view of a larger buffer is copied first, so that only its bytes move.
 */
type PostedBatch = { json: string; bodies: Uint8Array[] }

function post(batch: CrawlBatch): { posted: PostedBatch; transfer: ArrayBuffer[] } {
  const transfer = new Set<ArrayBuffer>()
  const bodies = batch.blobs.map(({ body }) => {
    const own = body.byteOffset === 0 && body.byteLength === body.buffer.byteLength && body.buffer instanceof ArrayBuffer && !transfer.has(body.buffer) ? body : body.slice()
    transfer.add(own.buffer as ArrayBuffer)
    return own
  })
  const blobs = batch.blobs.map(({ body: _, ...row }) => row)
  return { posted: { json: JSON.stringify({ ...batch, blobs }), bodies }, transfer: [...transfer] }
}

/** The batch posted, its blob rows with their bodies again. */
export function received(posted: PostedBatch): CrawlBatch {
  const batch = JSON.parse(posted.json) as CrawlBatch
  batch.blobs.forEach((b, i) => (b.body = posted.bodies[i]!))
  return batch
}

// scripts/build.ts embeds the worker in the binary; test/e2e/crawl.test.ts checks it runs there.
const WORKER_URL = workerUrl(import.meta.url, 'store', 'crawl-writer-worker.ts')

/**
 * Commits on a thread of its own, through its own connection to the same file (decision 73).
 * The crawl thread was the one busy core of a crawl, and a third of its time went to SQLite:
 * here it hands the batch over and goes on fetching and parsing while the batch commits.
 *
 * Every commit is answered by a message. The thread also counts, in shared memory, the commits
 * that succeeded one after another from the first (`acks[0]`, the last such id): `poll` reads it,
 * so the crawl thread learns of a commit when it next looks, without waiting for the message to
 * reach the front of its event queue (behind a crawl's many fetch callbacks, about as long again
 * as the commit itself). A page keeps its concurrency slot until its commit is known.
 *
 * If the thread cannot open the database, the batches it was given commit on the caller's
 * thread, in order, and so does every later one. If it dies after opening, the batches it held
 * may or may not have committed: they fail (their executions end `unknown`), and later ones
 * commit on the caller's thread.
 */
export class ThreadedCrawlWriter implements CrawlWriter {
  private worker: Worker | null
  /**
   * Commits not yet answered, in id order (a Map keeps insertion order). A batch is kept only
   * while the thread has not opened the database, for committing here if it never does.
   */
  private readonly pending = new Map<number, { batch: CrawlBatch | null; done: CommitDone }>()
  private readonly acks = new Int32Array(new SharedArrayBuffer(4))
  private nextId = 1
  private ready = false
  private closing: Promise<void> | null = null
  private readonly inline: InlineCrawlWriter
  readonly blobRowMax: number | null

  constructor(
    store: Store,
    blobs: InlineRows | null,
    private readonly onFailure: (message: string) => void = () => {},
  ) {
    this.inline = new InlineCrawlWriter(store, blobs)
    this.blobRowMax = blobs?.maxBytes ?? null
    const worker = new Worker(WORKER_URL)
    this.worker = worker
    worker.unref() // referenced only while it holds batches: an idle writer never keeps a process alive
    worker.onmessage = (event: MessageEvent<WriterReply>) => this.received(event.data)
    worker.onerror = (event) => this.failed(event.message)
    worker.addEventListener('close', () => this.failed('the crawl writer thread exited'))
    const request: WriterRequest = { kind: 'open', path: store.db.filename, blobs: blobs ? { path: blobs.databaseFile, synchronous: blobs.synchronous } : null, acks: this.acks.buffer as SharedArrayBuffer }
    worker.postMessage(request)
  }

  get mode(): 'thread' | 'inline' {
    return this.worker ? 'thread' : 'inline'
  }

  commit(batch: CrawlBatch, done: CommitDone) {
    if (!this.worker) return this.inline.commit(batch, done)
    const id = this.nextId++
    if (this.pending.size === 0) this.worker.ref()
    this.pending.set(id, { batch: this.ready ? null : batch, done })
    // Once the thread is up, the bodies' buffers go to it: the caller must not read a batch's
    // bodies after this. Before, they are copied, as the batch may yet commit here.
    const { posted, transfer } = post(batch)
    this.worker.postMessage({ kind: 'commit', id, batch: posted } satisfies WriterRequest, this.ready ? transfer : [])
  }

  poll() {
    if (this.pending.size === 0) return
    const upTo = Atomics.load(this.acks, 0)
    for (const id of this.pending.keys()) {
      if (id > upTo) break
      this.settle(id, 'ok')
    }
  }

  /** Waits for the batches given so far, then closes the thread's connection. */
  close(): Promise<void> {
    const worker = this.worker
    if (!worker) return Promise.resolve()
    this.closing ??= new Promise<void>((resolve) => {
      let settled = false
      const done = () => {
        if (settled) return
        settled = true
        clearTimeout(guard)
        this.worker = null
        worker.terminate()
        this.failPending('the crawl writer was closed')
        resolve()
      }
      // A thread that cannot answer (stuck in I/O) must not hold shutdown for long.
      const guard = setTimeout(done, 10_000)
      worker.addEventListener('message', (event: MessageEvent<WriterReply>) => {
        if (event.data.kind === 'closed') done()
      })
      worker.addEventListener('close', done)
      worker.ref()
      worker.postMessage({ kind: 'close' } satisfies WriterRequest)
    })
    return this.closing
  }

  private settle(id: number, result: CommitResult | null, error?: unknown) {
    const p = this.pending.get(id)
    if (!p) return // known already from the shared count
    this.pending.delete(id)
    if (this.pending.size === 0 && !this.closing) this.worker?.unref()
    p.done(result, error)
  }

  private received(message: WriterReply) {
    switch (message.kind) {
      case 'ready':
        this.ready = true
        return
      case 'failed':
        return this.failed(message.message)
      case 'committed':
        return this.settle(message.id, message.result)
      case 'error':
        return this.settle(message.id, null, new Error(message.message))
    }
  }

  private failed(message: string) {
    const worker = this.worker
    if (!worker || this.closing) return
    this.worker = null
    worker.terminate()
    this.onFailure(message)
    if (!this.ready) {
      // The thread never opened the database, so none of its batches was written: they commit here, in order.
      const waiting = [...this.pending.values()]
      this.pending.clear()
      for (const p of waiting) this.inline.commit(p.batch!, p.done)
      return
    }
    this.failPending(`the crawl writer thread stopped: ${message}`)
  }

  private failPending(why: string) {
    const waiting = [...this.pending.values()]
    this.pending.clear()
    for (const p of waiting) p.done(null, new Error(why))
  }
}
