/**
 * Prompt collections: folders of prompts and partials inside one workspace. Each workspace has one
 * default collection, created on first use; it cannot be deleted.
 */
import type { SqlExecutor } from '../sql.ts'
import { isoRequired, json, newId } from '../rows.ts'

export interface PromptCollectionRecord {
  id: string
  organizationId: string
  workspaceId: string
  slug: string
  name: string
  parentCollectionId: string | null
  isDefault: boolean
  status: 'active' | 'archived'
  createdAt: string
  updatedAt: string
}

interface Row {
  id: string
  organization_id: string
  workspace_id: string
  slug: string
  name: string
  parent_collection_id: string | null
  is_default: boolean
  status: 'active' | 'archived'
  created_at: Date
  updated_at: Date
}

function toRecord(row: Row): PromptCollectionRecord {
  return {
    id: row.id,
    organizationId: row.organization_id,
    workspaceId: row.workspace_id,
    slug: row.slug,
    name: row.name,
    parentCollectionId: row.parent_collection_id,
    isDefault: row.is_default,
    status: row.status,
    createdAt: isoRequired(row.created_at),
    updatedAt: isoRequired(row.updated_at),
  }
}

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
    const rows = await this.#db.query<Row>(
      'INSERT INTO prompt_collections (id, organization_id, workspace_id, slug, name, parent_collection_id) VALUES ($1, $2, $3, $4, $5, $6) RETURNING *',
      [newId(), input.organizationId, input.workspaceId, input.slug, input.name, input.parentCollectionId ?? null],
    )
    return toRecord(rows[0]!)
  }

  /** The workspace's default collection, created the first time it is asked for. */
  async ensureDefault(organizationId: string, workspaceId: string): Promise<PromptCollectionRecord> {
    await this.#db.query(
      `INSERT INTO prompt_collections (id, organization_id, workspace_id, slug, name, is_default) VALUES ($1, $2, $3, $4, 'Default', true)
       ON CONFLICT DO NOTHING`,
      [newId(), organizationId, workspaceId, `default-${workspaceId.slice(0, 8)}`],
    )
    const rows = await this.#db.query<Row>('SELECT * FROM prompt_collections WHERE workspace_id = $1 AND is_default', [workspaceId])
    return toRecord(rows[0]!)
  }

  async get(organizationId: string, idOrSlug: string, workspaceId?: string): Promise<PromptCollectionRecord | null> {
    const rows = await this.#db.query<Row>(
      `SELECT * FROM prompt_collections WHERE organization_id = $1 AND (id = $2 OR slug = $2) AND ($3::text IS NULL OR workspace_id = $3)
       ORDER BY (id = $2) DESC LIMIT 1`,
      [organizationId, idOrSlug, workspaceId ?? null],
    )
    return rows[0] ? toRecord(rows[0]) : null
  }

  /** Collections of the given workspaces (null: every workspace), optionally matching `search` in the name. */
  async list(organizationId: string, workspaceIds: readonly string[] | null, search?: string): Promise<PromptCollectionRecord[]> {
    const rows = await this.#db.query<Row>(
      `SELECT * FROM prompt_collections WHERE organization_id = $1 AND ($2::jsonb IS NULL OR workspace_id = ANY(ARRAY(SELECT jsonb_array_elements_text($2::jsonb))))
       AND ($3::text IS NULL OR name ILIKE '%' || $3 || '%') ORDER BY created_at, id`,
      [organizationId, workspaceIds === null ? null : json(workspaceIds), search ?? null],
    )
    return rows.map(toRecord)
  }

  async children(collectionId: string): Promise<PromptCollectionRecord[]> {
    const rows = await this.#db.query<Row>('SELECT * FROM prompt_collections WHERE parent_collection_id = $1 ORDER BY created_at, id', [collectionId])
    return rows.map(toRecord)
  }

  async rename(id: string, name: string): Promise<PromptCollectionRecord | null> {
    const rows = await this.#db.query<Row>('UPDATE prompt_collections SET name = $2, updated_at = now() WHERE id = $1 RETURNING *', [id, name])
    return rows[0] ? toRecord(rows[0]) : null
  }

  async delete(id: string): Promise<boolean> {
    const rows = await this.#db.query('DELETE FROM prompt_collections WHERE id = $1 AND NOT is_default RETURNING id', [id])
    return rows.length > 0
  }
}
