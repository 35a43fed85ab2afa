import { assertNothingCrawling, openSource } from './source'
import { assertEmpty, openTarget } from './target'
import { columnsOfTables, type TableName } from './tables'
import { advanceSequences, copyTable, type Progress } from './rows'
import { copyBlobs, planBlobs, type BlobOutcome, type BlobPlan } from './blobs'
import type { TextStats } from './copy-text'

export type { Progress } from './rows'

export type CopyOptions = {
  dataDir: string
  /** --to: the PostgreSQL database, which must hold no rows. */
  to: string
  /** --blobs: the S3 location the bodies go to; null to keep them where TRAWL_BLOB_URL says they are. */
  blobs: string | null
  /** --force: copy even while a run is being crawled. */
  force: boolean
  /** TRAWL_BLOB_URL and TRAWL_S3_ENDPOINT, as the data dir was written with. */
  blobUrl: string | null
  s3Endpoint: string | null
  env: Record<string, string | undefined>
}

export type CopyReport = {
  /** The target as it may be printed (no password). */
  target: string
  tables: { table: TableName; rows: number }[]
  rows: number
  blobs: BlobOutcome
  /** NUL characters replaced by U+FFFD, which PostgreSQL's text cannot hold. */
  nulCharacters: number
  ms: number
}

/**
 * Copies a SQLite data dir into an empty PostgreSQL database, table by table in dependency order
 * with seqs kept, and its bodies into S3 with their index rows. Everything written to PostgreSQL
 * is one transaction: a copy that fails leaves the database as empty as it found it, and can be
 * run again. trawl.db is read in one read transaction, so the copy is of one moment of the data
 * dir even if another process writes to it meanwhile (--force).
 *
 * Refusals, before anything is written, are ConfigErrors (one line, exit 2): no trawl.db, a run
 * being crawled, a database that cannot be reached or already holds rows, bodies without an S3
 * location to go to.
 */
export async function copyDataDir(opts: CopyOptions, progress: Progress): Promise<CopyReport> {
  const started = performance.now()
  const db = openSource(opts.dataDir)
  let plan: BlobPlan | null = null
  let target: Awaited<ReturnType<typeof openTarget>> | null = null
  try {
    if (!opts.force) assertNothingCrawling(db, opts.dataDir)
    db.exec('BEGIN')
    const bodies = () => (db.query('SELECT count(DISTINCT blob_key) AS n FROM artifacts').get() as { n: number }).n
    // The bodies' way first: a bad --blobs is refused before the database is even migrated.
    plan = await planBlobs({ dataDir: opts.dataDir, sourceUrl: opts.blobUrl, targetUrl: opts.blobs, endpoint: opts.s3Endpoint, env: opts.env }, bodies)
    target = await openTarget(opts.to)
    const stats: TextStats = { nulCharacters: 0 }
    const tables: CopyReport['tables'] = []
    let blobs!: BlobOutcome
    const where = target.where
    const chosen = plan
    await target.sql.begin(async (tx) => {
      await assertEmpty(tx, where)
      const columns = await columnsOfTables(db, tx)
      for (const [table, cols] of columns) tables.push({ table, rows: await copyTable(db, tx, table, table, cols, stats, progress) })
      blobs = await copyBlobs(chosen, db, tx, stats, progress)
      await advanceSequences(tx, columns)
    })
    return {
      target: where,
      tables,
      rows: tables.reduce((n, t) => n + t.rows, 0),
      blobs,
      nulCharacters: stats.nulCharacters,
      ms: performance.now() - started,
    }
  } finally {
    if (plan && plan.kind !== 'none') plan.source.close()
    await target?.sql.close().catch(() => {})
    if (db.inTransaction) db.exec('ROLLBACK')
    db.close()
  }
}
