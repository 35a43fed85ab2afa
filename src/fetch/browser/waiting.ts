/** At most `limit` holders at once; waiters leave the queue when their signal aborts. */
export class Semaphore {
  private held = 0
  private readonly queue: { grant: () => void }[] = []

  constructor(private readonly limit: number) {}

  /** Resolves to the release function; rejects with the signal's reason when it aborts first. */
  acquire(signal: AbortSignal): Promise<() => void> {
    if (signal.aborted) return Promise.reject(signal.reason)
    if (this.held < this.limit) {
      this.held++
      return Promise.resolve(this.releaser())
    }
    return new Promise((resolve, reject) => {
      const waiter = {
        grant: () => {
          signal.removeEventListener('abort', onAbort)
          this.held++
          resolve(this.releaser())
        },
      }
      const onAbort = () => {
        const i = this.queue.indexOf(waiter)
        if (i >= 0) this.queue.splice(i, 1)
        reject(signal.reason)
      }
      signal.addEventListener('abort', onAbort, { once: true })
      this.queue.push(waiter)
    })
  }

  private releaser(): () => void {
    let done = false
    return () => {
      if (done) return
      done = true
      this.held--
      this.queue.shift()?.grant()
    }
  }
}

/** Waits for `p` at most `ms`, without a timer left behind to hold the event loop. */
export async function within(p: Promise<unknown>, ms: number): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined
  await Promise.race([p, new Promise((resolve) => (timer = setTimeout(resolve, ms)))])
  clearTimeout(timer)
}
