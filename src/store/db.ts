import type { Database } from 'bun:sqlite'
import { migrateUnderLock } from '../sqlite/migrate'
import { dataDirError, openWalDatabase } from '../sqlite/wal'
import { migrations } from './migrations'

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
