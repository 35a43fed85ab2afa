import type { Database, SQLQueryBindings } from 'bun:sqlite'
import { decodeCursor, encodeCursor } from '../http/cursor'
import { LABEL_KIND, type LabelKind } from './labels'
import { epoch } from './time'

/** A page of a list endpoint: the DESIGN §3 envelope. */
export type Page<T> = { data: T[]; next_page: string | null }

/**
 * Builds one keyset-paginated list query, newest first. Filters are SQL fragments over the
 * table alias `t`; arrays travel as one JSON parameter (`json_each`), so a statement's text
 * depends only on which filters are present and stays in the prepared-statement cache.
 */
export class ListQuery {
  private readonly where: string[] = []
  private readonly params: SQLQueryBindings[] = []
  private labelFilter: [string, string][] = []

  constructor(
    private readonly table: string,
    private readonly tenant: string,
    private readonly kind: LabelKind,
  ) {}

  /** Adds `fragment` with its parameters, unless `value` is undefined. */
  when<V>(value: V | undefined, fragment: string, ...params: SQLQueryBindings[]): this {
    if (value === undefined) return this
    this.where.push(fragment)
    this.params.push(...params)
    return this
  }

  /** `column IN (values)` when values are given. */
  in(column: string, values: readonly (string | number)[] | undefined): this {
    return this.when(values, `${column} IN (SELECT value FROM json_each(?))`, JSON.stringify(values))
  }

  notIn(column: string, values: readonly (string | number)[] | undefined): this {
    return this.when(values, `${column} NOT IN (SELECT value FROM json_each(?))`, JSON.stringify(values))
  }

  /** created_before / created_after style bounds on an epoch-ms column. */
  range(column: string, before: string | undefined, after: string | undefined): this {
    this.when(before, `${column} < ?`, before === undefined ? 0 : epoch(before))
    return this.when(after, `${column} > ?`, after === undefined ? 0 : epoch(after))
  }

  labels(filter: Record<string, string> | undefined): this {
    if (filter) this.labelFilter = Object.entries(filter)
    return this
  }

  /**
   * Runs the query. With a label filter the walk starts at the first label's index in keyset
   * order (CROSS JOIN fixes that order), so a filtered page costs what an unfiltered one does.
   */
  page<Row, T>(db: Database, select: string, joins: string, page: string | undefined, perPage: number, shape: (row: Row) => T): Page<T> {
    const cursor = page === undefined ? undefined : decodeCursor(page)
    const where = [...this.where]
    const params: SQLQueryBindings[] = []
    let from: string
    let order: string
    const kind = LABEL_KIND[this.kind]
    if (this.labelFilter.length > 0) {
      const [[firstKey, firstValue], ...rest] = this.labelFilter as [[string, string], ...[string, string][]]
      from = `labels lf CROSS JOIN ${this.table} t ${joins}`
      params.push(kind, this.tenant, firstKey, firstValue)
      where.unshift('lf.kind = ? AND lf.tenant = ? AND lf.key = ? AND lf.value = ? AND t.seq = lf.ref')
      if (cursor !== undefined) where.splice(1, 0, 'lf.ref < ?')
      for (const _ of rest) where.push('EXISTS (SELECT 1 FROM labels l2 WHERE l2.kind = ? AND l2.tenant = ? AND l2.key = ? AND l2.value = ? AND l2.ref = t.seq)')
      order = 'lf.ref DESC'
      if (cursor !== undefined) params.push(cursor)
      params.push(...this.params)
      for (const [key, value] of rest) params.push(kind, this.tenant, key, value)
    } else {
      from = `${this.table} t ${joins}`
      where.unshift('t.tenant = ?')
      params.push(this.tenant)
      if (cursor !== undefined) {
        where.splice(1, 0, 't.seq < ?')
        params.push(cursor)
      }
      params.push(...this.params)
      order = 't.seq DESC'
    }
    const sql = `SELECT t.seq AS _seq, ${select} FROM ${from} WHERE ${where.join(' AND ')} ORDER BY ${order} LIMIT ?`
    params.push(perPage + 1)
    const rows = db.query(sql).all(...params) as (Row & { _seq: number })[]
    const more = rows.length > perPage
    if (more) rows.length = perPage
    return { data: rows.map(shape), next_page: more ? encodeCursor(rows[rows.length - 1]!._seq) : null }
  }
}
