import { openBlobStore } from '../blob'
import type { Config } from '../config'
import { createFetcher } from '../fetch'
import type { Logger } from '../log'
import { blobErrors, storeErrors } from '../metrics'
import { countingFailures } from '../metrics/failures'
import { DomainError } from '../core/errors'
import { ParsePool } from '../parse/pool'
import { Checkpointer } from '../store/checkpointer'
import { openStore, type OpenedStore } from '../store/open'
import type { EngineDeps } from './execution'

/** What crawling needs: the store, the fetcher, the parse pool, the blob store (and a checkpoint thread for SQLite files). */
export type CrawlResources = EngineDeps & {
  /** Which engine the store runs on, and where it is for a person (the data dir, or the database URL without its password). */
  engine: OpenedStore['engine']
  where: OpenedStore['where']
  /** Closes them all, the store last (closing SQLite checkpoints the WAL). Stop the runner first. */
  close(): Promise<void>
}

/** Opens the store TRAWL_DATABASE_URL names and the blob store, and starts the fetcher and parse pool (`trawl serve`, `trawl crawl`, `trawl mcp`). */
export async function openCrawlResources(config: Config, log: Logger): Promise<CrawlResources> {
  const opened = await openStore(config)
  let blobs: ReturnType<typeof openBlobStore>
  try {
    blobs = countingFailures(openBlobStore(config, { s3Index: opened.s3Index }), (operation) => blobErrors.labels(operation).inc())
  } catch (err) {
    await opened.close()
    throw err
  }
  const parser = new ParsePool(config.parseWorkers, config.parseTimeoutMs)
  const fetcher = createFetcher(config, log)
  // A crawl commits steadily to its SQLite files (trawl.db, and blobs.db or the S3 store's
  // index); their checkpoints run on a thread of their own. PostgreSQL needs none.
  const files = [...opened.checkpointFiles, ...(blobs.databaseFile ? [blobs.databaseFile] : [])]
  const checkpointer = files.length
    ? new Checkpointer(files, {
        onFailure: (message) => log.warn('the checkpoint thread stopped; SQLite checkpoints on the writing thread instead', { error: message }),
      })
    : null
  // Failures are counted where the stores are opened, for every caller (docs/metrics.md); a
  // domain error (not found, conflict, validation) is an answer, not a failure.
  const store = countingFailures(opened.store, (operation, err) => err instanceof DomainError || storeErrors.labels(operation).inc())
  return {
    store,
    engine: opened.engine,
    where: opened.where,
    parser,
    fetcher,
    blobs,
    log,
    hostCeiling: config.hostCeiling,
    async close() {
      parser.close()
      await checkpointer?.close()
      await fetcher.close()
      await blobs.close()
      await opened.close()
    },
  }
}
