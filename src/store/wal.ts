import { Database } from 'bun:sqlite'
import { mkdirSync } from 'node:fs'
import { join } from 'node:path'

export type Synchronous = 'normal' | 'full'

/**
 * Opens (creating it and its directory if needed) `<dataDir>/<file>` with the WAL settings
 * below: the first steps of every database trawl keeps (trawl.db, blobs.db, blobs-s3.db); each
 * caller then migrates its own schema.
 */
export function openWalDatabase(dataDir: string, file: string, opts: { synchronous: Synchronous; cacheKiB: number }): Database {
  mkdirSync(dataDir, { recursive: true })
  const db = new Database(join(dataDir, file), { create: true, strict: true })
  applyWalPragmas(db, opts)
  return db
}

/**
 * The WAL settings trawl.db and blobs.db share. WAL keeps readers off the writer's back, and a
 * committed transaction is in the WAL before COMMIT returns, so synchronous=NORMAL loses nothing
 * acknowledged to a process crash (kill -9); only a power loss or kernel crash can roll back
 * the last transactions before a checkpoint, which FULL (an fsync per commit) prevents.
 * `cacheKiB` is the page cache: small, because the OS caches the file too and a crawl's memory
 * must stay flat (decisions 64, 66).
 */
export function applyWalPragmas(db: Database, opts: { synchronous: Synchronous; cacheKiB: number }) {
  // First: another process opening the same data dir may hold a lock meanwhile.
  db.exec('PRAGMA busy_timeout = 5000')
  // Switching a new file to WAL needs its exclusive lock, and SQLite answers SQLITE_BUSY at once
  // (no busy handler) while another connection opening the same new file holds a lock: retried.
  retryBusy(() => db.exec('PRAGMA journal_mode = WAL'), 5000)
  db.exec(`PRAGMA synchronous = ${opts.synchronous === 'full' ? 'FULL' : 'NORMAL'}`)
  db.exec(`PRAGMA cache_size = -${opts.cacheKiB}`)
  // Checkpoint at 16,000 WAL pages (64 MiB) rather than SQLite's 1,000: a crawl dirties the same
  // index pages batch after batch (and puts a body per page), and a rarer checkpoint copies each
  // page back once, with fewer fsyncs on the crawl's one thread. It cut a recorded 20,000-page
  // crawl's SQLite time by about a fifth (decision 65); 64,000 was slower (decision 67). Under
  // openCrawlResources a checkpoint thread copies most frames in between, and this checkpoint, finding
  // only the latest ones, is what lets the WAL restart from its beginning (decision 69).
  db.exec('PRAGMA wal_autocheckpoint = 16000')
  // ...and give the disk back afterwards: a checkpointed WAL is truncated to 64 MiB at most.
  db.exec('PRAGMA journal_size_limit = 67108864')
}

/**
 * Runs `fn` again while it fails with SQLITE_BUSY, for up to `forMs`: for the places SQLite
 * answers busy without waiting on the busy timeout, or where a wait may outlast it.
 */
export function retryBusy<T>(fn: () => T, forMs: number, pauseMs = 2): T {
  const deadline = Date.now() + forMs
  for (;;) {
    try {
      return fn()
    } catch (err) {
      if ((err as { code?: string }).code !== 'SQLITE_BUSY' || Date.now() > deadline) throw err
      Bun.sleepSync(pauseMs)
    }
  }
}
