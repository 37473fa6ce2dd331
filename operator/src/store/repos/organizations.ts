/** The organisation row (one per installation) and its settings document. */
import type { SqlExecutor } from '../sql.ts'
import { newId } from '../rows.ts'
import { jsonb, table, text, timestamp, type RecordOf } from '../table.ts'
import type { ChangeSink } from './sink.ts'

/** The `organizations` table; `OrganizationRecord` and every query below derive from it. */
export const organizationTable = table('organizations', {
  id: text().insert(newId),
  name: text().insert(),
  /** Validated by identity/settings.ts before it is written; stored as one jsonb document. */
  settings: jsonb<Record<string, unknown>>().insert({}).patch(),
  createdAt: timestamp(),
  updatedAt: timestamp(),
})

export type OrganizationRecord = RecordOf<typeof organizationTable.fields>

export class OrganizationRepository {
  readonly #db: SqlExecutor
  readonly #sink: ChangeSink

  constructor(db: SqlExecutor, sink: ChangeSink) {
    this.#db = db
    this.#sink = sink
  }

  /** The installation's organisation, or null before the first start created it. */
  async first(): Promise<OrganizationRecord | null> {
    return organizationTable.row(this.#db, 'ORDER BY created_at, id LIMIT 1', [])
  }

  async get(id: string): Promise<OrganizationRecord | null> {
    return organizationTable.row(this.#db, 'WHERE id = $1', [id])
  }

  async create(input: { name: string; settings?: Record<string, unknown>; id?: string }): Promise<OrganizationRecord> {
    const record = await organizationTable.create(this.#db, input)
    this.#sink.add({ resource: 'organization', action: 'created', id: record.id })
    return record
  }

  async updateSettings(id: string, settings: Record<string, unknown>): Promise<OrganizationRecord | null> {
    const set = organizationTable.set({ settings }, 2)
    const [row] = await this.#db.query(`UPDATE organizations SET ${set.sql} WHERE id = $1 RETURNING ${organizationTable.columns}`, [id, ...set.params])
    if (!row) return null
    this.#sink.add({ resource: 'organization', action: 'updated', id })
    return organizationTable.toRecord(row)
  }
}
