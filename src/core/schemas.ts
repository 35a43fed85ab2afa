import { Type, type TLiteral, type TUnion } from '@sinclair/typebox'
import { DURATION_PATTERN } from '../util/duration'

/** Schemas of values every layer speaks of: the API's, the crawl config's, the parse and fetch results'. */

export const Uuid = Type.String({ format: 'uuid' })
export const DateTime = Type.String({ format: 'date-time' })
export const Hash = Type.String({ pattern: '^[0-9a-f]{32}$', patternHint: '32 lowercase hex characters' })
export const Duration = Type.String({ pattern: DURATION_PATTERN, patternHint: 'a duration such as 250ms, 30s or 1h30m' })

/** String pairs; keys 1..128 characters, values up to 1024, at most 64 pairs. */
export const Labels = Type.Record(Type.String({ pattern: '^.{1,128}$' }), Type.String({ maxLength: 1024 }), {
  additionalProperties: false,
  maxProperties: 64,
  description: 'string keys to string values',
})

/** A union of string literals that validates as one and documents as an enum. */
export function StringEnum<const T extends readonly string[]>(values: T, opts: { default?: T[number]; description?: string } = {}): TUnion<TLiteral<T[number]>[]> {
  return Type.Union(values.map((v) => Type.Literal(v)) as never, opts) as never
}

/** The generic error body (`{"error","message"}`), also inside batch error items. */
export const ErrorBody = Type.Object({ error: Type.String(), message: Type.String() })
