import { ConfigError } from '../../config'
import type { Pg } from './pg'
import { migrations } from './migrations'

// Any constant both processes agree on: the advisory lock that serializes migrating one database.
const MIGRATE_LOCK = 7_246_160_031

/**
 * Brings a PostgreSQL database up to `target` (every migration; tests stop earlier). The first
 * process to get the advisory lock applies what is missing, each migration in its own
 * transaction with its version row; the others wait on the lock and then find nothing to do. A
 * database newer than this binary is refused: its tables may mean what this code does not know.
 * Answers the version found.
 */
export async function migratePostgres(sql: Pg, where: string, target = migrations.length): Promise<number> {
  const conn = await sql.reserve()
  try {
    await conn`CREATE TABLE IF NOT EXISTS trawl_schema (version integer PRIMARY KEY, applied_at bigint NOT NULL)`.catch((err) => {
      // Two processes creating it at once: one wins, the other's unique violation is harmless.
      if ((err as { errno?: string }).errno !== '23505' && (err as { errno?: string }).errno !== '42P07') throw err
    })
    await conn`SELECT pg_advisory_lock(${MIGRATE_LOCK})`
    try {
      const [row] = await conn`SELECT coalesce(max(version), 0)::int AS version FROM trawl_schema`
      const found = (row as { version: number }).version
      if (found > migrations.length) throw new ConfigError(`${where}: database schema version ${found} is newer than this binary knows (${migrations.length}); upgrade trawl`)
      for (let version = found; version < target; version++) {
        await conn.begin(async (tx) => {
          await tx.unsafe(migrations[version]!)
          await tx`INSERT INTO trawl_schema (version, applied_at) VALUES (${version + 1}, ${Date.now()})`
        })
      }
      return found
    } finally {
      await conn`SELECT pg_advisory_unlock(${MIGRATE_LOCK})`
    }
  } finally {
    conn.release()
  }
}

/** The schema version this binary writes. */
export const POSTGRES_SCHEMA_VERSION = migrations.length
