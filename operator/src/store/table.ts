/**
 * One definition per stored table. A repository declares its table once (each field's record name,
 * column, kind, whether it is inserted or patched, its insert default) and derives from it the
 * record type, the SELECT list, the row → record mapping, INSERT lists and patch SET clauses, so a
 * column added once reaches every query. Table and column names come only from these definitions
 * (never from input); values are always bound parameters.
 */
import { iso, isoRequired, json } from './rows.ts'
import type { SqlExecutor } from './sql.ts'

/**
 * How a field's value crosses the driver boundary:
 *  - `text`, `boolean`: as is;
 *  - `number`: numeric and bigint columns come back as strings from pg and as numbers from PGlite,
 *    so strings are read with `Number`;
 *  - `json`: sent as `JSON.stringify(value)` with a `::jsonb` cast (pg would turn a JS array into
 *    a PostgreSQL array literal otherwise), read back as parsed by both drivers; null in a nullable
 *    field is SQL NULL;
 *  - `timestamp`: sent with a `::timestamptz` cast, read back as an ISO-8601 string.
 */
export type FieldKind = 'text' | 'number' | 'boolean' | 'json' | 'timestamp'

/**
 * `no`: set by the database (or by other queries); `yes`: given on insert; `defaulted`: given or
 * defaulted; `database`: given or the column's own DEFAULT; `generated`: always made on insert
 * (ids), never taken from the input.
 */
type InsertMode = 'no' | 'yes' | 'defaulted' | 'database' | 'generated'

interface FieldSpec {
  readonly kind: FieldKind
  readonly column: string | undefined
  readonly nullable: boolean
  readonly insert: InsertMode
  readonly patch: boolean
  /** False: written, never read back (secrets' hashes); not in the SELECT list or the record. */
  readonly selected: boolean
  /** A value, or a function called once per insert. */
  readonly insertDefault: unknown
}

/** One field of a table; `T` is the record's value type, the other parameters feed the derived types. */
export class Field<T, I extends InsertMode = 'no', P extends boolean = false, S extends boolean = true> {
  declare readonly valueType: T
  declare readonly insertMode: I
  declare readonly patchable: P
  declare readonly selectable: S
  readonly spec: FieldSpec

  constructor(spec: FieldSpec) {
    this.spec = spec
  }

  /**
   * The record value may be null (timestamps map to null instead of an error; inserts default to
   * null). Null is declared here, never in `T`: the runtime reads this flag, not the type.
   */
  nullable(): Field<T | null, I, P, S> {
    return new Field({ ...this.spec, nullable: true })
  }

  /** Column name when it is not the snake_case of the record name. */
  column(name: string): Field<T, I, P, S> {
    return new Field({ ...this.spec, column: name })
  }

  /** Written by `insert`; with a default (value or function) the input may leave it out. */
  insert(): Field<T, 'yes', P, S>
  insert(defaultValue: T | (() => T)): Field<T, 'defaulted', P, S>
  insert(...defaultValue: unknown[]): Field<T, 'yes' | 'defaulted', P, S> {
    return new Field({ ...this.spec, insert: defaultValue.length > 0 ? 'defaulted' : 'yes', insertDefault: defaultValue[0] })
  }

  /** Written by `insert` when given; otherwise the column's DEFAULT (the database's clock, say). */
  insertOrDefault(): Field<T, 'database', P, S> {
    return new Field({ ...this.spec, insert: 'database' })
  }

  /** Made by `make` on every insert, whatever the input holds (a spread record's id is never reused). */
  generated(make: () => T): Field<T, 'generated', P, S> {
    return new Field({ ...this.spec, insert: 'generated', insertDefault: make })
  }

  /** May be changed by `set` (a partial update). */
  patch(): Field<T, I, true, S> {
    return new Field({ ...this.spec, patch: true })
  }

  /** Written by inserts and patches but never selected, so no record carries it (a token's hash). */
  hidden(): Field<T, I, P, false> {
    return new Field({ ...this.spec, selected: false })
  }
}

function field<T>(kind: FieldKind): Field<T> {
  return new Field({ kind, column: undefined, nullable: false, insert: 'no', patch: false, selected: true, insertDefault: undefined })
}

export const text = <T extends string = string>(): Field<T> => field<T>('text')
export const number = (): Field<number> => field<number>('number')
export const boolean = (): Field<boolean> => field<boolean>('boolean')
export const jsonb = <T>(): Field<T> => field<T>('json')
/** Stored as timestamptz; an ISO-8601 string in records and inputs. */
export const timestamp = (): Field<string> => field<string>('timestamp')

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type AnyField = Field<any, InsertMode, boolean, boolean>
export type Fields = Record<string, AnyField>

/** The record a table's rows map to (hidden fields left out). */
export type RecordOf<F extends Fields> = { [K in keyof F as F[K]['selectable'] extends true ? K : never]: F[K]['valueType'] }

type InsertKeys<F extends Fields> = { [K in keyof F]: F[K]['insertMode'] extends 'no' | 'generated' ? never : K }[keyof F]
type RequiredInsertKeys<F extends Fields> = {
  [K in InsertKeys<F>]: F[K]['insertMode'] extends 'yes' ? (null extends F[K]['valueType'] ? never : K) : never
}[InsertKeys<F>]

/** What `insert` takes: fields with neither a default nor null as a value are required. */
export type InsertOf<F extends Fields> =
  & { [K in RequiredInsertKeys<F>]: F[K]['valueType'] }
  & { [K in Exclude<InsertKeys<F>, RequiredInsertKeys<F>>]?: F[K]['valueType'] | undefined }

type PatchKeys<F extends Fields> = { [K in keyof F]: F[K]['patchable'] extends true ? K : never }[keyof F]

/** What `set` takes: any patchable field; undefined leaves the column as it is, null clears it. */
export type PatchOf<F extends Fields> = { [K in PatchKeys<F>]?: F[K]['valueType'] | undefined }

/** A parameterised SQL fragment and its values. */
export interface Bound {
  sql: string
  params: unknown[]
}

const snake = (name: string): string => name.replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`)

interface Column {
  readonly key: string
  readonly name: string
  readonly spec: FieldSpec
}

export class Table<F extends Fields> {
  readonly name: string
  readonly fields: F
  /** The SELECT (and RETURNING) list: every column of the definition, in its order. */
  readonly columns: string
  readonly #columns: readonly Column[]
  /** The columns read back (every column but hidden ones). */
  readonly #selected: readonly Column[]
  readonly #hasUpdatedAt: boolean

  constructor(name: string, fields: F) {
    this.name = name
    this.fields = fields
    this.#columns = Object.entries(fields).map(([key, value]) => ({ key, name: value.spec.column ?? snake(key), spec: value.spec }))
    this.#selected = this.#columns.filter((column) => column.spec.selected)
    this.columns = this.#selected.map((column) => column.name).join(', ')
    this.#hasUpdatedAt = this.#columns.some((column) => column.name === 'updated_at')
  }

  /** `SELECT <every column> FROM <table>`, for a query to append its WHERE/ORDER BY to. */
  get select(): string {
    return `SELECT ${this.columns} FROM ${this.name}`
  }

  /** The records of `SELECT … FROM <table> <rest>`; `rest` holds only placeholders, never values. */
  async rows(db: SqlExecutor, rest: string, params: readonly unknown[]): Promise<Array<RecordOf<F>>> {
    const rows = await db.query(`${this.select} ${rest}`, params)
    return rows.map((row) => this.toRecord(row))
  }

  /** The first record of `SELECT … FROM <table> <rest>`, or null. */
  async row(db: SqlExecutor, rest: string, params: readonly unknown[]): Promise<RecordOf<F> | null> {
    const [row] = await db.query(`${this.select} ${rest}`, params)
    return row ? this.toRecord(row) : null
  }

  /** Inserts one row and returns its record; `onConflict`: an optional `ON CONFLICT … DO UPDATE` (a row always comes back). */
  async create(db: SqlExecutor, values: InsertOf<F>, onConflict = ''): Promise<RecordOf<F>> {
    const insert = this.insert(values)
    const [row] = await db.query(`${insert.sql}${onConflict ? ` ${onConflict}` : ''} RETURNING ${this.columns}`, insert.params)
    return this.toRecord(row!)
  }

  /** The same definition over another table of identical columns (a family such as MCP and agent servers). */
  renamed(name: string): Table<F> {
    return new Table(name, this.fields)
  }

  /**
   * The SELECT list qualified by a table alias, for joins; with `prefix`, each column is renamed
   * `<prefix><column>` so two tables' columns can share one row (read back with `toRecord(row, prefix)`).
   */
  columnsOf(alias: string, prefix = ''): string {
    return this.#selected.map((column) => `${alias}.${column.name}${prefix ? ` AS ${prefix}${column.name}` : ''}`).join(', ')
  }

  /** The column of a field (for hand-written WHERE and ORDER BY clauses). */
  column(key: keyof F & string): string {
    return this.#columns.find((column) => column.key === key)!.name
  }

  /** Maps a row (as either driver returns it) to the record; `prefix` as given to `columnsOf`. */
  toRecord(row: object, prefix = ''): RecordOf<F> {
    const source = row as Record<string, unknown>
    const record: Record<string, unknown> = {}
    for (const { key, name, spec } of this.#selected) record[key] = read(spec, source[`${prefix}${name}`])
    return record as RecordOf<F>
  }

  /**
   * `INSERT INTO table (columns) VALUES (placeholders)` over every insertable field, numbered from
   * `firstParam`. The caller appends `RETURNING`/`ON CONFLICT` as the query needs; `columns` and
   * `values` are the two lists alone, for an `INSERT … SELECT`.
   */
  insert(values: InsertOf<F>, firstParam = 1): Bound & { columns: string; values: string } {
    const given = values as Record<string, unknown>
    const names: string[] = []
    const placeholders: string[] = []
    const params: unknown[] = []
    for (const { key, name, spec } of this.#columns) {
      if (spec.insert === 'no') continue
      let value = spec.insert === 'generated' ? undefined : given[key]
      if (value === undefined && (spec.insert === 'defaulted' || spec.insert === 'generated')) value = typeof spec.insertDefault === 'function' ? (spec.insertDefault as () => unknown)() : spec.insertDefault
      if (value === undefined && spec.nullable) value = null
      names.push(name)
      if (value === undefined && spec.insert === 'database') {
        placeholders.push('DEFAULT')
        continue
      }
      if (value === undefined) throw new Error(`${this.name}.${key} needs a value on insert`)
      params.push(write(spec, value))
      placeholders.push(placeholder(spec, firstParam + params.length - 1))
    }
    const columns = names.join(', ')
    const list = placeholders.join(', ')
    return { sql: `INSERT INTO ${this.name} (${columns}) VALUES (${list})`, params, columns, values: list }
  }

  /**
   * `col = $n, …` for the patchable fields present in `patch` (undefined: unchanged), numbered from
   * `firstParam`, plus `updated_at = now()` when the table has that column.
   */
  set(patch: PatchOf<F>, firstParam: number): Bound {
    const given = patch as Record<string, unknown>
    const parts: string[] = []
    const params: unknown[] = []
    for (const { key, name, spec } of this.#columns) {
      if (!spec.patch || given[key] === undefined) continue
      params.push(write(spec, given[key]))
      parts.push(`${name} = ${placeholder(spec, firstParam + params.length - 1)}`)
    }
    if (this.#hasUpdatedAt) parts.push('updated_at = now()')
    return { sql: parts.join(', '), params }
  }

  /** `col = EXCLUDED.col, …` for an upsert's DO UPDATE over these fields. */
  excluded(keys: ReadonlyArray<keyof F & string>): string {
    return keys.map((key) => `${this.column(key)} = EXCLUDED.${this.column(key)}`).join(', ')
  }
}

/** Declares a table once; the repository derives its queries and record type from the result. */
export function table<F extends Fields>(name: string, fields: F): Table<F> {
  return new Table(name, fields)
}

function placeholder(spec: FieldSpec, index: number): string {
  if (spec.kind === 'json') return `$${index}::jsonb`
  if (spec.kind === 'timestamp') return `$${index}::timestamptz`
  return `$${index}`
}

function write(spec: FieldSpec, value: unknown): unknown {
  if (spec.kind !== 'json') return value
  // A nullable document's null is SQL NULL (what `IS NULL` finds), not the JSON value null.
  return value === null && spec.nullable ? null : json(value)
}

function read(spec: FieldSpec, value: unknown): unknown {
  if (spec.kind === 'timestamp') return spec.nullable ? iso(value as Date | string | null) : isoRequired(value as Date | string)
  if (spec.kind === 'number' && typeof value === 'string') return Number(value)
  return value
}
