import type { Logger } from '../log'
import type { BlobStore } from './blob-store'
import { DiskBlobStore, type DiskBlobStoreOptions } from './disk'

export { BlobError, assertValidKey, type BlobInfo, type BlobStore } from './blob-store'
export { DiskBlobStore, type DiskBlobStoreOptions } from './disk'

/** The blob store of a data dir. Disk only for now; `TRAWL_BLOB_URL=s3://…` will choose S3 here. */
export function openBlobStore(dataDir: string, opts?: DiskBlobStoreOptions): BlobStore {
  return new DiskBlobStore(dataDir, opts)
}

/**
 * Removes the blobs of deleted artifacts, after their rows are gone (a crash in between leaves
 * blobs nobody points at, never rows pointing at nothing).
 */
export async function deleteBlobs(blobs: BlobStore, keys: string[], log: Logger) {
  for (const key of keys) await blobs.delete(key).catch((err) => log.warn('blob delete failed', { key, error: String(err) }))
}
