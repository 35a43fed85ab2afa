// STUB (to be written).
import type { LogEntry } from '../crawl-logs'
import type { PageRecord } from '../page-records'
import type { CrawlLogStore, RunGraphStore } from '../types'
import { notWritten, type Pg } from './pg'

export function pgCrawlLogStore(_sql: Pg): CrawlLogStore {
  return notWritten<CrawlLogStore>('CrawlLogStore')
}
export function pgRunGraphStore(_sql: Pg): RunGraphStore {
  return notWritten<RunGraphStore>('RunGraphStore')
}
/** Writes crawl log entries inside the caller's transaction. */
export async function writeLogs(_tx: Pg, _entries: LogEntry[]): Promise<void> {
  throw new Error('not written yet')
}
/** Writes a batch's page records (visits with their children and the entries they stand for) inside the caller's transaction. */
export async function recordPages(_tx: Pg, _runSeq: number, _pages: PageRecord[], _tenant: string): Promise<void> {
  throw new Error('not written yet')
}
