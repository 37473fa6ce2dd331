import type { SqlExecutor } from '../sql.ts'
import type { Fields, RecordOf, Table } from '../table.ts'

/** Builds parameterised WHERE clauses for list queries (values are always bound, never inlined). */
export class Where {
  readonly #parts: string[] = []
  readonly params: unknown[] = []

  /** `fragment` uses `?` where the value goes, e.g. `status = ?`. */
  add(fragment: string, ...values: unknown[]): this {
    let text = fragment
    for (const value of values) {
      this.params.push(value)
      text = text.replace('?', `$${this.params.length}`)
    }
    this.#parts.push(text)
    return this
  }

  /** Adds the clause only when `value` is not undefined. */
  maybe(fragment: string, value: unknown): this {
    return value === undefined ? this : this.add(fragment, value)
  }

  get sql(): string {
    return this.#parts.length === 0 ? '' : ` WHERE ${this.#parts.join(' AND ')}`
  }

  /** LIMIT/OFFSET for a 0-based page. */
  page(page: number, pageSize: number): string {
    this.params.push(pageSize, page * pageSize)
    return ` LIMIT $${this.params.length - 1} OFFSET $${this.params.length}`
  }
}

/** One page of the records matching `where`, oldest first, with the total count across all pages. */
export async function selectPage<F extends Fields>(db: SqlExecutor, table: Table<F>, where: Where, page: number, pageSize: number): Promise<{ total: number; data: Array<RecordOf<F>> }> {
  const [count] = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${table.name}${where.sql}`, where.params)
  const rows = await db.query(`SELECT ${table.columns} FROM ${table.name}${where.sql} ORDER BY created_at, id${where.page(page, pageSize)}`, where.params)
  return { total: count?.n ?? 0, data: rows.map((row) => table.toRecord(row)) }
}
