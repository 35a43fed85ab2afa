import { Type } from '@sinclair/typebox'
import { artifactPage } from '../catalogue/artifact-page'
import { applyToPage, fetchPage, PageRefused, type ApplyPage } from '../extract/apply-source'
import { checkDataMap, DataMapDef } from '../extract/data-map'
import { FetchError } from '../fetch/errors'
import { ApiError, notFound, ValidationError, type FieldErrors } from '../http/errors'
import { isHttpUrl } from '../core/formats'
import { route, type Route } from '../http/route'
import { DateTime, Hash, PageQuery, PER_PAGE_DEFAULT, QueryArray, Uuid } from '../http/schemas'
import { ParseTimeout, PoolError } from '../parse/pool'
import { decodeBase64, NOT_BASE64 } from '../util/base64'
import type { Deps } from './deps'
import { CreatedFilters, HostFilters, IdFilters } from './filters'
import { afterOf, pageBody } from './paging'
import { HostRef, PageOf } from './shapes'

const closed = { additionalProperties: false } as const
const MapParams = Type.Object({ map_id: Uuid })
const HostParams = Type.Object({ host_hash: Hash })
const SchemaFilter = { schema_ids: Type.Optional(QueryArray(Uuid)) }
const DataMapShape = Type.Object({ id: Uuid, schema_id: Uuid, map: DataMapDef, host: HostRef, created_at: DateTime, updated_at: DateTime })
const Extracted = Type.Object({
  data: Type.Union([Type.Record(Type.String(), Type.Unknown()), Type.Array(Type.Record(Type.String(), Type.Unknown()))]),
  errors: Type.Array(Type.Object({ field: Type.String(), error: Type.Union([Type.Literal('required'), Type.Literal('invalid')]), message: Type.String() })),
})

const refine = (body: unknown, errors: FieldErrors) => {
  const map = (body as { map?: unknown }).map
  if (map !== undefined) checkDataMap(map, 'map', errors)
}

/**
 * `content` as document bytes (standard or URL-safe base64, whitespace and missing padding
 * forgiven). Anything else is a 422: Buffer.from would drop bad characters silently and
 * extract from a mangled document.
 */
function decodeContent(content: string, maxBytes: number): Uint8Array {
  // Checked before decoding, so a huge body is refused without allocating its bytes.
  if (content.length > Math.ceil(maxBytes / 3) * 4 * 1.1 + 16) throw ValidationError.of('content', `must decode to at most ${maxBytes} bytes`)
  const bytes = decodeBase64(content)
  if (!bytes) throw ValidationError.of('content', NOT_BASE64)
  if (bytes.length > maxBytes) throw ValidationError.of('content', `must decode to at most ${maxBytes} bytes`)
  return bytes
}

/** Where /apply's page comes from: exactly one is given. */
const SOURCES = ['content', 'url', 'artifact_id'] as const
/** The fetch API's default: a page that takes longer is not one to try a map on interactively. */
const APPLY_FETCH_TIMEOUT_MS = 30_000

/** A page apply cannot read, as the API says it (docs/extract.md, "Apply"; decision 95). */
function refusal(err: PageRefused): ApiError | ValidationError {
  switch (err.code) {
    case 'not_found':
      return new ApiError(404, 'not_found', err.message)
    case 'http_status':
      return new ApiError(502, 'http_status', err.message)
    case 'unsupported_content_type':
      return new ApiError(415, 'unsupported_content_type', err.message)
    case 'too_large':
      return ValidationError.of('artifact_id', err.message)
  }
}

/** Data maps: per-host extraction definitions, and applying one to a page. */
export const dataMapRoutes = ({ store, config, parser, fetcher, blobs }: Deps): Route[] => [
  route({
    method: 'GET',
    path: '/v1/data_maps',
    summary: 'List data maps, newest first',
    tag: 'data maps',
    query: Type.Object({ ...PageQuery, ...IdFilters, ...HostFilters, ...SchemaFilter, ...CreatedFilters }, closed),
    response: { status: 200, schema: PageOf(DataMapShape) },
    handle: async ({ tenant, query }) => ({ status: 200, body: pageBody(await store.dataMaps.list(tenant, query, afterOf(query.page), query.per_page ?? PER_PAGE_DEFAULT)) }),
  }),
  route({
    method: 'GET',
    path: '/v1/hosts/:host_hash/data_maps',
    summary: 'List the data maps of a host, newest first',
    tag: 'data maps',
    params: HostParams,
    query: Type.Object({ ...PageQuery, ...IdFilters, ...SchemaFilter, ...CreatedFilters }, closed),
    response: { status: 200, schema: PageOf(DataMapShape) },
    handle: async ({ tenant, params, query }) => {
      const page = await store.dataMaps.listOfHost(tenant, params.host_hash, query, afterOf(query.page), query.per_page ?? PER_PAGE_DEFAULT)
      if (!page) throw notFound('host')
      return { status: 200, body: pageBody(page) }
    },
  }),
  route({
    method: 'POST',
    path: '/v1/hosts/:host_hash/data_maps',
    summary: 'Create a data map for a host',
    tag: 'data maps',
    params: HostParams,
    body: Type.Object({ schema_id: Uuid, map: DataMapDef, id: Type.Optional(Uuid) }, closed),
    refine,
    response: { status: 201, schema: DataMapShape },
    handle: async ({ tenant, params, body }) => {
      const map = await store.dataMaps.create(tenant, params.host_hash, { id: body.id ?? crypto.randomUUID(), schema_id: body.schema_id, map: body.map })
      if (!map) throw notFound('host')
      return { status: 201, body: map }
    },
  }),
  route({
    method: 'GET',
    path: '/v1/data_maps/:map_id',
    summary: 'Get a data map',
    tag: 'data maps',
    params: MapParams,
    response: { status: 200, schema: DataMapShape },
    handle: async ({ tenant, params }) => {
      const map = await store.dataMaps.get(tenant, params.map_id)
      if (!map) throw notFound('data map')
      return { status: 200, body: map }
    },
  }),
  route({
    method: 'PUT',
    path: '/v1/data_maps/:map_id',
    summary: 'Update a data map; omitted fields stay, given ones are replaced',
    tag: 'data maps',
    params: MapParams,
    body: Type.Object({ schema_id: Type.Optional(Uuid), map: Type.Optional(DataMapDef) }, closed),
    refine,
    response: { status: 200, schema: DataMapShape },
    handle: async ({ tenant, params, body }) => {
      const map = await store.dataMaps.update(tenant, params.map_id, body)
      if (!map) throw notFound('data map')
      return { status: 200, body: map }
    },
  }),
  route({
    method: 'DELETE',
    path: '/v1/data_maps/:map_id',
    summary: 'Delete a data map',
    tag: 'data maps',
    params: MapParams,
    response: { status: 204, description: 'deleted' },
    handle: async ({ tenant, params }) => {
      if (!(await store.dataMaps.delete(tenant, params.map_id))) throw notFound('data map')
      return { status: 204 }
    },
  }),
  route({
    method: 'POST',
    path: '/v1/data_maps/:map_id/apply',
    summary: 'Apply a data map to a page: HTML given as base64, a URL to fetch, or a stored artifact',
    description:
      'Exactly one of content, url and artifact_id. A page fetched by url or stored as an artifact resolves relative url values against its URL; base64 content has none, so they are errors there. ' +
      "A fetch that gets no answer is the fetch API's error (504 timeout; 502 dns, connect, tls, too_large, redirect_limit, proxy, rejected, bad_response; 403 blocked_address); " +
      'an HTTP error answer is 502 http_status; a page that is not HTML or XHTML is 415 unsupported_content_type.',
    tag: 'data maps',
    params: MapParams,
    body: Type.Object(
      {
        content: Type.Optional(Type.String({ minLength: 1, description: 'base64-encoded HTML (charset from a BOM or <meta charset>, else UTF-8)' })),
        url: Type.Optional(Type.String({ minLength: 1, maxLength: 8192, description: 'an absolute http(s) URL, fetched through the address guard, redirects followed' })),
        artifact_id: Type.Optional(Uuid),
      },
      closed,
    ),
    refine: (body, errors) => {
      const given = SOURCES.filter((k) => (body as Record<string, unknown>)[k] !== undefined)
      if (given.length !== 1) errors.add('body', `must have exactly one of content, url and artifact_id${given.length ? `, not ${given.join(' and ')}` : ''}`)
      const url = (body as { url?: unknown }).url
      if (typeof url === 'string' && url !== '' && !isHttpUrl(url)) errors.add('url', 'must be an absolute http or https URL')
    },
    response: { status: 200, schema: Extracted },
    handle: async ({ tenant, params, body }) => {
      // Decoded before the lookup: a 422 comes before a 404 (design.md §3, order of checks).
      const bytes = body.content === undefined ? null : decodeContent(body.content, config.maxBodyBytes)
      const map = await store.dataMaps.get(tenant, params.map_id)
      if (!map) throw notFound('data map')
      try {
        const page: ApplyPage = bytes
          ? { url: null, body: bytes, content_type: 'text/html', redirects: [] }
          : body.url !== undefined
            ? await fetchPage(fetcher, body.url, APPLY_FETCH_TIMEOUT_MS, tenant)
            : await artifactPage(store, blobs, tenant, body.artifact_id!, config.maxBodyBytes)
        return { status: 200, body: await applyToPage(parser, page, map.id, map.map, tenant) }
      } catch (err) {
        if (err instanceof FetchError) throw new ApiError(err.status, err.code, err.message)
        if (err instanceof PageRefused) throw refusal(err)
        if (err instanceof ParseTimeout || err instanceof PoolError) throw new ApiError(500, 'parse_error', err.message)
        throw err
      }
    },
  }),
]
