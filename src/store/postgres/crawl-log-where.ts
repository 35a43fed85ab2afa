import type { TimeRange } from '../crawl-log-types'
import { epoch } from '../time'

export type Param = string | number | null | readonly string[] | readonly number[]

/**
 * WHERE terms over one table alias (`t` for crawl_logs rows) with their parameters, as the
 * SQLite engine's Where (crawl-log-types.ts) builds them: `?` placeholders, numbered when the
 * statement is built (list.ts's numbered). One value is an equality (an ordered index walk);
 * several bind as one array.
 */
export class PgWhere {
  readonly terms: string[] = []
  readonly params: Param[] = []
  constructor(readonly alias = 't') {}
  add(term: string, ...params: Param[]): this {
    this.terms.push(term)
    this.params.push(...params)
    return this
  }
  in(column: string, values: readonly string[] | undefined): this {
    if (values === undefined) return this
    if (values.length === 1) return this.add(`${this.alias}.${column} = ?`, values[0]!)
    return this.add(`${this.alias}.${column} = ANY(?::text[])`, values)
  }
  range(r: TimeRange): this {
    if (r.occurred_before !== undefined) this.add(`${this.alias}.occurred_at < ?::int8`, epoch(r.occurred_before))
    if (r.occurred_after !== undefined) this.add(`${this.alias}.occurred_at > ?::int8`, epoch(r.occurred_after))
    return this
  }
  get sql() {
    return this.terms.join(' AND ')
  }
}
