import type { Database, SQLQueryBindings } from 'bun:sqlite'
import { LABEL_KIND, type LabelKind } from './labels'
import { epoch } from './time'

/**
 * Bound scalars are cast to their column's type. bun:sqlite binds JS strings in a form SQLite
 * re-converts on every index comparison, and numbers as doubles: measured on a 100k-link
 * tenant, an 11-row page took 55 µs with plain `?` for tenant and LIMIT, 28 µs with the casts.
 */
export const TEXT = 'CAST(? AS TEXT)'
export const INT = 'CAST(? AS INTEGER)'

/**
 * A page of a list: its rows, and the key of the last one when more follow (the `after` of the
 * next page). The key means nothing outside the store; the API wraps it in a cursor.
 */
export type Page<T> = { data: T[]; next: number | null }

export const emptyPage = <T>(): Page<T> => ({ data: [], next: null })

/**
 * Runs a keyset page statement (it asks for `perPage + 1` rows and selects the key as
 * `_seq`): the first `perPage` rows, shaped, and the key of the last when there are more.
 */
export function keysetPage<Row, T>(db: Database, built: { sql: string; params: SQLQueryBindings[] } | null, perPage: number, shape: (row: Row) => T): Page<T> {
  if (built === null) return emptyPage()
  const rows = db.query(built.sql).all(...built.params) as (Row & { _seq: number })[]
  const more = rows.length > perPage
  if (more) rows.length = perPage
  return { data: rows.map(shape), next: more ? rows[rows.length - 1]!._seq : null }
}

/** A label filter term reads at most this many index rows to judge which label is rarest. */
const LABEL_PROBE = 1000

/**
 * Builds one keyset-paginated list query, newest first (by `seq`). Filters are SQL fragments
 * over the table alias `t`; value lists travel as one JSON parameter (`json_each`), so a
 * statement's text depends only on which filters are present and stays in the statement cache.
 *
 * How a page is found, so that it costs O(log n + page) however deep (design.md §3):
 * - no selective filter: walk the (tenant, seq) index backwards from the cursor;
 * - a label filter: walk the rarest label's index rows in seq order (CROSS JOIN fixes it);
 * - a selective filter (a bounded list of ids, hashes or names, at most 500 values): look those
 *   rows up by their own index and sort the few matches (`ORDER BY +t.seq` stops SQLite from
 *   preferring the ordered tenant walk, which would test every row of the tenant).
 */
export class ListQuery {
  private readonly where: string[] = []
  private readonly params: SQLQueryBindings[] = []
  private labelFilter: [string, string][] = []
  private selective = false
  /** Parent seqs (already resolved for this tenant) drive the lookup. */
  private byParent = false

  constructor(
    private readonly table: string,
    private readonly tenant: string,
    /** The label kind of the table's rows; tables without labels leave it out. */
    private readonly kind?: LabelKind,
  ) {}

  /** Adds `fragment` with its parameters, unless `value` is undefined. */
  when<V>(value: V | undefined, fragment: string, ...params: SQLQueryBindings[]): this {
    if (value === undefined) return this
    this.where.push(fragment)
    this.params.push(...params)
    return this
  }

  /**
   * `column IN (values)` when values are given. `indexed`: the column leads an index under
   * the tenant, so these few values should drive the lookup.
   */
  in(column: string, values: readonly (string | number)[] | undefined, indexed = false): this {
    if (values !== undefined && indexed) this.selective = true
    return this.when(values, `${column} IN (SELECT value FROM json_each(${TEXT}))`, JSON.stringify(values))
  }

  notIn(column: string, values: readonly (string | number)[] | undefined): this {
    return this.when(values, `${column} NOT IN (SELECT value FROM json_each(${TEXT}))`, JSON.stringify(values))
  }

  /**
   * Rows of a parent (a host's links, a job's runs), the parent's seqs found first. One parent
   * is an ordered walk of its (parent, seq) index; several are looked up and sorted.
   */
  parents(column: string, seqs: readonly number[] | undefined): this {
    if (seqs === undefined) return this
    this.byParent = true
    if (seqs.length === 1) return this.when(seqs, `${column} = ${INT}`, seqs[0]!)
    return this.in(column, seqs, true)
  }

  /** created_before / created_after style bounds on an epoch-ms column. */
  range(column: string, before: string | undefined, after: string | undefined): this {
    this.when(before, `${column} < ${INT}`, before === undefined ? 0 : epoch(before))
    return this.when(after, `${column} > ${INT}`, after === undefined ? 0 : epoch(after))
  }

  labels(filter: Record<string, string> | undefined): this {
    if (filter && !this.kind) throw new Error(`${this.table} rows have no labels`)
    if (filter) this.labelFilter = Object.entries(filter)
    return this
  }

  page<Row, T>(db: Database, select: string, after: number | undefined, perPage: number, shape: (row: Row) => T): Page<T> {
    return keysetPage(db, this.build(db, select, after, perPage), perPage, shape)
  }

  /**
   * Seqs of every matching row, unpaged: for resolving a bounded filter (ids, hashes, domains,
   * at most MAX_FILTER_VALUES of them) into parent seqs.
   */
  seqs(db: Database): number[] {
    const built = this.build(db, 't.seq', undefined, 1_000_000)
    return built === null ? [] : (db.query(built.sql).all(...built.params) as { _seq: number }[]).map((r) => r._seq)
  }

  /** The statement a page runs (exposed so tests can EXPLAIN it); null when nothing can match. */
  build(db: Database, select: string, cursor: number | undefined, perPage: number): { sql: string; params: SQLQueryBindings[] } | null {
    const kind = this.kind ? LABEL_KIND[this.kind] : 0
    const labels = this.selective ? this.labelFilter : this.rarestFirst(db, kind)
    if (labels === null) return null
    const where: string[] = []
    const params: SQLQueryBindings[] = []
    let from = `${this.table} t`
    let order = this.selective ? '+t.seq DESC' : 't.seq DESC'
    let rest = labels
    if (labels.length > 0 && !this.selective) {
      const [key, value] = labels[0]!
      rest = labels.slice(1)
      from = `labels lf CROSS JOIN ${this.table} t`
      where.push(`lf.kind = ${INT} AND lf.tenant = ${TEXT} AND lf.key = ${TEXT} AND lf.value = ${TEXT} AND t.seq = lf.ref`)
      params.push(kind, this.tenant, key, value)
      if (cursor !== undefined) {
        where.push(`lf.ref < ${INT}`)
        params.push(cursor)
      }
      order = 'lf.ref DESC'
    } else {
      // The parent index has no tenant column; a usable tenant term would tempt SQLite into the
      // (tenant, seq) walk instead, so it is made unindexable (unary +).
      where.push(this.byParent ? `+t.tenant = ${TEXT}` : `t.tenant = ${TEXT}`)
      params.push(this.tenant)
      if (cursor !== undefined) {
        where.push(`t.seq < ${INT}`)
        params.push(cursor)
      }
    }
    where.push(...this.where)
    params.push(...this.params)
    for (const [key, value] of rest) {
      where.push(`EXISTS (SELECT 1 FROM labels l2 WHERE l2.kind = ${INT} AND l2.tenant = ${TEXT} AND l2.key = ${TEXT} AND l2.value = ${TEXT} AND l2.ref = t.seq)`)
      params.push(kind, this.tenant, key, value)
    }
    const sql = `SELECT t.seq AS _seq, ${select} FROM ${from} WHERE ${where.join(' AND ')} ORDER BY ${order} LIMIT ${INT}`
    params.push(perPage + 1)
    return { sql, params }
  }

  /**
   * Orders several label terms rarest first (each probe reads at most LABEL_PROBE index rows),
   * so the walk leads with the one that skips least; null when one matches nothing at all.
   */
  private rarestFirst(db: Database, kind: number): [string, string][] | null {
    if (this.labelFilter.length < 2) return this.labelFilter
    const probe = db.query(`SELECT count(*) AS n FROM (SELECT 1 FROM labels WHERE kind = ${INT} AND tenant = ${TEXT} AND key = ${TEXT} AND value = ${TEXT} LIMIT ${LABEL_PROBE})`)
    const counted = this.labelFilter.map((pair) => ({ pair, n: (probe.get(kind, this.tenant, pair[0], pair[1]) as { n: number }).n }))
    if (counted.some((c) => c.n === 0)) return null
    return counted.sort((a, b) => a.n - b.n).map((c) => c.pair)
  }
}
