// STUB (to be written).
import type { CrawlStore } from '../crawl-store'
import { notWritten, type Pg } from './pg'

/** The crawl engine's store on PostgreSQL; `journalDir` is this process's local fetch-journal folder (null: none). */
export function pgCrawlStore(_sql: Pg, _journalDir: string | null): CrawlStore {
  return notWritten<CrawlStore>('CrawlStore')
}
