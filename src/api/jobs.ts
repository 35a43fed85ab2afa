import { Type } from '@sinclair/typebox'
import { checkConfig, CrawlConfig } from '../crawl/manifest'
import { notFound, type FieldErrors } from '../http/errors'
import { route, type Route } from '../http/route'
import { Labels, PageQuery, PER_PAGE_DEFAULT, QueryArray, Uuid } from '../http/schemas'
import type { Deps } from './deps'
import { createJob } from '../runs/create'
import { deleteJob } from '../runs/delete'
import { CreatedFilters, IdFilters, LabelFilter } from './filters'
import { afterOf, pageBody } from './paging'
import { JobShape, PageOf, RunShape } from './shapes'

const closed = { additionalProperties: false } as const
const Name = Type.String({ minLength: 1, maxLength: 255 })
export const JobParams = Type.Object({ job_id: Uuid })

/** Jobs: a name, labels and a crawl manifest. Deleting a job deletes its runs (and, as they land, triggers and artifacts). */
export const jobRoutes = ({ store, config, engine, blobs, log }: Deps): Route[] => {
  const deletion = { store, blobs, log }
  const proxyNames = Object.keys(config.proxies)
  const refine = (body: unknown, errors: FieldErrors) => {
    const cfg = (body as { config?: unknown }).config
    if (cfg !== undefined) checkConfig(cfg, 'config', proxyNames, errors)
  }
  return [
    route({
      method: 'GET',
      path: '/v1/jobs',
      summary: 'List jobs, newest first',
      tag: 'jobs',
      query: Type.Object({ ...PageQuery, ...IdFilters, names: Type.Optional(QueryArray(Name)), ...CreatedFilters, ...LabelFilter }, closed),
      response: { status: 200, schema: PageOf(JobShape) },
      handle: async ({ tenant, query }) => ({ status: 200, body: pageBody(await store.jobs.list(tenant, query, afterOf(query.page), query.per_page ?? PER_PAGE_DEFAULT)) }),
    }),
    route({
      method: 'POST',
      path: '/v1/jobs',
      summary: 'Create a job (and, with create_run=true, its first run)',
      tag: 'jobs',
      query: Type.Object({ create_run: Type.Optional(Type.Boolean({ default: false })) }, closed),
      body: Type.Object({ name: Name, config: CrawlConfig, labels: Type.Optional(Labels), id: Type.Optional(Uuid) }, closed),
      refine,
      response: { status: 201, schema: Type.Intersect([JobShape, Type.Object({ run: Type.Optional(RunShape) })]) },
      handle: async ({ tenant, query, body }) => {
        const created = await createJob(store, tenant, { id: body.id ?? crypto.randomUUID(), name: body.name, config: body.config, labels: body.labels ?? {} }, query.create_run ?? false)
        if (created.run) engine?.notify()
        return { status: 201, body: created }
      },
    }),
    route({
      method: 'GET',
      path: '/v1/jobs/:job_id',
      summary: 'Get a job',
      tag: 'jobs',
      params: JobParams,
      response: { status: 200, schema: JobShape },
      handle: async ({ tenant, params }) => {
        const job = await store.jobs.get(tenant, params.job_id)
        if (!job) throw notFound('job')
        return { status: 200, body: job }
      },
    }),
    route({
      method: 'PUT',
      path: '/v1/jobs/:job_id',
      summary: 'Update a job; omitted fields stay, given ones are replaced',
      tag: 'jobs',
      params: JobParams,
      body: Type.Object({ name: Type.Optional(Name), config: Type.Optional(CrawlConfig), labels: Type.Optional(Labels) }, closed),
      refine,
      response: { status: 200, schema: JobShape },
      handle: async ({ tenant, params, body }) => {
        const job = await store.jobs.update(tenant, params.job_id, body)
        if (!job) throw notFound('job')
        return { status: 200, body: job }
      },
    }),
    route({
      method: 'DELETE',
      path: '/v1/jobs/:job_id',
      summary: 'Delete a job with its runs',
      tag: 'jobs',
      params: JobParams,
      response: { status: 204, description: 'deleted' },
      handle: async ({ tenant, params }) => {
        if (!(await deleteJob(deletion, tenant, params.job_id))) throw notFound('job')
        return { status: 204 }
      },
    }),
  ]
}
