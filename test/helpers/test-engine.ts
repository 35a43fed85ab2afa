// The storage engine under a test API (TRAWL_TEST_ENGINE: `sqlite`, the default, or `postgres`),
// with what the API tests need beside the Store: plain SQL over the same tables (both engines
// share table and column names) and the writes only a crawl makes (page records, crawl log
// entries, artifact rows), through each engine's own writers.
import type { Database } from 'bun:sqlite'
import { SQL } from 'bun'
import { join } from 'node:path'
import { createSqliteRepositories, sqliteStore, type SqliteRepositories } from '../../src/store'
import type { NewArtifact } from '../../src/store/artifacts'
import type { LogEntry } from '../../src/store/crawl-logs'
import { openDatabase } from '../../src/store/db'
import type { PageRecord } from '../../src/store/page-records'
import { insertArtifacts } from '../../src/store/postgres/artifacts'
import { recordPages, writeLogs } from '../../src/store/postgres/crawl-logs'
import { runSeqOf } from '../../src/store/postgres/keys'
import { first, numeric } from '../../src/store/postgres/pg'
import { postgresStore } from '../../src/store/postgres/store'
import type { Store } from '../../src/store/types'
import { freshDatabase } from './postgres'

export type Engine = 'sqlite' | 'postgres'
export type Param = string | number | boolean | null

/** The engine the API tests run on: TRAWL_TEST_ENGINE, `sqlite` when unset. */
export function testEngine(): Engine {
  const name = process.env.TRAWL_TEST_ENGINE || 'sqlite'
  if (name !== 'sqlite' && name !== 'postgres') throw new Error(`TRAWL_TEST_ENGINE must be sqlite or postgres, not ${name}`)
  return name
}

export interface EngineAccess {
  engine: Engine
  store: Store
  /** Rows of a statement written with `?` placeholders; numbers come back as numbers on both engines. */
  query<T = Record<string, unknown>>(sql: string, params?: Param[]): Promise<T[]>
  /** The seq of a tenant's run; throws when there is none. */
  runSeq(tenant: string, runId: string): Promise<number>
  /** Writes page records (visits with their children) as one crawl batch does. */
  recordPages(runSeq: number, pages: readonly PageRecord[], tenant?: string): Promise<void>
  /** Writes crawl log entries as one crawl batch does; answers their ids, in order. */
  writeLogs(entries: LogEntry[]): Promise<string[]>
  /** Records artifact rows as one crawl batch does (the blobs are the caller's). */
  insertArtifacts(rows: NewArtifact[]): Promise<void>
  /** Makes every later statement fail, as a database that went away. */
  breakStore(): Promise<void>
  close(): Promise<void>
  /** The SQLite engine's database and repositories; null on PostgreSQL. */
  sqlite: { db: Database; repos: SqliteRepositories } | null
}

export function openTestEngine(dir: string, engine = testEngine()): EngineAccess {
  return engine === 'postgres' ? postgresEngine(dir) : sqliteEngine(dir)
}

function sqliteEngine(dir: string): EngineAccess {
  const db = openDatabase(dir)
  const repos = createSqliteRepositories(db)
  return {
    engine: 'sqlite',
    store: sqliteStore(repos),
    query: async <T>(sql: string, params: Param[] = []) => db.query(sql).all(...params) as T[],
    async runSeq(tenant, runId) {
      return found(repos.frontier.runSeq(tenant, runId), tenant, runId)
    },
    async recordPages(runSeq, pages, tenant) {
      repos.transaction(() => repos.runGraph.recordPages(runSeq, pages, tenant))
    },
    async writeLogs(entries) {
      const writer = repos.crawlLogs.writer({ manual: true })
      try {
        const ids = entries.map((e) => writer.add(e))
        repos.transaction(() => writer.flush())
        return ids
      } finally {
        writer.close()
      }
    },
    async insertArtifacts(rows) {
      repos.transaction(() => repos.artifacts.insertMany(rows))
    },
    async breakStore() {
      db.close()
    },
    async close() {
      db.close()
    },
    sqlite: { db, repos },
  }
}

function postgresEngine(dir: string): EngineAccess {
  // The client connects on its first statement, so the API is ready at once, as on SQLite;
  // freshDatabase() hands out a database already migrated.
  const sql = new SQL(freshDatabase(), { max: 4 })
  let closed: Promise<void> | null = null
  const close = () => (closed ??= sql.close())
  return {
    engine: 'postgres',
    store: postgresStore(sql, { journalDir: join(dir, 'journal') }),
    query: async <T>(text: string, params: Param[] = []) => numeric<T>(await sql.unsafe(dollarParams(text), params)),
    async runSeq(tenant, runId) {
      return found(await runSeqOf(sql, tenant, runId), tenant, runId)
    },
    async recordPages(runSeq, pages, tenant) {
      const owner = tenant ?? first<{ tenant: string }>(await sql`SELECT tenant FROM runs WHERE seq = ${runSeq}`)?.tenant ?? ''
      await sql.begin((tx) => recordPages(tx, runSeq, [...pages], owner))
    },
    async writeLogs(entries) {
      // The writer makes the ids: they are read back as the rows written after the last one.
      const last = first<{ seq: number }>(await sql`SELECT coalesce(max(seq), 0) AS seq FROM crawl_logs`)!.seq
      await sql.begin((tx) => writeLogs(tx, entries))
      const rows = numeric<{ id: string; url: string; step: string; occurred_at: number }>(await sql`SELECT id, url, step, occurred_at FROM crawl_logs WHERE seq > ${last} ORDER BY seq`)
      const same = rows.length === entries.length && rows.every((r, i) => r.url === entries[i]!.url && r.step === entries[i]!.step && r.occurred_at === entries[i]!.occurred_at)
      if (!same) throw new Error(`writeLogs wrote ${rows.length} rows for ${entries.length} entries, or not in their order`)
      return rows.map((r) => r.id)
    },
    async insertArtifacts(rows) {
      await sql.begin((tx) => insertArtifacts(tx, rows))
    },
    breakStore: close,
    close,
    sqlite: null,
  }
}

function found(seq: number | null, tenant: string, runId: string): number {
  if (seq === null) throw new Error(`no run ${runId} of tenant ${tenant}`)
  return seq
}

/** `?` placeholders as PostgreSQL's `$1, $2, …`; a `?` inside a quoted literal or name stays. */
export function dollarParams(text: string): string {
  let n = 0
  let quote: string | null = null
  let out = ''
  for (const c of text) {
    if (quote) {
      if (c === quote) quote = null
    } else if (c === "'" || c === '"') quote = c
    else if (c === '?') {
      out += `$${++n}`
      continue
    }
    out += c
  }
  return out
}
