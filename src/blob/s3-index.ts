import { migrateUnderLock } from '../sqlite/migrate'
import { openWalDatabase, type Synchronous } from '../sqlite/wal'

/** What the index knows of an object: what S3 cannot tell back through Bun.S3Client (the checksum). */
export type IndexRow = { size: number; checksum: string; content_type: string }

// `name` is the object's bucket and full key (`bucket/prefix/key`), so rows written under one
// TRAWL_BLOB_URL never answer for another: switching buckets reads as missing, not as wrong.
const SCHEMA = `CREATE TABLE objects (
  name TEXT PRIMARY KEY,
  size INTEGER NOT NULL,
  checksum TEXT NOT NULL,
  content_type TEXT NOT NULL
) WITHOUT ROWID`

const VERSION = 1

/**
 * Opens `<dataDir>/blobs-s3.db`, the S3 store's index: one row per object it has stored, with
 * the size, checksum and content type its put computed. Bun.S3Client neither writes nor reads
 * user metadata, and a streamed put knows its checksum only after the upload has begun, so the
 * checksum cannot travel with the object (decision "The S3 blob store").
 */
export function openS3Index(dataDir: string, synchronous: Synchronous) {
  const db = openWalDatabase(dataDir, 'blobs-s3.db', { synchronous, cacheKiB: 2048 })
  migrateUnderLock(db, {
    name: 'blobs-s3.db',
    known: VERSION,
    target: VERSION,
    step: () => {
      db.exec(SCHEMA)
      return VERSION
    },
  })
  return {
    db,
    statements: {
      get: db.query<IndexRow, [string]>('SELECT size, checksum, content_type FROM objects WHERE name = ?'),
      upsert: db.query<never, [string, number, string, string]>(
        `INSERT INTO objects (name, size, checksum, content_type) VALUES (?, ?, ?, ?)
         ON CONFLICT (name) DO UPDATE SET size = excluded.size, checksum = excluded.checksum, content_type = excluded.content_type`,
      ),
      delete: db.query<{ one: number }, [string]>('DELETE FROM objects WHERE name = ? RETURNING 1 AS one'),
    },
  }
}

export type IndexStatements = ReturnType<typeof openS3Index>['statements']
