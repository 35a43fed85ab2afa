import { Database } from 'bun:sqlite'
import { mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { migrations } from './migrations'
import { applyWalPragmas } from './wal'

/** Opens (creating if needed) the SQLite database of a data dir, migrated to this binary's schema. */
export function openDatabase(dataDir: string): Database {
  mkdirSync(dataDir, { recursive: true })
  const db = new Database(join(dataDir, 'trawl.db'), { create: true, strict: true })
  applyWalPragmas(db, { synchronous: 'normal', cacheKiB: 4096 })
  db.exec('PRAGMA foreign_keys = ON')
  migrate(db)
  return db
}

/**
 * Applies the migrations this database has not seen, each in its own transaction, up to
 * `target` (every one; tests stop earlier to build an old database).
 */
export function migrate(db: Database, target = migrations.length) {
  const versionOf = () => (db.query('PRAGMA user_version').get() as { user_version: number }).user_version
  const newer = (v: number) => new Error(`database schema version ${v} is newer than this binary knows (${migrations.length}); upgrade trawl`)
  const current = versionOf()
  if (current > migrations.length) throw newer(current)
  if (current >= target) return
  // Each step reads the version again under the write lock (an immediate transaction): two
  // processes opening one data dir at once must not both apply a migration.
  for (;;) {
    const applied = db.transaction(() => {
      const version = versionOf()
      if (version > migrations.length) throw newer(version)
      if (version >= target) return false
      db.exec(migrations[version]!)
      db.exec(`PRAGMA user_version = ${version + 1}`)
      return true
    }).immediate()
    if (!applied) return
  }
}
