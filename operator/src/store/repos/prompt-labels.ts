/**
 * Prompt labels (`production`, `staging`, custom ones): names that point at one version of each
 * prompt. Universal labels belong to every organisation (seeded by migration 0007); the others
 * to an organisation, optionally narrowed to one workspace.
 */
import type { SqlExecutor } from '../sql.ts'
import { json, newId } from '../rows.ts'
import { boolean, table, text, timestamp, type RecordOf } from '../table.ts'
import type { ChangeSink } from './sink.ts'

/** The `prompt_labels` table; `PromptLabelRecord` and every query below derive from it. */
export const promptLabelTable = table('prompt_labels', {
  id: text().generated(newId),
  /** null: a universal label, shared by every organisation. */
  organizationId: text().nullable().insert(),
  workspaceId: text().nullable().insert(),
  name: text().insert().patch(),
  description: text().nullable().insert().patch(),
  colorCode: text().nullable().insert().patch(),
  isUniversal: boolean(),
  status: text<'active' | 'archived'>(),
  createdAt: timestamp(),
  updatedAt: timestamp(),
})

export type PromptLabelRecord = RecordOf<typeof promptLabelTable.fields>

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
    return promptLabelTable.create(this.#db, input)
  }

  /** A label the organisation can use: universal, organisation-wide, or of one of its workspaces. */
  async get(organizationId: string, id: string): Promise<PromptLabelRecord | null> {
    return promptLabelTable.row(this.#db, 'WHERE id = $1 AND (organization_id = $2 OR is_universal)', [id, organizationId])
  }

  /** Universal and organisation-wide labels, plus those of the given workspaces (null: all). */
  async list(organizationId: string, workspaceIds: readonly string[] | null, search?: string): Promise<PromptLabelRecord[]> {
    return promptLabelTable.rows(
      this.#db,
      `WHERE (is_universal OR (organization_id = $1 AND (workspace_id IS NULL
         OR $2::jsonb IS NULL OR workspace_id = ANY(ARRAY(SELECT jsonb_array_elements_text($2::jsonb))))))
         AND ($3::text IS NULL OR name ILIKE '%' || $3 || '%')
       ORDER BY is_universal DESC, created_at, id`,
      [organizationId, workspaceIds === null ? null : json(workspaceIds), search ?? null],
    )
  }

  async update(id: string, changes: { name?: string; description?: string | null; colorCode?: string | null }): Promise<PromptLabelRecord | null> {
    const set = promptLabelTable.set(changes, 2)
    const [row] = await this.#db.query(`UPDATE prompt_labels SET ${set.sql} WHERE id = $1 AND NOT is_universal RETURNING ${promptLabelTable.columns}`, [id, ...set.params])
    if (row) this.#sink.add({ resource: 'prompt', action: 'updated', id })
    return row ? promptLabelTable.toRecord(row) : null
  }

  async delete(id: string): Promise<boolean> {
    const rows = await this.#db.query('DELETE FROM prompt_labels WHERE id = $1 AND NOT is_universal RETURNING id', [id])
    if (rows.length === 0) return false
    this.#sink.add({ resource: 'prompt', action: 'deleted', id })
    return true
  }
}
