import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { loadConfig, type Config } from '../../src/config'
import { jsonClient } from './client'
import { createLogger } from '../../src/log'
import { openBlobStore } from '../../src/blob'
import { createFetcher } from '../../src/fetch'
import { ParsePool } from '../../src/parse/pool'
import { managementApp } from '../../src/server'
import { createSqliteRepositories, sqliteStore } from '../../src/store'
import { openDatabase } from '../../src/store/db'

export type { CallOptions, Reply } from './client'

const BLOB_SETTINGS = ['TRAWL_BLOB_URL', 'TRAWL_S3_ENDPOINT']

/**
 * A management API over a fresh temp data dir, driven with app.handle (real routing, real
 * SQLite, no sockets). `env` sets TRAWL_* settings as the server would read them. The blob
 * store follows TRAWL_BLOB_URL and TRAWL_S3_ENDPOINT of this process unless `env` names its own,
 * so any API or engine test file runs against S3 when they point at one (artifacts-s3.test.ts).
 */
export function testApi(env: Record<string, string> = {}, overrides: Partial<Config> = {}, fetchCa?: string) {
  const dir = mkdtempSync(join(tmpdir(), 'trawl-test-'))
  const blobEnv = Object.fromEntries(BLOB_SETTINGS.flatMap((k) => (process.env[k] ? [[k, process.env[k]!]] : [])))
  const config = { ...loadConfig(['--data-dir', dir], { ...blobEnv, ...env }).config, ...overrides }
  const db = openDatabase(dir)
  // The SQLite engine's repositories under the Store: tests write what only the crawl would
  // (artifact rows, visits) and EXPLAIN its statements through them.
  const repos = createSqliteRepositories(db)
  const store = sqliteStore(repos)
  const logs: string[] = []
  const parser = new ParsePool(config.parseWorkers, config.parseTimeoutMs)
  const log = createLogger(config.logLevel === 'debug' ? 'debug' : 'info', (line) => logs.push(line))
  const fetcher = createFetcher(config, log, { ca: fetchCa })
  const blobs = openBlobStore(config, { env: { ...process.env, ...env } })
  const app = managementApp({ store, config, parser, log, fetcher, blobs })

  return {
    ...jsonClient('http://trawl.test', (request) => app.handle(request)),
    app,
    store,
    repos,
    db,
    logs,
    config,
    dir,
    parser,
    fetcher,
    blobs,
    close() {
      parser.close()
      void fetcher.close()
      void blobs.close()
      db.close()
      rmSync(dir, { recursive: true, force: true })
    },
  }
}
export type TestApi = ReturnType<typeof testApi>

/** Counts rows of every table, to show a rejected request changed nothing. */
export function snapshot(api: TestApi): Record<'hosts' | 'links' | 'labels' | 'jobs' | 'runs' | 'pattern_sets' | 'data_maps', number> {
  const tables = ['hosts', 'links', 'labels', 'jobs', 'runs', 'pattern_sets', 'data_maps']
  return Object.fromEntries(tables.map((t) => [t, (api.db.query(`SELECT count(*) AS n FROM ${t}`).get() as { n: number }).n])) as ReturnType<typeof snapshot>
}

/** Query string from pairs, keeping repeated keys and brackets (`labels[env]`). */
export function qs(pairs: [string, string | number | boolean][]): string {
  const p = new URLSearchParams()
  for (const [k, v] of pairs) p.append(k, String(v))
  const s = p.toString()
  return s ? `?${s}` : ''
}

export const job = (over: Record<string, unknown> = {}) => ({ name: 'docs', config: { seeds: ['https://example.com/'] }, ...over })
