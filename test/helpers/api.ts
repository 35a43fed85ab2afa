import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Database } from 'bun:sqlite'
import { loadConfig, type Config } from '../../src/config'
import { jsonClient } from './client'
import { createLogger } from '../../src/log'
import { openBlobStore } from '../../src/blob'
import { createFetcher } from '../../src/fetch'
import { ParsePool } from '../../src/parse/pool'
import { managementApp } from '../../src/server'
import type { SqliteRepositories } from '../../src/store'
import { openTestEngine, testEngine, type Engine, type Param } from './test-engine'

export type { CallOptions, Reply } from './client'
export { testEngine, type Engine }

const BLOB_SETTINGS = ['TRAWL_BLOB_URL', 'TRAWL_S3_ENDPOINT']

/**
 * A management API over a fresh temp data dir, driven with app.handle (real routing, a real
 * database, no sockets), on the engine TRAWL_TEST_ENGINE names: SQLite in the data dir (the
 * default) or a new database of the test PostgreSQL cluster (test/helpers/postgres.ts). `env`
 * sets TRAWL_* settings as the server would read them. The blob store is on disk in the data dir
 * on either engine, unless TRAWL_BLOB_URL and TRAWL_S3_ENDPOINT of this process (or `env`) point
 * at S3, so any API or engine test file runs against S3 when they do (artifacts-s3.test.ts).
 *
 * Beside the HTTP client, it answers engine-neutral access to the tables (`query`, `one`,
 * `exec`, `count`) and the writes only a crawl makes (`recordPages`, `writeLogs`,
 * `insertArtifacts`). `db` and `repos` are the SQLite engine's own, for tests of that engine
 * only: on PostgreSQL they throw.
 */
export function testApi(env: Record<string, string> = {}, overrides: Partial<Config> = {}, fetchCa?: string) {
  return apiOn(testEngine(), env, overrides, fetchCa)
}

/** testApi on SQLite whatever TRAWL_TEST_ENGINE says: for tests of that engine (test/store/sqlite-*). */
export function sqliteTestApi(env: Record<string, string> = {}, overrides: Partial<Config> = {}): TestApi {
  return apiOn('sqlite', env, overrides)
}

function apiOn(engineName: Engine, env: Record<string, string>, overrides: Partial<Config>, fetchCa?: string) {
  const dir = mkdtempSync(join(tmpdir(), 'trawl-test-'))
  const blobEnv = Object.fromEntries(BLOB_SETTINGS.flatMap((k) => (process.env[k] ? [[k, process.env[k]!]] : [])))
  const config = { ...loadConfig(['--data-dir', dir], { ...blobEnv, ...env }).config, ...overrides }
  const engine = openTestEngine(dir, engineName)
  const store = engine.store
  const logs: string[] = []
  const parser = new ParsePool(config.parseWorkers, config.parseTimeoutMs)
  const log = createLogger(config.logLevel === 'debug' ? 'debug' : 'info', (line) => logs.push(line))
  const fetcher = createFetcher(config, log, { ca: fetchCa })
  const blobs = openBlobStore(config, { env: { ...process.env, ...env } })
  const app = managementApp({ store, config, parser, log, fetcher, blobs })
  const sqliteOnly = () => {
    if (!engine.sqlite) throw new Error('this test reaches into the SQLite engine (api.db, api.repos), but TRAWL_TEST_ENGINE is postgres')
    return engine.sqlite
  }

  return {
    ...jsonClient('http://trawl.test', (request) => app.handle(request)),
    app,
    store,
    engine: engine.engine,
    /** The SQLite engine's database (its tests only). */
    get db(): Database {
      return sqliteOnly().db
    },
    /** The SQLite engine's repositories (its tests only). */
    get repos(): SqliteRepositories {
      return sqliteOnly().repos
    },
    logs,
    config,
    dir,
    parser,
    fetcher,
    blobs,
    /** Rows of a statement with `?` placeholders, on either engine. */
    query: engine.query,
    /** The first row of a statement with `?` placeholders; null when there is none. */
    one: async <T = Record<string, unknown>>(sql: string, params: Param[] = []): Promise<T | null> => (await engine.query<T>(sql, params))[0] ?? null,
    /** Runs a statement with `?` placeholders (a test setting what only the crawl engine sets). */
    exec: async (sql: string, params: Param[] = []): Promise<void> => void (await engine.query(sql, params)),
    /** Rows of a table, all or those matching a WHERE clause with `?` placeholders. */
    count: async (table: string, where?: string, params: Param[] = []): Promise<number> =>
      (await engine.query<{ n: number }>(`SELECT count(*) AS n FROM ${table}${where ? ` WHERE ${where}` : ''}`, params))[0]!.n,
    runSeq: engine.runSeq,
    recordPages: engine.recordPages,
    writeLogs: engine.writeLogs,
    insertArtifacts: engine.insertArtifacts,
    /** Records one artifact row (insertArtifacts of one). */
    insertArtifact: (row: Parameters<typeof engine.insertArtifacts>[0][number]) => engine.insertArtifacts([row]),
    /** Makes every later statement of the store fail, as a database that went away. */
    breakStore: engine.breakStore,
    /** Closes everything and removes the data dir; on SQLite all of it before it returns. */
    close(): Promise<void> {
      parser.close()
      void fetcher.close()
      void blobs.close()
      const closed = engine.close()
      const removeDir = () => rmSync(dir, { recursive: true, force: true })
      if (engine.sqlite) {
        removeDir()
        return closed
      }
      return closed.finally(removeDir)
    },
  }
}
export type TestApi = ReturnType<typeof apiOn>

const SNAPSHOT_TABLES = ['hosts', 'links', 'labels', 'jobs', 'runs', 'pattern_sets', 'data_maps'] as const

/** Counts rows of every table, to show a rejected request changed nothing. */
export async function snapshot(api: TestApi): Promise<Record<(typeof SNAPSHOT_TABLES)[number], number>> {
  const counts = await Promise.all(SNAPSHOT_TABLES.map((t) => api.count(t)))
  return Object.fromEntries(SNAPSHOT_TABLES.map((t, i) => [t, counts[i]!])) as Record<(typeof SNAPSHOT_TABLES)[number], number>
}

/** Query string from pairs, keeping repeated keys and brackets (`labels[env]`). */
export function qs(pairs: [string, string | number | boolean][]): string {
  const p = new URLSearchParams()
  for (const [k, v] of pairs) p.append(k, String(v))
  const s = p.toString()
  return s ? `?${s}` : ''
}

export const job = (over: Record<string, unknown> = {}) => ({ name: 'docs', config: { seeds: ['https://example.com/'] }, ...over })
