import type { Database } from 'bun:sqlite'
import type { Pg } from '../postgres/pg'

/**
 * The catalogue's tables in an order that puts every table after the tables it references
 * (hosts before links, jobs before runs, runs before what hangs off them, triggers before their
 * executions and firings), so each can be copied whole with its foreign keys checked as it goes.
 * s3_objects is not here: it is the blob index, which the body copy writes (blobs.ts).
 */
export const TABLES = [
  'hosts',
  'links',
  'labels',
  'jobs',
  'runs',
  'pattern_sets',
  'data_maps',
  'run_hosts',
  'visits',
  'artifacts',
  'crawl_logs',
  'frontier',
  'triggers',
  'trigger_executions',
  'trigger_firings',
  'payments',
  'body_deletions',
  // Last: a trigger execution copied after them would write deliveries of its own (the AFTER
  // INSERT trigger of PostgreSQL's migration 005), besides the ones copied.
  'webhooks',
  'webhook_deliveries',
  'webhook_attempts',
] as const

export type TableName = (typeof TABLES)[number]

/**
 * The columns each table is copied with, after checking that nothing of trawl.db would be left
 * behind: every table of trawl.db is one the copy knows (TABLES, whose order it needs), and
 * every column it has is a column of the PostgreSQL table. The two schemas are kept alike by
 * hand (src/store/migrations and postgres/migrations); what one gained and the other did not
 * would otherwise be dropped without a word, so the copy refuses to start instead.
 *
 * PostgreSQL may have more: the state of processes sharing the database (run_workers, a host
 * queue's holder in run_hosts, frontier.taken_by), which no SQLite data dir has. Such tables
 * stay empty, and such columns take their defaults, as in a database no process has crawled in.
 */
export async function columnsOfTables(source: Database, target: Pg): Promise<Map<TableName, string[]>> {
  const rows = (await target`
    SELECT table_name, column_name FROM information_schema.columns
    WHERE table_schema = current_schema()
    ORDER BY table_name, ordinal_position`) as { table_name: string; column_name: string }[]
  const pg = new Map<string, string[]>()
  for (const r of rows) pg.set(r.table_name, [...(pg.get(r.table_name) ?? []), r.column_name])
  const sqliteTables = (source.query("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'").all() as { name: string }[]).map((r) => r.name)

  const listed = new Set<string>(TABLES)
  const unknown = sqliteTables.filter((t) => !listed.has(t))
  if (unknown.length) throw new Error(`trawl.db has table(s) the copy does not know: ${unknown.join(', ')}`)

  const out = new Map<TableName, string[]>()
  for (const table of TABLES) {
    const pgColumns = pg.get(table)
    if (!pgColumns) throw new Error(`the PostgreSQL database has no table ${table}`)
    const sqliteColumns = (source.query(`SELECT name FROM pragma_table_info('${table}')`).all() as { name: string }[]).map((r) => r.name)
    if (!sqliteColumns.length) throw new Error(`trawl.db has no table ${table}`)
    const extra = sqliteColumns.filter((c) => !pgColumns.includes(c))
    if (extra.length) throw new Error(`table ${table} of trawl.db has column(s) PostgreSQL's has not: ${extra.join(', ')}`)
    // PostgreSQL's order, for a COPY column list that reads like the table.
    out.set(
      table,
      pgColumns.filter((c) => sqliteColumns.includes(c)),
    )
  }
  return out
}
