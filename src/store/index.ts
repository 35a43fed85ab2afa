import type { Database } from 'bun:sqlite'
import { hostRepository } from './hosts'
import { jobRepository } from './jobs'
import { linkRepository } from './links'
import { runRepository } from './runs'
import { patternRepository } from './patterns'
import { dataMapRepository } from './data-maps'
import { crawlLogRepository } from './crawl-logs'
import { artifactRepository } from './artifacts'
import { runGraphRepository } from './run-graph'
import { frontierRepository } from './frontier'
import { triggerRepository } from './triggers'
import { journalDir, journalRuns, RunJournal } from './fetch-journal'
import { paymentRepository } from './payments'
import { webhookRepository } from './webhooks'
import { sqliteStore } from './sqlite-store'
import type { Store } from './types'

export type { Store } from './types'
export { sqliteStore }

/** The SQLite engine's synchronous repositories over one database: the internals its Store (sqliteStore) wraps. */
export function createSqliteRepositories(db: Database) {
  const hosts = hostRepository(db)
  return {
    db,
    hosts,
    links: linkRepository(db, hosts),
    jobs: jobRepository(db),
    runs: runRepository(db),
    patterns: patternRepository(db, hosts),
    dataMaps: dataMapRepository(db, hosts),
    crawlLogs: crawlLogRepository(db),
    artifacts: artifactRepository(db),
    runGraph: runGraphRepository(db, hosts),
    frontier: frontierRepository(db),
    triggers: triggerRepository(db),
    payments: paymentRepository(db),
    webhooks: webhookRepository(db),
    /** The fetch journal of a run (fetch-journal.ts): opened by the execution that holds the run. */
    journals: {
      open: (runSeq: number) => RunJournal.open(journalDir(db.filename), runSeq),
      /** The runs that have a journal file. */
      runs: () => journalRuns(journalDir(db.filename)),
    },
    /** Runs `fn` in one transaction (nested calls join it as savepoints). */
    transaction<T>(fn: () => T): T {
      return db.transaction(fn).immediate()
    },
  }
}
export type SqliteRepositories = ReturnType<typeof createSqliteRepositories>

/** The Store over a SQLite database. */
export const createStore = (db: Database): Store => sqliteStore(createSqliteRepositories(db))
