import { Type, type TSchema } from '@sinclair/typebox'
import { CrawlConfig } from '../crawl/manifest'
import { DateTime, Hash, Labels, StringEnum, Uuid } from '../http/schemas'
import { RUN_OUTCOMES, RUN_STATUSES, STOP_REASONS } from '../store/runs'

/** Response shapes, for the OpenAPI document (docs/api.md, "Resources"). */

export const HostRef = Type.Object({ hash: Hash, domain: Type.String() })
export const HostShape = Type.Object({ hash: Hash, domain: Type.String(), labels: Labels, created_at: DateTime })
export const LinkShape = Type.Object({ hash: Hash, url: Type.String(), host: HostRef, labels: Labels, created_at: DateTime })
export const JobShape = Type.Object({ id: Uuid, name: Type.String(), config: CrawlConfig, labels: Labels, created_at: DateTime, updated_at: DateTime })
export const RunShape = Type.Object({
  id: Uuid,
  job_id: Uuid,
  status: StringEnum(RUN_STATUSES),
  stop_reason: Type.Union([StringEnum(STOP_REASONS), Type.Null()]),
  outcome: Type.Union([StringEnum(RUN_OUTCOMES), Type.Null()]),
  error_counts: Type.Record(Type.String(), Type.Integer(), { description: 'error reason → URLs of the run that failed for it; an answer of 400 or more is http_<status>' }),
  labels: Labels,
  config: CrawlConfig,
  created_at: DateTime,
  started_at: Type.Union([DateTime, Type.Null()]),
  finished_at: Type.Union([DateTime, Type.Null()]),
  stats: Type.Object({ queued: Type.Integer(), visited: Type.Integer(), failed: Type.Integer(), bytes: Type.Integer() }),
})
export const LabelsShape = Type.Object({ labels: Labels })

export const PageOf = (item: TSchema) => Type.Object({ data: Type.Array(item), next_page: Type.Union([Type.String(), Type.Null()]) })
export const DataOf = (item: TSchema) => Type.Object({ data: Type.Array(item) })

/** A batch's error item (fetch and parse batches): `{ok: false, url, error: {error, message}}`. */
export const failed = (url: string, error: string, message: string) => ({ ok: false as const, url, error: { error, message } })
