import { Type } from '@sinclair/typebox'
import { resolveConfig, type CrawlConfig } from '../crawl/manifest'
import { notFound } from '../http/errors'
import { route, type Route } from '../http/route'
import { DateTime, PageQuery, PER_PAGE_DEFAULT, QueryArray, StringEnum, Uuid } from '../http/schemas'
import { RUN_OUTCOMES, RUN_STATUSES, STOP_REASONS, type RunMove } from '../store/runs'
import { finishBodyDeletions } from '../blob/run-bodies'
import type { Deps } from './deps'
import { CreatedFilters, IdFilters, LabelFilter } from './filters'
import { JobParams } from './jobs'
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
      handle: ({ tenant, params }) => {
        const run = store.runs.move(tenant, params.run_id, verb)
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
      handle: ({ tenant, query }) => {
        const jobSeqs = query.job_ids && store.jobs.seqsOf(tenant, query.job_ids)
        return { status: 200, body: store.runs.list(tenant, query, query.page, query.per_page ?? PER_PAGE_DEFAULT, jobSeqs) }
      },
    }),
    route({
      method: 'GET',
      path: '/v1/jobs/:job_id/runs',
      summary: 'List the runs of a job, newest first',
      tag: 'runs',
      params: JobParams,
      query: Type.Object(RunFilters, closed),
      response: { status: 200, schema: PageOf(RunShape) },
      handle: ({ tenant, params, query }) => {
        const job = store.jobs.get(tenant, params.job_id)
        if (!job) throw notFound('job')
        return { status: 200, body: store.runs.list(tenant, query, query.page, query.per_page ?? PER_PAGE_DEFAULT, [job.seq]) }
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
      handle: ({ tenant, params, body }) => {
        const job = store.jobs.get(tenant, params.job_id)
        if (!job) throw notFound('job')
        const run = store.runs.create(tenant, job, { id: body.id ?? crypto.randomUUID(), config: resolveConfig(job.config as CrawlConfig) })
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
      handle: ({ tenant, params }) => {
        const run = store.runs.get(tenant, params.run_id)
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
        store.transaction(() => {
          store.artifacts.deleteForRun(tenant, params.run_id)
          if (!store.runs.delete(tenant, params.run_id)) throw notFound('run')
          store.artifacts.requestBodyDeletion([params.run_id])
        })
        // Every body under the run (its rows' keys are all there), rows or not: a crash's
        // leftovers too. The request stays until it is done.
        await finishBodyDeletions(blobs, store.artifacts, log, [params.run_id])
        return { status: 204 }
      },
    }),
    move('pause', 'Pause a running run (409 unless running)'),
    move('resume', 'Resume a paused run (409 unless paused)'),
    move('stop', "Stop a run that has not finished; its stop reason is 'manual' (409 when finished)"),
  ]
}
