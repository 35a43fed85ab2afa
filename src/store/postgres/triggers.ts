import { conflict } from '../../core/errors'
import { parseLabels } from '../labels'
import { emptyPage } from '../list'
import { EXECUTION_COLUMNS, TRIGGER_COLUMNS, toExecution, toTrigger, type DueFiring, type ExecutionRow, type Outcome, type Trigger, type TriggerRow } from '../triggers'
import type { TriggerStore } from '../types'
import { parseDuration } from '../../util/duration'
import { PgListQuery } from './list'
import { first, numeric, type Pg } from './pg'
import { createRun, jobSeqsOf } from './runs'

type Stored = TriggerRow & { seq: number; job_seq: number; next_at: number | null }

/**
 * Triggers of jobs on PostgreSQL, their executions and the firings waiting to be made (design.md
 * §5). Several schedulers may share the database: a firing is claimed inside the transaction
 * that makes it, under its trigger's row lock, so it is made once.
 */
export function pgTriggerStore(sql: Pg): TriggerStore {
  const rowOf = async (sql: Pg, tenant: string, id: string): Promise<Stored | null> =>
    first<Stored>(await sql`SELECT t.seq, t.job_seq, t.next_at, ${sql.unsafe(TRIGGER_COLUMNS)} FROM triggers t WHERE t.tenant = ${tenant} AND t.id = ${id}`)
  const jobOf = async (tenant: string, jobId: string) => first<{ seq: number }>(await sql`SELECT seq FROM jobs WHERE tenant = ${tenant} AND id = ${jobId}`)

  const list = (tenant: string, f: Parameters<TriggerStore['list']>[1], after: number | undefined, perPage: number, jobSeqs: number[] | undefined) => {
    if (jobSeqs?.length === 0) return emptyPage<Trigger>()
    return new PgListQuery('triggers', tenant)
      .parents('t.job_seq', jobSeqs)
      .in('t.id', f.include_ids)
      .notIn('t.id', f.exclude_ids)
      .in('t.name', f.names)
      .when(f.enabled, 't.enabled = ?::int', f.enabled ? 1 : 0)
      .range('t.created_at', f.created_before, f.created_after)
      .range('t.last_executed_at', f.executed_before, f.executed_after)
      .page(sql, TRIGGER_COLUMNS, after, perPage, toTrigger)
  }

  return {
    create: (tenant, jobId, t) =>
      sql.begin(async (tx) => {
        // FOR KEY SHARE: the job cannot be deleted before the trigger is in.
        const job = first<{ seq: number; id: string }>(await tx`SELECT seq, id FROM jobs WHERE tenant = ${tenant} AND id = ${jobId} FOR KEY SHARE`)
        if (!job) return null
        const delayMs = t.condition.kind === 'on_finish' && t.condition.params.delay !== undefined ? parseDuration(t.condition.params.delay)! : 0
        const inserted = first<TriggerRow>(
          await tx`INSERT INTO triggers AS t (tenant, id, job_seq, job_id, name, kind, params, delay_ms, created_at, next_at)
                   VALUES (${tenant}, ${t.id}, ${job.seq}, ${job.id}, ${t.name}, ${t.condition.kind}, ${JSON.stringify(t.condition.params)}, ${delayMs}, ${Date.now()}, ${t.nextAt})
                   ON CONFLICT (tenant, id) DO NOTHING RETURNING ${tx.unsafe(TRIGGER_COLUMNS)}`,
        )
        if (!inserted) throw conflict(`trigger ${t.id} already exists`)
        return toTrigger(inserted)
      }),

    get: async (tenant, id) => {
      const row = await rowOf(sql, tenant, id)
      return row ? toTrigger(row) : null
    },

    // Executions and waiting firings go with it (ON DELETE CASCADE).
    delete: async (tenant, id) => (await sql`DELETE FROM triggers WHERE tenant = ${tenant} AND id = ${id}`).count > 0,

    setEnabled: (tenant, id, enabled, nextAt) =>
      sql.begin(async (tx) => {
        // Under the row's lock: two concurrent switches apply one after the other, and a firing
        // being made (which holds this lock) commits before its waiting rows are dropped.
        const row = first<Stored>(await tx`SELECT t.seq, t.job_seq, t.next_at, ${tx.unsafe(TRIGGER_COLUMNS)} FROM triggers t WHERE t.tenant = ${tenant} AND t.id = ${id} FOR NO KEY UPDATE`)
        if (!row) return null
        if ((row.enabled === 1) !== enabled) {
          await tx`UPDATE triggers SET enabled = ${enabled ? 1 : 0}, next_at = ${enabled && row.kind === 'schedule' ? nextAt : null} WHERE seq = ${row.seq}`
          if (!enabled) await tx`DELETE FROM trigger_firings WHERE trigger_seq = ${row.seq}`
        }
        return toTrigger((await rowOf(tx, tenant, id))!)
      }),

    list: async (tenant, f, after, perPage) => list(tenant, f, after, perPage, f.job_ids && (await jobSeqsOf(sql, tenant, f.job_ids))),

    listOfJob: async (tenant, jobId, f, after, perPage) => {
      const job = await jobOf(tenant, jobId)
      return job ? list(tenant, f, after, perPage, [job.seq]) : null
    },

    executions: async (tenant, triggerId, f, after, perPage) => {
      const trigger = first<{ seq: number }>(await sql`SELECT seq FROM triggers WHERE tenant = ${tenant} AND id = ${triggerId}`)
      if (!trigger) return null
      return new PgListQuery('trigger_executions', tenant)
        .parents('t.trigger_seq', [trigger.seq])
        .in('t.id', f.include_ids)
        .notIn('t.id', f.exclude_ids)
        .range('t.scheduled_at', f.scheduled_before, f.scheduled_after)
        .range('t.executed_at', f.executed_before, f.executed_after)
        .range('t.created_at', f.created_before, f.created_after)
        .page(sql, EXECUTION_COLUMNS, after, perPage, toExecution)
    },

    nextDue: async () =>
      first<{ at: number | null }>(await sql`SELECT min(at) AS at FROM (SELECT min(next_at) AS at FROM triggers WHERE next_at IS NOT NULL UNION ALL SELECT min(due_at) FROM trigger_firings) due`)!.at,

    due: async (now, limit) => {
      type Ref = { trigger_seq: number; due_at: number; tenant: string; job_id: string }
      const [ticks, firings] = await Promise.all([
        sql`SELECT seq AS trigger_seq, next_at AS due_at, tenant, job_id, params FROM triggers WHERE next_at IS NOT NULL AND next_at <= ${now} ORDER BY next_at LIMIT ${limit}`,
        sql`SELECT f.seq AS firing_seq, f.trigger_seq, f.due_at, t.tenant, t.job_id FROM trigger_firings f JOIN triggers t ON t.seq = f.trigger_seq WHERE f.due_at <= ${now} ORDER BY f.due_at LIMIT ${limit}`,
      ])
      const a = numeric<Ref & { params: string }>(ticks).map(({ params, ...r }): DueFiring => ({ ...r, kind: 'schedule', firing_seq: null, schedule: JSON.parse(params) }))
      const b = numeric<Ref & { firing_seq: number }>(firings).map((r): DueFiring => ({ ...r, kind: 'on_finish', schedule: null }))
      return [...a, ...b].sort((x, y) => x.due_at - y.due_at).slice(0, limit)
    },

    fire: (d, f) =>
      sql.begin(async (tx) => {
        // Locks in one order, job then trigger then firing, the order a job's deletion takes them
        // in (its cascade), so two transactions never wait on each other in a circle. The job's
        // lock makes firings of one job take turns: each judges "busy" seeing the run the one
        // before created. The trigger's lock makes firings of one trigger take turns: the second
        // finds the tick moved on, or the firing row gone, and makes nothing.
        const job = first<{ seq: number; id: string; labels: string }>(
          await tx`SELECT j.seq, j.id, j.labels FROM jobs j JOIN triggers t ON t.job_seq = j.seq WHERE t.seq = ${d.trigger_seq} FOR NO KEY UPDATE OF j`,
        )
        if (!job) return null
        const row = first<Stored & { tenant: string }>(
          await tx`SELECT t.seq, t.tenant, t.job_seq, t.next_at, ${tx.unsafe(TRIGGER_COLUMNS)} FROM triggers t WHERE t.seq = ${d.trigger_seq} FOR NO KEY UPDATE`,
        )
        if (!row || row.job_seq !== job.seq) return null
        // The claim, conditional besides: a tick moves on only from the tick being made, and a
        // firing row is made by whoever deletes it.
        if (d.kind === 'schedule') {
          if ((await tx`UPDATE triggers SET next_at = ${f.nextAt} WHERE seq = ${row.seq} AND next_at = ${d.due_at}`).count === 0) return null
        } else if ((await tx`DELETE FROM trigger_firings WHERE seq = ${d.firing_seq} AND trigger_seq = ${row.seq}`).count === 0) return null
        // A disabled trigger's claim stays: its tick or firing is consumed, not made.
        if (row.enabled !== 1) return null
        const busy = (await tx`SELECT 1 FROM runs WHERE job_seq = ${job.seq} AND status <> 'finished' LIMIT 1`).length > 0
        const runId = busy ? null : (await createRun(tx, row.tenant, { seq: job.seq, id: job.id, labels: parseLabels(job.labels) }, f.run)).run.id
        const outcome: Outcome = busy ? 'skipped' : 'created_run'
        const id = crypto.randomUUID()
        await tx`INSERT INTO trigger_executions (tenant, id, trigger_seq, trigger_id, run_id, outcome, scheduled_at, executed_at, created_at)
                 VALUES (${row.tenant}, ${id}, ${row.seq}, ${row.id}, ${runId}, ${outcome}, ${d.due_at}, ${f.now}, ${f.now})`
        await tx`UPDATE triggers SET last_executed_at = ${f.now} WHERE seq = ${row.seq}`
        return toExecution({ id, trigger_id: row.id, run_id: runId, outcome, scheduled_at: d.due_at, executed_at: f.now, created_at: f.now })
      }),

    discard: async (d, nextAt) => {
      // One conditional statement each: nothing to read first.
      if (d.kind === 'on_finish') await sql`DELETE FROM trigger_firings WHERE seq = ${d.firing_seq}`
      else await sql`UPDATE triggers SET next_at = ${nextAt} WHERE seq = ${d.trigger_seq} AND next_at = ${d.due_at}`
    },
  }
}
