import type { Database } from 'bun:sqlite'
import { crawlLogAggregates } from './crawl-log-aggregates'
import { crawlLogList } from './crawl-log-list'
import { hasEmptyList, type CrawlLogEntry, type ErrorReason, type Latency, type LatencyQuery, type LogFilter, type LogStep, type Metrics, type MetricsQuery, type RunRef } from './crawl-log-types'
import { LogWriter, type WriterOptions } from './crawl-log-writer'
import { emptyPage, INT, TEXT, type Page } from './list'
import { envelopes, occurredAt, PAGE_STEPS, VISIT_LOG_COLUMNS, type VisitLogRow } from './page-records'

export * from './crawl-log-types'
export { MAX_GROUPS } from './crawl-log-aggregates'
export { listStatement, visitWalkStatement, type LogPosition } from './crawl-log-list'
export { LogWriter, type WriterOptions } from './crawl-log-writer'

/**
 * Crawl log entries of runs: the batched writer and the three read endpoints (SPEC "Crawl
 * logs"). A run's entries are its crawl_logs rows and the successful fetch, parse, store and
 * discover entries its visit rows stand for (page-records.ts); every read sees both as one log.
 */
export function crawlLogRepository(db: Database) {
  const runOf = db.query('SELECT seq, id, job_id, tenant, created_at FROM runs WHERE tenant = ? AND id = ?')
  const findRun = (tenant: string, runId: string): RunRef | null => {
    const r = runOf.get(tenant, runId) as (Omit<RunRef, 'key'> & { created_at: number }) | null
    return r && { seq: r.seq, id: r.id, job_id: r.job_id, tenant: r.tenant, key: `${r.seq}/${r.id}/${r.created_at}` }
  }
  const visits = envelopes(db)
  const list = crawlLogList(db, visits)
  const aggregates = crawlLogAggregates(db, visits)
  const loggedSince = db.query(`SELECT 1 AS one FROM crawl_logs INDEXED BY crawl_logs_by_time WHERE run_seq = ${INT} AND occurred_at >= ${INT} AND url_hash = ${TEXT} AND step = ${TEXT} LIMIT 1`)
  // By the link's seq (visits_once, migration 015): the hash names the run tenant's link.
  const visitOf = db.query(
    `SELECT ${VISIT_LOG_COLUMNS} FROM visits v WHERE v.run_seq = ?1 AND v.link_seq = (SELECT l.seq FROM links l WHERE l.tenant = (SELECT r.tenant FROM runs r WHERE r.seq = ?1) AND l.hash = CAST(?2 AS TEXT))`,
  )
  // The partial errors index walks only the run's error entries, which a healthy run has few of.
  const errorsOf = db.query(
    `SELECT url_hash, step, error_reason, error_detail FROM crawl_logs INDEXED BY crawl_logs_errors WHERE run_seq = ${INT} AND error_reason IS NOT NULL AND occurred_at <= ${INT} AND url_hash IN (SELECT value FROM json_each(${TEXT})) ORDER BY seq`,
  )
  // A read of several statements sees one state of the database: the visits its bounds came
  // from. A plain BEGIN: nothing is written, and inside a caller's transaction it is that one.
  const reading = <T>(fn: () => T): T => {
    if (db.inTransaction) return fn()
    db.exec('BEGIN')
    try {
      return fn()
    } finally {
      db.exec('COMMIT')
    }
  }

  return {
    /** A batching writer for the crawl engine (see LogWriter). One per process is enough. */
    writer(options?: WriterOptions): LogWriter {
      return new LogWriter(db, options)
    },

    /**
     * Whether the run has an entry of this URL and step at or after `since` (epoch ms): a fetch
     * the journal still lists whose entry was committed just before a crash. Walks the run's
     * entries since then, which for a journal's leftovers are the last seconds of the run, and
     * looks at the URL's visit row, which may stand for the entry.
     */
    loggedSince: (runSeq: number, urlHash: string, step: LogStep, since: number): boolean => {
      const i = (PAGE_STEPS as readonly string[]).indexOf(step)
      if (i >= 0) {
        const v = visitOf.get(runSeq, urlHash) as VisitLogRow | null
        if (v && v.logged & (1 << i) && occurredAt(v, i) >= since) return true
      }
      return loggedSince.get(runSeq, since, urlHash, step) !== null
    },

    /**
     * Why each of these URLs failed in the run (at most a few hundred link hashes): the last
     * error entry at or before `upTo` (epoch ms), a fetch step's before any other step's. URLs
     * without an error entry are absent. (Visit rows stand for ok entries only.)
     */
    errorsOf(runSeq: number, urlHashes: readonly string[], upTo: number): Map<string, { reason: ErrorReason; detail: string | null }> {
      const found = new Map<string, { reason: ErrorReason; detail: string | null }>()
      if (!urlHashes.length) return found
      const rows = errorsOf.all(runSeq, upTo, JSON.stringify(urlHashes)) as { url_hash: string; step: LogStep; error_reason: ErrorReason; error_detail: string | null }[]
      // URLs whose entry found so far is a fetch step's: a later entry of another step does not replace it.
      const byFetch = new Set<string>()
      for (const r of rows) {
        if (r.step === 'fetch') byFetch.add(r.url_hash)
        else if (byFetch.has(r.url_hash)) continue
        found.set(r.url_hash, { reason: r.error_reason, detail: r.error_detail })
      }
      return found
    },

    /** A page of a run's entries, newest first (crawl-log-list.ts); null when this tenant has no such run. */
    list(tenant: string, runId: string, f: LogFilter, after: number | undefined, perPage: number): Page<CrawlLogEntry> | null {
      const run = findRun(tenant, runId)
      if (!run) return null
      if (hasEmptyList(f)) return emptyPage()
      return reading(() => list(run, f, after, perPage))
    },

    /** Entry counts per time bucket and group (crawl-log-aggregates.ts); null when this tenant has no such run. */
    metrics(tenant: string, runId: string, q: MetricsQuery): Metrics | null {
      const run = findRun(tenant, runId)
      return run && reading(() => aggregates.metrics(run, q))
    },

    /** Latency percentiles per time bucket and step (crawl-log-aggregates.ts); null when this tenant has no such run. */
    latency(tenant: string, runId: string, q: LatencyQuery): Latency | null {
      const run = findRun(tenant, runId)
      return run && reading(() => aggregates.latency(run, q))
    },
  }
}
