import type { Database } from 'bun:sqlite'
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { openBlobDb } from '../../blob/blob-db'
import type { BlobInfo } from '../../blob/blob-store'
import { toInfo } from '../../blob/body'
import { openWalDatabase } from '../../sqlite/wal'
import type { S3Location } from '../../config'

/** A body as the source holds it: what its store recorded, and the bytes (a Blob reads lazily: a file, an S3 object). */
export type SourceBody = { info: BlobInfo; bytes: Uint8Array | Blob }

/** Where the data dir's bodies are read from. */
export type BlobSource = {
  /** For messages: blobs.db, or the s3:// location. */
  readonly name: string
  /** The body under `key`, or null when the store has no row for it. */
  read(key: string): SourceBody | null
  close(): void
}

/**
 * The object key of a blob key under a location, as S3BlobStore.objectKey makes it: the prefix,
 * then the key, with `~` after a trailing slash (Bun.S3Client drops trailing slashes, which
 * would make `t/x/` and `t/x` one object). A copied body must sit exactly where the S3 store
 * will look for it.
 */
export const objectKeyOf = (location: S3Location, key: string) => location.prefix + (key.endsWith('/') ? `${key}~` : key)

/** The S3 index's name of a blob key: bucket, then the object key (s3-index.ts). */
export const indexNameOf = (location: S3Location, key: string) => `${location.bucket}/${objectKeyOf(location, key)}`

/**
 * The disk store of a data dir, read without DiskBlobStore: opening that would enter the copy
 * among blobs.db's openers and, when alone, sweep orphan files out of the data dir being copied.
 * blobs.db is opened (and brought to its current version) only when it exists.
 */
export function diskSource(dataDir: string): BlobSource {
  const file = join(dataDir, 'blobs.db')
  if (!existsSync(file)) return { name: file, read: () => null, close() {} }
  const { db, statements } = openBlobDb(dataDir, 'normal')
  const root = join(dataDir, 'blobs')
  return {
    name: file,
    read(key) {
      const row = statements.get.get(key)
      if (!row) return null
      const info = toInfo(row)
      if (row.file === null) return { info, bytes: row.body! }
      const bytes = Bun.file(join(root, row.file))
      // A file shorter or longer than its row says is a damaged body: copying it would hide that.
      if (bytes.size !== info.size) throw new Error(`the body of ${key} is ${bytes.size} bytes on disk, ${info.size} in blobs.db`)
      return { info, bytes }
    },
    close: () => db.close(),
  }
}

type IndexRow = { size: number; checksum: string; content_type: string }

/**
 * An S3 store the data dir was written with: its index (blobs-s3.db, table `objects`, see
 * s3-index.ts) says what each object holds, the bucket has the bytes. `client` reads
 * `location`'s bucket. The index is read as a file (not through sqliteS3Index, whose reads are
 * one row at a time), so the copy can take its rows whole.
 */
export function s3Source(dataDir: string, location: S3Location, client: Bun.S3Client): BlobSource & { index: Database | null } {
  const name = `s3://${location.bucket}/${location.prefix}`
  const none = { name, index: null, read: () => null, close() {} }
  if (!existsSync(join(dataDir, 'blobs-s3.db'))) return none
  const db = openWalDatabase(dataDir, 'blobs-s3.db', { synchronous: 'normal', cacheKiB: 2048 })
  // A file made and never migrated (a process stopped at once) has no table, and no rows.
  if (!db.query("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'objects'").get()) {
    db.close()
    return none
  }
  const get = db.query<IndexRow, [string]>('SELECT size, checksum, content_type FROM objects WHERE name = ?')
  return {
    name,
    index: db,
    read(key) {
      const row = get.get(indexNameOf(location, key))
      return row ? { info: toInfo(row), bytes: client.file(objectKeyOf(location, key)) } : null
    },
    close: () => db.close(),
  }
}
