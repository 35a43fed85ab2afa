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
 * Turns an extracted string into the field's type (docs/extract.md, "Types"). `text` is non-empty; empty
 * values never reach here (they are "no value", not an invalid one). `baseUrl` is the
 * document's base URL, or NO_DOCUMENT_URL when its address is not known.
 */
export function coerce(text: string, type: FieldType, baseUrl: string): Coerced {
  switch (type) {
    case 'string':
      return { ok: true, value: text }
    case 'number': {
      const n = readNumber(text)
      return 'value' in n ? { ok: true, value: n.value } : { ok: false, message: numberProblem(text, n) }
    }
    case 'integer': {
      const n = readNumber(text)
      if (!('value' in n)) return { ok: false, message: numberProblem(text, n) }
      if (!Number.isInteger(n.value)) return { ok: false, message: `${quoted(text)} is not a whole number` }
      if (!Number.isSafeInteger(n.value)) return { ok: false, message: `${quoted(text)} is too large to be exact (integers must be within ±${Number.MAX_SAFE_INTEGER})` }
      return { ok: true, value: n.value }
    }
    case 'boolean': {
      const b = BOOLEANS[text.trim().toLowerCase()]
      return b === undefined ? { ok: false, message: `${quoted(text)} is not a boolean (true, false, yes, no, 1 or 0)` } : { ok: true, value: b }
    }
    case 'url': {
      const url = absoluteUrl(text, baseUrl)
      if (url !== null) return { ok: true, value: url }
      // Without a document URL a relative reference has nothing to resolve against; taking
      // some origin instead would hand out an address the page never linked to.
      if (!isHttp(baseUrl) && !SCHEME.test(text.trim())) return { ok: false, message: `${quoted(text)} is relative, and there is no page URL or absolute <base href> to resolve it against` }
      return { ok: false, message: `${quoted(text)} is not an http(s) URL` }
    }
    case 'date': {
      const date = toIsoDate(text)
      return typeof date === 'string' ? { ok: true, value: date } : { ok: false, message: date.problem }
    }
  }
}

/**
 * The base URL of a document whose address is not known (HTML's own URL for such a document).
 * Only absolute URLs resolve against it, so an absolute `<base href>` still works (baseOf) and
 * every relative `url` value is reported, never given an origin the page did not state.
 */
export const NO_DOCUMENT_URL = 'about:blank'

/** A URL scheme at the start: what makes a reference absolute rather than relative (`//host/x` has none). */
const SCHEME = /^[a-z][a-z\d+.-]*:/i
const isHttp = (url: string) => url.startsWith('https:') || url.startsWith('http:')

/** `text` resolved against `base` (WHATWG URL serialization, fragment kept), when it is http(s). */
export function absoluteUrl(text: string, base: string): string | null {
  try {
    const url = new URL(text.trim(), base)
    return url.protocol === 'http:' || url.protocol === 'https:' ? url.href : null
  } catch {
    return null
  }
}

/** A number read from text, or why none was: no digits, separators that make no number, or beyond a double. */
type Read = { value: number } | { problem: 'none' } | { problem: 'separators' | 'range'; token: string }

function numberProblem(text: string, n: Exclude<Read, { value: number }>): string {
  if (n.problem === 'none') return `${quoted(text)} holds no number`
  if (n.problem === 'range') return `${quoted(text)} is out of range (beyond ±1.8e308)`
  const whose = n.token === text.trim() ? 'its separators' : `the separators of ${quoted(n.token)}`
  return `${quoted(text)} holds no number: ${whose} do not group digits in thousands`
}

/**
 * The first decimal number in `text`, ignoring currency signs and thousands separators; null
 * when there is none (see readNumber).
 */
export function parseNumber(text: string): number | null {
  const n = readNumber(text)
  return 'value' in n ? n.value : null
}

/**
 * The first decimal number in `text`, ignoring currency signs and thousands separators.
 * Separators: with both `,` and `.`, the last one is the decimal point (`$1,234.50`,
 * `1.234,50 €`). With one kind, repeated, it groups thousands (`1,234,567`, `1.234.567`).
 * Grouping separators must group: three digits between them and one to three before the first
 * (`1,234,567`), or the Indian lakh and crore grouping (`1,00,000`, `12,34,56,789`); `1.2.3`,
 * `v2.0.1` and `05.01.2024` are not numbers.
 * A single `.` is a decimal point (`1.234` is 1.234); a single `,` groups thousands when three
 * digits follow it (`1,234` is 1234) and is a decimal comma otherwise (`12,5` is 12.5).
 * Spaces and apostrophes group only when exactly three digits follow (`1 234,50`, `1'234.50`).
 * A minus sign counts when it leads the number or its currency sign (`-$5`, `$-5`).
 */
function readNumber(text: string): Read {
  let start = 0
  while (start < text.length && !isDigit(text[start]) && !(text[start] === '.' && isDigit(text[start + 1]) && !isDigit(text[start - 1]))) start++
  if (start === text.length) return { problem: 'none' }
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
  if (decimal === undefined || (seps.length > 1 && !grouped(token, seps, decimal))) return { problem: 'separators', token }
  let digits = ''
  for (let i = 0; i < token.length; i++) {
    const c = token[i]!
    if (isDigit(c)) digits += c
    else if (i === decimal) digits += '.'
  }
  const value = Number(digits.startsWith('.') ? `0${digits}` : digits)
  if (!Number.isFinite(value)) return { problem: 'range', token }
  return { value: (negative(text, start) ? -value : value) || 0 }
}

/**
 * Whether the `,`/`.` separators before the decimal one group digits as people write them:
 * 1-3 digits, then groups of three (`12,345,678`), or 1-2 digits, groups of two and a last
 * group of three (Indian: `1,23,45,678`).
 */
function grouped(token: string, seps: { at: number; char: string }[], decimal: number | null): boolean {
  const cuts = seps.filter((s) => s.at !== decimal).map((s) => s.at)
  if (cuts.length === 0) return true
  const digitsIn = (from: number, to: number) => {
    let n = 0
    for (let i = from; i < to; i++) if (isDigit(token[i])) n++
    return n
  }
  const sizes = cuts.map((at, i) => digitsIn(i === 0 ? 0 : cuts[i - 1]! + 1, at))
  sizes.push(digitsIn(cuts[cuts.length - 1]! + 1, decimal ?? token.length))
  const [first, ...rest] = sizes as [number, ...number[]]
  const last = rest[rest.length - 1]
  if (first >= 1 && first <= 3 && rest.every((n) => n === 3)) return true
  return first >= 1 && first <= 2 && last === 3 && rest.slice(0, -1).every((n) => n === 2)
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
