import { LABEL_KIND, type LabelKind } from '../labels'
import { emptyPage, type Page } from '../list'
import { epoch } from '../time'
import { numeric, type Pg } from './pg'

type Param = string | number | boolean | null | readonly string[] | readonly number[]

/**
 * One keyset-paginated list query, newest first by `seq`, as the SQLite engine's ListQuery
 * builds it (src/store/list.ts). Fragments are written with `?` for their parameters and
 * numbered when built; a value list binds as one array parameter, so a statement's text depends
 * only on which filters are present and PostgreSQL keeps one prepared plan for it. Label terms
 * are EXISTS probes of the labels index: PostgreSQL's statistics choose the order the SQLite
 * engine has to choose by hand.
 */
export class PgListQuery {
  private readonly where: string[] = []
  private readonly params: Param[] = []
  private labelFilter: [string, string][] = []

  constructor(
    private readonly table: string,
    private readonly tenant: string,
    /** The label kind of the table's rows; tables without labels leave it out. */
    private readonly kind?: LabelKind,
  ) {}

  /** Adds `fragment` with its parameters, unless `value` is undefined. */
  when<V>(value: V | undefined, fragment: string, ...params: Param[]): this {
    if (value === undefined) return this
    this.where.push(fragment)
    this.params.push(...params)
    return this
  }

  /** `column IN (values)` when values are given. */
  in(column: string, values: readonly (string | number)[] | undefined): this {
    if (values === undefined) return this
    return this.when(values, `${column} = ANY(?::${arrayType(values)})`, values as Param)
  }

  notIn(column: string, values: readonly (string | number)[] | undefined): this {
    if (values === undefined) return this
    return this.when(values, `NOT (${column} = ANY(?::${arrayType(values)}))`, values as Param)
  }

  /** Rows of a parent (a host's links, a job's runs), the parent's seqs found first. */
  parents(column: string, seqs: readonly number[] | undefined): this {
    if (seqs === undefined) return this
    if (seqs.length === 1) return this.when(seqs, `${column} = ?::bigint`, seqs[0]!)
    return this.when(seqs, `${column} = ANY(?::bigint[])`, seqs)
  }

  /** created_before / created_after style bounds on an epoch-ms column. */
  range(column: string, before: string | undefined, after: string | undefined): this {
    this.when(before, `${column} < ?::bigint`, before === undefined ? 0 : epoch(before))
    return this.when(after, `${column} > ?::bigint`, after === undefined ? 0 : epoch(after))
  }

  labels(filter: Record<string, string> | undefined): this {
    if (filter && !this.kind) throw new Error(`${this.table} rows have no labels`)
    if (filter) this.labelFilter = Object.entries(filter)
    return this
  }

  async page<Row, T>(sql: Pg, select: string, after: number | undefined, perPage: number, shape: (row: Row) => T): Promise<Page<T>> {
    const built = this.build(select, after, perPage + 1)
    const rows = numeric<Row & { _seq: number }>(await sql.unsafe(built.text, built.params as unknown[]))
    if (rows.length === 0) return emptyPage()
    const more = rows.length > perPage
    if (more) rows.length = perPage
    return { data: rows.map(shape), next: more ? rows[rows.length - 1]!._seq : null }
  }

  /** Seqs of every matching row, unpaged: for resolving a bounded filter into parent seqs. */
  async seqs(sql: Pg): Promise<number[]> {
    const built = this.build('1', undefined, null)
    return numeric<{ _seq: number }>(await sql.unsafe(built.text, built.params as unknown[])).map((r) => r._seq)
  }

  /** The statement a page runs, with its parameters numbered. */
  build(select: string, cursor: number | undefined, limit: number | null): { text: string; params: Param[] } {
    const where = ['t.tenant = ?']
    const params: Param[] = [this.tenant]
    if (cursor !== undefined) {
      where.push('t.seq < ?::bigint')
      params.push(cursor)
    }
    where.push(...this.where)
    params.push(...this.params)
    const kind = this.kind ? LABEL_KIND[this.kind] : 0
    for (const [key, value] of this.labelFilter) {
      where.push('EXISTS (SELECT 1 FROM labels l WHERE l.kind = ?::int AND l.tenant = ? AND l.key = ? AND l.value = ? AND l.ref = t.seq)')
      params.push(kind, this.tenant, key, value)
    }
    let text = `SELECT t.seq AS _seq, ${select} FROM ${this.table} t WHERE ${where.join(' AND ')} ORDER BY t.seq DESC`
    if (limit !== null) {
      text += ' LIMIT ?::int'
      params.push(limit)
    }
    return { text: numbered(text), params }
  }
}

const arrayType = (values: readonly (string | number)[]) => (values.length > 0 && typeof values[0] === 'number' ? 'bigint[]' : 'text[]')

/** `?` placeholders as `$1`, `$2`, …, in order (fragments here hold no `?` in literals). */
export function numbered(text: string): string {
  let n = 0
  return text.replace(/\?/g, () => `$${++n}`)
}
