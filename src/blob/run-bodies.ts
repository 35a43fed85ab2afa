import type { Logger } from '../log'
import type { BlobStore } from './blob-store'

/** Where a run's bodies live in the blob store: every key the crawl puts for the run starts so. */
export const runPrefix = (runId: string) => `runs/${runId}/`

/** What the catalogue says of bodies: which keys an artifact row names, and which runs' bodies are to go. */
export type BodyCatalogue = {
  claimed(keys: string[]): Set<string> | Promise<Set<string>>
  pendingBodyDeletions(): string[] | Promise<string[]>
  bodyDeletionDone(runId: string): void | Promise<void>
}

const PAGE = 1000
/** Deletes issued at once: the disk store batches them into shared commits. */
const CHUNK = 256

/**
 * Deletes the bodies under these keys that no artifact row names; answers how many it deleted.
 * A delete that fails is logged and counted out: the body is left for the next pass.
 */
export async function deleteUnclaimed(blobs: BlobStore, keys: string[], catalogue: Pick<BodyCatalogue, 'claimed'>, log: Logger): Promise<number> {
  let deleted = 0
  for (let i = 0; i < keys.length; i += CHUNK) {
    const chunk = keys.slice(i, i + CHUNK)
    const claimed = await catalogue.claimed(chunk)
    const done = await Promise.all(
      chunk
        .filter((key) => !claimed.has(key))
        .map((key) =>
          blobs.delete(key).then(
            () => true,
            (err: unknown) => {
              log.warn('blob delete failed', { key, error: String(err) })
              return false
            },
          ),
        ),
    )
    deleted += done.filter(Boolean).length
  }
  return deleted
}

/**
 * Deletes every body under a run's prefix that no artifact row names, listing the blob store
 * itself, so the bodies whose rows were never committed (a crash, a stop, a run deleted while
 * it crawled) go too. Answers how many it deleted.
 */
export async function deleteRunBodies(blobs: BlobStore, runId: string, catalogue: Pick<BodyCatalogue, 'claimed'>, log: Logger): Promise<number> {
  let deleted = 0
  let after: string | null = null
  for (;;) {
    const keys = await blobs.list(runPrefix(runId), after, PAGE)
    if (!keys.length) return deleted
    deleted += await deleteUnclaimed(blobs, keys, catalogue, log)
    after = keys.at(-1)!
  }
}

/**
 * Deletes the bodies of deleted runs: those named, or every run whose deletion was requested and
 * not finished (a process stopped in the middle). Each run's request is done once its prefix
 * is empty; a failure leaves it for the next start.
 */
export async function finishBodyDeletions(blobs: BlobStore, catalogue: BodyCatalogue, log: Logger, runIds?: string[], keepGoing: () => boolean = () => true): Promise<void> {
  for (const runId of runIds ?? (await catalogue.pendingBodyDeletions())) {
    if (!keepGoing()) return
    try {
      const n = await deleteRunBodies(blobs, runId, catalogue, log)
      await catalogue.bodyDeletionDone(runId)
      if (n) log.debug('run bodies deleted', { run: runId, bodies: n })
    } catch (err) {
      log.warn('the bodies of a deleted run could not all be deleted; the next start tries again', { run: runId, error: String(err) })
    }
  }
}
