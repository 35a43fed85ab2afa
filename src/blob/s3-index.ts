import { migrateUnderLock } from '../sqlite/migrate'
import { openWalDatabase, type Synchronous } from '../sqlite/wal'
import { CommitBatcher } from '../util/commit-batcher'

/** What the index knows of an object: what S3 cannot tell back through Bun.S3Client (the checksum). */
export type IndexRow = { size: number; checksum: string; content_type: string }

/**
 * The S3 store's index: one row per object it has stored, with the size, checksum and content
 * type its put computed. Bun.S3Client neither writes nor reads user metadata, and a streamed put
 * knows its checksum only after the upload has begun, so the checksum cannot travel with the
 * object (decision "The S3 blob store"). Rows are named by the object's bucket and full key
 * (`bucket/prefix/key`), so rows written under one TRAWL_BLOB_URL never answer for another:
 * switching buckets reads as missing, not as wrong.
 *
 * Two places hold it: a SQLite file of the data dir (sqliteS3Index) beside the SQLite store, and
 * a table of the database beside the PostgreSQL store (src/store/postgres/s3-index.ts), which
 * every process sharing the database reads.
 */
export interface S3Index {
  get(name: string): Promise<IndexRow | null>
  upsert(name: string, row: IndexRow): Promise<void>
  /** True when the name had a row. */
  delete(name: string): Promise<boolean>
  /** Writes what was submitted and not yet written (close() waits on it). */
  flush(): void
  /** Releases what the index opened itself; the store's own pool is not its to close. */
  close(): Promise<void>
  /** The index's SQLite file, when it has one (its checkpoints run on the checkpoint thread). */
  readonly databaseFile?: string
}

/** Opens the index an S3 store of `dataDir` keeps (the engine decides where it lives). */
export type S3IndexOpener = (dataDir: string, synchronous: Synchronous) => S3Index

const SCHEMA = `CREATE TABLE objects (
  name TEXT PRIMARY KEY,
  size INTEGER NOT NULL,
  checksum TEXT NOT NULL,
  content_type TEXT NOT NULL
) WITHOUT ROWID`

const VERSION = 1

type Op = { kind: 'put'; name: string; row: IndexRow } | { kind: 'delete'; name: string }

/** Opens `<dataDir>/blobs-s3.db` and its statements (sqliteS3Index; reading a data dir's index directly). */
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

/**
 * The index as `<dataDir>/blobs-s3.db`, for the SQLite engine. A crawl puts a body per page: its
 * rows share transactions as the disk store's do (CommitBatcher), so a write settles once its
 * batch commits.
 */
export const sqliteS3Index: S3IndexOpener = (dataDir, synchronous) => {
  const { db, statements: sql } = openS3Index(dataDir, synchronous)
  const apply = (op: Op): boolean => {
    if (op.kind === 'delete') return sql.delete.get(op.name) !== null
    sql.upsert.run(op.name, op.row.size, op.row.checksum, op.row.content_type)
    return true
  }
  const tx = db.transaction((ops: Op[]) => ops.map(apply))
  const batcher = new CommitBatcher<Op, boolean>((ops) => tx.immediate(ops), { maxBatch: 64, maxWaitMs: 2 })
  return {
    databaseFile: db.filename,
    get: async (name) => sql.get.get(name),
    upsert: async (name, row) => {
      await batcher.submit({ kind: 'put', name, row })
    },
    delete: (name) => batcher.submit({ kind: 'delete', name }),
    flush: () => batcher.flush(),
    async close() {
      batcher.flush()
      db.close()
    },
  }
}
