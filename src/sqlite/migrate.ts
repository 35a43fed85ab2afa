import type { Database } from 'bun:sqlite'
import { ConfigError } from '../config'

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
