import { CommitBatcher } from '../util/commit-batcher'
import { sqliteCrawlStore } from './sqlite-crawl-store'
import { sqliteWebhookStore } from './sqlite-webhook-store'
import type { SqliteRepositories } from './index'
import type { labelRepository } from './labels'
import type { LedgerWrite, Payment, PaymentStatus } from './payments'
import type { Run } from './runs'
import type { LabelStore, NewRun, Store } from './types'

/**
 * The Store of the SQLite engine: thin async wrappers over its synchronous repositories. Each
 * method runs to its end in one synchronous call, so a method of several statements that must
 * be atomic (a job and its first run, a run's deletion with its artifacts) is one immediate
 * transaction, and one that only reads is as it was.
 */
export function sqliteStore(r: SqliteRepositories): Store {
  const tx = <T>(fn: () => T): T => r.db.transaction(fn).immediate()
  const runSeq = (tenant: string, runId: string) => r.frontier.runSeq(tenant, runId)

  /** Creates a run of a job inside the caller's transaction; with a lease, taken for its creator at once. */
  const createRun = (tenant: string, job: { seq: number; id: string; labels: Record<string, string> }, run: NewRun): Run => {
    const created = r.runs.create(tenant, job, { id: run.id, config: run.config })
    if (!run.lease) return created
    const now = Date.now()
    if (!r.frontier.claimRun(runSeq(tenant, run.id)!, run.lease.owner, now, now + run.lease.ms)) throw new Error('the new run could not be leased')
    return r.runs.get(tenant, run.id)!
  }

  const labels = (repo: ReturnType<typeof labelRepository>): LabelStore => ({
    get: async (tenant, hash) => repo.get(tenant, hash),
    merge: async (tenant, hash, add) => repo.merge(tenant, hash, add),
    remove: async (tenant, hash, keys) => repo.remove(tenant, hash, keys),
  })
  /** `fn` of the host's row seq; null when the tenant has no such host. */
  const onHost = <T>(tenant: string, hash: string, fn: (hostSeq: number) => T): T | null => {
    const seq = r.hosts.get(tenant, hash)?.seq
    return seq === undefined ? null : fn(seq)
  }

  // The gate's writes, group-committed: requests in flight together share one transaction, about
  // a third of the SQLite cost of one each (decision 77). isolate: a failed batch is retried write
  // by write, so one bad write fails only its own caller.
  const ledger = new CommitBatcher<LedgerWrite, boolean>((ops) => r.payments.applyAll(ops), { maxBatch: 64, maxWaitMs: 2, isolate: true })

  return {
    crawl: sqliteCrawlStore(r),
    hosts: {
      upsert: async (tenant, domains) => r.hosts.upsert(tenant, domains),
      get: async (tenant, hash) => {
        const host = r.hosts.get(tenant, hash)
        if (!host) return null
        const { seq: _, ...shown } = host
        return shown
      },
      list: async (tenant, f, after, perPage) => r.hosts.list(tenant, f, after, perPage),
      labels: labels(r.hosts.labels),
    },

    links: {
      upsert: async (tenant, urls) => r.links.upsert(tenant, urls),
      get: async (tenant, hash) => r.links.get(tenant, hash),
      list: async (tenant, f, after, perPage) => r.links.list(tenant, f, after, perPage),
      listOfHost: async (tenant, hostHash, f, after, perPage) => onHost(tenant, hostHash, (seq) => r.links.listOfHost(tenant, seq, f, after, perPage)),
      labels: labels(r.links.labels),
    },

    jobs: {
      create: async (tenant, job, run) =>
        tx(() => {
          const { seq, ...created } = r.jobs.create(tenant, job)
          if (!run) return { job: created, run: null }
          const first = createRun(tenant, { seq, id: created.id, labels: created.labels }, run)
          return run.lease ? { job: created, run: first, runSeq: runSeq(tenant, first.id)! } : { job: created, run: first }
        }),
      get: async (tenant, id) => {
        const job = r.jobs.get(tenant, id)
        if (!job) return null
        const { seq: _, ...shown } = job
        return shown
      },
      update: async (tenant, id, patch) => r.jobs.update(tenant, id, patch),
      delete: async (tenant, id) =>
        tx(() => {
          if (!r.jobs.get(tenant, id)) return null
          const runIds = r.runs.idsOfJob(tenant, id)
          for (const runId of runIds) r.artifacts.deleteForRun(tenant, runId)
          r.jobs.delete(tenant, id)
          r.artifacts.requestBodyDeletion(runIds)
          return runIds
        }),
      list: async (tenant, f, after, perPage) => r.jobs.list(tenant, f, after, perPage),
    },

    runs: {
      create: async (tenant, jobId, run) =>
        tx(() => {
          const job = r.jobs.get(tenant, jobId)
          return job ? createRun(tenant, job, run) : null
        }),
      get: async (tenant, id) => r.runs.get(tenant, id),
      delete: async (tenant, id) =>
        tx(() => {
          if (runSeq(tenant, id) === null) return false
          // Rows first, bodies after the commit (src/runs/delete.ts): a crash in between leaves
          // the request in body_deletions, never a row whose body is gone.
          r.artifacts.deleteForRun(tenant, id)
          r.runs.delete(tenant, id)
          r.artifacts.requestBodyDeletion([id])
          return true
        }),
      move: async (tenant, id, move) => r.runs.move(tenant, id, move),
      list: async (tenant, f, after, perPage) => r.runs.list(tenant, f, after, perPage, f.job_ids && r.jobs.seqsOf(tenant, f.job_ids)),
      listOfJob: async (tenant, jobId, f, after, perPage) => {
        const job = r.jobs.get(tenant, jobId)
        return job ? r.runs.list(tenant, f, after, perPage, [job.seq]) : null
      },
      census: async () => r.runs.census(),
    },

    triggers: {
      create: async (tenant, jobId, t) =>
        tx(() => {
          const job = r.jobs.get(tenant, jobId)
          return job ? r.triggers.create(tenant, job, t) : null
        }),
      get: async (tenant, id) => {
        const trigger = r.triggers.get(tenant, id)
        if (!trigger) return null
        const { seq: _, ...shown } = trigger
        return shown
      },
      delete: async (tenant, id) => r.triggers.delete(tenant, id),
      setEnabled: async (tenant, id, enabled, nextAt) => r.triggers.setEnabled(tenant, id, enabled, nextAt),
      list: async (tenant, f, after, perPage) => r.triggers.list(tenant, f, after, perPage, f.job_ids && r.jobs.seqsOf(tenant, f.job_ids)),
      listOfJob: async (tenant, jobId, f, after, perPage) => {
        const job = r.jobs.get(tenant, jobId)
        return job ? r.triggers.list(tenant, f, after, perPage, [job.seq]) : null
      },
      executions: async (tenant, triggerId, f, after, perPage) => {
        const trigger = r.triggers.get(tenant, triggerId)
        return trigger ? r.triggers.executions(tenant, trigger.seq, f, after, perPage) : null
      },
      nextDue: async () => r.triggers.nextDue(),
      due: async (now, limit) => r.triggers.due(now, limit),
      fire: async (d, f) =>
        r.triggers.fire(
          d,
          f.now,
          f.nextAt,
          // Inside the firing's transaction: the job is there (its trigger is).
          (tenant, jobId) => createRun(tenant, r.jobs.get(tenant, jobId)!, f.run).id,
        ),
      discard: async (d, nextAt) => r.triggers.discard(d, nextAt),
    },

    patterns: {
      create: async (tenant, hostHash, set) => onHost(tenant, hostHash, (seq) => r.patterns.create(tenant, seq, set)),
      get: async (tenant, id) => r.patterns.get(tenant, id),
      replace: async (tenant, id, patterns) => r.patterns.replace(tenant, id, patterns),
      delete: async (tenant, id) => r.patterns.delete(tenant, id),
      list: async (tenant, f, after, perPage) => r.patterns.list(tenant, f, after, perPage),
      listOfHost: async (tenant, hostHash, f, after, perPage) => onHost(tenant, hostHash, (seq) => r.patterns.listOfHost(tenant, seq, f, after, perPage)),
      forHost: async (tenant, hostHash) => r.patterns.forHost(tenant, hostHash),
    },

    dataMaps: {
      create: async (tenant, hostHash, map) => onHost(tenant, hostHash, (seq) => r.dataMaps.create(tenant, seq, map)),
      get: async (tenant, id) => r.dataMaps.get(tenant, id),
      update: async (tenant, id, patch) => r.dataMaps.update(tenant, id, patch),
      delete: async (tenant, id) => r.dataMaps.delete(tenant, id),
      list: async (tenant, f, after, perPage) => r.dataMaps.list(tenant, f, after, perPage),
      listOfHost: async (tenant, hostHash, f, after, perPage) => onHost(tenant, hostHash, (seq) => r.dataMaps.listOfHost(tenant, seq, f, after, perPage)),
    },

    artifacts: {
      get: async (tenant, id) => r.artifacts.get(tenant, id),
      list: async (tenant, f, after, perPage) => r.artifacts.list(tenant, f, after, perPage),
      delete: async (tenant, id) => r.artifacts.delete(tenant, id),
      blobShared: async (tenant, a) => r.artifacts.blobShared(tenant, a),
      source: async (tenant, id) => r.artifacts.source(tenant, id),
      forUrls: async (tenant, runId, urlHashes) => r.artifacts.forUrls(tenant, runId, urlHashes),
      claimed: async (keys) => r.artifacts.claimed(keys),
      pendingBodyDeletions: async () => r.artifacts.pendingBodyDeletions(),
      bodyDeletionDone: async (runId) => r.artifacts.bodyDeletionDone(runId),
    },

    crawlLogs: {
      list: async (tenant, runId, f, after, perPage) => r.crawlLogs.list(tenant, runId, f, after, perPage),
      metrics: async (tenant, runId, q) => r.crawlLogs.metrics(tenant, runId, q),
      latency: async (tenant, runId, q) => r.crawlLogs.latency(tenant, runId, q),
      errorsOf: async (tenant, runId, urlHashes, upTo) => {
        const seq = runSeq(tenant, runId)
        return seq === null ? new Map() : r.crawlLogs.errorsOf(seq, urlHashes, upTo)
      },
    },

    runGraph: {
      visits: async (tenant, runId, f, after, perPage) => {
        const seq = runSeq(tenant, runId)
        return seq === null ? null : r.runGraph.visits(tenant, seq, f, after, perPage)
      },
      edges: async (tenant, runId, f, after, perPage) => {
        const seq = runSeq(tenant, runId)
        return seq === null ? null : r.runGraph.edges(tenant, seq, f, after, perPage)
      },
    },

    webhooks: sqliteWebhookStore(r),

    payments: {
      accept: (payment) => ledger.submit({ kind: 'accept', payment }),
      mark: (key, from, to, settle) => ledger.submit({ kind: 'mark', key, from, to, settle }),
      release: async (key) => r.payments.release(key),
      get: async (key) => r.payments.get(key),
      list: (status?: PaymentStatus): AsyncIterable<Payment> => ({
        async *[Symbol.asyncIterator]() {
          yield* r.payments.list(status)
        },
      }),
      page: async (status, after, perPage) => r.payments.page(status, after, perPage),
    },
  }
}
