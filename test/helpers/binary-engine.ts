/**
 * The store engine the end-to-end tests run the compiled binary on (TRAWL_TEST_ENGINE: `sqlite`,
 * the default, or `postgres`), and an engine-neutral look at what a process recorded.
 *
 * On PostgreSQL each data dir a test uses gets one database (test/helpers/postgres.ts) and one
 * S3 prefix on one S3-compatible server for the whole test process (test/helpers/s3-server.ts),
 * so the processes a test starts on one data dir (a restart, `trawl crawl` then `trawl export`)
 * share their store as they share the data dir's files on SQLite. A test whose environment names
 * its own database keeps it, and gets nothing added.
 */
import { describe, test } from 'bun:test'
import { Database } from 'bun:sqlite'
import { SQL } from 'bun'
import { existsSync, rmSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { createStore } from '../../src/store'
import { openDatabase } from '../../src/store/db'
import { numeric } from '../../src/store/postgres/pg'
import { postgresStore } from '../../src/store/postgres/store'
import type { Store } from '../../src/store/types'
import { clusterPort, urlOf } from './postgres'
import { dollarParams, testEngine, type Engine, type Param } from './test-engine'
import { startS3Server, type S3TestServer } from './s3-server'

/** Whether the binary is run on PostgreSQL: TRAWL_TEST_ENGINE, as the API tests read it. */
export const onPostgres = () => testEngine() === 'postgres'

type Place = { databaseUrl: string; prefix: string }

/** The store of each data dir (resolved path) a test started a process on. */
const places = new Map<string, Promise<Place>>()
let s3: Promise<S3TestServer> | null = null
let admin: SQL | null = null
let made = 0
let prefixes = 0

/** The S3 server of the test process, started on first use and gone with the process. */
function s3Server(): Promise<S3TestServer> {
  return (s3 ??= startS3Server().then((server) => {
    // s3rver leaves when its stdin closes, that is with this process; its files stay unless removed.
    process.on('exit', () => rmSync(server.dir, { recursive: true, force: true }))
    return server
  }))
}

/**
 * A new migrated database of the test cluster. As freshDatabase() does (a copy of the template it
 * migrated), but over one open connection rather than a psql process each: a test starts
 * a hundred processes or more, and this is a third of the time.
 */
async function newDatabase(): Promise<string> {
  const port = clusterPort() // starts the cluster and migrates the template on first use
  admin ??= new SQL(urlOf(port, 'postgres'), { max: 1 })
  const name = `e2e_${process.pid}_${++made}`
  await admin.unsafe(`CREATE DATABASE ${name} TEMPLATE trawl_template`)
  return urlOf(port, name)
}

/** The database and S3 prefix of a data dir, made on its first use. */
function placeOf(dataDir: string): Promise<Place> {
  const key = resolve(dataDir)
  let place = places.get(key)
  if (!place) {
    const prefix = `e2e-${process.pid}-${++prefixes}`
    place = newDatabase().then((databaseUrl) => ({ databaseUrl, prefix }))
    places.set(key, place)
  }
  return place
}

/** Where a data dir's store is; throws when no process of the test ran on it. */
function placed(dataDir: string): Promise<Place> {
  const place = places.get(resolve(dataDir))
  if (!place) throw new Error(`no process of this test ran on ${dataDir}: it has no database`)
  return place
}

const namesOwn = (env: Record<string, string>, args: readonly string[], setting: string, flag: string) => setting in env || args.some((a) => a === `--${flag}` || a.startsWith(`--${flag}=`))

/**
 * `env` with the engine's settings for a process on `dataDir`: nothing on SQLite; on PostgreSQL
 * TRAWL_DATABASE_URL and, unless the test names its own TRAWL_BLOB_URL, the S3 settings. A test
 * that names a database (in `env` or as --database-url in `args`, even an empty one: SQLite) gets
 * nothing added.
 */
export async function engineEnv(env: Record<string, string>, dataDir: string, args: readonly string[] = []): Promise<Record<string, string>> {
  if (!onPostgres() || namesOwn(env, args, 'TRAWL_DATABASE_URL', 'database-url')) return env
  const place = await placeOf(dataDir)
  const blobs = 'TRAWL_BLOB_URL' in env ? {} : (await s3Server()).env(place.prefix)
  return { TRAWL_DATABASE_URL: place.databaseUrl, ...blobs, ...env }
}

/** The data dir a command line uses: --data-dir, else TRAWL_DATA_DIR, else ./trawl-data of `cwd`. */
export function dataDirOf(args: readonly string[], env: Record<string, string>, cwd: string): string {
  for (const [i, a] of args.entries()) {
    if (a === '--data-dir' && args[i + 1] !== undefined) return resolve(cwd, args[i + 1]!)
    if (a.startsWith('--data-dir=')) return resolve(cwd, a.slice('--data-dir='.length))
  }
  return resolve(cwd, env.TRAWL_DATA_DIR || 'trawl-data')
}

/** Forgets the data dirs (their databases stay on the throwaway cluster until it goes) and closes the connection that made them. */
export async function forgetPlaces(): Promise<void> {
  places.clear()
  const closing = admin?.close()
  admin = null
  await closing
}

/**
 * What a data dir's processes recorded, read beside them on either engine: its store's tables
 * (the same names and columns on both) and the keys of its blob store. On SQLite the files are
 * opened read-only (WAL readers see the last commit, with serve up or down).
 */
export interface RecordedStore {
  engine: Engine
  /** Rows of a statement with `?` placeholders; numbers come back as numbers on both engines. */
  query<T = Record<string, unknown>>(sql: string, params?: Param[]): Promise<T[]>
  /** The blob keys (as the store names them, without the S3 prefix) that start with `prefix`, sorted. */
  blobKeys(prefix: string): Promise<string[]>
  close(): Promise<void>
}

export async function recordedStore(dataDir: string): Promise<RecordedStore> {
  return onPostgres() ? postgresRecords(await placed(dataDir)) : sqliteRecords(dataDir)
}

/** Opens the data dir's store, runs `look` and closes it. */
export async function inspectStore<T>(dataDir: string, look: (store: RecordedStore) => Promise<T>): Promise<T> {
  const store = await recordedStore(dataDir)
  try {
    return await look(store)
  } finally {
    await store.close()
  }
}

function sqliteRecords(dataDir: string): RecordedStore {
  const path = join(dataDir, 'trawl.db')
  if (!existsSync(path)) throw new Error(`no ${path}: nothing was recorded in this data dir`)
  const db = new Database(path, { readonly: true })
  let blobs: Database | null = null
  return {
    engine: 'sqlite',
    query: async <T>(sql: string, params: Param[] = []) => db.query(sql).all(...params) as T[],
    async blobKeys(prefix) {
      blobs ??= new Database(join(dataDir, 'blobs.db'), { readonly: true })
      const rows = blobs.query('SELECT key FROM blobs WHERE substr(key, 1, length(?)) = ? ORDER BY key').all(prefix, prefix) as { key: string }[]
      return rows.map((r) => r.key)
    },
    async close() {
      db.close()
      blobs?.close()
    },
  }
}

function postgresRecords(place: Place): RecordedStore {
  const sql = new SQL(place.databaseUrl, { max: 1 })
  return {
    engine: 'postgres',
    query: async <T>(text: string, params: Param[] = []) => numeric<T>(await sql.unsafe(dollarParams(text), params)),
    async blobKeys(prefix) {
      const base = `${place.prefix}/`
      return (await (await s3Server()).keys(base + prefix)).map((k) => k.slice(base.length))
    },
    close: () => sql.close(),
  }
}

/**
 * Whether anything was recorded for `dataDir`: on SQLite its database file exists, on PostgreSQL
 * its database holds a job or a run. What a command refused before it started must leave false.
 */
export async function recordedAnything(dataDir: string): Promise<boolean> {
  if (!onPostgres()) return existsSync(join(dataDir, 'trawl.db'))
  if (!places.has(resolve(dataDir))) return false
  return inspectStore(dataDir, async (store) => (await store.query<{ n: number }>('SELECT (SELECT count(*) FROM jobs) + (SELECT count(*) FROM runs) AS n'))[0]!.n > 0)
}

/**
 * Writes to a data dir's store before any process runs on it, through the engine's own Store (the
 * SQLite file it creates, or the database its processes will be given), then closes it.
 */
export async function writeStore<T>(dataDir: string, write: (store: Store) => Promise<T>): Promise<T> {
  if (!onPostgres()) {
    const db = openDatabase(dataDir)
    try {
      return await write(createStore(db))
    } finally {
      db.close()
    }
  }
  const sql = new SQL((await placeOf(dataDir)).databaseUrl, { max: 2 })
  try {
    return await write(postgresStore(sql, { journalDir: null }))
  } finally {
    await sql.close()
  }
}

/** Where trawl says a data dir's store is (`opened.where`): the data dir on SQLite, the database's URL on PostgreSQL. */
export async function storeWhere(dataDir: string): Promise<string> {
  return onPostgres() ? (await placed(dataDir)).databaseUrl : dataDir
}

// A test that only SQLite's pass defines: one about SQLite itself, or one the PostgreSQL pass
// leaves to SQLite's for the suite's time. In the PostgreSQL pass it is not registered at all,
// so neither pass reports a skipped test.
const unregistered = Object.assign(() => {}, { each: () => () => {} })
/** `test` in SQLite's pass; nothing in PostgreSQL's. */
export const sqliteOnlyTest = (onPostgres() ? unregistered : test) as typeof test
/** `describe` in SQLite's pass; nothing in PostgreSQL's. */
export const sqliteOnlyDescribe = (onPostgres() ? unregistered : describe) as typeof describe
