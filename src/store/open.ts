import { existsSync, mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { sqliteS3Index, type S3IndexOpener } from '../blob/s3-index'
import { ConfigError, withoutPassword, type Config } from '../config'
import { dataDirError } from '../sqlite/wal'
import { openDatabase } from './db'
import { createStore } from './index'
import { openPostgres } from './postgres/open'
import { pgS3Index } from './postgres/s3-index'
import { keepStatistics } from './postgres/statistics'
import { postgresStore } from './postgres/store'
import type { Store } from './types'

/** The settings that choose and place the store. */
export type StoreSettings = Pick<Config, 'dataDir' | 'databaseUrl' | 'blobUrl'>

/** A store opened on one engine; what uses it needs to know no more than this. */
export type OpenedStore = {
  store: Store
  engine: 'sqlite' | 'postgres'
  /** Where the store is, for a person: the data dir, or the database URL without its password. */
  where: string
  /**
   * The SQLite files the store commits to, whose checkpoints a crawl runs on a thread of its own
   * (src/store/checkpointer.ts); none with PostgreSQL, which checkpoints itself.
   */
  checkpointFiles: string[]
  /** Where an S3 blob store keeps its index (openBlobStore's `s3Index`): blobs-s3.db of the data dir, or this database. */
  s3Index: S3IndexOpener
  /** Closes the database (SQLite checkpoints its WAL, PostgreSQL's pool ends). Close what uses the store first. */
  close(): Promise<void>
}

/**
 * Opens the store TRAWL_DATABASE_URL names: the SQLite database of the data dir when it is
 * unset, else the PostgreSQL database it names, migrated to this binary's schema either way. A
 * store that cannot be used is a ConfigError in one line (exit 2): a data dir that cannot be
 * written, a database that cannot be reached or is newer than this binary, PostgreSQL without S3.
 */
export function openStore(settings: StoreSettings): Promise<OpenedStore> {
  return open(settings, false)
}

/**
 * As openStore, for the commands that only read what crawls left (export, extract, payments):
 * null where the data dir has no trawl.db, and nothing is created in the data dir. A PostgreSQL
 * store is always there to open.
 */
export async function openExistingStore(settings: StoreSettings): Promise<OpenedStore | null> {
  if (!settings.databaseUrl && !existsSync(join(settings.dataDir, 'trawl.db'))) return null
  return open(settings, true)
}

async function open(settings: StoreSettings, existing: boolean): Promise<OpenedStore> {
  if (!settings.databaseUrl) {
    const db = openDatabase(settings.dataDir)
    return {
      store: createStore(db),
      engine: 'sqlite',
      where: settings.dataDir,
      checkpointFiles: [db.filename],
      s3Index: sqliteS3Index,
      async close() {
        db.close()
      },
    }
  }
  const url = settings.databaseUrl
  // A body on one machine's disk is missing for every other process that reads the database.
  if (!settings.blobUrl) {
    throw new ConfigError('TRAWL_DATABASE_URL: with PostgreSQL the artifact bodies must be in S3, so that every process sharing the database can read them; set TRAWL_BLOB_URL=s3://bucket/prefix')
  }
  // The fetch journal stays a file of this process's data dir: it names what this process's own
  // crash would leave behind (docs/configuration.md).
  // Made once the database answers, so that a command refused for its database leaves nothing.
  const journal = join(settings.dataDir, 'journal')
  const sql = await openPostgres(url).catch((err: unknown) => Promise.reject(oneLine(err, url)))
  if (!existing) {
    try {
      mkdirSync(journal, { recursive: true })
    } catch (err) {
      await sql.close()
      throw dataDirError(settings.dataDir, 'the journal folder cannot be created', err)
    }
  }
  // A process that writes keeps the young tables' statistics; one that only reads has no need.
  const stopKeeping = existing ? async () => {} : keepStatistics(sql)
  return {
    store: postgresStore(sql, { journalDir: journal }),
    engine: 'postgres',
    where: withoutPassword(url),
    checkpointFiles: [],
    s3Index: pgS3Index(sql),
    async close() {
      await stopKeeping()
      await sql.close()
    },
  }
}

/**
 * A failure to open the database as the one line a person reads: a ConfigError (exit 2) whose
 * message holds no line break and, whatever the client put in it, not the URL's password.
 */
function oneLine(err: unknown, url: string): ConfigError {
  let message = err instanceof Error ? err.message : String(err)
  const secrets = passwordsOf(url)
  for (const secret of secrets) message = message.split(secret).join('***')
  message = message.replace(/\s*\n\s*/g, ' ').trim()
  return err instanceof ConfigError ? new ConfigError(message, { cause: err }) : new ConfigError(`TRAWL_DATABASE_URL: ${withoutPassword(url)} cannot be used: ${message}`)
}

/** The URL's password as written and decoded (the client may quote either). */
function passwordsOf(url: string): string[] {
  try {
    const raw = new URL(url).password
    if (!raw) return []
    const decoded = decodeURIComponent(raw)
    return [...new Set([raw, decoded])].sort((a, b) => b.length - a.length)
  } catch {
    return []
  }
}
