/**
 * The scrape API's rate limit (design.md §7, TRAWL_SCRAPE_RATE): a token bucket per payer, or per
 * client IP before payment, filling at `perSecond` up to a burst of twice that.
 */
export class TokenBuckets {
  // Insertion order is recency: a key is re-inserted on use, so the first key is the least
  // recently used, and the map stays bounded whatever keys callers make up.
  private readonly buckets = new Map<string, { tokens: number; at: number }>()

  constructor(
    private readonly perSecond: number,
    // Below 0.5/s twice the rate is under one token: a bucket that could never serve.
    private readonly burst = Math.max(1, perSecond * 2),
    private readonly now: () => number = () => performance.now(),
    private readonly maxKeys = 100_000,
  ) {}

  /** Takes a token for `key`: 0 when it had one, else the seconds until it will (Retry-After). */
  take(key: string): number {
    const now = this.now()
    const b = this.buckets.get(key)
    let tokens = this.burst
    if (b) {
      tokens = Math.min(this.burst, b.tokens + ((now - b.at) / 1000) * this.perSecond)
      this.buckets.delete(key)
    } else if (this.buckets.size >= this.maxKeys) {
      // The least recently used key goes; its bucket would have been full again soon anyway.
      this.buckets.delete(this.buckets.keys().next().value!)
    }
    if (tokens >= 1) {
      this.buckets.set(key, { tokens: tokens - 1, at: now })
      return 0
    }
    this.buckets.set(key, { tokens, at: now })
    return Math.max(1, Math.ceil((1 - tokens) / this.perSecond))
  }
}
