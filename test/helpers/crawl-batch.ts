import { linkHash } from '../../src/core/url'
import type { CrawlBatch, FrontierEntry, RunCounters } from '../../src/store/crawl-store'

/** What the crawl-store tests build batches from. */

export const zeroCounters: RunCounters = { queued: 0, visited: 0, failed: 0, bytes: 0, fetched: 0, depth_cut: 0 }

/** An empty batch, with what a test sets over it. */
export const batchOf = (over: Partial<CrawlBatch> = {}): CrawlBatch => ({
  links: [],
  enqueued: [],
  marks: [],
  hostFailures: new Map(),
  pages: [],
  logs: [],
  artifacts: [],
  counters: zeroCounters,
  errorCounts: null,
  ...over,
})

export const href = (host: string, path: string) => `https://${host}${path}`

/** A frontier entry of a page on `host`, found at `depth` from `parent` (a seed by default). */
export const entryAt = (host: string, path: string, depth = 0, parent: string | null = null): FrontierEntry => ({
  hash: linkHash(href(host, path)),
  url: href(host, path),
  host,
  depth,
  parent,
  kind: 0,
})
