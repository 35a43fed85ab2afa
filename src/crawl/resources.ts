import { openBlobStore } from '../blob'
import type { Config } from '../config'
import { createFetcher } from '../fetch'
import type { Logger } from '../log'
import { ParsePool } from '../parse/pool'
import { createStore } from '../store'
import { Checkpointer } from '../store/checkpointer'
import { openDatabase } from '../store/db'
import type { EngineDeps } from './execution'

/** What crawling needs, opened on a data dir: the store, the fetcher, the parse pool, the blob store (and a checkpoint thread for the two databases). */
export type CrawlResources = EngineDeps & {
  /** Closes them all, the database last (closing it checkpoints the WAL). Stop the runner first. */
  close(): Promise<void>
}

/** Opens the data dir's database and blob store and starts the fetcher and parse pool (`trawl serve`, `trawl crawl`). */
export function openCrawlResources(config: Config, log: Logger): CrawlResources {
  const db = openDatabase(config.dataDir)
  const store = createStore(db)
  const parser = new ParsePool(config.parseWorkers, config.parseTimeoutMs)
  const fetcher = createFetcher(config, log)
  const blobs = openBlobStore(config)
  // A crawl commits steadily to both databases (the blob store's is blobs.db, or the S3 store's
  // index); their checkpoints run on a thread of their own.
  const checkpointer = new Checkpointer([db.filename, ...(blobs.databaseFile ? [blobs.databaseFile] : [])], {
    onFailure: (message) => log.warn('the checkpoint thread stopped; SQLite checkpoints on the writing thread instead', { error: message }),
  })
  return {
    store,
    parser,
    fetcher,
    blobs,
    log,
    async close() {
      parser.close()
      await checkpointer.close()
      await fetcher.close()
      await blobs.close()
      db.close()
    },
  }
}
