// Both engines side by side for the crawl log and run graph tests: the same rows written through
// each engine's writers (SQLite: runGraph.recordPages and the crawl log writer; PostgreSQL:
// recordPages and writeLogs in a transaction) and read through each one's CrawlLogStore and
// RunGraphStore. Jobs, runs, hosts and links are plain rows, the same on both, so that what the
// two answer can be compared whole.
import { expect } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { hostHash, hostOf, linkHash, normalizeUrl } from '../../../src/core/url'
import { createSqliteRepositories, sqliteStore } from '../../../src/store'
import type { LogEntry } from '../../../src/store/crawl-logs'
import { openDatabase } from '../../../src/store/db'
import type { PageRecord } from '../../../src/store/page-records'
import { loggedSince, pgCrawlLogStore, pgRunGraphStore, recordPages, writeLogs } from '../../../src/store/postgres/crawl-logs'
import { numbered } from '../../../src/store/postgres/list'
import { openPostgres } from '../../../src/store/postgres/open'
import { numeric } from '../../../src/store/postgres/pg'
import type { CrawlLogStore, Page, RunGraphStore } from '../../../src/store/types'
import { freshDatabase } from '../../helpers/postgres'

export type Engine = {
  name: 'SQLite' | 'PostgreSQL'
  logs: CrawlLogStore
  graph: RunGraphStore
  /** One statement with `?` placeholders; its rows. */
  exec<T = Record<string, unknown>>(text: string, params?: unknown[]): Promise<T[]>
  /** A batch of page records, in a transaction of its own. */
  recordPages(runSeq: number, pages: PageRecord[], tenant?: string): Promise<void>
  /** Entries in a transaction of their own; their ids, in order (of runs not deleted). */
  writeLogs(entries: LogEntry[]): Promise<string[]>
  /** Writes inside one transaction that then fails: nothing of it must remain. */
  failingBatch(runSeq: number, pages: PageRecord[], entries: LogEntry[], tenant?: string): Promise<void>
  loggedSince(runSeq: number, urlHash: string, step: string, since: number): Promise<boolean>
}

const closers: (() => Promise<void> | void)[] = []
/** Closes every engine made so far: a test file's afterAll. */
export async function closeEngines(): Promise<void> {
  for (const close of closers.splice(0)) await close()
}

/** A fresh SQLite data dir, its repositories under the Store. */
export function sqliteEngine(): Engine {
  const dir = mkdtempSync(join(tmpdir(), 'trawl-twin-'))
  const db = openDatabase(dir)
  const repos = createSqliteRepositories(db)
  const store = sqliteStore(repos)
  const writer = repos.crawlLogs.writer({ manual: true })
  closers.push(() => {
    writer.discard()
    db.close()
    rmSync(dir, { recursive: true, force: true })
  })
  const tenantOf = (runSeq: number) => (db.query('SELECT tenant FROM runs WHERE seq = ?').get(runSeq) as { tenant: string } | null)?.tenant ?? ''
  return {
    name: 'SQLite',
    logs: store.crawlLogs,
    graph: store.runGraph,
    exec: async <T>(text: string, params: unknown[] = []) => db.query(text).all(...(params as never[])) as T[],
    recordPages: async (runSeq, pages, tenant) => repos.transaction(() => repos.runGraph.recordPages(runSeq, pages, tenant ?? tenantOf(runSeq))),
    writeLogs: async (entries) => {
      const ids = entries.map((e) => writer.add(e))
      const before = writer.stats.dropped
      repos.transaction(() => writer.flush())
      return writer.stats.dropped === before ? ids : []
    },
    failingBatch: async (runSeq, pages, entries, tenant) => {
      expect(() =>
        repos.transaction(() => {
          repos.runGraph.recordPages(runSeq, pages, tenant ?? tenantOf(runSeq))
          for (const e of entries) writer.add(e)
          writer.flush()
          throw new Error('the batch failed')
        }),
      ).toThrow('the batch failed')
    },
    loggedSince: async (runSeq, urlHash, step, since) => repos.crawlLogs.loggedSince(runSeq, urlHash, step as LogEntry['step'], since),
  }
}

/** A fresh database of the test cluster. */
export async function postgresEngine(): Promise<Engine> {
  const sql = await openPostgres(freshDatabase())
  closers.push(() => sql.close())
  const tenantOf = async (runSeq: number) => numeric<{ tenant: string }>(await sql`SELECT tenant FROM runs WHERE seq = ${runSeq}`)[0]?.tenant ?? ''
  return {
    name: 'PostgreSQL',
    logs: pgCrawlLogStore(sql),
    graph: pgRunGraphStore(sql),
    exec: async <T>(text: string, params: unknown[] = []) => numeric<T>(await sql.unsafe(numbered(text), params)),
    recordPages: async (runSeq, pages, tenant) => {
      const t = tenant ?? (await tenantOf(runSeq))
      await sql.begin((tx) => recordPages(tx, runSeq, pages, t))
    },
    writeLogs: (entries) =>
      sql.begin(async (tx) => {
        await writeLogs(tx, entries)
        // The ids the rows were given: the newest rows of these runs, as nothing else writes them meanwhile.
        const seqs = [...new Set(entries.map((e) => e.run_seq))]
        const rows = numeric<{ id: string }>(await tx`SELECT id FROM crawl_logs WHERE run_seq = ANY(${tx.array(seqs, 'BIGINT')}::int8[]) ORDER BY seq DESC LIMIT ${entries.length}`)
        return rows.length === entries.length ? rows.map((r) => r.id).reverse() : []
      }) as Promise<string[]>,
    failingBatch: async (runSeq, pages, entries, tenant) => {
      const t = tenant ?? (await tenantOf(runSeq))
      const failed = sql.begin(async (tx) => {
        await recordPages(tx, runSeq, pages, t)
        await writeLogs(tx, entries)
        throw new Error('the batch failed')
      })
      await expect(failed).rejects.toThrow('the batch failed')
    },
    loggedSince: (runSeq, urlHash, step, since) => loggedSince(sql, runSeq, urlHash, step, since),
  }
}

/** Both engines, fresh: SQLite first. */
export const bothEngines = async (): Promise<[Engine, Engine]> => [sqliteEngine(), await postgresEngine()]

export type RunIds = { id: string; job_id: string; seq: number }
const T_ROWS = Date.parse('2026-01-01T00:00:00.000Z')

/** A job and a running run of it, as plain rows; ids may be given (the same on both engines). */
export async function newRun(e: Engine, tenant = 'acme', ids: { id?: string; job_id?: string } = {}): Promise<RunIds> {
  const jobId = ids.job_id ?? crypto.randomUUID()
  const id = ids.id ?? crypto.randomUUID()
  const [job] = await e.exec<{ seq: number }>(`INSERT INTO jobs (tenant, id, name, config, labels, created_at, updated_at) VALUES (?, ?, 'docs', '{}', '{}', ?, ?) RETURNING seq`, [
    tenant,
    jobId,
    T_ROWS,
    T_ROWS,
  ])
  const [run] = await e.exec<{ seq: number }>(`INSERT INTO runs (tenant, id, job_seq, job_id, status, config, created_at) VALUES (?, ?, ?, ?, 'running', '{}', ?) RETURNING seq`, [
    tenant,
    id,
    job!.seq,
    jobId,
    T_ROWS,
  ])
  return { id, job_id: jobId, seq: run!.seq }
}

/** Runs on both engines with the same ids. */
export async function newRuns(engines: Engine[], tenant = 'acme', id?: string): Promise<RunIds[]> {
  const ids = { id: id ?? crypto.randomUUID(), job_id: crypto.randomUUID() }
  const out: RunIds[] = []
  for (const e of engines) out.push(await newRun(e, tenant, ids))
  return out
}

export type Link = { hash: string; url: string; host: { hash: string; domain: string } }

/** Catalogue rows of these URLs (normalized) and their hosts, as the engine writes them before a page's record; the links, in order. */
export async function links(e: Engine, urls: string[], tenant = 'acme'): Promise<Link[]> {
  const out: Link[] = []
  for (const raw of urls) {
    const url = normalizeUrl(raw)!
    const domain = hostOf(url)
    await e.exec('INSERT INTO hosts (tenant, hash, domain, created_at) VALUES (?, ?, ?, ?) ON CONFLICT (tenant, hash) DO NOTHING', [tenant, hostHash(domain), domain, T_ROWS])
    const [host] = await e.exec<{ seq: number }>('SELECT seq FROM hosts WHERE tenant = ? AND hash = ?', [tenant, hostHash(domain)])
    await e.exec('INSERT INTO links (tenant, hash, url, host_seq, created_at) VALUES (?, ?, ?, ?, ?) ON CONFLICT (tenant, hash) DO NOTHING', [tenant, linkHash(url), url, host!.seq, T_ROWS])
    out.push({ hash: linkHash(url), url, host: { hash: hostHash(domain), domain } })
  }
  return out
}

export const deleteRun = (e: Engine, runSeq: number) => e.exec('DELETE FROM runs WHERE seq = ?', [runSeq])

/** Every row of a list from its first page, `perPage` at a time; the pages' keys too. */
export async function walk<T>(list: (after: number | undefined) => Promise<Page<T> | null>, during?: () => Promise<void>): Promise<{ rows: T[]; keys: (number | null)[] }> {
  const rows: T[] = []
  const keys: (number | null)[] = []
  let after: number | undefined
  for (;;) {
    const page = await list(after)
    if (!page) throw new Error('the list answered null')
    rows.push(...page.data)
    keys.push(page.next)
    await during?.()
    if (page.next === null) return { rows, keys }
    after = page.next
  }
}

/** Runs `read` on each engine (with its index) and expects the same answer from both. */
export async function sameOnBoth<T>(engines: Engine[], read: (e: Engine, i: number) => Promise<T>): Promise<T> {
  const answers: T[] = []
  for (const [i, e] of engines.entries()) answers.push(await read(e, i))
  for (const a of answers.slice(1)) expect(a).toEqual(answers[0]!)
  return answers[0]!
}

/** An entry as both engines can be compared: a stored row's random id left out (an entry a visit stands for keeps its id, the same on both). */
export function comparable<T extends { id: string }>(entry: T): Omit<T, 'id'> & { id?: string } {
  if (entry.id.includes('-8000-8')) return entry
  const { id: _, ...rest } = entry
  return rest
}
