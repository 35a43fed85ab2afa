import { conflict } from '../../core/errors'
import { JOB_COLUMNS, toJob, type Job, type JobRow } from '../jobs'
import type { Labels } from '../labels'
import type { JobStore } from '../types'
import { indexLabels, unindexLabels } from './labels'
import { PgListQuery } from './list'
import { first, numeric, type Pg } from './pg'
import { createRun, deleteRuns } from './runs'

export { pgRunStore } from './runs'
export { pgTriggerStore } from './triggers'

/** Crawl jobs on PostgreSQL: a name, labels and the crawl configuration as the user wrote it. */
export function pgJobStore(sql: Pg): JobStore {
  const jobOf = async (sql: Pg, tenant: string, id: string): Promise<Job | null> => {
    const row = first<JobRow>(await sql`SELECT ${sql.unsafe(JOB_COLUMNS)} FROM jobs t WHERE t.tenant = ${tenant} AND t.id = ${id}`)
    return row ? toJob(row) : null
  }

  return {
    create: (tenant, job, run) =>
      sql.begin(async (tx) => {
        const now = Date.now()
        // ON CONFLICT: a concurrent create of the same id waits for the other and then answers
        // no row, a conflict, rather than a unique violation.
        const inserted = first<JobRow & { seq: number }>(
          await tx`INSERT INTO jobs AS t (tenant, id, name, config, labels, created_at, updated_at)
                   VALUES (${tenant}, ${job.id}, ${job.name}, ${JSON.stringify(job.config)}, ${JSON.stringify(job.labels)}, ${now}, ${now})
                   ON CONFLICT (tenant, id) DO NOTHING RETURNING t.seq, ${tx.unsafe(JOB_COLUMNS)}`,
        )
        if (!inserted) throw conflict(`job ${job.id} already exists`)
        await indexLabels(tx, 'job', tenant, inserted.seq, job.labels)
        const created = toJob(inserted)
        if (!run) return { job: created, run: null }
        // A taken run id throws here and rolls the job back with it.
        const made = await createRun(tx, tenant, { seq: inserted.seq, id: created.id, labels: created.labels }, run)
        return run.lease ? { job: created, run: made.run, runSeq: made.seq } : { job: created, run: made.run }
      }),

    get: (tenant, id) => jobOf(sql, tenant, id),

    update: (tenant, id, patch) =>
      sql.begin(async (tx) => {
        // Read and write under the row's lock: two concurrent patches apply one after the other,
        // each keeping the fields the other set. NO KEY: runs may still be created meanwhile.
        const row = first<JobRow & { seq: number }>(await tx`SELECT seq, name, config, labels FROM jobs WHERE tenant = ${tenant} AND id = ${id} FOR NO KEY UPDATE`)
        if (!row) return null
        const labels = patch.labels ?? (JSON.parse(row.labels) as Labels)
        const config = patch.config ? JSON.stringify(patch.config) : row.config
        const updated = first<JobRow>(
          await tx`UPDATE jobs AS t SET name = ${patch.name ?? row.name}, config = ${config}, labels = ${JSON.stringify(labels)}, updated_at = ${Date.now()}
                   WHERE t.seq = ${row.seq} RETURNING ${tx.unsafe(JOB_COLUMNS)}`,
        )
        if (patch.labels) await indexLabels(tx, 'job', tenant, row.seq, labels)
        return toJob(updated!)
      }),

    delete: (tenant, id) =>
      sql.begin(async (tx) => {
        // FOR UPDATE first: a run being created for the job (which holds the job FOR SHARE)
        // commits before its runs are read here, so none is left without its job's deletion
        // having taken its artifacts and asked for its bodies; runs created later find no job.
        const job = first<{ seq: number }>(await tx`SELECT seq FROM jobs WHERE tenant = ${tenant} AND id = ${id} FOR UPDATE`)
        if (!job) return null
        const runs = numeric<{ seq: number; id: string }>(await tx`SELECT seq, id FROM runs WHERE job_seq = ${job.seq} ORDER BY seq FOR UPDATE`)
        await deleteRuns(tx, tenant, runs)
        await unindexLabels(tx, 'job', [job.seq])
        // Triggers, their executions and waiting firings go by cascade (triggers carry no labels).
        await tx`DELETE FROM jobs WHERE seq = ${job.seq}`
        return runs.map((r) => r.id)
      }),

    list: (tenant, f, after, perPage) =>
      new PgListQuery('jobs', tenant, 'job')
        .in('t.id', f.include_ids)
        .notIn('t.id', f.exclude_ids)
        .in('t.name', f.names)
        .range('t.created_at', f.created_before, f.created_after)
        .labels(f.labels)
        .page(sql, JOB_COLUMNS, after, perPage, toJob),
  }
}
