import type { BlobStore } from './blob-store'
import { DiskBlobStore, type DiskBlobStoreOptions } from './disk'

export { BlobError, assertValidKey, type BlobInfo, type BlobStore } from './blob-store'
export { DiskBlobStore, type DiskBlobStoreOptions } from './disk'

/** The blob store of a data dir. Disk only for now; `TRAWL_BLOB_URL=s3://…` will choose S3 here. */
export function openBlobStore(dataDir: string, opts?: DiskBlobStoreOptions): BlobStore {
  return new DiskBlobStore(dataDir, opts)
}
