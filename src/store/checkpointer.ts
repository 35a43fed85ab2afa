import { workerUrl } from '../util/worker-url'

export type CheckpointerMessage = { kind: 'start'; paths: string[]; everyMs: number } | { kind: 'stop' } | { kind: 'stopped'; passes: number } | { kind: 'failed'; message: string }

// scripts/build.ts embeds the worker in the binary; test/e2e/crawl.test.ts checks it runs there.
const WORKER_URL = workerUrl(import.meta.url, 'store', 'checkpoint-worker.ts')

/**
 * Checkpoints on a thread of their own. A checkpoint copies WAL frames back into the database
 * and syncs both files; done by SQLite's autocheckpoint on the writer's thread, that was about a
 * tenth of a crawl's time (decision 69). This thread runs a PASSIVE checkpoint of each database
 * every `everyMs` through its own connections, which WAL allows beside a writer. While nothing
 * is committed the passes space out, doubling up to 1 s apart; the next pass after a commit
 * goes back to `everyMs`.
 *
 * The writers keep their autocheckpoint (applyWalPragmas). A WAL is reused from its start only
 * when a write begins with every frame copied back, which frames committed during a pass from
 * here prevent under steady writes; so when a WAL reaches the autocheckpoint's length, the
 * writer's own checkpoint finds only the frames committed since the last pass, copies them,
 * and its next write restarts the WAL. The WAL stays as bounded as before.
 *
 * If the thread cannot start, the writers' autocheckpoint does all the work, as before it
 * existed: `onFailure` is told why, and nothing else changes.
 */
export class Checkpointer {
  private readonly worker: Worker
  private exited = false
  private stopping: Promise<void> | null = null
  /** How many passes the thread made, known once `close()` has settled (tests). */
  passes: number | null = null

  constructor(paths: readonly string[], opts: { everyMs?: number; onFailure?: (message: string) => void } = {}) {
    this.worker = new Worker(WORKER_URL)
    this.worker.unref() // it must never keep a process alive
    const failed = (message: string) => {
      if (this.exited) return
      this.exited = true
      this.worker.terminate()
      opts.onFailure?.(message)
    }
    this.worker.onmessage = (event: MessageEvent<CheckpointerMessage>) => {
      if (event.data.kind === 'failed') failed(event.data.message)
    }
    this.worker.onerror = (event) => failed(event.message)
    this.worker.addEventListener('close', () => failed('the checkpoint thread exited'))
    this.worker.postMessage({ kind: 'start', paths: [...paths], everyMs: opts.everyMs ?? 200 } satisfies CheckpointerMessage)
  }

  /** Whether the thread is running (false once it failed or was closed). */
  get running(): boolean {
    return !this.exited
  }

  /**
   * Stops the thread after its current pass and closes its connections, so that the writers'
   * close (the last connection of each database) checkpoints the rest and removes the WAL.
   */
  close(): Promise<void> {
    if (this.exited && !this.stopping) return Promise.resolve()
    this.stopping ??= new Promise<void>((resolve) => {
      this.exited = true // from here its exit is expected, not a failure
      let settled = false
      const done = () => {
        if (settled) return
        settled = true
        clearTimeout(guard)
        this.worker.terminate()
        resolve()
      }
      // A thread that cannot answer (stuck in I/O) must not hold shutdown for long.
      const guard = setTimeout(done, 5000)
      this.worker.onmessage = (event: MessageEvent<CheckpointerMessage>) => {
        if (event.data.kind === 'stopped') {
          this.passes = event.data.passes
          done()
        }
      }
      this.worker.addEventListener('close', done)
      this.worker.postMessage({ kind: 'stop' } satisfies CheckpointerMessage)
    })
    return this.stopping
  }
}
