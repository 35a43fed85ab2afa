export type CheckpointerMessage = { kind: 'start'; paths: string[]; everyMs: number } | { kind: 'stop' } | { kind: 'stopped' }

// From source the worker sits beside this file; in the binary, scripts/build.ts embeds it at
// store/checkpoint-worker.ts under the embedded root (as src/parse/pool.ts finds its worker).
const EMBEDDED = /\/\$bunfs\/|~BUN/
const WORKER_URL = new URL(EMBEDDED.test(import.meta.url) ? './store/checkpoint-worker.ts' : './checkpoint-worker.ts', import.meta.url).href

/**
 * Checkpoints on a thread of their own. A checkpoint copies WAL frames back into the database
 * and syncs both files; done by SQLite's autocheckpoint on the writer's thread, that was about a
 * sixth of a crawl's time (decision 69). This thread runs a PASSIVE checkpoint of each database
 * every `everyMs` through its own connections, which WAL allows beside a writer.
 *
 * The writers keep their autocheckpoint (applyWalPragmas). A WAL is reused from its start only
 * when a write begins with every frame copied back, which frames committed during a pass from
 * here prevent under steady writes; so when a WAL reaches the autocheckpoint's length, the
 * writer's own checkpoint finds only the frames committed since the last pass, copies them,
 * and its next write restarts the WAL. The WAL stays as bounded as before.
 */
export class Checkpointer {
  private readonly worker: Worker
  private stopping: Promise<void> | null = null

  constructor(paths: readonly string[], everyMs = 200) {
    this.worker = new Worker(WORKER_URL)
    this.worker.unref() // it must never keep a process alive
    this.worker.postMessage({ kind: 'start', paths: [...paths], everyMs } satisfies CheckpointerMessage)
  }

  /**
   * Stops the thread after its current pass and closes its connections, so that the writers'
   * close (the last connection of each database) checkpoints the rest and removes the WAL.
   */
  close(): Promise<void> {
    this.stopping ??= new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(guard)
        this.worker.terminate()
        resolve()
      }
      // A thread that cannot answer (stuck in I/O) must not hold shutdown for long.
      const guard = setTimeout(done, 5000)
      this.worker.onmessage = (event: MessageEvent<CheckpointerMessage>) => {
        if (event.data.kind === 'stopped') done()
      }
      this.worker.addEventListener('close', done)
      this.worker.postMessage({ kind: 'stop' } satisfies CheckpointerMessage)
    })
    return this.stopping
  }
}
