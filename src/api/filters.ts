import { Type } from '@sinclair/typebox'
import { DateTime, Hash, Labels, QueryArray, Uuid } from '../http/schemas'

/** Query filters shared by several list routes (SPEC "General rules"). */
export const IdFilters = {
  include_ids: Type.Optional(QueryArray(Uuid)),
  exclude_ids: Type.Optional(QueryArray(Uuid)),
}
export const CreatedFilters = {
  created_before: Type.Optional(DateTime),
  created_after: Type.Optional(DateTime),
}
export const LinkFilters = {
  url_hashes: Type.Optional(QueryArray(Hash)),
  urls: Type.Optional(QueryArray(Type.String({ minLength: 1, maxLength: 8192 }), 'exact URLs (normalized before matching)')),
}
export const HostFilters = {
  host_hashes: Type.Optional(QueryArray(Hash)),
  hosts: Type.Optional(QueryArray(Type.String({ minLength: 1, maxLength: 253 }), 'exact domains')),
}
export const LabelFilter = { labels: Type.Optional({ ...Labels, description: 'deepObject: labels[key]=value; every pair must match' }) }
