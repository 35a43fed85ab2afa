import type { CrawlStore } from './crawl-store'
import type { PatternDef } from '../extract/patterns'
import type { Artifact, ArtifactFilter } from './artifacts'
import type { CrawlLogEntry, ErrorReason, Latency, LatencyQuery, LogFilter, Metrics, MetricsQuery } from './crawl-logs'
import type { DataMap, DataMapFilter, DataMapPatch, NewDataMap } from './data-maps'
import type { Host, HostFilter } from './hosts'
import type { Job, JobFilter, JobPatch, NewJob } from './jobs'
import type { Labels } from './labels'
import type { Link, LinkFilter } from './links'
import type { Page } from './list'
import type { NewPatternSet, PatternFilter, PatternSet } from './patterns'
import type { NewPayment, Payment, PaymentStatus } from './payments'
import type { Edge, EdgeFilter, VisitedLink, VisitFilter } from './run-graph'
import type { Run, RunFilter, RunMove, RunStatus } from './runs'
import type { DueFiring, Execution, ExecutionFilter, NewTrigger, Trigger, TriggerFilter } from './triggers'
import type { AttemptResult, Delivery, DeliveryFilter, DueDelivery, NewWebhook, Webhook, WebhookFilter, WebhookPatch } from './webhook-model'

/**
 * What the routes, the scheduler, the payment gate, the CLI, MCP and export persist, whatever
 * the engine (decision 100). Every method is async and takes and answers plain data: no handle,
 * no statement, no callback run inside a transaction. A write that must be atomic is one method,
 * done whole inside the engine. Lists take the key of the row a page starts after (`after`,
 * from the previous page's `next`) and answer `{ data, next }`; what a key means is the engine's
 * business, and the API wraps it in an opaque cursor. Rows of one tenant are never seen by another.
 * Conflicts and bad input are DomainErrors (`conflict`, `validation`); a missing row is null.
 */
export interface Store {
  hosts: HostStore
  links: LinkStore
  jobs: JobStore
  runs: RunStore
  triggers: TriggerStore
  patterns: PatternStore
  dataMaps: DataMapStore
  artifacts: ArtifactStore
  crawlLogs: CrawlLogStore
  runGraph: RunGraphStore
  payments: PaymentStore
  webhooks: WebhookStore
  /** The crawl engine's part: async and batch-oriented (crawl-store.ts). */
  crawl: CrawlStore
}

export type { Page }

/** The labels of a host or link; null when the row does not exist for this tenant. */
export interface LabelStore {
  get(tenant: string, hash: string): Promise<Labels | null>
  /** Merges `add` in (its keys win); a `validation` error on `labels` past MAX_LABELS. */
  merge(tenant: string, hash: string, add: Labels): Promise<Labels | null>
  remove(tenant: string, hash: string, keys: string[]): Promise<Labels | null>
}

export interface HostStore {
  /** Inserts the normalized domains that are new; answers every one, in order. */
  upsert(tenant: string, domains: string[]): Promise<Host[]>
  get(tenant: string, hash: string): Promise<Host | null>
  list(tenant: string, f: HostFilter, after: number | undefined, perPage: number): Promise<Page<Host>>
  labels: LabelStore
}

export interface LinkStore {
  /** Inserts the normalized URLs that are new (and their hosts); answers every one, in order. */
  upsert(tenant: string, urls: string[]): Promise<Link[]>
  get(tenant: string, hash: string): Promise<Link | null>
  list(tenant: string, f: LinkFilter, after: number | undefined, perPage: number): Promise<Page<Link>>
  /** Links of one host; null when the tenant has no such host. */
  listOfHost(tenant: string, hostHash: string, f: LinkFilter, after: number | undefined, perPage: number): Promise<Page<Link> | null>
  labels: LabelStore
}

/** A run to create: its id and resolved config, and a lease when the creator crawls it itself. */
export type NewRun = { id: string; config: object; lease?: { owner: string; ms: number } }

export interface JobStore {
  /**
   * Inserts a job and, given `run`, its first run (labels copied from the job), in one
   * transaction; `conflict` when either id is taken, and then neither is written. A run leased
   * to its creator comes with its seq, the key `crawl` knows it by.
   */
  create(tenant: string, job: NewJob, run?: NewRun): Promise<{ job: Job; run: Run | null; runSeq?: number }>
  get(tenant: string, id: string): Promise<Job | null>
  /** Replaces the supplied fields; null when the job does not exist. */
  update(tenant: string, id: string, patch: JobPatch): Promise<Job | null>
  /**
   * Deletes the job with its runs, their artifact rows and triggers, and records that the runs'
   * bodies are to be deleted (`artifacts.pendingBodyDeletions`), in one transaction. Answers the
   * ids of the runs it deleted; null when the job did not exist.
   */
  delete(tenant: string, id: string): Promise<string[] | null>
  list(tenant: string, f: JobFilter, after: number | undefined, perPage: number): Promise<Page<Job>>
}

export type RunListFilter = RunFilter & { job_ids?: string[] }

export interface RunStore {
  /** A pending run of a job, labels copied from it; null when the job does not exist; `conflict` when the id is taken. */
  create(tenant: string, jobId: string, run: NewRun): Promise<Run | null>
  get(tenant: string, id: string): Promise<Run | null>
  /**
   * Deletes the run with its artifact rows and records that its bodies are to be deleted, in one
   * transaction; false (nothing changed) when it did not exist.
   */
  delete(tenant: string, id: string): Promise<boolean>
  /** A state move of SPEC's run table; null when the run does not exist, `conflict` when its state does not fit. */
  move(tenant: string, id: string, move: RunMove): Promise<Run | null>
  list(tenant: string, f: RunListFilter, after: number | undefined, perPage: number): Promise<Page<Run>>
  /** Runs of one job; null when the tenant has no such job. */
  listOfJob(tenant: string, jobId: string, f: RunFilter, after: number | undefined, perPage: number): Promise<Page<Run> | null>
  /**
   * Runs counted by tenant and status over every tenant, with the URLs still queued in them (0 for
   * finished runs, whose leftover count is no frontier): what /metrics shows. Only combinations
   * that have runs are answered.
   */
  census(): Promise<RunCensus[]>
}

/** Runs of one tenant in one status, and the URLs queued in them. */
export type RunCensus = { tenant: string; status: RunStatus; runs: number; queued: number }

export type TriggerListFilter = TriggerFilter & { job_ids?: string[] }

/** How the scheduler makes a due firing: its clock, the schedule's next tick, and the run it creates unless the job is busy. */
export type Firing = { now: number; nextAt: number | null; run: NewRun }

export interface TriggerStore {
  /** A trigger of a job; null when the job does not exist; `conflict` when the id is taken. */
  create(tenant: string, jobId: string, t: NewTrigger): Promise<Trigger | null>
  get(tenant: string, id: string): Promise<Trigger | null>
  /** Deletes it with its executions and waiting firings; false when it did not exist. */
  delete(tenant: string, id: string): Promise<boolean>
  /**
   * Enables or disables it. `nextAt` is a schedule's next tick, used when it is enabled now;
   * disabling drops the next tick and the on_finish firings waiting for their delay.
   */
  setEnabled(tenant: string, id: string, enabled: boolean, nextAt: number | null): Promise<Trigger | null>
  list(tenant: string, f: TriggerListFilter, after: number | undefined, perPage: number): Promise<Page<Trigger>>
  /** Triggers of one job; null when the tenant has no such job. */
  listOfJob(tenant: string, jobId: string, f: TriggerFilter, after: number | undefined, perPage: number): Promise<Page<Trigger> | null>
  /** Executions of one trigger; null when the tenant has no such trigger. */
  executions(tenant: string, triggerId: string, f: ExecutionFilter, after: number | undefined, perPage: number): Promise<Page<Execution> | null>

  // The scheduler's side: every tenant's triggers.
  /** When the earliest tick or firing falls due (epoch ms); null when none is waiting. */
  nextDue(): Promise<number | null>
  /** Ticks and firings due at `now`, earliest first, at most `limit`. */
  due(now: number, limit: number): Promise<DueFiring[]>
  /**
   * Makes one due firing in one transaction: claims it (a tick moves to `nextAt`, a firing row
   * goes), so no other scheduler makes it too; creates `run` unless the job has a run not
   * finished (outcome `skipped`); records the execution. Null when it was made already, or its
   * trigger is disabled or gone.
   */
  fire(d: DueFiring, f: Firing): Promise<Execution | null>
  /** Gives up a firing that failed: a tick moves on to `nextAt`, an on_finish firing goes. */
  discard(d: DueFiring, nextAt: number | null): Promise<void>
}

export interface PatternStore {
  /** A set for a host of the tenant's catalogue; null when there is no such host; `conflict` when the id is taken. */
  create(tenant: string, hostHash: string, set: NewPatternSet): Promise<PatternSet | null>
  get(tenant: string, id: string): Promise<PatternSet | null>
  /** Replaces the definition; null when the set does not exist. */
  replace(tenant: string, id: string, patterns: PatternDef): Promise<PatternSet | null>
  delete(tenant: string, id: string): Promise<boolean>
  list(tenant: string, f: PatternFilter, after: number | undefined, perPage: number): Promise<Page<PatternSet>>
  listOfHost(tenant: string, hostHash: string, f: PatternFilter, after: number | undefined, perPage: number): Promise<Page<PatternSet> | null>
  /** Every set of a host, oldest first (the order categorize() tries them); empty for an unknown host. */
  forHost(tenant: string, hostHash: string): Promise<PatternSet[]>
}

export interface DataMapStore {
  /** A map of a host of the tenant's catalogue; null when there is no such host; `conflict` when the id is taken. */
  create(tenant: string, hostHash: string, map: NewDataMap): Promise<DataMap | null>
  get(tenant: string, id: string): Promise<DataMap | null>
  /** Replaces the supplied fields; updated_at moves strictly forward. Null when it does not exist. */
  update(tenant: string, id: string, patch: DataMapPatch): Promise<DataMap | null>
  delete(tenant: string, id: string): Promise<boolean>
  list(tenant: string, f: DataMapFilter, after: number | undefined, perPage: number): Promise<Page<DataMap>>
  listOfHost(tenant: string, hostHash: string, f: DataMapFilter, after: number | undefined, perPage: number): Promise<Page<DataMap> | null>
}

export interface ArtifactStore {
  get(tenant: string, id: string): Promise<Artifact | null>
  list(tenant: string, f: ArtifactFilter, after: number | undefined, perPage: number): Promise<Page<Artifact>>
  /** Deletes the row and answers what it was; null when it did not exist. */
  delete(tenant: string, id: string): Promise<Artifact | null>
  /** Whether a row other than this one (of any tenant) names its blob, which must then stay. */
  blobShared(tenant: string, a: Pick<Artifact, 'id' | 'blob_key'>): Promise<boolean>
  /**
   * The base URL a parsed artifact kept as its page's raw body is made again at (its blob is the
   * raw body, decision 103); null for an artifact whose blob is its own content, or none.
   */
  source(tenant: string, id: string): Promise<string | null>
  /** A run's artifacts of these URLs (link hashes, at most a few hundred), oldest first. */
  forUrls(tenant: string, runId: string, urlHashes: readonly string[]): Promise<Artifact[]>
  /** Which of these blob keys an artifact row (of any tenant) names: those bodies must stay. */
  claimed(keys: string[]): Promise<Set<string>>
  /** Runs whose bodies are still to be deleted, oldest request first. */
  pendingBodyDeletions(): Promise<string[]>
  bodyDeletionDone(runId: string): Promise<void>
}

export type FailedUrl = { reason: ErrorReason; detail: string | null }

/** The crawl log as read; the crawl engine writes it. Null when the tenant has no such run. */
export interface CrawlLogStore {
  /** Newest first. `after` is a key this run's list answered; another is a `validation` error on `page`. */
  list(tenant: string, runId: string, f: LogFilter, after: number | undefined, perPage: number): Promise<Page<CrawlLogEntry> | null>
  metrics(tenant: string, runId: string, q: MetricsQuery): Promise<Metrics | null>
  latency(tenant: string, runId: string, q: LatencyQuery): Promise<Latency | null>
  /** Why each of these URLs failed: its last error entry at or before `upTo` (epoch ms), a fetch's first. */
  errorsOf(tenant: string, runId: string, urlHashes: readonly string[], upTo: number): Promise<Map<string, FailedUrl>>
}

/** A run's link graph as read, in the order the run recorded it. Null when the tenant has no such run. */
export interface RunGraphStore {
  visits(tenant: string, runId: string, f: VisitFilter, after: number | undefined, perPage: number): Promise<Page<VisitedLink> | null>
  edges(tenant: string, runId: string, f: EdgeFilter, after: number | undefined, perPage: number): Promise<Page<Edge> | null>
}

/**
 * Webhooks and their deliveries (decision 116). Deliveries are written by the database when a
 * run moves or a trigger fires, in that transaction; the deliverer claims and settles them.
 */
export interface WebhookStore {
  /** A webhook of one job (`job_id`) or of all the tenant's; null when there is no such job; `conflict` when the id is taken. */
  create(tenant: string, w: NewWebhook): Promise<Webhook | null>
  get(tenant: string, id: string): Promise<Webhook | null>
  /** Replaces the supplied fields; null when it does not exist. */
  update(tenant: string, id: string, patch: WebhookPatch): Promise<Webhook | null>
  /** Deletes it with its deliveries; false when it did not exist. */
  delete(tenant: string, id: string): Promise<boolean>
  list(tenant: string, f: WebhookFilter, after: number | undefined, perPage: number): Promise<Page<Webhook>>
  /** Deliveries of one webhook, newest first, with their attempts; null when the tenant has no such webhook. */
  deliveries(tenant: string, webhookId: string, f: DeliveryFilter, after: number | undefined, perPage: number): Promise<Page<Delivery> | null>
  delivery(tenant: string, webhookId: string, deliveryId: string): Promise<Delivery | null>
  /** A failed delivery back to pending, due at `now`; null when there is none; `conflict` when it is not failed. */
  retry(tenant: string, webhookId: string, deliveryId: string, now: number): Promise<Delivery | null>

  // The deliverer's side: every tenant's deliveries.
  /**
   * Due deliveries of enabled webhooks, at most `limit`, leased to `owner` until `now + leaseMs`:
   * no other claimer gets them while the lease holds (PostgreSQL: FOR UPDATE SKIP LOCKED).
   */
  claim(owner: string, now: number, leaseMs: number, limit: number): Promise<DueDelivery[]>
  /** Records an attempt and moves the delivery on (webhook-model's afterAttempt); false when `owner` no longer holds it. */
  record(owner: string, d: DueDelivery, r: AttemptResult, now: number): Promise<boolean>
  /** Who holds leases on pending deliveries at `now`. */
  leaseOwners(now: number): Promise<string[]>
  /** Gives up the leases of an owner known to be gone (killed): its deliveries are due again at once. */
  releaseLeases(owner: string): Promise<number>
}

/** The payment ledger (not per tenant: the scrape API has none). */
export interface PaymentStore {
  /** Records an authorization as `accepted`; false when its key is there already (a replay). */
  accept(p: NewPayment): Promise<boolean>
  /** Moves a row on from `from`; false when it is not in that state. */
  mark(key: string, from: PaymentStatus, to: PaymentStatus, settle?: { tx?: string; error?: string }): Promise<boolean>
  /** Forgets an `accepted` authorization a facilitator refused before any work. */
  release(key: string): Promise<boolean>
  get(key: string): Promise<Payment | null>
  /** Rows newest first, optionally of one status, read as they are iterated. */
  list(status?: PaymentStatus): AsyncIterable<Payment>
  /** One page of those rows, keyed by the ledger's seq (GET /v1/payments). */
  page(status: PaymentStatus | undefined, after: number | undefined, perPage: number): Promise<Page<Payment>>
}
