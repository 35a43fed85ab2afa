import { parseBlobUrl, type Config } from '../config'
import type { BlobStore } from './blob-store'
import { DiskBlobStore, type DiskBlobStoreOptions } from './disk'
import { S3BlobStore, type S3BlobStoreOptions } from './s3'
import type { S3IndexOpener } from './s3-index'
import { s3ClientOptions } from './s3-settings'

export { BlobError, assertValidKey, type BlobInfo, type BlobStore } from './blob-store'
export { DiskBlobStore, type DiskBlobStoreOptions } from './disk'
export { S3BlobStore, type S3BlobStoreOptions } from './s3'
export { sqliteS3Index, type IndexRow, type S3Index, type S3IndexOpener } from './s3-index'

/** The settings that choose and place the blob store. */
export type BlobSettings = Pick<Config, 'dataDir' | 'blobUrl' | 's3Endpoint'>

/** Options of the store openBlobStore chooses, and the environment S3 credentials come from. */
export type OpenBlobStoreOptions = {
  disk?: DiskBlobStoreOptions
  s3?: S3BlobStoreOptions
  /** Where the AWS_* variables are read (s3ClientOptions). process.env. */
  env?: Record<string, string | undefined>
  /**
   * Where an S3 store keeps its index: the opened store's (src/store/open.ts `s3Index`), so that
   * with PostgreSQL every process sharing the database reads the bodies any of them wrote.
   * blobs-s3.db in the data dir when not given.
   */
  s3Index?: S3IndexOpener
}

/**
 * The blob store the settings name: S3 when `blobUrl` is `s3://bucket/prefix` (its index where
 * `s3Index` puts it), else the disk store of the data dir. A bare data dir means the disk store.
 * Missing S3 credentials are a ConfigError.
 */
export function openBlobStore(settings: string | BlobSettings, opts: OpenBlobStoreOptions = {}): BlobStore {
  const s: BlobSettings = typeof settings === 'string' ? { dataDir: settings, blobUrl: null, s3Endpoint: null } : settings
  if (!s.blobUrl) return new DiskBlobStore(s.dataDir, opts.disk)
  const location = parseBlobUrl(s.blobUrl)
  const clientOptions = s3ClientOptions(location, s.s3Endpoint, opts.env ?? process.env)
  return new S3BlobStore(s.dataDir, location, clientOptions, opts.s3Index ? { ...opts.s3, index: opts.s3Index } : opts.s3)
}
