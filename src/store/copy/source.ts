import type { Database } from 'bun:sqlite'
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { ConfigError } from '../../config'
import { pidAlive, pidOnThisHost } from '../../util/process'
import { openDatabase } from '../db'

/**
 * Opens the data dir a copy reads: its trawl.db, migrated to this binary's schema as any command
 * would. A path without a trawl.db is refused rather than made into a new, empty data dir
 * (a mistyped --data-dir would otherwise copy nothing, successfully).
 */
export function openSource(dataDir: string): Database {
  if (!existsSync(join(dataDir, 'trawl.db'))) throw new ConfigError(`data dir ${dataDir} has no trawl.db: --data-dir or TRAWL_DATA_DIR names the data dir to copy`)
  return openDatabase(dataDir)
}

type Held = { id: string; tenant: string; lease_owner: string; lease_until: number }

/**
 * Refuses a data dir with a run being crawled: a lease that has not lapsed, held by a process
 * that may still be writing pages the copy would miss or catch half-written. A holder of this
 * host whose pid is gone crashed, and its lease is ignored, as a process taking the run over
 * would. `--force` copies anyway, as the data dir is at the copy's start.
 */
export function assertNothingCrawling(db: Database, dataDir: string, now = Date.now()): void {
  const held = db.query<Held, [number]>('SELECT id, tenant, lease_owner, lease_until FROM runs WHERE lease_owner IS NOT NULL AND lease_until > ?1 ORDER BY seq').all(now)
  const live = held.filter((r) => {
    const pid = pidOnThisHost(r.lease_owner)
    return pid === null || pidAlive(pid)
  })
  if (!live.length) return
  const r = live[0]!
  const more = live.length > 1 ? ` and ${live.length - 1} more` : ''
  throw new ConfigError(
    `data dir ${dataDir} has a run being crawled (run ${r.id} of tenant ${r.tenant}, by ${r.lease_owner}${more}): stop the process crawling it, or pass --force to copy the data dir as it is now`,
  )
}
