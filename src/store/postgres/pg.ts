import type { SQL } from 'bun'

/** A PostgreSQL client: the pool, or a transaction begun on it (both are tagged templates). */
export type Pg = SQL

// Type OIDs of the columns Bun's client answers as strings: int8 (every seq, time and counter
// here) and numeric (what sum() of an int8 gives). Every such value in this schema is below 2^53.
const INT8 = 20
const NUMERIC = 1700

type Result = Record<string, unknown>[] & { columns?: { name: string; type: number }[] }

/**
 * Rows with their int8 and numeric columns as numbers, as the SQLite engine answers them. The
 * client answers int8 as a string (it may pass 2^53); no value this schema holds does.
 */
export function numeric<T>(result: unknown): T[] {
  const rows = result as Result
  const names = rows.columns?.filter((c) => c.type === INT8 || c.type === NUMERIC).map((c) => c.name)
  if (names?.length) {
    for (const row of rows) {
      for (const name of names) {
        const v = row[name]
        if (typeof v === 'string') row[name] = Number(v)
        else if (typeof v === 'bigint') row[name] = Number(v)
      }
    }
  }
  return rows as unknown as T[]
}

/** The first row (numbers as numeric() makes them), or null. */
export function first<T>(result: unknown): T | null {
  return numeric<T>(result)[0] ?? null
}

/** Whether a query failed on a unique constraint (SQLSTATE 23505). */
export function isUniqueViolation(err: unknown): boolean {
  return typeof err === 'object' && err !== null && (err as { errno?: unknown }).errno === '23505'
}

/** TEMPORARY while the engine is being written: a part whose every method rejects. */
export function notWritten<T>(name: string): T {
  return new Proxy({}, { get: (_, p) => () => Promise.reject(new Error(`${name}.${String(p)}: not written yet`)) }) as T
}
