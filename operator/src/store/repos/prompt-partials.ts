/**
 * Prompt partials: named template pieces (`{{>name}}` in a prompt) with their own immutable
 * versions. Updating the text writes a new version; `publish` picks the version gateways render.
 */
import type { SqlExecutor } from '../sql.ts'
import { isoRequired, json, newId } from '../rows.ts'
import type { ChangeSink } from './sink.ts'

export interface PromptPartialRecord {
  id: string
  organizationId: string
  workspaceId: string
  collectionId: string | null
  slug: string
  name: string
  defaultVersionId: string | null
  status: 'active' | 'archived'
  createdAt: string
  updatedAt: string
}

export interface PromptPartialVersionRecord {
  id: string
  partialId: string
  version: number
  template: string
  description: string | null
  createdAt: string
}

interface Row {
  id: string
  organization_id: string
  workspace_id: string
  collection_id: string | null
  slug: string
  name: string
  default_version_id: string | null
  status: 'active' | 'archived'
  created_at: Date
  updated_at: Date
}

interface VersionRow {
  id: string
  partial_id: string
  version: number
  template: string
  description: string | null
  created_at: Date
}

function toRecord(row: Row): PromptPartialRecord {
  return {
    id: row.id,
    organizationId: row.organization_id,
    workspaceId: row.workspace_id,
    collectionId: row.collection_id,
    slug: row.slug,
    name: row.name,
    defaultVersionId: row.default_version_id,
    status: row.status,
    createdAt: isoRequired(row.created_at),
    updatedAt: isoRequired(row.updated_at),
  }
}

function toVersion(row: VersionRow): PromptPartialVersionRecord {
  return { id: row.id, partialId: row.partial_id, version: row.version, template: row.template, description: row.description, createdAt: isoRequired(row.created_at) }
}

export interface PromptPartialInput {
  organizationId: string
  workspaceId: string
  collectionId: string | null
  slug: string
  name: string
}

export class PromptPartialRepository {
  readonly #db: SqlExecutor
  readonly #sink: ChangeSink

  constructor(db: SqlExecutor, sink: ChangeSink) {
    this.#db = db
    this.#sink = sink
  }

  /** Creates the partial with version 1, published. Run inside a transaction. */
  async create(input: PromptPartialInput, template: string, description: string | null): Promise<{ partial: PromptPartialRecord; version: PromptPartialVersionRecord }> {
    const id = newId()
    await this.#db.query('INSERT INTO prompt_partials (id, organization_id, workspace_id, collection_id, slug, name) VALUES ($1, $2, $3, $4, $5, $6)',
      [id, input.organizationId, input.workspaceId, input.collectionId, input.slug, input.name])
    const version = await this.#insertVersion(id, 1, template, description)
    const rows = await this.#db.query<Row>('UPDATE prompt_partials SET default_version_id = $2 WHERE id = $1 RETURNING *', [id, version.id])
    this.#sink.add({ resource: 'prompt', action: 'created', id })
    return { partial: toRecord(rows[0]!), version }
  }

  async #insertVersion(partialId: string, number: number, template: string, description: string | null): Promise<PromptPartialVersionRecord> {
    const rows = await this.#db.query<VersionRow>('INSERT INTO prompt_partial_versions (id, partial_id, version, template, description) VALUES ($1, $2, $3, $4, $5) RETURNING *',
      [newId(), partialId, number, template, description])
    return toVersion(rows[0]!)
  }

  /** Writes the next version. Run inside a transaction. */
  async addVersion(partialId: string, template: string, description: string | null): Promise<PromptPartialVersionRecord> {
    await this.#db.query('SELECT id FROM prompt_partials WHERE id = $1 FOR UPDATE', [partialId])
    const rows = await this.#db.query<{ next: number }>('SELECT coalesce(max(version), 0) + 1 AS next FROM prompt_partial_versions WHERE partial_id = $1', [partialId])
    const version = await this.#insertVersion(partialId, Number(rows[0]!.next), template, description)
    this.#sink.add({ resource: 'prompt', action: 'updated', id: partialId })
    return version
  }

  async update(id: string, changes: { name?: string; status?: 'active' | 'archived' }): Promise<PromptPartialRecord | null> {
    const rows = await this.#db.query<Row>('UPDATE prompt_partials SET name = coalesce($2, name), status = coalesce($3, status), updated_at = now() WHERE id = $1 RETURNING *',
      [id, changes.name ?? null, changes.status ?? null])
    if (rows[0]) this.#sink.add({ resource: 'prompt', action: 'updated', id })
    return rows[0] ? toRecord(rows[0]) : null
  }

  async publish(id: string, versionId: string): Promise<void> {
    await this.#db.query('UPDATE prompt_partials SET default_version_id = $2, updated_at = now() WHERE id = $1', [id, versionId])
    this.#sink.add({ resource: 'prompt', action: 'updated', id })
  }

  /** By id, slug or name (templates name partials by name). */
  async get(organizationId: string, idOrSlug: string, workspaceId?: string): Promise<PromptPartialRecord | null> {
    const rows = await this.#db.query<Row>(
      `SELECT * FROM prompt_partials WHERE organization_id = $1 AND (id = $2 OR slug = $2 OR name = $2) AND ($3::text IS NULL OR workspace_id = $3)
       ORDER BY (id = $2) DESC LIMIT 1`,
      [organizationId, idOrSlug, workspaceId ?? null],
    )
    return rows[0] ? toRecord(rows[0]) : null
  }

  async list(organizationId: string, workspaceIds: readonly string[] | null, collectionId?: string): Promise<PromptPartialRecord[]> {
    const rows = await this.#db.query<Row>(
      `SELECT * FROM prompt_partials WHERE organization_id = $1
         AND ($2::jsonb IS NULL OR workspace_id = ANY(ARRAY(SELECT jsonb_array_elements_text($2::jsonb))))
         AND ($3::text IS NULL OR collection_id = $3) ORDER BY created_at, id`,
      [organizationId, workspaceIds === null ? null : json(workspaceIds), collectionId ?? null],
    )
    return rows.map(toRecord)
  }

  async versions(partialId: string): Promise<PromptPartialVersionRecord[]> {
    const rows = await this.#db.query<VersionRow>('SELECT * FROM prompt_partial_versions WHERE partial_id = $1 ORDER BY version DESC', [partialId])
    return rows.map(toVersion)
  }

  async version(partialId: string, idOrNumber: string): Promise<PromptPartialVersionRecord | null> {
    const number = /^[0-9]{1,9}$/.test(idOrNumber) ? Number(idOrNumber) : -1
    const rows = await this.#db.query<VersionRow>('SELECT * FROM prompt_partial_versions WHERE partial_id = $1 AND (id = $2 OR version = $3)', [partialId, idOrNumber, number])
    return rows[0] ? toVersion(rows[0]) : null
  }

  /** The published text of every active partial (for the snapshot). */
  async published(organizationId: string): Promise<Array<{ partial: PromptPartialRecord; version: PromptPartialVersionRecord }>> {
    const rows = await this.#db.query<Row & { v_id: string; v_version: number; v_template: string; v_description: string | null; v_created_at: Date }>(
      `SELECT p.*, v.id AS v_id, v.version AS v_version, v.template AS v_template, v.description AS v_description, v.created_at AS v_created_at
       FROM prompt_partials p JOIN prompt_partial_versions v ON v.id = p.default_version_id
       WHERE p.organization_id = $1 AND p.status = 'active' ORDER BY p.created_at, p.id`,
      [organizationId],
    )
    return rows.map((row) => ({
      partial: toRecord(row),
      version: toVersion({ id: row.v_id, partial_id: row.id, version: row.v_version, template: row.v_template, description: row.v_description, created_at: row.v_created_at }),
    }))
  }

  async delete(organizationId: string, id: string): Promise<boolean> {
    const rows = await this.#db.query('DELETE FROM prompt_partials WHERE organization_id = $1 AND id = $2 RETURNING id', [organizationId, id])
    if (rows.length === 0) return false
    this.#sink.add({ resource: 'prompt', action: 'deleted', id })
    return true
  }
}
