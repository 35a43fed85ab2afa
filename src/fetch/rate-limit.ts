/**
 * Spacing of requests per host for the `rate_limit` middleware. The slot is reserved before
 * waiting, so concurrent requests (a batch) line up instead of all firing after one wait.
 * Keys name the tenant too: one tenant's limit never slows another's requests.
 */
export class HostRateLimiter {
  private next = new Map<string, number>()

  /** Milliseconds until the next slot of `key`, without booking it. */
  wait(key: string, now = performance.now()): number {
    return Math.max(0, (this.next.get(key) ?? 0) - now)
  }

  /** Milliseconds to wait before a request to `key` may go, at `perSecond`; reserves that slot. */
  reserve(key: string, perSecond: number, now = performance.now()): number {
    const gap = 1000 / perSecond
    const at = Math.max(now, this.next.get(key) ?? 0)
    this.next.set(key, at + gap)
    if (this.next.size > 10_000) this.sweep(now)
    return at - now
  }

  /** Forgets hosts whose next slot has passed, so the map stays as large as the hosts in use. */
  private sweep(now: number) {
    for (const [key, at] of this.next) if (at < now) this.next.delete(key)
  }
}
