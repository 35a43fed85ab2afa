import type { FIELD_TYPES } from './field-schema'
import { toIsoDate } from './dates'

export type FieldType = (typeof FIELD_TYPES)[number]
/** A coerced value, or why the text does not coerce. */
export type Coerced = { ok: true; value: string | number | boolean } | { ok: false; message: string }

const BOOLEANS: Record<string, boolean> = { true: true, false: false, yes: true, no: false, '1': true, '0': false }
/** Characters that group thousands beside `,` and `.`: apostrophes (Swiss) and spaces (French, NBSP, thin). */
const GROUP_SPACES = new Set(["'", '\u2019', ' ', '\u00a0', '\u202f', '\u2009'])
const MINUS = new Set(['-', '\u2212'])

const isDigit = (c: string | undefined) => c !== undefined && c >= '0' && c <= '9'
const quoted = (text: string) => JSON.stringify(text.length > 80 ? `${text.slice(0, 77)}...` : text)

/**
 * Turns an extracted string into the field's type (DESIGN §6). `text` is non-empty; empty
 * values never reach here (they are "no value", not an invalid one).
 */
export function coerce(text: string, type: FieldType, baseUrl: string): Coerced {
  switch (type) {
    case 'string':
      return { ok: true, value: text }
    case 'number': {
      const n = parseNumber(text)
      return n === null ? { ok: false, message: `${quoted(text)} holds no number` } : { ok: true, value: n }
    }
    case 'integer': {
      const n = parseNumber(text)
      if (n === null) return { ok: false, message: `${quoted(text)} holds no number` }
      return Number.isSafeInteger(n) ? { ok: true, value: n } : { ok: false, message: `${quoted(text)} is not a whole number` }
    }
    case 'boolean': {
      const b = BOOLEANS[text.trim().toLowerCase()]
      return b === undefined ? { ok: false, message: `${quoted(text)} is not a boolean (true, false, yes, no, 1 or 0)` } : { ok: true, value: b }
    }
    case 'url': {
      const url = absoluteUrl(text, baseUrl)
      return url === null ? { ok: false, message: `${quoted(text)} is not an http(s) URL` } : { ok: true, value: url }
    }
    case 'date': {
      const date = toIsoDate(text)
      return typeof date === 'string' ? { ok: true, value: date } : { ok: false, message: date.problem }
    }
  }
}

/** `text` resolved against `base` (WHATWG URL serialization, fragment kept), when it is http(s). */
export function absoluteUrl(text: string, base: string): string | null {
  try {
    const url = new URL(text.trim(), base)
    return url.protocol === 'http:' || url.protocol === 'https:' ? url.href : null
  } catch {
    return null
  }
}

/**
 * The first decimal number in `text`, ignoring currency signs and thousands separators.
 * Separators: with both `,` and `.`, the last one is the decimal point (`$1,234.50`,
 * `1.234,50 €`). With one kind, repeated, it groups thousands (`1,234,567`, `1.234.567`).
 * A single `.` is a decimal point (`1.234` is 1.234); a single `,` groups thousands when three
 * digits follow it (`1,234` is 1234) and is a decimal comma otherwise (`12,5` is 12.5).
 * Spaces and apostrophes group only when exactly three digits follow (`1 234,50`, `1'234.50`).
 * A minus sign counts when it leads the number or its currency sign (`-$5`, `$-5`).
 */
export function parseNumber(text: string): number | null {
  let start = 0
  while (start < text.length && !isDigit(text[start]) && !(text[start] === '.' && isDigit(text[start + 1]) && !isDigit(text[start - 1]))) start++
  if (start === text.length) return null
  let end = start
  const seps: { at: number; char: string }[] = []
  while (end < text.length) {
    const c = text[end]!
    if (isDigit(c)) end++
    else if ((c === ',' || c === '.') && isDigit(text[end + 1])) seps.push({ at: end++ - start, char: c })
    else if (GROUP_SPACES.has(c) && threeDigitsAt(text, end + 1) && end > start) end++
    else break
  }
  const token = text.slice(start, end)
  const decimal = decimalSeparator(token, seps)
  if (decimal === undefined) return null
  let digits = ''
  for (let i = 0; i < token.length; i++) {
    const c = token[i]!
    if (isDigit(c)) digits += c
    else if (i === decimal) digits += '.'
  }
  const value = Number(digits.startsWith('.') ? `0${digits}` : digits)
  return Number.isFinite(value) ? (negative(text, start) ? -value : value) || 0 : null
}

const threeDigitsAt = (text: string, i: number) => isDigit(text[i]) && isDigit(text[i + 1]) && isDigit(text[i + 2]) && !isDigit(text[i + 3])

/** Index in the token of the decimal separator, null when there is none, undefined when mixed up. */
function decimalSeparator(token: string, seps: { at: number; char: string }[]): number | null | undefined {
  if (seps.length === 0) return null
  const last = seps[seps.length - 1]!
  const kinds = new Set(seps.map((s) => s.char))
  if (kinds.size === 2) return seps.slice(0, -1).every((s) => s.char !== last.char) ? last.at : undefined
  if (seps.length > 1) return null
  if (last.char === '.') return last.at
  return /^,\d{3}(?!\d)/.test(token.slice(last.at)) ? null : last.at
}

/** A minus directly before the number or before its currency sign, not inside a word (`SKU-12`). */
function negative(text: string, start: number): boolean {
  let i = start - 1
  while (i >= 0 && (/\p{Sc}/u.test(text[i]!) || text[i] === ' ') && start - i <= 4) i--
  return i >= 0 && MINUS.has(text[i]!) && (i === 0 || !/[\p{L}\p{N}]/u.test(text[i - 1]!))
}
