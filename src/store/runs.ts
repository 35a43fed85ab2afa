import type { Database } from 'bun:sqlite'
import { conflict } from '../core/errors'
import { indexLabels, parseLabels, unindexLabels, type Labels } from './labels'
import { emptyPage, ListQuery, type Page } from './list'
import { iso } from './time'

export const RUN_STATUSES = ['pending', 'running', 'paused', 'finished'] as const
export const STOP_REASONS = ['max_depth', 'max_urls', 'max_empty_evaluations', 'max_age', 'manual', 'empty_seed', 'unknown'] as const
/** How a finished run ended, for a person (docs/crawl.md, "Outcomes"); `stop_reason` stays SPEC's. */
export const RUN_OUTCOMES = ['complete', 'stalled', 'limited', 'stopped', 'failed'] as const
export type RunStatus = (typeof RUN_STATUSES)[number]
export type RunOutcome = (typeof RUN_OUTCOMES)[number]
export type StopReason = (typeof STOP_REASONS)[number]

export type Run = {
  id: string
  job_id: string
  status: RunStatus
  stop_reason: StopReason | null
  outcome: RunOutcome | null
  error_counts: Record<string, number>
  labels: Labels
  config: Record<string, unknown>
  created_at: string
  started_at: string | null
  finished_at: string | null
  stats: { queued: number; visited: number; failed: number; bytes: number }
}
export type RunFilter = {
  job_ids?: string[]
  include_ids?: string[]
  exclude_ids?: string[]
  statuses?: string[]
  stop_reasons?: string[]
  outcomes?: string[]
  created_before?: string
  created_after?: string
  finished_before?: string
  finished_after?: string
  labels?: Labels
}

/** A state move of SPEC's run table: the states it may start from and where it leads. */
export type RunMove = 'pause' | 'resume' | 'stop'

/** A runs row as both engines read it (times in epoch milliseconds, JSON columns as text). */
export type RunRow = {
  id: string
  job_id: string
  status: RunStatus
  stop_reason: StopReason | null
  outcome: RunOutcome | null
  error_counts: string
  labels: string
  config: string
  created_at: number
  started_at: number | null
  finished_at: number | null
  queued: number
  visited: number
  failed: number
  bytes: number
}
export const RUN_COLUMNS = 't.id, t.job_id, t.status, t.stop_reason, t.outcome, t.error_counts, t.labels, t.config, t.created_at, t.started_at, t.finished_at, t.queued, t.visited, t.failed, t.bytes'
export const toRun = (r: RunRow): Run => ({
  id: r.id,
  job_id: r.job_id,
  status: r.status,
  stop_reason: r.stop_reason,
  outcome: r.outcome,
  error_counts: JSON.parse(r.error_counts),
  labels: parseLabels(r.labels),
  config: JSON.parse(r.config),
  created_at: iso(r.created_at)!,
  started_at: iso(r.started_at),
  finished_at: iso(r.finished_at),
  stats: { queued: r.queued, visited: r.visited, failed: r.failed, bytes: r.bytes },
})

// Guarded UPDATEs: the WHERE on status makes each move atomic against a concurrent one.
const MOVES: Record<RunMove, { sql: string; verb: string }> = {
  pause: { sql: "status = 'paused', paused_at = ?1 WHERE seq = ?2 AND status = 'running'", verb: 'pause' },
  resume: {
    sql: "status = 'running', paused_ms = paused_ms + (?1 - coalesce(paused_at, ?1)), paused_at = NULL WHERE seq = ?2 AND status = 'paused'",
    verb: 'resume',
  },
  stop: {
    sql: "status = 'finished', stop_reason = 'manual', outcome = 'stopped', finished_at = ?1, paused_at = NULL WHERE seq = ?2 AND status IN ('pending', 'running', 'paused')",
    verb: 'stop',
  },
}

/** The runs census of both engines (RunStore.census): a scan of runs, which are few beside their pages. */
export const CENSUS_SQL = "SELECT tenant, status, count(*) AS runs, sum(CASE WHEN status = 'finished' THEN 0 ELSE queued END) AS queued FROM runs GROUP BY tenant, status ORDER BY tenant, status"

/** Runs of jobs: status, stop reason, resolved config and counters. */
export function runRepository(db: Database) {
  const insert = db.query("INSERT INTO runs (tenant, id, job_seq, job_id, status, labels, config, created_at) VALUES (?, ?, ?, ?, 'pending', ?, ?, ?) ON CONFLICT (tenant, id) DO NOTHING")
  const byId = db.query(`SELECT t.seq, ${RUN_COLUMNS} FROM runs t WHERE tenant = ? AND id = ?`)
  const remove = db.query('DELETE FROM runs WHERE seq = ?')
  const idsOfJob = db.query('SELECT r.id FROM runs r JOIN jobs j ON j.seq = r.job_seq WHERE j.tenant = ? AND j.id = ?')
  const moves = Object.fromEntries(Object.entries(MOVES).map(([move, { sql }]) => [move, db.query(`UPDATE runs SET ${sql}`)])) as Record<RunMove, ReturnType<Database['query']>>

  const census = db.query(CENSUS_SQL)

  const getRow = (tenant: string, id: string) => byId.get(tenant, id) as (RunRow & { seq: number }) | null

  return {
    /** A pending run of a job; labels are copied from the job. 409 when the id is taken. */
    create(tenant: string, job: { seq: number; id: string; labels: Labels }, run: { id: string; config: object }): Run {
      return db
        .transaction(() => {
          const { changes } = insert.run(tenant, run.id, job.seq, job.id, JSON.stringify(job.labels), JSON.stringify(run.config), Date.now())
          if (changes === 0) throw conflict(`run ${run.id} already exists`)
          const row = getRow(tenant, run.id)!
          indexLabels(db, 'run', tenant, row.seq, job.labels)
          return toRun(row)
        })
        .immediate()
    },
    get(tenant: string, id: string): Run | null {
      const row = getRow(tenant, id)
      return row ? toRun(row) : null
    },
    /** Ids of a job's runs (what a job's deletion takes with it). */
    idsOfJob: (tenant: string, jobId: string) => (idsOfJob.values(tenant, jobId) as [string][]).map((r) => r[0]),
    delete(tenant: string, id: string): boolean {
      return db
        .transaction(() => {
          const row = getRow(tenant, id)
          if (!row) return false
          unindexLabels(db, 'run', '?', row.seq)
          remove.run(row.seq)
          return true
        })
        .immediate()
    },
    /** Applies a state move; null when the run does not exist, 409 when its state does not fit. */
    move(tenant: string, id: string, move: RunMove): Run | null {
      return db
        .transaction(() => {
          const row = getRow(tenant, id)
          if (!row) return null
          const { changes } = moves[move].run(Date.now(), row.seq)
          if (changes === 0) throw conflict(`cannot ${MOVES[move].verb} a ${row.status} run`)
          return toRun(getRow(tenant, id)!)
        })
        .immediate()
    },
    census: () => census.all() as { tenant: string; status: RunStatus; runs: number; queued: number }[],
    /** Runs of this tenant; `jobSeqs` (resolved for this tenant) narrows to those jobs' runs. */
    list(tenant: string, f: RunFilter, after: number | undefined, perPage: number, jobSeqs?: number[]): Page<Run> {
      if (jobSeqs?.length === 0) return emptyPage()
      return new ListQuery('runs', tenant, 'run')
        .parents('t.job_seq', jobSeqs)
        .in('t.id', f.include_ids, true)
        .notIn('t.id', f.exclude_ids)
        .in('t.status', f.statuses)
        .in('t.stop_reason', f.stop_reasons)
        .in('t.outcome', f.outcomes)
        .range('t.created_at', f.created_before, f.created_after)
        .range('t.finished_at', f.finished_before, f.finished_after)
        .labels(f.labels)
        .page(db, RUN_COLUMNS, after, perPage, toRun)
    },
  }
}
