import type { PageRecord } from '../../src/store/page-records'

/** A visited page as the engine records it: status 200, depth 0, no children, no entries it stands for, unless `over` says otherwise. */
export const pageRecord = (hash: string, hostHash: string, over: Partial<PageRecord> = {}): PageRecord => ({
  hash,
  host_hash: hostHash,
  depth: 0,
  parent: null,
  status: 200,
  visited_at: 0,
  children: null,
  logged: 0,
  fetch_at: null,
  fetch_ms: null,
  parse_ms: null,
  store_ms: null,
  pipeline_id: null,
  ...over,
})
