import type { Database } from 'bun:sqlite'
import { ConfigError } from '../config'
import { migrations } from './migrations'
import { dataDirError, openWalDatabase } from './wal'

/**
 * Opens (creating if needed) the SQLite database of a data dir, migrated to this binary's
 * schema. A data dir it cannot use is a ConfigError naming it (exit 2, one line).
 */
export function openDatabase(dataDir: string): Database {
  const db = openWalDatabase(dataDir, 'trawl.db', { synchronous: 'normal', cacheKiB: 4096 })
  try {
    db.exec('PRAGMA foreign_keys = ON')
    migrate(db)
  } catch (err) {
    db.close()
    throw dataDirError(dataDir, 'trawl.db cannot be written', err)
  }
  return db
}

/**
 * Applies the migrations this database has not seen, each in its own transaction, up to
 * `target` (every one; tests stop earlier to build an old database).
 */
export function migrate(db: Database, target = migrations.length) {
  migrateUnderLock(db, {
    name: 'database',
    known: migrations.length,
    target,
    step: (version) => {
      db.exec(migrations[version]!)
      return version + 1
    },
  })
}

/**
 * Brings `PRAGMA user_version` up to `target`, one `step` at a time (trawl.db, blobs.db). Each
 * step runs in an immediate transaction that reads the version again under the write lock, so
 * two processes opening one data dir at once never both apply it; `step(version)` answers the
 * version it reached. A version above `known` is refused: the file is newer than this binary.
 * Answers the version found first (under the lock when a step was needed).
 */
export function migrateUnderLock(db: Database, m: { name: string; known: number; target: number; step: (version: number) => number }): number {
  const versionOf = () => (db.query('PRAGMA user_version').get() as { user_version: number }).user_version
  const checked = (version: number) => {
    if (version > m.known) throw new ConfigError(`${db.filename}: ${m.name} schema version ${version} is newer than this binary knows (${m.known}); upgrade trawl`)
    return version
  }
  const found = checked(versionOf())
  if (found >= m.target) return found
  let first: number | null = null
  for (;;) {
    const applied = db
      .transaction(() => {
        const version = checked(versionOf())
        first ??= version
        if (version >= m.target) return false
        db.exec(`PRAGMA user_version = ${m.step(version)}`)
        return true
      })
      .immediate()
    if (!applied) return first!
  }
}
