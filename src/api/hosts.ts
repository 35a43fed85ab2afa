import { Type } from '@sinclair/typebox'
import { normalizeHost } from '../core/url'
import { notFound } from '../http/errors'
import { itemsMust, route, type Route } from '../http/route'
import { Hash, PageQuery, PER_PAGE_DEFAULT } from '../http/schemas'
import type { Deps } from './deps'
import { HostFilters, LabelFilter, LinkFilters } from './filters'
import { labelRoutes } from './label-routes'
import { afterOf, pageBody } from './paging'
import { DataOf, HostShape, LinkShape, PageOf } from './shapes'

const HostParams = Type.Object({ host_hash: Hash })
const closed = { additionalProperties: false } as const

/** The host catalogue: GET/PUT /v1/hosts, one host, its links and its labels. */
export const hostRoutes = ({ store }: Deps): Route[] => [
  route({
    method: 'GET',
    path: '/v1/hosts',
    summary: 'List hosts',
    tag: 'hosts',
    query: Type.Object({ ...PageQuery, ...HostFilters, ...LabelFilter }, closed),
    response: { status: 200, schema: PageOf(HostShape) },
    handle: async ({ tenant, query }) => ({
      status: 200,
      body: pageBody(await store.hosts.list(tenant, query, afterOf(query.page), query.per_page ?? PER_PAGE_DEFAULT)),
    }),
  }),
  route({
    method: 'PUT',
    path: '/v1/hosts',
    summary: 'Insert or update hosts by domain',
    tag: 'hosts',
    body: Type.Object({ hosts: Type.Array(Type.String({ maxLength: 253 }), { minItems: 1, maxItems: 255 }) }, closed),
    response: { status: 200, schema: DataOf(HostShape) },
    refine: itemsMust('hosts', normalizeHost, 'is not a valid domain'),
    handle: async ({ tenant, body }) => {
      const domains = body.hosts.map((raw) => normalizeHost(raw)!) // refine rejected any that do not normalize
      return { status: 200, body: { data: await store.hosts.upsert(tenant, [...new Set(domains)]) } }
    },
  }),
  route({
    method: 'GET',
    path: '/v1/hosts/:host_hash',
    summary: 'Get a host',
    tag: 'hosts',
    params: HostParams,
    response: { status: 200, schema: HostShape },
    handle: async ({ tenant, params }) => {
      const host = await store.hosts.get(tenant, params.host_hash)
      if (!host) throw notFound('host')
      return { status: 200, body: host }
    },
  }),
  route({
    method: 'GET',
    path: '/v1/hosts/:host_hash/links',
    summary: 'List the links of a host',
    tag: 'hosts',
    params: HostParams,
    query: Type.Object({ ...PageQuery, ...LinkFilters, ...LabelFilter }, closed),
    response: { status: 200, schema: PageOf(LinkShape) },
    handle: async ({ tenant, params, query }) => {
      const page = await store.links.listOfHost(tenant, params.host_hash, query, afterOf(query.page), query.per_page ?? PER_PAGE_DEFAULT)
      if (!page) throw notFound('host')
      return { status: 200, body: pageBody(page) }
    },
  }),
  ...labelRoutes({ base: '/v1/hosts', param: 'host_hash', params: HostParams, what: 'host', tag: 'hosts', repo: store.hosts.labels }),
]
