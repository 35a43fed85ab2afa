import { ownCopy } from './strings'

/**
 * A string-keyed memo of at most `limit` entries, emptied when full (cheaper than an LRU, and a
 * crawl's working set refills it at once). Keys are copied (`ownCopy`): a key sliced from a page
 * would otherwise keep the whole page alive.
 */
export class BoundedCache<V> {
  private readonly map = new Map<string, V>()
  /** How many times it was emptied: a caller holding values across gets can tell they may be stale. */
  clears = 0

  constructor(private readonly limit: number) {}

  /** The value for `key`, computed from the kept copy of the key the first time. */
  get(key: string, compute: (ownKey: string) => V): V {
    let value = this.map.get(key)
    if (value === undefined) {
      if (this.map.size >= this.limit) {
        this.map.clear()
        this.clears++
      }
      const own = ownCopy(key)
      value = compute(own)
      this.map.set(own, value)
    }
    return value
  }
}
