import './formats'
import { Kind, type TSchema } from '@sinclair/typebox'
import { TypeCompiler, type TypeCheck } from '@sinclair/typebox/compiler'
import { ValueErrorType, type ValueError } from '@sinclair/typebox/errors'
import { FieldErrors } from './errors'

/** Where a value came from; decides how field paths are spelled (docs/api.md, "Field paths in 422 errors"). */
export type Source = 'body' | 'query' | 'params'

const compiled = new WeakMap<TSchema, TypeCheck<TSchema>>()
function checker(schema: TSchema): TypeCheck<TSchema> {
  let check = compiled.get(schema)
  if (!check) compiled.set(schema, (check = TypeCompiler.Compile(schema)))
  return check
}

/** Returns the value typed by the schema, or throws a 422 naming every failing field. */
export function validate<T extends TSchema>(schema: T, value: unknown, source: Source): T['static'] {
  const check = checker(schema)
  const errors = new FieldErrors()
  try {
    if (check.Check(value)) return value
    collect(check.Errors(value), source, errors)
  } catch (err) {
    // Recursive schemas (Field) walk a recursive body: thousands of nesting levels overflow
    // the stack inside the checker. That is the client's input being too deep, not our fault.
    if (!(err instanceof RangeError)) throw err
    errors.add(source, 'is nested too deeply')
  }
  if (errors.size === 0) errors.add(source, 'is invalid')
  errors.throwIfAny()
  return value
}

function collect(iterator: Iterable<ValueError>, source: Source, out: FieldErrors) {
  const required = new Set<string>()
  for (const error of iterator) {
    if (error.type === ValueErrorType.ObjectRequiredProperty) required.add(error.path)
    else if (required.has(error.path)) continue // "Expected string" after "required" says nothing new
    if (error.type === ValueErrorType.Union) {
      collectUnion(error, source, out)
      continue
    }
    out.add(fieldPath(error.path, source), message(error))
  }
}

/**
 * A union error names no branch. Our unions are tagged by `kind` (or `format`): report the
 * errors of the branch whose tag the value carries, or the tag itself when none matches.
 */
function collectUnion(error: ValueError, source: Source, out: FieldErrors) {
  const branches = (error.schema as { anyOf?: TSchema[] }).anyOf ?? []
  if (branches.length > 0 && branches.every((b) => b[Kind] === 'Literal')) {
    const allowed = branches.map((b) => JSON.stringify((b as unknown as { const: unknown }).const))
    return out.add(fieldPath(error.path, source), `must be one of ${allowed.join(', ')}`)
  }
  const value = error.value as Record<string, unknown> | null
  const tagKey = tagOf(branches)
  if (tagKey && value && typeof value === 'object' && !Array.isArray(value)) {
    const index = branches.findIndex((b) => literalOf(b, tagKey) === value[tagKey])
    if (index >= 0 && error.errors[index]) return collect(error.errors[index]!, source, out)
    const allowed = branches.map((b) => literalOf(b, tagKey)).filter((v) => v !== undefined)
    return out.add(fieldPath(`${error.path}/${tagKey}`, source), `must be one of ${allowed.map((v) => JSON.stringify(v)).join(', ')}`)
  }
  // Untagged unions (e.g. string or array): the first branch's errors read best.
  const first = error.errors[0]
  if (first) {
    const before = out.size
    collect(first, source, out)
    if (out.size > before) return
  }
  out.add(fieldPath(error.path, source), 'is invalid')
}

function tagOf(branches: TSchema[]): string | undefined {
  for (const key of ['kind', 'format']) if (branches.length > 0 && branches.every((b) => literalOf(b, key) !== undefined)) return key
  return undefined
}

function literalOf(schema: TSchema, key: string): unknown {
  const prop = (schema as { properties?: Record<string, TSchema> }).properties?.[key]
  return prop && prop[Kind] === 'Literal' ? (prop as unknown as { const: unknown }).const : undefined
}

/** `/config/limits/max_depth` → `config.limits.max_depth`; `/items/3/url` → `items[3].url`. */
export function fieldPath(pointer: string, source: Source): string {
  const parts = pointer
    .split('/')
    .slice(1)
    .map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'))
  if (parts.length === 0) return source
  let out = ''
  parts.forEach((part, i) => {
    if (i === 0) out = part
    else if (/^\d+$/.test(part)) out += `[${part}]`
    else out += source === 'body' ? `.${part}` : `[${part}]`
  })
  return out
}

function message(error: ValueError): string {
  const s = error.schema as Record<string, unknown>
  switch (error.type) {
    case ValueErrorType.ObjectRequiredProperty:
      return 'is required'
    case ValueErrorType.ObjectAdditionalProperties:
      return s.patternProperties ? 'is not a valid key (1 to 128 characters)' : 'is not a known field'
    case ValueErrorType.StringMinLength:
      return s.minLength === 1 ? 'must not be empty' : `must be at least ${s.minLength} characters`
    case ValueErrorType.StringMaxLength:
      return `must be at most ${s.maxLength} characters`
    case ValueErrorType.StringPattern:
      return s.patternHint ? `must be ${s.patternHint}` : `must match ${s.pattern}`
    case ValueErrorType.StringFormat:
      return `must be ${FORMAT_NAMES[s.format as string] ?? `a ${s.format}`}`
    case ValueErrorType.NumberMaximum:
    case ValueErrorType.IntegerMaximum:
      return `must be <= ${s.maximum}`
    case ValueErrorType.NumberExclusiveMinimum:
    case ValueErrorType.IntegerExclusiveMinimum:
      return `must be > ${s.exclusiveMinimum}`
    case ValueErrorType.NumberExclusiveMaximum:
    case ValueErrorType.IntegerExclusiveMaximum:
      return `must be < ${s.exclusiveMaximum}`
    case ValueErrorType.NumberMinimum:
    case ValueErrorType.IntegerMinimum:
      return `must be >= ${s.minimum}`
    case ValueErrorType.ArrayMinItems:
      return s.minItems === 1 ? 'must have at least 1 item' : `must have at least ${s.minItems} items`
    case ValueErrorType.ArrayMaxItems:
      return `must have at most ${s.maxItems} items`
    case ValueErrorType.ArrayUniqueItems:
      return 'must not repeat items'
    case ValueErrorType.TupleLength:
      return `must have exactly ${s.maxItems} items`
    case ValueErrorType.Literal:
      return `must be ${JSON.stringify(s.const)}`
    case ValueErrorType.ObjectMaxProperties:
      return `must have at most ${s.maxProperties} keys`
    default:
      return TYPE_MESSAGES[s.type as string] ?? error.message.replace(/^Expected/, 'must be').toLowerCase()
  }
}

const FORMAT_NAMES: Record<string, string> = {
  uuid: 'a uuid',
  'date-time': 'an RFC 3339 date-time',
  uri: 'an absolute http(s) URL',
}
const TYPE_MESSAGES: Record<string, string> = {
  string: 'must be a string',
  integer: 'must be an integer',
  number: 'must be a number',
  boolean: 'must be a boolean',
  object: 'must be an object',
  array: 'must be an array',
  null: 'must be null',
}
