import { Type } from '@sinclair/typebox'
import { notFound } from '../http/errors'
import { route, type Route } from '../http/route'
import { DateTime, PageQuery, QueryArray, StringEnum, Uuid } from '../http/schemas'
import { ERROR_REASONS, LOG_STATUSES, LOG_STEPS, METRIC_DIMENSIONS, WINDOWS } from '../store/crawl-logs'
import type { Deps } from './deps'
import { RunParams } from './runs'
import { afterOf, pageBody } from './paging'
import { PageOf } from './shapes'

/** SPEC: the crawl log listing is the one list whose per_page defaults to 20. */
export const LOG_PER_PAGE_DEFAULT = 20

const closed = { additionalProperties: false } as const
const Step = StringEnum(LOG_STEPS)
const Status = StringEnum(LOG_STATUSES)
const Reason = StringEnum(ERROR_REASONS)
const HostName = Type.String({ minLength: 1, maxLength: 253 })
const PipelineId = Type.String({ minLength: 1, maxLength: 255 })
const Window = StringEnum(WINDOWS, { description: 'bucket width; buckets align to UTC, weeks start on Monday' })
const Range = {
  occurred_after: Type.Optional({ ...DateTime, description: 'strict lower bound on occurred_at' }),
  occurred_before: Type.Optional({ ...DateTime, description: 'strict upper bound on occurred_at' }),
}

const LogQuery = Type.Object(
  {
    page: PageQuery.page,
    per_page: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: LOG_PER_PAGE_DEFAULT })),
    hosts: Type.Optional(QueryArray(HostName, 'exact host names')),
    steps: Type.Optional(QueryArray(Step)),
    statuses: Type.Optional(QueryArray(Status)),
    error_reasons: Type.Optional(QueryArray(Reason)),
    pipeline_ids: Type.Optional(QueryArray(PipelineId)),
    ...Range,
  },
  closed,
)
const MetricsQuery = Type.Object(
  {
    window: Window,
    group_by: Type.Optional(Type.Array(StringEnum(METRIC_DIMENSIONS), { uniqueItems: true, maxItems: METRIC_DIMENSIONS.length, description: 'dimensions to count by; repeat the key' })),
    filters: Type.Optional(
      Type.Object(
        {
          step: Type.Optional(Step),
          status: Type.Optional(Status),
          host: Type.Optional(HostName),
          error_reason: Type.Optional(Reason),
          pipeline_id: Type.Optional(PipelineId),
          http_status: Type.Optional(Type.String({ pattern: '^[1-5][0-9]{2}$', patternHint: 'an HTTP status code (100..599)' })),
        },
        { ...closed, description: 'deepObject: filters[dimension]=value; every pair must match' },
      ),
    ),
    ...Range,
  },
  closed,
)
const LatencyQuery = Type.Object(
  {
    window: Window,
    steps: Type.Optional(QueryArray(Step)),
    hosts: Type.Optional(QueryArray(HostName, 'exact host names')),
    ...Range,
  },
  closed,
)

const CrawlLogShape = Type.Object({
  id: Uuid,
  run_id: Uuid,
  job_id: Uuid,
  url: Type.String(),
  url_hash: Type.String(),
  host: Type.String(),
  step: Step,
  status: Status,
  pipeline_id: Type.Optional(Type.String()),
  error_reason: Type.Optional(Reason),
  error_detail: Type.Optional(Type.String()),
  http_status: Type.Optional(Type.Integer()),
  latency_ms: Type.Optional(Type.Number()),
  depth: Type.Optional(Type.Integer()),
  parent_url_hash: Type.Optional(Type.String()),
  occurred_at: DateTime,
})
const Bucket = { start: DateTime, end: { ...DateTime, description: 'exclusive' } }
const MetricsShape = Type.Object({
  window: Window,
  group_by: Type.Array(StringEnum(METRIC_DIMENSIONS)),
  buckets: Type.Array(
    Type.Object({
      ...Bucket,
      count: Type.Integer(),
      groups: Type.Array(
        Type.Object(
          { count: Type.Integer() },
          { additionalProperties: Type.Union([Type.String(), Type.Integer(), Type.Null()]), description: 'one key per group_by dimension (null: entries without it), and count' },
        ),
      ),
    }),
    { description: 'oldest first; buckets without entries are left out' },
  ),
})
const Percentile = Type.Number({ description: 'nearest rank, in ms' })
const LatencyShape = Type.Object({
  window: Window,
  buckets: Type.Array(
    Type.Object({
      ...Bucket,
      steps: Type.Array(Type.Object({ step: Step, count: Type.Integer(), p50: Percentile, p90: Percentile, p95: Percentile, p99: Percentile, max: Type.Number() })),
    }),
    { description: 'oldest first; buckets without entries are left out' },
  ),
})

/** A run's crawl log, its counts and its step latencies (SPEC "Crawl logs"). */
export const crawlLogRoutes = ({ store }: Deps): Route[] => [
  route({
    method: 'GET',
    path: '/v1/runs/:run_id/logs',
    summary: "List a run's crawl log entries, most recent first",
    tag: 'crawl logs',
    params: RunParams,
    query: LogQuery,
    response: { status: 200, schema: PageOf(CrawlLogShape) },
    handle: async ({ tenant, params, query }) => {
      const page = await store.crawlLogs.list(tenant, params.run_id, query, afterOf(query.page), query.per_page ?? LOG_PER_PAGE_DEFAULT)
      if (!page) throw notFound('run')
      return { status: 200, body: pageBody(page) }
    },
  }),
  route({
    method: 'GET',
    path: '/v1/runs/:run_id/metrics',
    summary: "Count a run's crawl log entries per time bucket, grouped by dimensions",
    tag: 'crawl logs',
    params: RunParams,
    query: MetricsQuery,
    response: { status: 200, schema: MetricsShape },
    handle: async ({ tenant, params, query }) => {
      const metrics = await store.crawlLogs.metrics(tenant, params.run_id, query)
      if (!metrics) throw notFound('run')
      return { status: 200, body: metrics }
    },
  }),
  route({
    method: 'GET',
    path: '/v1/runs/:run_id/latency',
    summary: "Step latency percentiles of a run's crawl log per time bucket",
    tag: 'crawl logs',
    params: RunParams,
    query: LatencyQuery,
    response: { status: 200, schema: LatencyShape },
    handle: async ({ tenant, params, query }) => {
      const latency = await store.crawlLogs.latency(tenant, params.run_id, query)
      if (!latency) throw notFound('run')
      return { status: 200, body: latency }
    },
  }),
]
