/**
 * Prompt labels (`production`, `staging`, custom ones): names that point at one version of each
 * prompt. Universal labels belong to every organisation (seeded by migration 0007); the others
 * to an organisation, optionally narrowed to one workspace.
 */
import type { SqlExecutor } from '../sql.ts'
import { isoRequired, json, newId } from '../rows.ts'
import type { ChangeSink } from './sink.ts'

export interface PromptLabelRecord {
  id: string
  organizationId: string | null
  workspaceId: string | null
  name: string
  description: string | null
  colorCode: string | null
  isUniversal: boolean
  status: 'active' | 'archived'
  createdAt: string
  updatedAt: string
}

interface Row {
  id: string
  organization_id: string | null
  workspace_id: string | null
  name: string
  description: string | null
  color_code: string | null
  is_universal: boolean
  status: 'active' | 'archived'
  created_at: Date
  updated_at: Date
}

function toRecord(row: Row): PromptLabelRecord {
  return {
    id: row.id,
    organizationId: row.organization_id,
    workspaceId: row.workspace_id,
    name: row.name,
    description: row.description,
    colorCode: row.color_code,
    isUniversal: row.is_universal,
    status: row.status,
    createdAt: isoRequired(row.created_at),
    updatedAt: isoRequired(row.updated_at),
  }
}

export interface PromptLabelInput {
  organizationId: string
  workspaceId: string | null
  name: string
  description: string | null
  colorCode: string | null
}

export class PromptLabelRepository {
  readonly #db: SqlExecutor
  readonly #sink: ChangeSink

  constructor(db: SqlExecutor, sink: ChangeSink) {
    this.#db = db
    this.#sink = sink
  }

  async create(input: PromptLabelInput): Promise<PromptLabelRecord> {
    const rows = await this.#db.query<Row>('INSERT INTO prompt_labels (id, organization_id, workspace_id, name, description, color_code) VALUES ($1, $2, $3, $4, $5, $6) RETURNING *',
      [newId(), input.organizationId, input.workspaceId, input.name, input.description, input.colorCode])
    return toRecord(rows[0]!)
  }

  /** A label the organisation can use: universal, organisation-wide, or of one of its workspaces. */
  async get(organizationId: string, id: string): Promise<PromptLabelRecord | null> {
    const rows = await this.#db.query<Row>('SELECT * FROM prompt_labels WHERE id = $1 AND (organization_id = $2 OR is_universal)', [id, organizationId])
    return rows[0] ? toRecord(rows[0]) : null
  }

  /** Universal and organisation-wide labels, plus those of the given workspaces (null: all). */
  async list(organizationId: string, workspaceIds: readonly string[] | null, search?: string): Promise<PromptLabelRecord[]> {
    const rows = await this.#db.query<Row>(
      `SELECT * FROM prompt_labels WHERE (is_universal OR (organization_id = $1 AND (workspace_id IS NULL
         OR $2::jsonb IS NULL OR workspace_id = ANY(ARRAY(SELECT jsonb_array_elements_text($2::jsonb))))))
         AND ($3::text IS NULL OR name ILIKE '%' || $3 || '%')
       ORDER BY is_universal DESC, created_at, id`,
      [organizationId, workspaceIds === null ? null : json(workspaceIds), search ?? null],
    )
    return rows.map(toRecord)
  }

  async update(id: string, changes: { name?: string; description?: string | null; colorCode?: string | null }): Promise<PromptLabelRecord | null> {
    const rows = await this.#db.query<Row>(
      `UPDATE prompt_labels SET name = coalesce($2, name), description = CASE WHEN $3::boolean THEN $4 ELSE description END,
         color_code = CASE WHEN $5::boolean THEN $6 ELSE color_code END, updated_at = now() WHERE id = $1 AND NOT is_universal RETURNING *`,
      [id, changes.name ?? null, changes.description !== undefined, changes.description ?? null, changes.colorCode !== undefined, changes.colorCode ?? null],
    )
    if (rows[0]) this.#sink.add({ resource: 'prompt', action: 'updated', id })
    return rows[0] ? toRecord(rows[0]) : null
  }

  async delete(id: string): Promise<boolean> {
    const rows = await this.#db.query('DELETE FROM prompt_labels WHERE id = $1 AND NOT is_universal RETURNING id', [id])
    if (rows.length === 0) return false
    this.#sink.add({ resource: 'prompt', action: 'deleted', id })
    return true
  }
}
