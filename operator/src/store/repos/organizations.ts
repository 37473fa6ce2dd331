/** The organisation row (one per installation) and its settings document. */
import type { SqlExecutor } from '../sql.ts'
import { iso, isoRequired, json, newId } from '../rows.ts'
import type { ChangeSink } from './sink.ts'

export interface OrganizationRecord {
  id: string
  name: string
  /** Validated by identity/settings.ts before it is written; stored as one jsonb document. */
  settings: Record<string, unknown>
  createdAt: string
  updatedAt: string
}

interface Row {
  id: string
  name: string
  settings: Record<string, unknown>
  created_at: Date
  updated_at: Date
}

function toRecord(row: Row): OrganizationRecord {
  return { id: row.id, name: row.name, settings: row.settings, createdAt: isoRequired(row.created_at), updatedAt: iso(row.updated_at)! }
}

export class OrganizationRepository {
  readonly #db: SqlExecutor
  readonly #sink: ChangeSink

  constructor(db: SqlExecutor, sink: ChangeSink) {
    this.#db = db
    this.#sink = sink
  }

  /** The installation's organisation, or null before the first start created it. */
  async first(): Promise<OrganizationRecord | null> {
    const rows = await this.#db.query<Row>('SELECT * FROM organizations ORDER BY created_at, id LIMIT 1')
    return rows[0] ? toRecord(rows[0]) : null
  }

  async get(id: string): Promise<OrganizationRecord | null> {
    const rows = await this.#db.query<Row>('SELECT * FROM organizations WHERE id = $1', [id])
    return rows[0] ? toRecord(rows[0]) : null
  }

  async create(input: { name: string; settings?: Record<string, unknown>; id?: string }): Promise<OrganizationRecord> {
    const rows = await this.#db.query<Row>(
      'INSERT INTO organizations (id, name, settings) VALUES ($1, $2, $3::jsonb) RETURNING *',
      [input.id ?? newId(), input.name, json(input.settings ?? {})],
    )
    this.#sink.add({ resource: 'organization', action: 'created', id: rows[0]!.id })
    return toRecord(rows[0]!)
  }

  async updateSettings(id: string, settings: Record<string, unknown>): Promise<OrganizationRecord | null> {
    const rows = await this.#db.query<Row>(
      'UPDATE organizations SET settings = $2::jsonb, updated_at = now() WHERE id = $1 RETURNING *',
      [id, json(settings)],
    )
    if (!rows[0]) return null
    this.#sink.add({ resource: 'organization', action: 'updated', id })
    return toRecord(rows[0])
  }
}
