import type { Database, SQLQueryBindings, Statement } from 'bun:sqlite'

/** Rows per multi-row statement: 32 rows of up to 16 parameters stay well under SQLite's limit. */
export const ROWS_PER_STATEMENT = 32

/**
 * A writer of rows in multi-row statements: `sqlFor(n)` is the statement for n rows, and each
 * call writes its rows in as few statements as it has chunks of ROWS_PER_STATEMENT (one prepared
 * statement kept for full chunks, the query cache for the rest). A batch's rows cost less so
 * than a statement each (decisions 101 and 110). `push` appends one row's parameters.
 */
export function multiRowWriter<T>(db: Database, sqlFor: (rows: number) => string, push: (row: T, params: SQLQueryBindings[]) => void) {
  let full: Statement | undefined
  return (rows: readonly T[]): void => {
    const params: SQLQueryBindings[] = []
    let n = 0
    const flush = () => {
      if (n === ROWS_PER_STATEMENT) (full ??= db.prepare(sqlFor(n))).run(...params)
      else db.query(sqlFor(n)).run(...params)
      params.length = 0
      n = 0
    }
    for (const row of rows) {
      push(row, params)
      if (++n === ROWS_PER_STATEMENT) flush()
    }
    if (n > 0) flush()
  }
}
