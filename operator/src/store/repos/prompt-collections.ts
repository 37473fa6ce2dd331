/**
 * Prompt collections: folders of prompts and partials inside one workspace. Each workspace has one
 * default collection, created on first use; it cannot be deleted.
 */
import type { SqlExecutor } from '../sql.ts'
import { json, newId } from '../rows.ts'
import { boolean, table, text, timestamp, type RecordOf } from '../table.ts'

/** The `prompt_collections` table; `PromptCollectionRecord` and every query below derive from it. */
export const promptCollectionTable = table('prompt_collections', {
  id: text().generated(newId),
  organizationId: text().insert(),
  workspaceId: text().insert(),
  slug: text().insert(),
  name: text().insert().patch(),
  parentCollectionId: text().nullable().insert(),
  isDefault: boolean().insert(false),
  status: text<'active' | 'archived'>(),
  createdAt: timestamp(),
  updatedAt: timestamp(),
})

export type PromptCollectionRecord = RecordOf<typeof promptCollectionTable.fields>

export interface PromptCollectionInput {
  organizationId: string
  workspaceId: string
  slug: string
  name: string
  parentCollectionId?: string | null
}

export class PromptCollectionRepository {
  readonly #db: SqlExecutor

  constructor(db: SqlExecutor) {
    this.#db = db
  }

  async create(input: PromptCollectionInput): Promise<PromptCollectionRecord> {
    return promptCollectionTable.create(this.#db, { ...input, isDefault: false })
  }

  /** The workspace's default collection, created the first time it is asked for. */
  async ensureDefault(organizationId: string, workspaceId: string): Promise<PromptCollectionRecord> {
    const insert = promptCollectionTable.insert({ organizationId, workspaceId, slug: `default-${workspaceId.slice(0, 8)}`, name: 'Default', isDefault: true })
    await this.#db.query(`${insert.sql} ON CONFLICT DO NOTHING`, insert.params)
    return (await promptCollectionTable.row(this.#db, 'WHERE workspace_id = $1 AND is_default', [workspaceId]))!
  }

  async get(organizationId: string, idOrSlug: string, workspaceId?: string): Promise<PromptCollectionRecord | null> {
    return promptCollectionTable.row(
      this.#db,
      'WHERE organization_id = $1 AND (id = $2 OR slug = $2) AND ($3::text IS NULL OR workspace_id = $3) ORDER BY (id = $2) DESC LIMIT 1',
      [organizationId, idOrSlug, workspaceId ?? null],
    )
  }

  /** Collections of the given workspaces (null: every workspace), optionally matching `search` in the name. */
  async list(organizationId: string, workspaceIds: readonly string[] | null, search?: string): Promise<PromptCollectionRecord[]> {
    return promptCollectionTable.rows(
      this.#db,
      `WHERE organization_id = $1 AND ($2::jsonb IS NULL OR workspace_id = ANY(ARRAY(SELECT jsonb_array_elements_text($2::jsonb))))
       AND ($3::text IS NULL OR name ILIKE '%' || $3 || '%') ORDER BY created_at, id`,
      [organizationId, workspaceIds === null ? null : json(workspaceIds), search ?? null],
    )
  }

  async children(collectionId: string): Promise<PromptCollectionRecord[]> {
    return promptCollectionTable.rows(this.#db, 'WHERE parent_collection_id = $1 ORDER BY created_at, id', [collectionId])
  }

  async rename(id: string, name: string): Promise<PromptCollectionRecord | null> {
    const set = promptCollectionTable.set({ name }, 2)
    const [row] = await this.#db.query(`UPDATE prompt_collections SET ${set.sql} WHERE id = $1 RETURNING ${promptCollectionTable.columns}`, [id, ...set.params])
    return row ? promptCollectionTable.toRecord(row) : null
  }

  async delete(id: string): Promise<boolean> {
    const rows = await this.#db.query('DELETE FROM prompt_collections WHERE id = $1 AND NOT is_default RETURNING id', [id])
    return rows.length > 0
  }
}
