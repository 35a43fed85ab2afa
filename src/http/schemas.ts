import { Type, type TLiteral, type TString, type TUnion } from '@sinclair/typebox'

/** Schemas of the API's queries. Every default lives in src/config.ts or here, once. */

// The shared value schemas live in src/core; routes take them from here with the query ones.
export { DateTime, Duration, Hash, Labels, StringEnum, Uuid } from '../core/schemas'

export const MAX_FILTER_VALUES = 500
/** A repeated query key: every value validated by the item schema (a string or a StringEnum). */
export const QueryArray = <T extends TString | TUnion<TLiteral<string>[]>>(item: T, description?: string) => Type.Array(item, { maxItems: MAX_FILTER_VALUES, description })

export const PER_PAGE_DEFAULT = 10
export const PageQuery = {
  page: Type.Optional(Type.String({ maxLength: 512, description: 'opaque cursor from next_page' })),
  per_page: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: PER_PAGE_DEFAULT })),
}
