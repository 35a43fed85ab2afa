import type { SQLQueryBindings } from 'bun:sqlite'
import { normalizeHost } from '../core/url'
import { INT, TEXT } from './list'
import { epoch } from './time'

/** The vocabulary of design.md §5. */
export const LOG_STEPS = ['schedule', 'robots', 'fetch', 'parse', 'extract', 'store', 'discover'] as const
export const LOG_STATUSES = ['ok', 'error', 'skipped', 'retried'] as const
export const ERROR_REASONS = [
  'timeout',
  'dns',
  'connect',
  'tls',
  'http_status',
  'too_large',
  'redirect_limit',
  'robots_disallowed',
  'out_of_scope',
  'unsupported_content_type',
  'blocked_address',
  'parse_error',
  'store_error',
  // design.md §5 marks the queued URLs of a host that failed 5 times in a row with this reason.
  'host_unreachable',
  // A fetch that was sent and never recorded: the process stopped (or was killed) first.
  'interrupted',
] as const
export const METRIC_DIMENSIONS = ['step', 'status', 'host', 'error_reason', 'pipeline_id', 'http_status'] as const
export const WINDOWS = ['minute', 'hour', 'day', 'week'] as const
export type LogStep = (typeof LOG_STEPS)[number]
export type LogStatus = (typeof LOG_STATUSES)[number]
export type ErrorReason = (typeof ERROR_REASONS)[number]
export type MetricDimension = (typeof METRIC_DIMENSIONS)[number]
export type Window = (typeof WINDOWS)[number]

/** What the crawl engine records: one URL's passage through one step. */
export type LogEntry = {
  run_seq: number
  url: string
  url_hash: string
  host: string
  step: LogStep
  status: LogStatus
  pipeline_id?: string
  error_reason?: ErrorReason
  error_detail?: string
  http_status?: number
  latency_ms?: number
  depth?: number
  parent_url_hash?: string
  /** Epoch milliseconds. */
  occurred_at: number
}

/** An entry as the API shows it (SPEC "Crawl log entry"): absent fields are left out, not null. */
export type CrawlLogEntry = { id: string; run_id: string; job_id: string } & Omit<LogEntry, 'run_seq' | 'occurred_at'> & { occurred_at: string }

/** Bounds on occurred_at, strict like every `*_before` / `*_after` filter. */
export type TimeRange = { occurred_after?: string; occurred_before?: string }
export type LogFilter = TimeRange & { hosts?: string[]; steps?: string[]; statuses?: string[]; error_reasons?: string[]; pipeline_ids?: string[] }
export type MetricsQuery = TimeRange & { window: Window; group_by?: MetricDimension[]; filters?: Partial<Record<MetricDimension, string>> }
export type LatencyQuery = TimeRange & { window: Window; steps?: string[]; hosts?: string[] }

/** One combination of the group_by values in a bucket; null stands for entries without the field. */
export type MetricGroup = { [D in MetricDimension]?: string | number | null } & { count: number }
export type Metrics = { window: Window; group_by: MetricDimension[]; buckets: { start: string; end: string; count: number; groups: MetricGroup[] }[] }
export type StepLatency = { step: LogStep; count: number; p50: number; p90: number; p95: number; p99: number; max: number }
export type Latency = { window: Window; buckets: { start: string; end: string; steps: StepLatency[] }[] }

/** Host filter values match the stored (normalized) spelling, as for links and hosts. */
export const storedHosts = (hosts: string[] | undefined) => hosts?.map((h) => normalizeHost(h) ?? h)

export const hasEmptyList = (f: LogFilter | LatencyQuery) => Object.values(f).some((v) => Array.isArray(v) && v.length === 0)

/** WHERE terms over one table alias (`t` for crawl_logs rows) with their parameters. */
export class Where {
  readonly terms: string[] = []
  readonly params: SQLQueryBindings[] = []
  constructor(readonly alias = 't') {}
  add(term: string, ...params: SQLQueryBindings[]): this {
    this.terms.push(term)
    this.params.push(...params)
    return this
  }
  /** One value is an equality (an ordered index walk); several travel as one JSON parameter. */
  in(column: string, values: readonly string[] | undefined): this {
    if (values === undefined) return this
    if (values.length === 1) return this.add(`${this.alias}.${column} = ${TEXT}`, values[0]!)
    return this.add(`${this.alias}.${column} IN (SELECT value FROM json_each(${TEXT}))`, JSON.stringify(values))
  }
  range(r: TimeRange): this {
    if (r.occurred_before !== undefined) this.add(`${this.alias}.occurred_at < ${INT}`, epoch(r.occurred_before))
    if (r.occurred_after !== undefined) this.add(`${this.alias}.occurred_at > ${INT}`, epoch(r.occurred_after))
    return this
  }
  get sql() {
    return this.terms.join(' AND ')
  }
}

/**
 * A run as its entries are read: `key` tells it from a later run given the same seq (a run's
 * seq is reused when the newest run is deleted), for what is kept per run between reads.
 */
export type RunRef = { seq: number; id: string; job_id: string; tenant: string; key: string }
