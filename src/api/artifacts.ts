import { Type } from '@sinclair/typebox'
import { isValidKey } from '../blob/blob-store'
import { artifactContent } from '../catalogue/artifact-content'
import { notFound } from '../http/errors'
import { route, type Route } from '../http/route'
import { DateTime, Hash, PageQuery, PER_PAGE_DEFAULT, QueryArray, StringEnum, Uuid } from '../http/schemas'
import { ARTIFACT_KINDS } from '../store/artifacts'
import type { Deps } from './deps'
import { CreatedFilters, IdFilters } from './filters'
import { afterOf, pageBody } from './paging'
import { PageOf } from './shapes'

const closed = { additionalProperties: false } as const
const ArtifactParams = Type.Object({ artifact_id: Uuid })

export const ArtifactShape = Type.Object({
  id: Uuid,
  run_id: Uuid,
  url: Type.Union([Type.String(), Type.Null()], { description: 'the URL the artifact is for (the link of `url_hash`); null only if the link catalogue lacks it' }),
  url_hash: Hash,
  blob_key: Type.String(),
  kind: StringEnum(ARTIFACT_KINDS),
  pipeline_id: Type.Union([Type.String(), Type.Null()], { description: 'the parse pipeline that produced it; null for raw bodies and assets' }),
  content_type: Type.String(),
  size: Type.Integer({ description: 'length of the stored content in bytes' }),
  created_at: DateTime,
})

const ArtifactFilters = {
  ...PageQuery,
  ...IdFilters,
  run_ids: Type.Optional(QueryArray(Uuid)),
  url_hashes: Type.Optional(QueryArray(Hash)),
  blob_keys: Type.Optional(QueryArray(Type.String({ minLength: 1, maxLength: 512 }))),
  kinds: Type.Optional(QueryArray(StringEnum(ARTIFACT_KINDS))),
  pipeline_ids: Type.Optional(QueryArray(Type.String({ minLength: 1, maxLength: 255 }))),
  content_types: Type.Optional(QueryArray(Type.String({ minLength: 1, maxLength: 255 }), 'media types; parameters such as charset are ignored')),
  ...CreatedFilters,
}

/**
 * The body of a blob response. Bun.serve drops a handler's Content-Length from a stream body
 * and sends it chunked (oven-sh/bun#10507), so a blob the store hands over in one chunk (each
 * one kept in blobs.db, up to 256 KiB) goes out as those bytes, with its length on the wire;
 * a larger one streams chunk by chunk and is never held whole.
 */
async function blobBody(stream: ReadableStream<Uint8Array>): Promise<Uint8Array | ReadableStream<Uint8Array>> {
  const reader = stream.getReader()
  const first = await reader.read()
  if (first.done) return new Uint8Array(0)
  const second = await reader.read()
  if (second.done) return first.value
  const read = [first.value, second.value]
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      const next = read.shift()
      if (next) return controller.enqueue(next)
      const { done, value } = await reader.read()
      if (done) controller.close()
      else controller.enqueue(value)
    },
    cancel: (reason) => reader.cancel(reason),
  })
}

/** Stored artifacts: list, inspect, delete (with the blob) and download. */
export const artifactRoutes = ({ store, blobs }: Deps): Route[] => [
  route({
    method: 'GET',
    path: '/v1/artifacts',
    summary: 'List artifacts, newest first',
    tag: 'artifacts',
    query: Type.Object(ArtifactFilters, closed),
    response: { status: 200, schema: PageOf(ArtifactShape) },
    handle: async ({ tenant, query }) => ({ status: 200, body: pageBody(await store.artifacts.list(tenant, query, afterOf(query.page), query.per_page ?? PER_PAGE_DEFAULT)) }),
  }),
  route({
    method: 'GET',
    path: '/v1/artifacts/:artifact_id',
    summary: "Get an artifact's metadata",
    tag: 'artifacts',
    params: ArtifactParams,
    response: { status: 200, schema: ArtifactShape },
    handle: async ({ tenant, params }) => {
      const artifact = await store.artifacts.get(tenant, params.artifact_id)
      if (!artifact) throw notFound('artifact')
      return { status: 200, body: artifact }
    },
  }),
  route({
    method: 'DELETE',
    path: '/v1/artifacts/:artifact_id',
    summary: 'Delete an artifact and its stored content',
    tag: 'artifacts',
    params: ArtifactParams,
    response: { status: 204, description: 'deleted' },
    handle: async ({ tenant, params }) => {
      const artifact = await store.artifacts.get(tenant, params.artifact_id)
      if (!artifact) throw notFound('artifact')
      // Blob first: if that fails the row stays and the delete can be retried; a row left
      // after its blob is gone only answers 404 on /blob until the retry removes it.
      // A key no store accepts names no blob (a row the engine wrote badly): treated as missing.
      if (isValidKey(artifact.blob_key) && !(await store.artifacts.blobShared(tenant, artifact))) await blobs.delete(artifact.blob_key)
      await store.artifacts.delete(tenant, artifact.id)
      return { status: 204 }
    },
  }),
  route({
    method: 'GET',
    path: '/v1/artifacts/:artifact_id/blob',
    summary: 'Download the stored content, with the artifact’s own Content-Type',
    description: 'Answers the raw bytes, not JSON. 404 (JSON) when the artifact or its content is missing.',
    tag: 'artifacts',
    params: ArtifactParams,
    response: { status: 200, description: 'the artifact bytes', contentType: '*/*' },
    handle: async ({ tenant, params }) => {
      const artifact = await store.artifacts.get(tenant, params.artifact_id)
      if (!artifact) throw notFound('artifact')
      const content = await artifactContent(store, blobs, tenant, artifact)
      if (!content) throw notFound('artifact content')
      return new Response(content.body instanceof Uint8Array ? content.body : await blobBody(content.body), {
        status: 200,
        headers: { 'content-type': artifact.content_type, 'content-length': String(content.size) },
      })
    },
  }),
]
