import { Type } from '@sinclair/typebox'
import { normalizeHost } from '../core/url'
import { notFound } from '../http/errors'
import { itemsMust, route, type Route } from '../http/route'
import { Hash, PageQuery, PER_PAGE_DEFAULT } from '../http/schemas'
import type { Deps } from './deps'
import { HostFilters, LabelFilter, LinkFilters } from './filters'
import { labelRoutes } from './label-routes'
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
    handle: ({ tenant, query }) => ({
      status: 200,
      body: store.hosts.list(tenant, query, query.page, query.per_page ?? PER_PAGE_DEFAULT),
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
    handle: ({ tenant, body }) => {
      const domains = body.hosts.map((raw) => normalizeHost(raw)!) // refine rejected any that do not normalize
      return { status: 200, body: { data: store.hosts.upsert(tenant, [...new Set(domains)]) } }
    },
  }),
  route({
    method: 'GET',
    path: '/v1/hosts/:host_hash',
    summary: 'Get a host',
    tag: 'hosts',
    params: HostParams,
    response: { status: 200, schema: HostShape },
    handle: ({ tenant, params }) => {
      const host = store.hosts.get(tenant, params.host_hash)
      if (!host) throw notFound('host')
      const { seq: _, ...shown } = host
      return { status: 200, body: shown }
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
    handle: ({ tenant, params, query }) => {
      const host = store.hosts.get(tenant, params.host_hash)
      if (!host) throw notFound('host')
      return { status: 200, body: store.links.listOfHost(tenant, host.seq, query, query.page, query.per_page ?? PER_PAGE_DEFAULT) }
    },
  }),
  ...labelRoutes({ base: '/v1/hosts', param: 'host_hash', params: HostParams, what: 'host', tag: 'hosts', repo: store.hosts.labels }),
]
