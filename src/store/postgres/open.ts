import { SQL } from 'bun'
import { ConfigError } from '../../config'
import { migratePostgres } from './migrate'
import type { Pg } from './pg'

/** The URL as it may be printed: without its password. */
export function redactedUrl(url: string): string {
  try {
    const u = new URL(url)
    if (u.password) u.password = '***'
    return u.toString()
  } catch {
    return 'the TRAWL_DATABASE_URL'
  }
}

/**
 * Connects to the PostgreSQL database of TRAWL_DATABASE_URL and migrates it to this binary's
 * schema. A database that cannot be reached or is newer than this binary is a ConfigError in
 * one line (exit 2), the URL shown without its password.
 */
export async function openPostgres(url: string, opts: { max?: number } = {}): Promise<Pg> {
  const where = redactedUrl(url)
  const sql = new SQL(url, { max: opts.max ?? 10, idleTimeout: 60, connectionTimeout: 10 })
  try {
    await migratePostgres(sql, where)
  } catch (err) {
    await sql.close().catch(() => {})
    if (err instanceof ConfigError) throw err
    throw new ConfigError(`TRAWL_DATABASE_URL: ${where} cannot be used: ${(err as Error).message}`)
  }
  return sql
}
