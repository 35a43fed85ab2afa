import type { Database } from 'bun:sqlite'
import { migrateUnderLock } from '../sqlite/migrate'
import { openWalDatabase, type Synchronous } from '../sqlite/wal'

/** A blob's row. `file` is set for bodies kept as files under blobs/, `body` for inline ones. */
export type BlobRow = { size: number; checksum: string; content_type: string; file: string | null }

// The processes that have the store open ("host:pid"), so that one opening it sweeps orphan
// files only when no other process is alive to be writing them (version 3).
const OPENERS = 'CREATE TABLE openers (owner TEXT PRIMARY KEY, opened_at INTEGER NOT NULL)'

// `file` comes before `body`: SQLite reads a row's columns in order, so metadata lookups stop
// before the inline body's overflow pages. A rowid table (not WITHOUT ROWID) because rows of
// up to 256 KiB would bloat the key index's pages.
const SCHEMA = [
  `CREATE TABLE blobs (
    key TEXT PRIMARY KEY,
    size INTEGER NOT NULL,
    checksum TEXT NOT NULL,
    content_type TEXT NOT NULL,
    file TEXT,
    body BLOB,
    CHECK ((file IS NULL) <> (body IS NULL))
  )`,
  // The orphan sweep at open asks "is this file referenced?" once per file on disk.
  'CREATE INDEX blobs_by_file ON blobs (file) WHERE file IS NOT NULL',
  OPENERS,
]

/**
 * Opens `<dataDir>/blobs.db`, separate from trawl.db so that megabytes of bodies neither
 * lengthen the main database's checkpoints nor hold its single write lock. `synchronous` as
 * applyWalPragmas says (normal survives kill -9; full adds an fsync per commit, which batched
 * puts share, for power-loss durability).
 */
export function openBlobDb(dataDir: string, synchronous: Synchronous) {
  // Bodies are read once and streamed out, so a large page cache buys little.
  const db = openWalDatabase(dataDir, 'blobs.db', { synchronous, cacheKiB: 2048 })
  const from = migrate(db)
  // Processes older than version 3 never enter themselves as openers (disk.ts): the open that
  // upgrades the file cannot tell whether one of them is still writing.
  return { db, statements: prepare(db), upgradedFromOld: from === 1 || from === 2 }
}

const VERSION = 3

/** Brings blobs.db to VERSION in one step; answers the version it found under the write lock. */
function migrate(db: Database): number {
  return migrateUnderLock(db, {
    name: 'blobs.db',
    known: VERSION,
    target: VERSION,
    step: (version) => {
      if (version === 0) {
        for (const sql of SCHEMA) db.exec(sql)
      } else {
        // Version 1 named the column sha256; its values stay as they were (bare SHA-256 hex).
        if (version === 1) db.exec('ALTER TABLE blobs RENAME COLUMN sha256 TO checksum')
        db.exec(OPENERS)
      }
      return VERSION
    },
  })
}

function prepare(db: Database) {
  return {
    openers: db.query<{ owner: string }, []>('SELECT owner FROM openers'),
    addOpener: db.query('INSERT OR REPLACE INTO openers (owner, opened_at) VALUES (?, ?)'),
    removeOpener: db.query('DELETE FROM openers WHERE owner = ?'),
    head: db.query<BlobRow, [string]>('SELECT size, checksum, content_type, file FROM blobs WHERE key = ?'),
    get: db.query<BlobRow & { body: Uint8Array | null }, [string]>('SELECT size, checksum, content_type, file, body FROM blobs WHERE key = ?'),
    fileOf: db.query<{ file: string | null }, [string]>('SELECT file FROM blobs WHERE key = ?'),
    upsert: db.query<never, [string, number, string, string, string | null, Uint8Array | null]>(
      `INSERT INTO blobs (key, size, checksum, content_type, file, body) VALUES (?, ?, ?, ?, ?, ?)
       ON CONFLICT (key) DO UPDATE SET size = excluded.size, checksum = excluded.checksum,
         content_type = excluded.content_type, file = excluded.file, body = excluded.body`,
    ),
    delete: db.query<{ file: string | null }, [string]>('DELETE FROM blobs WHERE key = ? RETURNING file'),
    referenced: db.query<{ one: number }, [string]>('SELECT 1 AS one FROM blobs WHERE file = ?'),
    // A range of the primary key, from the prefix (or past the last key listed) to the prefix's
    // upper bound: each page starts where the last left off, whatever the prefix holds.
    list: db.query<{ key: string }, [string, string, string, number]>('SELECT key FROM blobs WHERE key >= ?1 AND key > ?2 AND key < ?3 ORDER BY key LIMIT ?4'),
  }
}

export type BlobStatements = ReturnType<typeof prepare>
