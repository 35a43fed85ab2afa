import type { Database } from 'bun:sqlite'
import type { Pg } from '../postgres/pg'
import { line, type TextStats } from './copy-text'
import type { TableName } from './tables'

/** Told while a table (or the bodies) is copied, every few seconds, and once when it is done. */
export type Progress = (what: string, rows: number, done: boolean) => void

// What goes to the server in one write: large enough that a write costs little per row, small
// enough that a table of millions of rows never sits in memory.
const CHUNK_CHARS = 1 << 20
const PROGRESS_MS = 5_000

const quoted = (column: string) => `"${column}"`

/**
 * Copies table `from` of a SQLite database into table `to` of PostgreSQL with one COPY FROM
 * STDIN, in chunks of about a megabyte, seqs as they are (the identities are BY DEFAULT, so given
 * values are kept). Answers the rows copied, after checking the server stored as many.
 */
export async function copyTable(source: Database, tx: Pg, from: string, to: string, columns: string[], stats: TextStats, progress: Progress): Promise<number> {
  const list = columns.map(quoted).join(', ')
  // A statement of its own (prepare, not the cached query) keeps its cursor across the awaits.
  // Integers as bigint: a value past 2^53 is written as it is rather than rounded.
  const select = source.prepare<Record<string, unknown>, []>(`SELECT ${list} FROM ${from}`).safeIntegers(true)
  const copy = tx.unsafe(`COPY ${to} (${list}) FROM STDIN`)
  const writer = copy.writable().getWriter()
  let rows = 0
  let chunk = ''
  let lastReport = Date.now()
  try {
    for (const row of select.iterate()) {
      chunk += line(row, columns, stats)
      rows++
      if (chunk.length >= CHUNK_CHARS) {
        await writer.write(chunk)
        chunk = ''
        if (Date.now() - lastReport >= PROGRESS_MS) {
          lastReport = Date.now()
          progress(to, rows, false)
        }
      }
    }
    if (chunk) await writer.write(chunk)
    await writer.close()
  } catch (err) {
    await writer.abort(err).catch(() => {})
    throw new Error(`copying ${to} failed: ${(err as Error).message}`, { cause: err })
  } finally {
    select.finalize()
  }
  const stored = (await copy).count
  if (stored !== rows) throw new Error(`copying ${to} failed: ${rows} rows sent, PostgreSQL stored ${stored}`)
  progress(to, rows, true)
  return rows
}

/**
 * Moves every sequence that numbers a copied column past the largest value copied into it, so
 * the next row PostgreSQL numbers itself gets the seq SQLite would have given it (max + 1): the
 * identities, and sequences a column takes its default from (frontier_seq, which numbers every
 * run's frontier in PostgreSQL, where SQLite numbers each run's from its own). A sequence whose
 * columns got no row stays where it was.
 */
export async function advanceSequences(tx: Pg, tables: Map<TableName, string[]>): Promise<void> {
  const columns = (await tx`
    SELECT table_name, column_name, pg_get_serial_sequence(quote_ident(table_name), column_name) AS owned, column_default
    FROM information_schema.columns
    WHERE table_schema = current_schema() AND (is_identity = 'YES' OR column_default LIKE 'nextval(%')`) as {
    table_name: string
    column_name: string
    owned: string | null
    column_default: string | null
  }[]
  const highest = new Map<string, bigint>()
  for (const c of columns) {
    if (!tables.get(c.table_name as TableName)?.includes(c.column_name)) continue
    // A default of nextval('name'::regclass) names its sequence; an identity's is found by pg_get_serial_sequence.
    const sequence = c.owned ?? /^nextval\('(.+)'::regclass\)$/.exec(c.column_default ?? '')?.[1]?.replace(/''/g, "'")
    if (!sequence) continue
    const [row] = (await tx.unsafe(`SELECT max("${c.column_name}")::text AS max FROM ${c.table_name}`)) as { max: string | null }[]
    if (row?.max == null) continue
    const max = BigInt(row.max)
    if (max > (highest.get(sequence) ?? 0n)) highest.set(sequence, max)
  }
  for (const [sequence, max] of highest) await tx.unsafe('SELECT setval($1::regclass, $2::bigint)', [sequence, max.toString()])
}
