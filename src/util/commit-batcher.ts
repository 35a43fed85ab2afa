/**
 * Group commit: operations submitted close together are applied by one synchronous call (one
 * SQLite transaction), and each caller's promise settles only after that call returns.
 *
 * The wait is adaptive rather than a fixed timer. A batch is applied on the next event-loop
 * turn in which nothing new arrived, when it reaches `maxBatch`, or after `maxWaitMs` of
 * steady arrivals. A lone caller that awaits each put therefore pays one loop turn, not a
 * timer, while a crawler with many fetches in flight gets tens of puts per transaction.
 */
export type BatchOptions = {
  maxBatch: number
  maxWaitMs: number
  /**
   * When a batch fails, apply its operations again one at a time, so that only the callers whose
   * own operation fails are rejected (one bad write, or a busy moment, does not fail the rest).
   * Off: every caller of a failed batch is rejected with its error.
   */
  isolate?: boolean
}

type Pending<Op, R> = { op: Op; resolve: (r: R) => void; reject: (e: unknown) => void }

export class CommitBatcher<Op, R> {
  private queue: Pending<Op, R>[] = []
  private timer: ReturnType<typeof setImmediate> | undefined
  private firstAt = 0
  private seen = 0
  /** How many times `apply` ran and how many operations it carried; tests and metrics read these. */
  readonly counts = { commits: 0, ops: 0 }

  constructor(
    private readonly apply: (ops: Op[]) => R[],
    private readonly opts: BatchOptions,
  ) {}

  submit(op: Op): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      this.queue.push({ op, resolve, reject })
      if (this.queue.length >= this.opts.maxBatch) this.flush()
      else if (this.timer === undefined) {
        this.firstAt = performance.now()
        this.seen = this.queue.length
        this.timer = setImmediate(this.tick)
      }
    })
  }

  /** Applies everything queued now, in submission order. */
  flush(): void {
    if (this.timer !== undefined) {
      clearImmediate(this.timer)
      this.timer = undefined
    }
    while (this.queue.length > 0) {
      const batch = this.queue.splice(0, this.opts.maxBatch)
      if (!this.applyBatch(batch)) for (const p of batch) this.applyBatch([p])
    }
  }

  /** Applies `batch` and settles its callers; false (isolate mode only) when it failed and nobody was settled. */
  private applyBatch(batch: Pending<Op, R>[]): boolean {
    let results: R[]
    try {
      results = this.apply(batch.map((p) => p.op))
    } catch (e) {
      if (this.opts.isolate && batch.length > 1) return false
      for (const p of batch) p.reject(e)
      return true
    }
    this.counts.commits++
    this.counts.ops += batch.length
    batch.forEach((p, i) => p.resolve(results[i]!))
    return true
  }

  private readonly tick = () => {
    this.timer = undefined
    const growing = this.queue.length > this.seen
    if (growing && performance.now() - this.firstAt < this.opts.maxWaitMs) {
      this.seen = this.queue.length
      this.timer = setImmediate(this.tick)
      return
    }
    this.flush()
  }
}
