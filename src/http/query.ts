import { Kind, Type, type TObject, type TProperties, type TSchema } from '@sinclair/typebox'
import { FieldErrors, ValidationError } from './errors'
import { validate } from '../core/validate'

/**
 * The one query parser every route uses (design.md §3). Elysia's own parser splits arrays on
 * commas and cannot read deepObject, so we read `searchParams` ourselves:
 * arrays are repeated keys, objects are `key[sub]=value`, numbers and booleans are converted,
 * and the result is validated with the same TypeBox schema the OpenAPI document shows.
 */
export function parseQuery<T extends TObject>(schema: T, url: URL): T['static'] {
  const props = schema.properties as TProperties
  const out: Record<string, unknown> = {}
  const unknown: string[] = []
  const deep = new Map<string, Record<string, string>>()

  for (const [rawKey, value] of url.searchParams) {
    const bracket = /^([^[\]]+)\[([^\]]*)\]$/.exec(rawKey)
    if (bracket && isObject(props[bracket[1]!])) {
      const obj = deep.get(bracket[1]!) ?? {}
      obj[bracket[2]!] = value
      deep.set(bracket[1]!, obj)
      continue
    }
    const prop = props[rawKey]
    if (!prop) {
      unknown.push(rawKey)
      continue
    }
    if (isArray(prop)) ((out[rawKey] as unknown[]) ??= []).push(convert(itemsOf(prop), value))
    else if (isObject(prop)) out[rawKey] = parseJsonObject(rawKey, value)
    else if (rawKey in out) throw ValidationError.of(rawKey, 'must be given once')
    else out[rawKey] = convert(prop, value)
  }
  for (const [key, obj] of deep) out[key] = { ...((out[key] as object) ?? {}), ...obj }
  const errors = new FieldErrors()
  for (const field of unknown) errors.add(field, 'is not a known query parameter')
  errors.collect(() => validate(schema, out, 'query'))
  errors.throwIfAny()
  return out as T['static']
}

function convert(schema: TSchema, value: string): unknown {
  const type = (schema as { type?: string }).type
  if (type === 'integer' || type === 'number') return value.trim() !== '' && Number.isFinite(Number(value)) ? Number(value) : value
  if (type === 'boolean') return value === 'true' ? true : value === 'false' ? false : value
  return value
}

// `labels={"env":"prod"}` is accepted beside the deepObject form, for clients that send JSON.
function parseJsonObject(key: string, value: string): unknown {
  try {
    return JSON.parse(value)
  } catch {
    throw ValidationError.of(key, `must be given as ${key}[name]=value`)
  }
}

const unwrap = (s: TSchema | undefined): TSchema | undefined => s
const isArray = (s: TSchema | undefined) => unwrap(s)?.[Kind] === 'Array'
const isObject = (s: TSchema | undefined) => unwrap(s)?.[Kind] === 'Record' || unwrap(s)?.[Kind] === 'Object'
const itemsOf = (s: TSchema) => (s as unknown as { items: TSchema }).items

/** Build a query schema; every property is optional in a query. */
export const QuerySchema = <T extends TProperties>(props: T) => Type.Object(props, { additionalProperties: false })
