import { Type } from '@sinclair/typebox'
import { notFound } from '../http/errors'
import { route, type Route } from '../http/route'
import { DateTime, MAX_FILTER_VALUES, PageQuery, PER_PAGE_DEFAULT } from '../http/schemas'
import type { Page } from '../store/types'
import type { Deps } from './deps'
import { RunParams } from './runs'
import { HostFilters, LinkFilters } from './filters'
import { afterOf, pageBody } from './paging'
import { LinkShape, PageOf } from './shapes'

const closed = { additionalProperties: false } as const

export const VisitedLinkShape = Type.Object({
  ...LinkShape.properties,
  depth: Type.Integer({ description: 'crawl depth; seeds are 0' }),
  visited_at: DateTime,
  status: Type.Union([Type.Integer(), Type.Null()], { description: 'HTTP status of the fetch; null when it failed' }),
})
export const EdgeShape = Type.Object({ parent: LinkShape, child: LinkShape, created_at: DateTime })

/** The filters of a run's visits (also GET /v1/runs/{id}/export's), without paging. */
export const VisitFilterQuery = {
  depth: Type.Optional(Type.Array(Type.Integer({ minimum: 0, maximum: 1_000_000 }), { maxItems: MAX_FILTER_VALUES, description: 'crawl depths' })),
  visited_before: Type.Optional(DateTime),
  visited_after: Type.Optional(DateTime),
  ...LinkFilters,
  ...HostFilters,
}
const VisitFilters = { ...PageQuery, ...VisitFilterQuery }
const EdgeFilters = { ...PageQuery, ...LinkFilters, ...HostFilters }

/** A run's link graph: the links it visited and the edges between pages and their links. */
export const runGraphRoutes = ({ store }: Deps): Route[] => {
  const ofRun = <T>(page: Page<T> | null) => {
    if (!page) throw notFound('run')
    return { status: 200, body: pageBody(page) }
  }
  return [
    route({
      method: 'GET',
      path: '/v1/runs/:run_id/links',
      summary: 'List the links a run visited, in visit order',
      tag: 'links',
      params: RunParams,
      query: Type.Object(VisitFilters, closed),
      response: { status: 200, schema: PageOf(VisitedLinkShape) },
      handle: async ({ tenant, params, query }) => ofRun(await store.runGraph.visits(tenant, params.run_id, query, afterOf(query.page), query.per_page ?? PER_PAGE_DEFAULT)),
    }),
    route({
      method: 'GET',
      path: '/v1/runs/:run_id/edges',
      summary: 'List the parent → child edges a run found, in discovery order',
      description: 'Each filter keeps the edges with a matching link at either end; several filters must all hold.',
      tag: 'links',
      params: RunParams,
      query: Type.Object(EdgeFilters, closed),
      response: { status: 200, schema: PageOf(EdgeShape) },
      handle: async ({ tenant, params, query }) => ofRun(await store.runGraph.edges(tenant, params.run_id, query, afterOf(query.page), query.per_page ?? PER_PAGE_DEFAULT)),
    }),
  ]
}
