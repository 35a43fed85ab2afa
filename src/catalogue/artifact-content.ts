import { BlobError, isValidKey, type BlobStore } from '../blob/blob-store'
import { readBlob, readBlobBytes } from '../blob/read-bytes'
import { crawlParsedJson } from '../parse/crawl-pipeline'
import type { Store } from '../store'
import type { Artifact } from '../store/artifacts'

/** A raw body past this is not parsed again for its parsed artifact (a crawl's body cap is far below). */
const MAX_SOURCE_BYTES = 256 * 1024 * 1024
const UTF8 = new TextEncoder()

export type ArtifactContent = { size: number; body: Uint8Array | ReadableStream<Uint8Array> }

/**
 * The base URL a parsed artifact kept as its page's raw body is made again at (decision 103), or
 * null for an artifact whose blob is its own content. Undefined: a key no store accepts, which
 * names no content at all (a row written badly).
 */
async function sourceOf(store: Store, tenant: string, artifact: Artifact): Promise<string | null | undefined> {
  if (!isValidKey(artifact.blob_key)) return undefined
  return artifact.kind === 'parsed' ? store.artifacts.source(tenant, artifact.id) : null
}

/**
 * What `GET /v1/artifacts/{id}/blob` answers: the artifact's blob, or, for a parsed artifact the
 * crawl kept as its page's raw body, the JSON made again from that body. Null when the content is
 * missing.
 */
export async function artifactContent(store: Store, blobs: BlobStore, tenant: string, artifact: Artifact): Promise<ArtifactContent | null> {
  const source = await sourceOf(store, tenant, artifact)
  if (source === undefined) return null
  if (source === null) {
    const blob = await blobs.get(artifact.blob_key)
    return blob ? { size: blob.info.size, body: blob.stream } : null
  }
  const bytes = await derivedJson(blobs, artifact, source)
  return bytes ? { size: bytes.byteLength, body: bytes } : null
}

/** A parsed artifact's JSON, whether stored or made again from the raw body; null when missing. */
export async function artifactJsonBytes(store: Store, blobs: BlobStore, tenant: string, artifact: Artifact, maxBytes: number): Promise<Uint8Array | null> {
  const source = await sourceOf(store, tenant, artifact)
  if (source === undefined) return null
  return source === null ? readBlobBytes(blobs, artifact.blob_key, maxBytes) : derivedJson(blobs, artifact, source)
}

async function derivedJson(blobs: BlobStore, artifact: Artifact, source: string): Promise<Uint8Array | null> {
  let raw
  try {
    raw = await readBlob(blobs, artifact.blob_key, MAX_SOURCE_BYTES)
  } catch (err) {
    if (err instanceof BlobError && err.code === 'too_large') return null
    throw err
  }
  if (!raw) return null
  // The URL the crawl requested is the catalogue's for url_hash; a row without it (a catalogue
  // entry deleted since) is re-parsed at its source URL, which only `url` in the JSON shows.
  return UTF8.encode(await crawlParsedJson(artifact.url ?? source, source, raw.bytes, raw.info.contentType))
}
