import { BlobError } from './blob-store'

/**
 * The operations a blob store has started, so that close() can wait for them, and the closed
 * state that makes later calls fail with `io` (BlobStore.close). Shared by the disk and S3 stores.
 */
export class Operations {
  private readonly inFlight = new Set<Promise<unknown>>()
  private closed = false

  /** Runs `work` as a tracked operation; rejects with `io` once closed. */
  track<T>(work: () => Promise<T>): Promise<T> {
    if (this.closed) return Promise.reject(new BlobError('io', 'blob store is closed'))
    let p: Promise<T>
    try {
      p = work()
    } catch (e) {
      return Promise.reject(e)
    }
    this.inFlight.add(p)
    const forget = () => this.inFlight.delete(p)
    p.then(forget, forget)
    return p
  }

  assertOpen() {
    if (this.closed) throw new BlobError('io', 'blob store is closed')
  }

  /**
   * Closes: no new operation starts, then waits until none is in flight, calling `flush` before
   * each wait (operations may be waiting on a batch only a flush commits). False when already closed.
   */
  async close(flush: () => void): Promise<boolean> {
    if (this.closed) return false
    this.closed = true
    while (this.inFlight.size > 0) {
      flush()
      await Promise.allSettled(this.inFlight)
    }
    flush()
    return true
  }
}
