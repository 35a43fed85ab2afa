import { Type } from '@sinclair/typebox'
import { notFound, type FieldErrors } from '../http/errors'
import { route, type Route } from '../http/route'
import { DateTime, Duration, PageQuery, PER_PAGE_DEFAULT, QueryArray, StringEnum, Uuid } from '../http/schemas'
import { expressionError, MAX_EXPRESSION_LENGTH, nextTick, timezoneError } from '../schedule/cron'
import { DURATION_PATTERN, parseDuration } from '../util/duration'
import { EXECUTION_OUTCOMES, TRIGGER_KINDS, type Condition } from '../store/triggers'
import { RUN_OUTCOMES, STOP_REASONS } from '../store/runs'
import type { Deps } from './deps'
import { CreatedFilters, IdFilters } from './filters'
import { JobParams } from './jobs'
import { afterOf, pageBody } from './paging'
import { PageOf } from './shapes'

const closed = { additionalProperties: false } as const
const Name = Type.String({ minLength: 1, maxLength: 255 })
/** The longest on_finish delay: a year. Longer is almost surely a typo, and stays a row for as long. */
const MAX_DELAY_MS = 366 * 86_400_000

const ScheduleCondition = Type.Object(
  {
    kind: Type.Literal('schedule'),
    params: Type.Object(
      {
        expression: Type.String({
          minLength: 1,
          maxLength: MAX_EXPRESSION_LENGTH,
          description: 'cron: 5 fields (minute hour day-of-month month day-of-week) or 6 with seconds first; @hourly, @daily, @weekly, @monthly, @yearly',
        }),
        timezone: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: 'IANA time zone the expression is read in (our extension); UTC when omitted' })),
      },
      closed,
    ),
  },
  { ...closed, description: 'fires on a cron schedule; a tick while the job has an unfinished run is recorded as a skipped execution' },
)
/** A non-empty set of names, each once: the finishes an on_finish trigger fires for (our extension). */
const NameSet = <T extends readonly string[]>(names: T, description: string) => Type.Optional(Type.Array(StringEnum(names), { minItems: 1, maxItems: names.length, uniqueItems: true, description }))
const OnFinishCondition = Type.Object(
  {
    kind: Type.Literal('on_finish'),
    params: Type.Optional(
      Type.Object(
        {
          delay: Type.Optional({ ...Duration, description: 'wait this long after the run finishes (at most 366d); at once when omitted' }),
          stop_reasons: NameSet(STOP_REASONS, 'fire only for a run that stopped for one of these reasons (our extension); any when omitted'),
          outcomes: NameSet(RUN_OUTCOMES, 'fire only for a run whose outcome is one of these (our extension); any when omitted'),
        },
        closed,
      ),
    ),
  },
  { ...closed, description: "fires after each finish of one of the job's runs, after the delay; `stop_reasons` and `outcomes` narrow it to some finishes (both must match when both are given)" },
)
const ConditionSchema = Type.Union([ScheduleCondition, OnFinishCondition])

export const TriggerShape = Type.Object({
  id: Uuid,
  job_id: Uuid,
  name: Type.String(),
  condition: Type.Object({ kind: StringEnum(TRIGGER_KINDS), params: Type.Record(Type.String(), Type.Union([Type.String(), Type.Array(Type.String())])) }),
  enabled: Type.Boolean(),
  created_at: DateTime,
  last_executed_at: Type.Union([DateTime, Type.Null()]),
})
export const ExecutionShape = Type.Object({
  id: Uuid,
  trigger_id: Uuid,
  run_id: Type.Union([Uuid, Type.Null()], { description: 'the run it created; null when skipped' }),
  scheduled_at: DateTime,
  executed_at: DateTime,
  created_at: DateTime,
  outcome: { ...StringEnum(EXECUTION_OUTCOMES), description: '`created_run`, or `skipped` when the job still had an unfinished run' },
})

const TriggerParams = Type.Object({ trigger_id: Uuid })
const TriggerFilters = {
  ...PageQuery,
  ...IdFilters,
  names: Type.Optional(QueryArray(Name)),
  enabled: Type.Optional(Type.Boolean()),
  ...CreatedFilters,
  executed_before: Type.Optional({ ...DateTime, description: 'last execution before' }),
  executed_after: Type.Optional({ ...DateTime, description: 'last execution after' }),
}
const ExecutionFilters = {
  ...PageQuery,
  ...IdFilters,
  scheduled_before: Type.Optional(DateTime),
  scheduled_after: Type.Optional(DateTime),
  executed_before: Type.Optional(DateTime),
  executed_after: Type.Optional(DateTime),
  ...CreatedFilters,
}

/** What a schema cannot check: the cron expression, the time zone, the delay's bound. */
function refine(body: unknown, errors: FieldErrors) {
  const condition = (body as { condition?: unknown }).condition as { kind?: unknown; params?: Record<string, unknown> } | undefined
  const params = condition?.params
  if (typeof params !== 'object' || params === null) return
  if (condition!.kind === 'schedule') {
    if (typeof params.expression === 'string' && params.expression.length <= MAX_EXPRESSION_LENGTH) {
      const error = expressionError(params.expression)
      if (error) errors.add('condition.params.expression', error)
    }
    if (typeof params.timezone === 'string') {
      const error = timezoneError(params.timezone)
      if (error) errors.add('condition.params.timezone', error)
    }
  } else if (condition!.kind === 'on_finish' && typeof params.delay === 'string') {
    // A malformed delay is the schema's error; a well-formed one may still be too long.
    if (new RegExp(DURATION_PATTERN).test(params.delay)) {
      const ms = parseDuration(params.delay)
      if (ms === null || ms > MAX_DELAY_MS) errors.add('condition.params.delay', 'must be at most 366d')
    }
  }
}

/** Triggers: cron schedules and on_finish firings that create runs of a job, and their executions. */
export const triggerRoutes = ({ store, engine }: Deps): Route[] => [
  route({
    method: 'GET',
    path: '/v1/triggers',
    summary: 'List triggers, newest first',
    tag: 'triggers',
    query: Type.Object({ ...TriggerFilters, job_ids: Type.Optional(QueryArray(Uuid)) }, closed),
    response: { status: 200, schema: PageOf(TriggerShape) },
    handle: async ({ tenant, query }) => ({ status: 200, body: pageBody(await store.triggers.list(tenant, query, afterOf(query.page), query.per_page ?? PER_PAGE_DEFAULT)) }),
  }),
  route({
    method: 'GET',
    path: '/v1/jobs/:job_id/triggers',
    summary: 'List the triggers of a job, newest first',
    tag: 'triggers',
    params: JobParams,
    query: Type.Object(TriggerFilters, closed),
    response: { status: 200, schema: PageOf(TriggerShape) },
    handle: async ({ tenant, params, query }) => {
      const page = await store.triggers.listOfJob(tenant, params.job_id, query, afterOf(query.page), query.per_page ?? PER_PAGE_DEFAULT)
      if (!page) throw notFound('job')
      return { status: 200, body: pageBody(page) }
    },
  }),
  route({
    method: 'POST',
    path: '/v1/jobs/:job_id/triggers',
    summary: 'Create a trigger of a job (enabled)',
    description:
      "A `schedule` trigger creates a run of the job at each cron tick; a tick while the job has a run that has not finished creates none and records a `skipped` execution. Ticks missed while the service was down fire once when it starts. An `on_finish` trigger fires after every finish of one of the job's runs (or only those with one of its `stop_reasons` and `outcomes`, our extension), after its `delay`, with the same rule for unfinished runs. There is no update: delete and create.",
    tag: 'triggers',
    params: JobParams,
    body: Type.Object({ name: Name, condition: ConditionSchema, id: Type.Optional(Uuid) }, closed),
    refine,
    response: { status: 201, schema: TriggerShape },
    handle: async ({ tenant, params, body }) => {
      const condition = (body.condition.kind === 'on_finish' ? { kind: 'on_finish', params: body.condition.params ?? {} } : body.condition) as Condition
      const now = Date.now()
      const trigger = await store.triggers.create(tenant, params.job_id, {
        id: body.id ?? crypto.randomUUID(),
        name: body.name,
        condition,
        nextAt: condition.kind === 'schedule' ? nextTick(condition.params, now) : null,
      })
      if (!trigger) throw notFound('job')
      engine?.notify()
      return { status: 201, body: trigger }
    },
  }),
  route({
    method: 'GET',
    path: '/v1/triggers/:trigger_id',
    summary: 'Get a trigger',
    tag: 'triggers',
    params: TriggerParams,
    response: { status: 200, schema: TriggerShape },
    handle: async ({ tenant, params }) => {
      const trigger = await store.triggers.get(tenant, params.trigger_id)
      if (!trigger) throw notFound('trigger')
      return { status: 200, body: trigger }
    },
  }),
  route({
    method: 'DELETE',
    path: '/v1/triggers/:trigger_id',
    summary: 'Delete a trigger with its executions (the runs it created stay)',
    tag: 'triggers',
    params: TriggerParams,
    response: { status: 204, description: 'deleted' },
    handle: async ({ tenant, params }) => {
      if (!(await store.triggers.delete(tenant, params.trigger_id))) throw notFound('trigger')
      return { status: 204 }
    },
  }),
  ...([true, false] as const).map((enabled) =>
    route({
      method: 'PUT',
      path: `/v1/triggers/:trigger_id/${enabled ? 'enable' : 'disable'}`,
      summary: enabled
        ? 'Enable a trigger: a schedule fires from its next tick on (ticks passed while disabled do not fire)'
        : 'Disable a trigger: it no longer fires, and on_finish firings waiting for their delay are dropped',
      tag: 'triggers',
      params: TriggerParams,
      response: { status: 200, schema: TriggerShape },
      handle: async ({ tenant, params }) => {
        const current = await store.triggers.get(tenant, params.trigger_id)
        if (!current) throw notFound('trigger')
        // Ticks that passed while it was disabled never fire: the next one is counted from now.
        // A condition never changes, so the tick worked out here is the one for the row written.
        const nextAt = enabled && !current.enabled && current.condition.kind === 'schedule' ? nextTick(current.condition.params, Date.now()) : null
        const trigger = await store.triggers.setEnabled(tenant, params.trigger_id, enabled, nextAt)
        if (!trigger) throw notFound('trigger')
        engine?.notify()
        return { status: 200, body: trigger }
      },
    }),
  ),
  route({
    method: 'GET',
    path: '/v1/triggers/:trigger_id/executions',
    summary: 'List the executions of a trigger, newest first',
    tag: 'triggers',
    params: TriggerParams,
    query: Type.Object(ExecutionFilters, closed),
    response: { status: 200, schema: PageOf(ExecutionShape) },
    handle: async ({ tenant, params, query }) => {
      const page = await store.triggers.executions(tenant, params.trigger_id, query, afterOf(query.page), query.per_page ?? PER_PAGE_DEFAULT)
      if (!page) throw notFound('trigger')
      return { status: 200, body: pageBody(page) }
    },
  }),
  route({
    method: 'POST',
    path: '/v1/triggers/preview',
    summary: 'The next five firing times of a condition, before a trigger is created with it',
    description:
      'The same body checks as a create (`condition` only), so a condition this answers is one a create takes. A `schedule` answers its next five ticks after now (fewer when the expression has no more); `on_finish` fires on finishes, not on a clock, and answers `[]`. Nothing is stored.',
    tag: 'triggers',
    body: Type.Object({ condition: ConditionSchema }, closed),
    refine,
    response: { status: 200, schema: Type.Object({ next_at: Type.Array(DateTime) }) },
    handle: ({ body }) => {
      const next: string[] = []
      if (body.condition.kind === 'schedule') {
        for (let at = nextTick(body.condition.params, Date.now()); at !== null && next.length < PREVIEW_TICKS; at = nextTick(body.condition.params, at)) next.push(new Date(at).toISOString())
      }
      return { status: 200, body: { next_at: next } }
    },
  }),
]

const PREVIEW_TICKS = 5
