import type { Database, SQLQueryBindings, Statement } from 'bun:sqlite'

/** Rows per multi-row statement: 32 rows of up to 16 parameters stay well under SQLite's limit. */
export const ROWS_PER_STATEMENT = 32

/**
 * A writer of rows in multi-row statements `<head> VALUES <row>, <row>, …`: each call writes its
 * rows in as few statements as it has chunks of ROWS_PER_STATEMENT (one prepared statement kept
 * for full chunks, the query cache for the rest). A batch's rows cost less so than a statement
 * each (decisions 101 and 110). `push` appends one row's parameters; `context` is what the call
 * shares among its rows (the run a batch of page records belongs to, say).
 */
export function multiRowWriter<T, C = undefined>(db: Database, head: string, row: string, push: (row: T, params: SQLQueryBindings[], context: C) => void) {
  const sqlFor = (n: number) => `${head} VALUES ${Array(n).fill(row).join(', ')}`
  let full: Statement | undefined
  return (rows: readonly T[], context: C): void => {
    const params: SQLQueryBindings[] = []
    let n = 0
    const flush = () => {
      if (n === ROWS_PER_STATEMENT) (full ??= db.prepare(sqlFor(n))).run(...params)
      else db.query(sqlFor(n)).run(...params)
      params.length = 0
      n = 0
    }
    for (const r of rows) {
      push(r, params, context)
      if (++n === ROWS_PER_STATEMENT) flush()
    }
    if (n > 0) flush()
  }
}
