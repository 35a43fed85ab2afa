import { Type } from '@sinclair/typebox'
import { NO_DOCUMENT_URL } from '../extract/coerce'
import { checkDataMap, DataMapDef } from '../extract/data-map'
import { ApiError, notFound, ValidationError, type FieldErrors } from '../http/errors'
import { route, type Route } from '../http/route'
import { DateTime, Hash, PageQuery, PER_PAGE_DEFAULT, QueryArray, Uuid } from '../http/schemas'
import type { StepResult } from '../parse/pipeline'
import { ParseTimeout, PoolError } from '../parse/pool'
import { decodeBase64, NOT_BASE64 } from '../util/base64'
import type { Deps } from './deps'
import { CreatedFilters, HostFilters, IdFilters } from './filters'
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

/** Data maps: per-host extraction definitions, and applying one to supplied HTML. */
export const dataMapRoutes = ({ store, config, parser }: Deps): Route[] => [
  route({
    method: 'GET',
    path: '/v1/data_maps',
    summary: 'List data maps, newest first',
    tag: 'data maps',
    query: Type.Object({ ...PageQuery, ...IdFilters, ...HostFilters, ...SchemaFilter, ...CreatedFilters }, closed),
    response: { status: 200, schema: PageOf(DataMapShape) },
    handle: ({ tenant, query }) => ({ status: 200, body: store.dataMaps.list(tenant, query, query.page, query.per_page ?? PER_PAGE_DEFAULT) }),
  }),
  route({
    method: 'GET',
    path: '/v1/hosts/:host_hash/data_maps',
    summary: 'List the data maps of a host, newest first',
    tag: 'data maps',
    params: HostParams,
    query: Type.Object({ ...PageQuery, ...IdFilters, ...SchemaFilter, ...CreatedFilters }, closed),
    response: { status: 200, schema: PageOf(DataMapShape) },
    handle: ({ tenant, params, query }) => {
      const host = store.hosts.get(tenant, params.host_hash)
      if (!host) throw notFound('host')
      return { status: 200, body: store.dataMaps.listOfHost(tenant, host.seq, query, query.page, query.per_page ?? PER_PAGE_DEFAULT) }
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
    handle: ({ tenant, params, body }) => {
      const host = store.hosts.get(tenant, params.host_hash)
      if (!host) throw notFound('host')
      return { status: 201, body: store.dataMaps.create(tenant, host.seq, { id: body.id ?? crypto.randomUUID(), schema_id: body.schema_id, map: body.map }) }
    },
  }),
  route({
    method: 'GET',
    path: '/v1/data_maps/:map_id',
    summary: 'Get a data map',
    tag: 'data maps',
    params: MapParams,
    response: { status: 200, schema: DataMapShape },
    handle: ({ tenant, params }) => {
      const map = store.dataMaps.get(tenant, params.map_id)
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
    handle: ({ tenant, params, body }) => {
      const map = store.dataMaps.update(tenant, params.map_id, body)
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
    handle: ({ tenant, params }) => {
      if (!store.dataMaps.delete(tenant, params.map_id)) throw notFound('data map')
      return { status: 204 }
    },
  }),
  route({
    method: 'POST',
    path: '/v1/data_maps/:map_id/apply',
    summary: 'Apply a data map to HTML; a relative url value resolves only against an absolute <base href>, else it is an error',
    tag: 'data maps',
    params: MapParams,
    body: Type.Object({ content: Type.String({ minLength: 1, description: 'base64-encoded HTML (charset from a BOM or <meta charset>, else UTF-8)' }) }, closed),
    response: { status: 200, schema: Extracted },
    handle: async ({ tenant, params, body }) => {
      // Decoded before the lookup: a 422 comes before a 404 (design.md §3, order of checks).
      const bytes = decodeContent(body.content, config.maxBodyBytes)
      const map = store.dataMaps.get(tenant, params.map_id)
      if (!map) throw notFound('data map')
      // A one-step pipeline on the parse workers: the same decoding, tree and engine as a
      // data_map step, off the thread that answers every other request.
      const { id, map: def } = map
      // The page's URL is not known here. The host's domain says nothing of the scheme or the
      // port the page was served on, so a URL built from it would be a guess.
      const parsed = await parser
        .parse(
          { url: NO_DOCUMENT_URL, body: bytes, content_type: 'text/html', pipelines: [{ steps: [{ kind: 'data_map', id }] }] },
          { patternSets: () => [], dataMap: (wanted) => (wanted === id ? def : null) },
          tenant,
        )
        .catch((err) => {
          if (err instanceof ParseTimeout || err instanceof PoolError) throw new ApiError(500, 'parse_error', err.message)
          throw err
        })
      const { data, errors } = parsed.pipelines[0]!.steps[0] as Extract<StepResult, { data: unknown }>
      return { status: 200, body: { data, errors } }
    },
  }),
]
