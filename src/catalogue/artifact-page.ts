import { BlobError, type BlobStore } from '../blob/blob-store'
import { readBlobBytes } from '../blob/read-bytes'
import { htmlType, PageRefused, type ApplyPage } from '../extract/apply-source'
import type { Store } from '../store'

/**
 * A stored page: an artifact of the tenant, its bytes from the blob store, at the artifact's
 * `url` (the URL the crawl requested, from the link catalogue; where a redirect led is not
 * recorded). Throws PageRefused `not_found` for a missing artifact or body.
 */
export async function artifactPage(store: Store, blobs: BlobStore, tenant: string, artifactId: string, maxBytes: number): Promise<ApplyPage> {
  const artifact = await store.artifacts.get(tenant, artifactId)
  if (!artifact) throw new PageRefused('not_found', 'artifact not found')
  const contentType = htmlType(artifact.content_type, `artifact ${artifact.id}`)
  if (artifact.size > maxBytes) throw new PageRefused('too_large', `names an artifact of ${artifact.size} bytes; apply reads at most ${maxBytes} (TRAWL_MAX_BODY_BYTES)`)
  let body: Uint8Array | null
  try {
    body = await readBlobBytes(blobs, artifact.blob_key, maxBytes)
  } catch (err) {
    if (err instanceof BlobError && err.code === 'too_large')
      throw new PageRefused('too_large', `names an artifact of more than ${maxBytes} bytes; apply reads at most ${maxBytes} (TRAWL_MAX_BODY_BYTES)`)
    // A key no store accepts names no blob (a row written badly): missing, as /blob says.
    if (err instanceof BlobError && err.code === 'invalid_key') body = null
    else throw err
  }
  if (!body) throw new PageRefused('not_found', 'artifact content not found')
  return { url: artifact.url, body, content_type: contentType, redirects: [] }
}
