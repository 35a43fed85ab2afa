import { conflict } from '../../core/errors'
import { parseLabels, type Labels } from '../labels'
import { emptyPage } from '../list'
import { CENSUS_SQL, RUN_COLUMNS, toRun, type Run, type RunMove, type RunRow, type RunStatus } from '../runs'
import type { NewRun, RunCensus, RunStore } from '../types'
import { indexLabels, unindexLabels } from './labels'
import { PgListQuery } from './list'
import { first, numeric, type Pg } from './pg'
import { requestBodyDeletion } from './artifacts'

/** The job a run is created for: its seq and id, and the labels its runs copy. */
export type JobRef = { seq: number; id: string; labels: Labels }

/**
 * Creates a pending run of `job` inside the caller's transaction, labels copied from the job;
 * with a lease, takes it for its creator at once, as the crawl store's claimRun would, so no
 * runner can claim the run between its insert and its lease. `conflict` when the id is taken.
 */
export async function createRun(tx: Pg, tenant: string, job: JobRef, run: NewRun): Promise<{ run: Run; seq: number }> {
  const labels = JSON.stringify(job.labels)
  // ON CONFLICT: a concurrent insert of the same id waits for the other transaction and then
  // answers no row, the conflict, instead of failing the whole transaction on the unique key.
  const inserted = first<RunRow & { seq: number }>(
    await tx`INSERT INTO runs AS t (tenant, id, job_seq, job_id, status, labels, config, created_at)
             VALUES (${tenant}, ${run.id}, ${job.seq}, ${job.id}, 'pending', ${labels}, ${JSON.stringify(run.config)}, ${Date.now()})
             ON CONFLICT (tenant, id) DO NOTHING RETURNING t.seq, ${tx.unsafe(RUN_COLUMNS)}`,
  )
  if (!inserted) throw conflict(`run ${run.id} already exists`)
  await indexLabels(tx, 'run', tenant, inserted.seq, job.labels)
  if (!run.lease) return { run: toRun(inserted), seq: inserted.seq }
  const now = Date.now()
  // Its creator joins it as its first worker (decision 112): other processes may join it too.
  const leased = first<RunRow>(
    await tx`UPDATE runs AS t SET status = 'running', started_at = coalesce(t.started_at, ${now}::bigint)
             WHERE t.seq = ${inserted.seq} AND t.status = 'pending' RETURNING ${tx.unsafe(RUN_COLUMNS)}`,
  )
  if (!leased) throw new Error('the new run could not be leased')
  await tx`INSERT INTO run_workers (run_seq, owner, lease_until) VALUES (${inserted.seq}, ${run.lease.owner}, ${now + run.lease.ms})`
  return { run: toRun(leased), seq: inserted.seq }
}

async function runOf(sql: Pg, tenant: string, id: string): Promise<Run | null> {
  const row = first<RunRow>(await sql`SELECT ${sql.unsafe(RUN_COLUMNS)} FROM runs t WHERE t.tenant = ${tenant} AND t.id = ${id}`)
  return row ? toRun(row) : null
}

// Guarded UPDATEs, as the SQLite engine's: the WHERE on status keeps each move atomic. Each
// answers the run as it is now, or nothing when its state did not fit.
const MOVES: Record<RunMove, (tx: Pg, seq: number, now: number) => Promise<unknown>> = {
  pause: (tx, seq, now) => tx`UPDATE runs AS t SET status = 'paused', paused_at = ${now} WHERE t.seq = ${seq} AND t.status = 'running' RETURNING ${tx.unsafe(RUN_COLUMNS)}`,
  resume: (tx, seq, now) =>
    tx`UPDATE runs AS t SET status = 'running', paused_ms = t.paused_ms + (${now}::bigint - coalesce(t.paused_at, ${now}::bigint)), paused_at = NULL
       WHERE t.seq = ${seq} AND t.status = 'paused' RETURNING ${tx.unsafe(RUN_COLUMNS)}`,
  stop: (tx, seq, now) =>
    tx`UPDATE runs AS t SET status = 'finished', stop_reason = 'manual', outcome = 'stopped', finished_at = ${now}, paused_at = NULL
       WHERE t.seq = ${seq} AND t.status IN ('pending', 'running', 'paused') RETURNING ${tx.unsafe(RUN_COLUMNS)}`,
}

/**
 * Deletes a tenant's runs (seqs and ids) with their artifact rows, and records that their bodies
 * are to be deleted, inside the caller's transaction. Rows first, bodies after the commit
 * (src/runs/delete.ts): a crash in between leaves the request, never a row whose body is gone.
 */
export async function deleteRuns(tx: Pg, tenant: string, runs: { seq: number; id: string }[]): Promise<void> {
  if (!runs.length) return
  const ids = runs.map((r) => r.id)
  await tx`DELETE FROM artifacts WHERE tenant = ${tenant} AND run_id = ANY(${tx.array(ids, 'text')}::text[])`
  await unindexLabels(
    tx,
    'run',
    runs.map((r) => r.seq),
  )
  await tx`DELETE FROM runs WHERE seq = ANY(${tx.array(
    runs.map((r) => r.seq),
    'int8',
  )}::bigint[])`
  await requestBodyDeletion(tx, ids)
}

/** Seqs of this tenant's jobs with these ids (to list their runs or triggers). */
export const jobSeqsOf = (sql: Pg, tenant: string, ids: string[]): Promise<number[]> => new PgListQuery('jobs', tenant, 'job').in('t.id', ids).seqs(sql)

/** Runs of jobs on PostgreSQL: status, stop reason, resolved config and counters. */
export function pgRunStore(sql: Pg): RunStore {
  const list = (tenant: string, f: Parameters<RunStore['list']>[1], after: number | undefined, perPage: number, jobSeqs: number[] | undefined) => {
    if (jobSeqs?.length === 0) return emptyPage<Run>()
    return new PgListQuery('runs', tenant, 'run')
      .parents('t.job_seq', jobSeqs)
      .in('t.id', f.include_ids)
      .notIn('t.id', f.exclude_ids)
      .in('t.status', f.statuses)
      .in('t.stop_reason', f.stop_reasons)
      .in('t.outcome', f.outcomes)
      .range('t.created_at', f.created_before, f.created_after)
      .range('t.finished_at', f.finished_before, f.finished_after)
      .labels(f.labels)
      .page(sql, RUN_COLUMNS, after, perPage, toRun)
  }

  return {
    create: (tenant, jobId, run) =>
      sql.begin(async (tx) => {
        // FOR SHARE: the job stays until the run is in (a concurrent delete waits for it and
        // then takes the run too), and a trigger firing of the job, which locks it to judge
        // whether the job is busy, sees this run or runs before it.
        const job = first<{ seq: number; id: string; labels: string }>(await tx`SELECT seq, id, labels FROM jobs WHERE tenant = ${tenant} AND id = ${jobId} FOR SHARE`)
        if (!job) return null
        return (await createRun(tx, tenant, { seq: job.seq, id: job.id, labels: parseLabels(job.labels) }, run)).run
      }),
    get: (tenant, id) => runOf(sql, tenant, id),
    delete: (tenant, id) =>
      sql.begin(async (tx) => {
        // FOR UPDATE: of two concurrent deletions, the second waits and then finds no run.
        const row = first<{ seq: number }>(await tx`SELECT seq FROM runs WHERE tenant = ${tenant} AND id = ${id} FOR UPDATE`)
        if (!row) return false
        await deleteRuns(tx, tenant, [{ seq: row.seq, id }])
        return true
      }),
    move: (tenant, id, move) =>
      sql.begin(async (tx) => {
        // The row is locked so the state named in a conflict is the one the move was refused in
        // (NO KEY: a crawl's commit may still write rows of the run meanwhile).
        const row = first<{ seq: number; status: RunStatus }>(await tx`SELECT seq, status FROM runs WHERE tenant = ${tenant} AND id = ${id} FOR NO KEY UPDATE`)
        if (!row) return null
        const moved = first<RunRow>(await MOVES[move](tx, row.seq, Date.now()))
        if (!moved) throw conflict(`cannot ${move} a ${row.status} run`)
        return toRun(moved)
      }),
    list: async (tenant, f, after, perPage) => list(tenant, f, after, perPage, f.job_ids && (await jobSeqsOf(sql, tenant, f.job_ids))),
    listOfJob: async (tenant, jobId, f, after, perPage) => {
      const job = first<{ seq: number }>(await sql`SELECT seq FROM jobs WHERE tenant = ${tenant} AND id = ${jobId}`)
      return job ? list(tenant, f, after, perPage, [job.seq]) : null
    },
    census: async () => numeric<RunCensus>(await sql.unsafe(CENSUS_SQL)),
  }
}
