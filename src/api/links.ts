import { Type } from '@sinclair/typebox'
import { normalizeUrl } from '../core/url'
import { notFound } from '../http/errors'
import { itemsMust, route, type Route } from '../http/route'
import { Hash, PageQuery, PER_PAGE_DEFAULT } from '../http/schemas'
import type { Deps } from './deps'
import { HostFilters, LabelFilter, LinkFilters } from './filters'
import { labelRoutes } from './label-routes'
import { afterOf, pageBody } from './paging'
import { DataOf, LinkShape, PageOf } from './shapes'

const LinkParams = Type.Object({ link_hash: Hash })
const closed = { additionalProperties: false } as const

/** The link catalogue: GET/PUT /v1/links, one link and its labels. */
export const linkRoutes = ({ store }: Deps): Route[] => [
  route({
    method: 'GET',
    path: '/v1/links',
    summary: 'List links',
    tag: 'links',
    query: Type.Object({ ...PageQuery, ...LinkFilters, ...HostFilters, ...LabelFilter }, closed),
    response: { status: 200, schema: PageOf(LinkShape) },
    handle: async ({ tenant, query }) => ({
      status: 200,
      body: pageBody(await store.links.list(tenant, query, afterOf(query.page), query.per_page ?? PER_PAGE_DEFAULT)),
    }),
  }),
  route({
    method: 'PUT',
    path: '/v1/links',
    summary: 'Insert or update links by URL (their hosts are created too)',
    tag: 'links',
    body: Type.Object({ urls: Type.Array(Type.String({ maxLength: 8192 }), { minItems: 1, maxItems: 255 }) }, closed),
    response: { status: 200, schema: DataOf(LinkShape) },
    refine: itemsMust('urls', (raw) => normalizeUrl(raw), 'must be an absolute http(s) URL'),
    handle: async ({ tenant, body }) => {
      const urls = body.urls.map((raw) => normalizeUrl(raw)!) // refine rejected any that do not normalize
      return { status: 200, body: { data: await store.links.upsert(tenant, [...new Set(urls)]) } }
    },
  }),
  route({
    method: 'GET',
    path: '/v1/links/:link_hash',
    summary: 'Get a link',
    tag: 'links',
    params: LinkParams,
    response: { status: 200, schema: LinkShape },
    handle: async ({ tenant, params }) => {
      const link = await store.links.get(tenant, params.link_hash)
      if (!link) throw notFound('link')
      return { status: 200, body: link }
    },
  }),
  ...labelRoutes({ base: '/v1/links', param: 'link_hash', params: LinkParams, what: 'link', tag: 'links', repo: store.links.labels }),
]
