import { resolveConfig, type CrawlConfig } from '../crawl/manifest'
import type { Store } from '../store'
import type { Job, NewJob } from '../store/jobs'
import type { Run } from '../store/runs'
import type { DueFiring, Execution } from '../store/triggers'

/**
 * Every way a run comes to be (decision 100): from a job through the API, with a new job, ad hoc
 * for `trawl crawl` and MCP, and by a trigger. Each resolves the job's config here, the one
 * place, and hands the store one write that creates the run whole.
 */

/** A run crawls its job's config as it was at its creation, every default filled in. */
const runConfig = (jobConfig: object) => resolveConfig(jobConfig as CrawlConfig)

/**
 * A run of a job (POST /v1/jobs/{id}/runs); null when the job does not exist. The config is read
 * before the write: a job updated in between gives its run the config it had a moment earlier,
 * as if the run had come first.
 */
export async function createRun(store: Store, tenant: string, jobId: string, id: string = crypto.randomUUID()): Promise<Run | null> {
  const job = await store.jobs.get(tenant, jobId)
  if (!job) return null
  return store.runs.create(tenant, jobId, { id, config: runConfig(job.config) })
}

/** A job and, with `withRun`, its first run, both or neither (POST /v1/jobs?create_run=true). */
export async function createJob(store: Store, tenant: string, job: NewJob, withRun: boolean): Promise<Job & { run?: Run }> {
  const created = await store.jobs.create(tenant, job, withRun ? { id: crypto.randomUUID(), config: runConfig(job.config) } : undefined)
  return created.run ? { ...created.job, run: created.run } : created.job
}

/**
 * A job of one seed and its run, made for a crawl started by hand (`trawl crawl`, MCP's
 * crawl_start). With `lease` the run is taken by its creator as it is created, so no `trawl
 * serve` on the same data dir sees it pending and takes it first.
 */
export async function createAdHocRun(store: Store, tenant: string, seed: string, config: CrawlConfig, lease?: { owner: string; ms: number }): Promise<{ run: Run; runSeq?: number }> {
  const job = { id: crypto.randomUUID(), name: `crawl ${seed}`.slice(0, 255), config, labels: {} }
  const { run, runSeq } = await store.jobs.create(tenant, job, { id: crypto.randomUUID(), config: runConfig(config), ...(lease ? { lease } : {}) })
  return { run: run!, runSeq }
}

/**
 * Makes a due trigger firing with a run of the job's config (the scheduler). Null when the
 * firing was made already or its trigger is disabled or gone (with its job, or on its own).
 */
export async function fireTrigger(store: Store, d: DueFiring, now: number, nextAt: number | null): Promise<Execution | null> {
  const job = await store.jobs.get(d.tenant, d.job_id)
  if (!job) return null
  return store.triggers.fire(d, { now, nextAt, run: { id: crypto.randomUUID(), config: runConfig(job.config) } })
}
