import { Type } from '@sinclair/typebox'
import { notFound } from '../http/errors'
import { route, type Route } from '../http/route'
import { DateTime, PageQuery, PER_PAGE_DEFAULT, QueryArray, StringEnum, Uuid } from '../http/schemas'
import { RUN_OUTCOMES, RUN_STATUSES, STOP_REASONS, type RunMove } from '../store/runs'
import { createRun } from '../runs/create'
import { deleteRun } from '../runs/delete'
import type { Deps } from './deps'
import { CreatedFilters, IdFilters, LabelFilter } from './filters'
import { JobParams } from './jobs'
import { afterOf, pageBody } from './paging'
import { PageOf, RunShape } from './shapes'

const closed = { additionalProperties: false } as const

export const RunParams = Type.Object({ run_id: Uuid })
const RunFilters = {
  ...PageQuery,
  ...IdFilters,
  statuses: Type.Optional(QueryArray(StringEnum(RUN_STATUSES))),
  stop_reasons: Type.Optional(QueryArray(StringEnum(STOP_REASONS))),
  outcomes: Type.Optional(QueryArray(StringEnum(RUN_OUTCOMES))),
  ...CreatedFilters,
  finished_before: Type.Optional(DateTime),
  finished_after: Type.Optional(DateTime),
  ...LabelFilter,
}

/** Runs: listing, creation from a job, and the state moves of SPEC's run table. */
export const runRoutes = ({ store, engine, blobs, log }: Deps): Route[] => {
  const move = (verb: RunMove, summary: string) =>
    route({
      method: 'PUT',
      path: `/v1/runs/:run_id/${verb}`,
      summary,
      tag: 'runs',
      params: RunParams,
      response: { status: 200, schema: RunShape },
      handle: async ({ tenant, params }) => {
        const run = await store.runs.move(tenant, params.run_id, verb)
        if (!run) throw notFound('run')
        engine?.notify()
        return { status: 200, body: run }
      },
    })
  return [
    route({
      method: 'GET',
      path: '/v1/runs',
      summary: 'List runs, newest first',
      tag: 'runs',
      query: Type.Object({ ...RunFilters, job_ids: Type.Optional(QueryArray(Uuid)) }, closed),
      response: { status: 200, schema: PageOf(RunShape) },
      handle: async ({ tenant, query }) => ({ status: 200, body: pageBody(await store.runs.list(tenant, query, afterOf(query.page), query.per_page ?? PER_PAGE_DEFAULT)) }),
    }),
    route({
      method: 'GET',
      path: '/v1/jobs/:job_id/runs',
      summary: 'List the runs of a job, newest first',
      tag: 'runs',
      params: JobParams,
      query: Type.Object(RunFilters, closed),
      response: { status: 200, schema: PageOf(RunShape) },
      handle: async ({ tenant, params, query }) => {
        const page = await store.runs.listOfJob(tenant, params.job_id, query, afterOf(query.page), query.per_page ?? PER_PAGE_DEFAULT)
        if (!page) throw notFound('job')
        return { status: 200, body: pageBody(page) }
      },
    }),
    route({
      method: 'POST',
      path: '/v1/jobs/:job_id/runs',
      summary: "Create a run of a job with the job's configuration resolved",
      tag: 'runs',
      params: JobParams,
      body: Type.Object({ id: Type.Optional(Uuid) }, closed),
      bodyOptional: true,
      response: { status: 201, schema: RunShape },
      handle: async ({ tenant, params, body }) => {
        const run = await createRun(store, tenant, params.job_id, body.id)
        if (!run) throw notFound('job')
        engine?.notify()
        return { status: 201, body: run }
      },
    }),
    route({
      method: 'GET',
      path: '/v1/runs/:run_id',
      summary: 'Get a run',
      tag: 'runs',
      params: RunParams,
      response: { status: 200, schema: RunShape },
      handle: async ({ tenant, params }) => {
        const run = await store.runs.get(tenant, params.run_id)
        if (!run) throw notFound('run')
        return { status: 200, body: run }
      },
    }),
    route({
      method: 'DELETE',
      path: '/v1/runs/:run_id',
      summary: 'Delete a run',
      tag: 'runs',
      params: RunParams,
      response: { status: 204, description: 'deleted' },
      handle: async ({ tenant, params }) => {
        if (!(await deleteRun({ store, blobs, log }, tenant, params.run_id))) throw notFound('run')
        return { status: 204 }
      },
    }),
    move('pause', 'Pause a running run (409 unless running)'),
    move('resume', 'Resume a paused run (409 unless paused)'),
    move('stop', "Stop a run that has not finished; its stop reason is 'manual' (409 when finished)"),
  ]
}
