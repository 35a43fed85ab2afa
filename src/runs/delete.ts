import type { BlobStore } from '../blob/blob-store'
import { finishBodyDeletions } from '../blob/run-bodies'
import type { Logger } from '../log'
import type { Store } from '../store'

/** What deleting runs touches: the store's rows and the blob store's bodies. */
export type DeleteDeps = { store: Store; blobs: BlobStore; log: Logger }

/**
 * Deletes a run (decision 100): its rows go in one write that also records its bodies are to go,
 * then every body under the run's prefix, rows or not (a crash's leftovers too). A crash before
 * the bodies are gone leaves the request, which the next start finishes. False when the tenant
 * has no such run.
 */
export async function deleteRun(deps: DeleteDeps, tenant: string, runId: string): Promise<boolean> {
  if (!(await deps.store.runs.delete(tenant, runId))) return false
  await finishBodyDeletions(deps.blobs, deps.store.artifacts, deps.log, [runId])
  return true
}

/** Deletes a job with its runs, as deleteRun deletes each; false when the tenant has no such job. */
export async function deleteJob(deps: DeleteDeps, tenant: string, jobId: string): Promise<boolean> {
  const runIds = await deps.store.jobs.delete(tenant, jobId)
  if (runIds === null) return false
  await finishBodyDeletions(deps.blobs, deps.store.artifacts, deps.log, runIds)
  return true
}
