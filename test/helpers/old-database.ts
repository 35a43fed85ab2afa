import { Database } from 'bun:sqlite'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { migrate } from '../../src/store/db'

/**
 * A trawl.db in a new temp dir, its schema brought to `version` only: a migration test writes
 * rows as they were before the next migration, then runs it. The dir is added to `dirs`, which
 * the test file removes after its tests.
 */
export function databaseAt(version: number, dirs: string[]): Database {
  const dir = mkdtempSync(join(tmpdir(), `trawl-schema-${version}-`))
  dirs.push(dir)
  const db = new Database(join(dir, 'trawl.db'), { create: true, strict: true })
  db.exec('PRAGMA foreign_keys = ON')
  migrate(db, version)
  return db
}
