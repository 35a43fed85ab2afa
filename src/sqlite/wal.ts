import { Database } from 'bun:sqlite'
import { accessSync, constants, existsSync, mkdirSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { ConfigError } from '../config'

export type Synchronous = 'normal' | 'full'

/**
 * Opens (creating it and its directory if needed) `<dataDir>/<file>` with the WAL settings
 * below: the first steps of every database trawl keeps (trawl.db, blobs.db, blobs-s3.db); each
 * caller then migrates its own schema. A data dir that cannot be used is a ConfigError naming
 * it (dataDirError): the operator's to fix, told in one line.
 */
export function openWalDatabase(dataDir: string, file: string, opts: { synchronous: Synchronous; cacheKiB: number }): Database {
  attempt(dataDir, 'the directory cannot be created', () => mkdirSync(dataDir, { recursive: true }))
  const path = join(dataDir, file)
  // SQLite opens a file it may not write read-only without a word, and a server would start and
  // fail every write later; so ask the system first (it also answers for a read-only mount).
  attempt(dataDir, 'the directory is not writable', () => accessSync(dataDir, constants.W_OK))
  if (existsSync(path)) {
    // SQLite says only "unable to open database file" of a directory.
    if (statSync(path).isDirectory()) throw dataDirError(dataDir, `${file} cannot be opened`, { code: 'EISDIR' })
    attempt(dataDir, `${file} is not writable`, () => accessSync(path, constants.W_OK))
  }
  const db = attempt(dataDir, `${file} cannot be opened`, () => new Database(path, { create: true, strict: true }))
  try {
    applyWalPragmas(db, opts)
  } catch (err) {
    db.close()
    throw dataDirError(dataDir, `${file} cannot be opened`, err)
  }
  return db
}

/** Runs one step of opening a data dir; its failure becomes dataDirError's one line. */
function attempt<T>(dataDir: string, what: string, step: () => T): T {
  try {
    return step()
  } catch (err) {
    throw dataDirError(dataDir, what, err)
  }
}

// The system's words for the failures a data dir meets, without the call and path it appends.
const SYSTEM_REASONS: Record<string, string> = {
  EACCES: 'permission denied',
  EPERM: 'operation not permitted',
  EROFS: 'read-only file system',
  ENOTDIR: 'a part of the path is a file, not a directory',
  EEXIST: 'a file of that name is in the way',
  ENOENT: 'a part of the path does not exist and cannot be made',
  ENOSPC: 'no space left on the device',
  EDQUOT: 'disk quota exceeded',
  EISDIR: 'it is a directory',
}

/**
 * A data dir trawl cannot use, as the one line every bad setting gets (exit 2): the path, what
 * failed, why, and what to do. A ConfigError passes as it is: it says all that already.
 */
export function dataDirError(dataDir: string, what: string, err: unknown): ConfigError {
  if (err instanceof ConfigError) return err
  const { code = '', message } = (err ?? {}) as { code?: string; message?: string }
  const reason = SYSTEM_REASONS[code] ?? (message ?? String(err)).split('\n')[0]
  return new ConfigError(`data dir ${dataDir}: ${what} (${reason}); ${adviceFor(code)}`, { cause: err })
}

function adviceFor(code: string): string {
  const elsewhere = 'with --data-dir or TRAWL_DATA_DIR'
  if (code === 'SQLITE_NOTADB' || code.startsWith('SQLITE_CORRUPT') || code === 'EISDIR') return `it is not a trawl database: move it away, or choose another data dir ${elsewhere}`
  if (code === 'ENOSPC' || code === 'EDQUOT' || code === 'SQLITE_FULL') return `free space on its disk, or choose another data dir ${elsewhere}`
  if (code.startsWith('SQLITE_BUSY')) return 'another process holds a lock on it: try again when it is done'
  if (code === 'ENOTDIR' || code === 'EEXIST' || code === 'ENOENT') return `choose a data dir that is a directory, or can be made one, ${elsewhere}`
  const uid = process.getuid?.()
  return `let this user${uid === undefined ? '' : ` (uid ${uid})`} write the data dir and its files, or choose another data dir ${elsewhere}`
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
