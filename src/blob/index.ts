import type { Logger } from '../log'
import type { BlobStore } from './blob-store'
import { DiskBlobStore, type DiskBlobStoreOptions } from './disk'

export { BlobError, assertValidKey, type BlobInfo, type BlobStore } from './blob-store'
export { DiskBlobStore, type DiskBlobStoreOptions } from './disk'

/** The blob store of a data dir. Disk only for now; `TRAWL_BLOB_URL=s3://…` will choose S3 here. */
export function openBlobStore(dataDir: string, opts?: DiskBlobStoreOptions): BlobStore {
  return new DiskBlobStore(dataDir, opts)
}

/** Deletes issued at once, so the store batches them into shared commits (one each, awaited in turn, cost a commit per blob). */
const DELETE_CHUNK = 256

/**
 * Removes the blobs of deleted artifacts, after their rows are gone (a crash in between leaves
 * blobs nobody points at, never rows pointing at nothing).
 */
export async function deleteBlobs(blobs: BlobStore, keys: string[], log: Logger) {
  for (let i = 0; i < keys.length; i += DELETE_CHUNK) {
    await Promise.all(keys.slice(i, i + DELETE_CHUNK).map((key) => blobs.delete(key).catch((err) => log.warn('blob delete failed', { key, error: String(err) }))))
  }
}
