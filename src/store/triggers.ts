import type { Database } from 'bun:sqlite'
import { conflict } from '../core/errors'
import { emptyPage, INT, ListQuery, type Page } from './list'
import { parseDuration } from '../util/duration'
import { iso } from './time'

export const TRIGGER_KINDS = ['schedule', 'on_finish'] as const
export const EXECUTION_OUTCOMES = ['created_run', 'skipped'] as const
export type TriggerKind = (typeof TRIGGER_KINDS)[number]
export type Outcome = (typeof EXECUTION_OUTCOMES)[number]

export type ScheduleParams = { expression: string; timezone?: string }
/** `stop_reasons` and `outcomes` are read by the runs_finished_fire trigger of the database (migrations 016 and PostgreSQL's 004). */
export type OnFinishParams = { delay?: string; stop_reasons?: string[]; outcomes?: string[] }
export type Condition = { kind: 'schedule'; params: ScheduleParams } | { kind: 'on_finish'; params: OnFinishParams }
export type Trigger = { id: string; job_id: string; name: string; condition: Condition; enabled: boolean; created_at: string; last_executed_at: string | null }
export type Execution = { id: string; trigger_id: string; run_id: string | null; scheduled_at: string; executed_at: string; created_at: string; outcome: Outcome }

export type TriggerFilter = {
  include_ids?: string[]
  exclude_ids?: string[]
  names?: string[]
  enabled?: boolean
  created_before?: string
  created_after?: string
  executed_before?: string
  executed_after?: string
}
export type ExecutionFilter = {
  include_ids?: string[]
  exclude_ids?: string[]
  scheduled_before?: string
  scheduled_after?: string
  executed_before?: string
  executed_after?: string
  created_before?: string
  created_after?: string
}

/** A trigger as stored, with what the scheduler needs. */
export type NewTrigger = { id: string; name: string; condition: Condition; nextAt: number | null }

/**
 * A firing that is due: a schedule's tick, or an on_finish firing (its row's seq) whose delay has
 * passed. It names its job, and a tick its schedule, so that the run's config and the next tick
 * are worked out before the firing's transaction (a trigger's condition never changes).
 */
export type DueFiring = { trigger_seq: number; kind: TriggerKind; due_at: number; firing_seq: number | null; tenant: string; job_id: string; schedule: ScheduleParams | null }

// The rows and their shaping are shared with the PostgreSQL engine, which stores the same columns.
export type TriggerRow = { id: string; job_id: string; name: string; kind: TriggerKind; params: string; enabled: number; created_at: number; last_executed_at: number | null }
export const TRIGGER_COLUMNS = 't.id, t.job_id, t.name, t.kind, t.params, t.enabled, t.created_at, t.last_executed_at'
const conditionOf = (r: Pick<TriggerRow, 'kind' | 'params'>) => ({ kind: r.kind, params: JSON.parse(r.params) }) as Condition
export const toTrigger = (r: TriggerRow): Trigger => ({
  id: r.id,
  job_id: r.job_id,
  name: r.name,
  condition: conditionOf(r),
  enabled: r.enabled === 1,
  created_at: iso(r.created_at)!,
  last_executed_at: iso(r.last_executed_at),
})

export type ExecutionRow = { id: string; trigger_id: string; run_id: string | null; outcome: Outcome; scheduled_at: number; executed_at: number; created_at: number }
export const EXECUTION_COLUMNS = 't.id, t.trigger_id, t.run_id, t.outcome, t.scheduled_at, t.executed_at, t.created_at'
export const toExecution = (r: ExecutionRow): Execution => ({
  id: r.id,
  trigger_id: r.trigger_id,
  run_id: r.run_id,
  scheduled_at: iso(r.scheduled_at)!,
  executed_at: iso(r.executed_at)!,
  created_at: iso(r.created_at)!,
  outcome: r.outcome,
})

/** Triggers of jobs, their executions, and the firings waiting to be made (design.md §5). */
export function triggerRepository(db: Database) {
  const insert = db.query(
    `INSERT INTO triggers (tenant, id, job_seq, job_id, name, kind, params, delay_ms, created_at, next_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (tenant, id) DO NOTHING`,
  )
  const byId = db.query(`SELECT t.seq, t.job_seq, t.next_at, ${TRIGGER_COLUMNS} FROM triggers t WHERE tenant = ? AND id = ?`)
  const bySeq = db.query(`SELECT t.seq, t.tenant, t.job_seq, t.next_at, ${TRIGGER_COLUMNS} FROM triggers t WHERE seq = ?`)
  // Executions and waiting firings go with it (ON DELETE CASCADE); triggers carry no labels.
  const remove = db.query('DELETE FROM triggers WHERE tenant = ? AND id = ?')
  const setEnabled = db.query('UPDATE triggers SET enabled = ?2, next_at = ?3 WHERE seq = ?1')
  const dropFirings = db.query('DELETE FROM trigger_firings WHERE trigger_seq = ?')
  const dueTicks = db.query(`SELECT seq AS trigger_seq, next_at AS due_at, tenant, job_id, params FROM triggers WHERE next_at IS NOT NULL AND next_at <= ${INT} ORDER BY next_at LIMIT ${INT}`)
  const dueFirings = db.query(
    `SELECT f.seq AS firing_seq, f.trigger_seq, f.due_at, t.tenant, t.job_id FROM trigger_firings f JOIN triggers t ON t.seq = f.trigger_seq WHERE f.due_at <= ${INT} ORDER BY f.due_at LIMIT ${INT}`,
  )
  const nextDue = db.query('SELECT min(at) AS at FROM (SELECT min(next_at) AS at FROM triggers WHERE next_at IS NOT NULL UNION ALL SELECT min(due_at) FROM trigger_firings)')
  const takeFiring = db.query('DELETE FROM trigger_firings WHERE seq = ?')
  const advance = db.query('UPDATE triggers SET next_at = ?3 WHERE seq = ?1 AND next_at = ?2')
  const executed = db.query('UPDATE triggers SET last_executed_at = ? WHERE seq = ?')
  const unfinished = db.query("SELECT 1 FROM runs WHERE job_seq = ? AND status <> 'finished' LIMIT 1")
  const insertExecution = db.query('INSERT INTO trigger_executions (tenant, id, trigger_seq, trigger_id, run_id, outcome, scheduled_at, executed_at, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)')

  type Stored = TriggerRow & { seq: number; tenant: string; job_seq: number; next_at: number | null }
  const getRow = (tenant: string, id: string) => byId.get(tenant, id) as Stored | null

  return {
    /** Inserts a trigger of a job (seq and id of this tenant's job); 409 when the id is taken. */
    create(tenant: string, job: { seq: number; id: string }, t: NewTrigger): Trigger {
      return db
        .transaction(() => {
          const delayMs = t.condition.kind === 'on_finish' && t.condition.params.delay !== undefined ? parseDuration(t.condition.params.delay)! : 0
          const { changes } = insert.run(tenant, t.id, job.seq, job.id, t.name, t.condition.kind, JSON.stringify(t.condition.params), delayMs, Date.now(), t.nextAt)
          if (changes === 0) throw conflict(`trigger ${t.id} already exists`)
          return toTrigger(getRow(tenant, t.id)!)
        })
        .immediate()
    },
    get(tenant: string, id: string): (Trigger & { seq: number }) | null {
      const row = getRow(tenant, id)
      return row ? { ...toTrigger(row), seq: row.seq } : null
    },
    /** Deletes a trigger with its executions and pending firings; false when it did not exist. */
    delete(tenant: string, id: string): boolean {
      return remove.run(tenant, id).changes > 0
    },
    /**
     * Enables or disables a trigger. `nextAt` is a schedule's next tick from now (the caller's,
     * from the trigger's expression), set when it is enabled, so ticks that passed while it was
     * disabled never fire; disabling drops the next tick and the on_finish firings waiting for
     * their delay. Null when it does not exist.
     */
    setEnabled(tenant: string, id: string, enabled: boolean, nextAt: number | null): Trigger | null {
      return db
        .transaction(() => {
          const row = getRow(tenant, id)
          if (!row) return null
          const wasEnabled = row.enabled === 1
          if (wasEnabled !== enabled) {
            setEnabled.run(row.seq, enabled ? 1 : 0, enabled && row.kind === 'schedule' ? nextAt : null)
            if (!enabled) dropFirings.run(row.seq)
          }
          return toTrigger(getRow(tenant, id)!)
        })
        .immediate()
    },
    /** Triggers of this tenant; `jobSeqs` (resolved for this tenant) narrows to those jobs'. */
    list(tenant: string, f: TriggerFilter, after: number | undefined, perPage: number, jobSeqs?: number[]): Page<Trigger> {
      if (jobSeqs?.length === 0) return emptyPage()
      return new ListQuery('triggers', tenant)
        .parents('t.job_seq', jobSeqs)
        .in('t.id', f.include_ids, true)
        .notIn('t.id', f.exclude_ids)
        .in('t.name', f.names, true)
        .when(f.enabled, `t.enabled = ${INT}`, f.enabled ? 1 : 0)
        .range('t.created_at', f.created_before, f.created_after)
        .range('t.last_executed_at', f.executed_before, f.executed_after)
        .page(db, TRIGGER_COLUMNS, after, perPage, toTrigger)
    },
    /** Executions of one trigger (seq of this tenant's trigger), newest first. */
    executions(tenant: string, triggerSeq: number, f: ExecutionFilter, after: number | undefined, perPage: number): Page<Execution> {
      return new ListQuery('trigger_executions', tenant)
        .parents('t.trigger_seq', [triggerSeq])
        .in('t.id', f.include_ids, true)
        .notIn('t.id', f.exclude_ids)
        .range('t.scheduled_at', f.scheduled_before, f.scheduled_after)
        .range('t.executed_at', f.executed_before, f.executed_after)
        .range('t.created_at', f.created_before, f.created_after)
        .page(db, EXECUTION_COLUMNS, after, perPage, toExecution)
    },

    // ------------------------------------------------------------ the scheduler's side

    /** When the earliest tick or firing falls due (epoch ms), or null when none is waiting. */
    nextDue(): number | null {
      return (nextDue.get() as { at: number | null }).at
    },
    /** Ticks and firings due at `now`, earliest first, at most `limit` in all. */
    due(now: number, limit: number): DueFiring[] {
      type Ref = { trigger_seq: number; due_at: number; tenant: string; job_id: string }
      const ticks = (dueTicks.all(now, limit) as (Ref & { params: string })[]).map(({ params, ...r }): DueFiring => ({ ...r, kind: 'schedule', firing_seq: null, schedule: JSON.parse(params) }))
      const firings = (dueFirings.all(now, limit) as (Ref & { firing_seq: number })[]).map((r): DueFiring => ({ ...r, kind: 'on_finish', schedule: null }))
      return [...ticks, ...firings].sort((a, b) => a.due_at - b.due_at).slice(0, limit)
    },
    /**
     * Makes one due firing, in one transaction: claims it (the tick moves to `next(now)`, or the
     * firing row goes), so a second scheduler on the data dir cannot make it too; then creates a
     * run of the job with `createRun`, unless the job still has an unfinished run (outcome
     * `skipped`), and records the execution. Null when the firing was already made or its
     * trigger is disabled or gone (a disabled trigger never fires).
     */
    fire(d: DueFiring, now: number, next: number | null, createRun: (tenant: string, jobId: string) => string): Execution | null {
      return db
        .transaction(() => {
          const row = bySeq.get(d.trigger_seq) as Stored | null
          if (!row) return null
          if (d.kind === 'schedule') {
            if (row.next_at !== d.due_at) return null
            advance.run(row.seq, d.due_at, next)
          } else if (takeFiring.run(d.firing_seq).changes === 0) return null
          if (row.enabled !== 1) return null
          const busy = unfinished.get(row.job_seq) !== null
          const runId = busy ? null : createRun(row.tenant, row.job_id)
          const outcome: Outcome = busy ? 'skipped' : 'created_run'
          const id = crypto.randomUUID()
          insertExecution.run(row.tenant, id, row.seq, row.id, runId, outcome, d.due_at, now, now)
          executed.run(now, row.seq)
          return toExecution({ id, trigger_id: row.id, run_id: runId, outcome, scheduled_at: d.due_at, executed_at: now, created_at: now })
        })
        .immediate()
    },
    /** Gives up a firing that failed: a schedule moves on to `next`, an on_finish firing goes. */
    discard(d: DueFiring, next: number | null) {
      db.transaction(() => {
        if (d.kind === 'on_finish') return void takeFiring.run(d.firing_seq)
        const row = bySeq.get(d.trigger_seq) as Stored | null
        if (row) advance.run(row.seq, d.due_at, next)
      }).immediate()
    },
  }
}
