import type { Database } from 'bun:sqlite'
import { conflict } from '../core/errors'
import { indexLabels, parseLabels, unindexLabels, type Labels } from './labels'
import { ListQuery, type Page } from './list'
import { iso } from './time'

export type Job = { id: string; name: string; config: Record<string, unknown>; labels: Labels; created_at: string; updated_at: string }
export type JobFilter = { include_ids?: string[]; exclude_ids?: string[]; names?: string[]; created_before?: string; created_after?: string; labels?: Labels }
export type NewJob = { id: string; name: string; config: object; labels: Labels }
export type JobPatch = { name?: string; config?: object; labels?: Labels }

// Shared with the PostgreSQL engine, which stores the same columns.
export type JobRow = { id: string; name: string; config: string; labels: string; created_at: number; updated_at: number }
export const JOB_COLUMNS = 't.id, t.name, t.config, t.labels, t.created_at, t.updated_at'
export const toJob = (r: JobRow): Job => ({
  id: r.id,
  name: r.name,
  config: JSON.parse(r.config),
  labels: parseLabels(r.labels),
  created_at: iso(r.created_at)!,
  updated_at: iso(r.updated_at)!,
})

/** Crawl jobs: a name, labels and the crawl configuration as the user wrote it. */
export function jobRepository(db: Database) {
  const insert = db.query('INSERT INTO jobs (tenant, id, name, config, labels, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (tenant, id) DO NOTHING')
  const byId = db.query(`SELECT t.seq, ${JOB_COLUMNS} FROM jobs t WHERE tenant = ? AND id = ?`)
  const update = db.query('UPDATE jobs SET name = ?, config = ?, labels = ?, updated_at = ? WHERE seq = ?')
  const remove = db.query('DELETE FROM jobs WHERE seq = ?')

  const getRow = (tenant: string, id: string) => byId.get(tenant, id) as (JobRow & { seq: number }) | null

  return {
    /** Inserts a job; 409 when this tenant already has one with the id. Call inside a transaction to add a run. */
    create(tenant: string, job: NewJob): Job & { seq: number } {
      const now = Date.now()
      const { changes } = insert.run(tenant, job.id, job.name, JSON.stringify(job.config), JSON.stringify(job.labels), now, now)
      if (changes === 0) throw conflict(`job ${job.id} already exists`)
      const row = getRow(tenant, job.id)!
      indexLabels(db, 'job', tenant, row.seq, job.labels)
      return { ...toJob(row), seq: row.seq }
    },
    get(tenant: string, id: string): (Job & { seq: number }) | null {
      const row = getRow(tenant, id)
      return row ? { ...toJob(row), seq: row.seq } : null
    },
    /** Replaces the supplied fields; answers null when the job does not exist. */
    update(tenant: string, id: string, patch: JobPatch): Job | null {
      return db
        .transaction(() => {
          const row = getRow(tenant, id)
          if (!row) return null
          const labels = patch.labels ?? (JSON.parse(row.labels) as Labels)
          update.run(patch.name ?? row.name, patch.config ? JSON.stringify(patch.config) : row.config, JSON.stringify(labels), Date.now(), row.seq)
          if (patch.labels) indexLabels(db, 'job', tenant, row.seq, labels)
          return toJob(getRow(tenant, id)!)
        })
        .immediate()
    },
    /** Deletes the job and, by cascade, its runs; answers false when it did not exist. */
    delete(tenant: string, id: string): boolean {
      return db
        .transaction(() => {
          const row = getRow(tenant, id)
          if (!row) return false
          unindexLabels(db, 'run', 'SELECT seq FROM runs WHERE job_seq = ?', row.seq)
          unindexLabels(db, 'job', '?', row.seq)
          remove.run(row.seq)
          return true
        })
        .immediate()
    },
    /** Seqs of this tenant's jobs with these ids (to list their runs). */
    seqsOf(tenant: string, ids: string[]): number[] {
      return new ListQuery('jobs', tenant, 'job').in('t.id', ids, true).seqs(db)
    },
    list(tenant: string, f: JobFilter, after: number | undefined, perPage: number): Page<Job> {
      return new ListQuery('jobs', tenant, 'job')
        .in('t.id', f.include_ids, true)
        .notIn('t.id', f.exclude_ids)
        .in('t.name', f.names, true)
        .range('t.created_at', f.created_before, f.created_after)
        .labels(f.labels)
        .page(db, JOB_COLUMNS, after, perPage, toJob)
    },
  }
}
