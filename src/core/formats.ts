import { FormatRegistry } from '@sinclair/typebox'

/** String formats our schemas use; TypeBox knows none by itself. Registered once at import. */
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i
// RFC 3339 date-time: a date, a time and a zone (Z or ±hh:mm); fractions allowed.
const DATE_TIME = /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/

export const isUuid = (value: string): boolean => UUID.test(value)

export function isDateTime(value: string): boolean {
  return DATE_TIME.test(value) && !Number.isNaN(Date.parse(value))
}

export function isHttpUrl(value: string): boolean {
  try {
    const url = new URL(value)
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.hostname !== ''
  } catch {
    return false
  }
}

if (!FormatRegistry.Has('uuid')) FormatRegistry.Set('uuid', (v) => UUID.test(v))
if (!FormatRegistry.Has('date-time')) FormatRegistry.Set('date-time', isDateTime)
if (!FormatRegistry.Has('uri')) FormatRegistry.Set('uri', isHttpUrl)
if (!FormatRegistry.Has('regex')) FormatRegistry.Set('regex', () => true) // checked by re2js where used
