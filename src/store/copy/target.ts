import { SQL } from 'bun'
import { ConfigError } from '../../config'
import { migratePostgres } from '../postgres/migrate'
import { redactedUrl } from '../postgres/open'
import type { Pg } from '../postgres/pg'
import { TABLES } from './tables'

/** Any constant: two copies into one database at once take turns, and the second finds rows. */
const COPY_LOCK = 7_246_160_032

/** The database a copy goes into: its client, and its URL as it may be printed. */
export type Target = { sql: Pg; where: string }

/**
 * Connects to the database `--to` names and brings it to this binary's schema (a database
 * created empty, with no table yet, is migrated here). Anything that stops that is one line,
 * exit 2, with the URL's password left out, also where the client's message repeats it.
 */
export async function openTarget(url: string): Promise<Target> {
  let parsed: URL
  try {
    parsed = new URL(url)
  } catch {
    throw new ConfigError('--to: must be a postgres://user:password@host:port/database URL')
  }
  if (parsed.protocol !== 'postgres:' && parsed.protocol !== 'postgresql:') {
    throw new ConfigError(`--to: must be a postgres:// URL, got ${parsed.protocol}//…`)
  }
  const where = redactedUrl(url)
  const secret = secretsOf(parsed)
  // One connection: the copy is one transaction, and nothing else runs beside it.
  const sql = new SQL(url, { max: 1, connectionTimeout: 10 })
  try {
    await migratePostgres(sql, where)
  } catch (err) {
    await sql.close().catch(() => {})
    const message = err instanceof ConfigError ? err.message : `${where} cannot be used: ${(err as Error).message}`
    throw new ConfigError(`--to: ${hide(message, secret)}`)
  }
  return { sql, where }
}

/** The password as written in the URL and as decoded, to keep out of messages. */
function secretsOf(url: URL): string[] {
  if (!url.password) return []
  let decoded = url.password
  try {
    decoded = decodeURIComponent(url.password)
  } catch {}
  return [...new Set([url.password, decoded])].filter((s) => s.length > 0)
}

function hide(message: string, secrets: string[]): string {
  return secrets.reduce((m, s) => m.split(s).join('***'), message.replace(/\s+/g, ' ').trim())
}

/**
 * Refuses a database that already holds rows in any table (the migrator's own aside): a copy
 * keeps the data dir's seqs and ids, which rows already there could collide with or be mistaken
 * for. Run inside the copy's transaction, after its lock, so two copies at once cannot both pass.
 */
export async function assertEmpty(tx: Pg, where: string): Promise<void> {
  await tx`SELECT pg_advisory_xact_lock(${COPY_LOCK})`
  const tables = (await tx`
    SELECT table_name FROM information_schema.tables
    WHERE table_schema = current_schema() AND table_type = 'BASE TABLE' AND table_name <> 'trawl_schema'`) as { table_name: string }[]
  // The catalogue's tables first, in their order, so the table named is the one a person expects.
  const order = (t: string) => (TABLES as readonly string[]).indexOf(t) >>> 0
  for (const { table_name: table } of tables.sort((a, b) => order(a.table_name) - order(b.table_name) || a.table_name.localeCompare(b.table_name))) {
    const [row] = (await tx.unsafe(`SELECT EXISTS (SELECT 1 FROM "${table}") AS taken`)) as { taken: boolean }[]
    if (row?.taken) {
      throw new ConfigError(`--to: ${where} already holds rows (table ${table}); trawl db copy copies into an empty database only: create a new one, or drop what is there`)
    }
  }
}
