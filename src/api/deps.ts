import type { BlobStore } from '../blob/blob-store'
import type { Config } from '../config'
import type { Fetcher } from '../fetch/fetcher'
import type { Logger } from '../log'
import type { ParsePool } from '../parse/pool'
import type { Store } from '../store'

/** What management routes are given; nothing else reaches them. */
export type Deps = { store: Store; config: Config; log: Logger; parser: ParsePool; fetcher: Fetcher; blobs: BlobStore; engine?: Engine }

/**
 * The crawl runner and the trigger scheduler, told when a run may have work (created, resumed,
 * stopped) or a trigger may be due sooner (created, enabled); absent where nothing runs them.
 */
export type Engine = { notify(): void }
