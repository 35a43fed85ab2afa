/**
 * Rows in the text format of PostgreSQL's COPY: tab-separated fields, one row a line, `\N` for
 * null, and backslash escapes for the characters that would break a field or a line. Text
 * rather than binary: every column of the schema is text, bigint, integer or double precision,
 * whose text forms PostgreSQL parses back exactly.
 */

const ESCAPES: Record<string, string> = { '\\': '\\\\', '\t': '\\t', '\n': '\\n', '\r': '\\r' }
const SPECIAL = /[\\\t\n\r\0]/

/** What a field held that PostgreSQL cannot store as it was. */
export type TextStats = { nulCharacters: number }

/**
 * One field. A NUL character, which SQLite's TEXT holds and PostgreSQL's text cannot (a fetched
 * robots.txt may carry one), becomes U+FFFD and is counted, so one odd byte in a crawled body
 * does not stop the whole copy and the summary still says it happened.
 */
export function field(value: unknown, stats: TextStats): string {
  if (value === null || value === undefined) return '\\N'
  if (typeof value === 'bigint') return value.toString()
  if (typeof value === 'number') {
    // String() gives the shortest form that reads back as the same double; PostgreSQL spells the
    // three values that have no digits this way.
    if (Number.isFinite(value)) return String(value)
    return Number.isNaN(value) ? 'NaN' : value > 0 ? 'Infinity' : '-Infinity'
  }
  if (typeof value === 'string') {
    if (!SPECIAL.test(value)) return value
    return value.replace(/[\\\t\n\r\0]/g, (c) => {
      if (c !== '\0') return ESCAPES[c]!
      stats.nulCharacters++
      return '\uFFFD'
    })
  }
  throw new TypeError(`a ${value instanceof Uint8Array ? 'BLOB' : typeof value} value, which no column of the PostgreSQL schema takes`)
}

/** One row: its fields in `columns` order, then the newline. */
export function line(row: Record<string, unknown>, columns: readonly string[], stats: TextStats): string {
  let out = ''
  for (let i = 0; i < columns.length; i++) out += (i ? '\t' : '') + field(row[columns[i]!], stats)
  return out + '\n'
}
