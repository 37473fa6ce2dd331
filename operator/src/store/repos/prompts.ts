/**
 * Prompts and their versions. A prompt row holds what may change in place (name, collection,
 * virtual key, the published version); each version holds a template and its model settings and
 * never changes after it is written: only its label and status move. A label marks at most one
 * version of a prompt, so setting it on a version takes it off the one that had it.
 */
import type { SqlExecutor } from '../sql.ts'
import { isoRequired, json, newId } from '../rows.ts'
import type { ChangeSink } from './sink.ts'

/** The fields every version carries; a new version is written whenever one of them changes. */
export interface PromptVersionContent {
  template: string
  parameters: Record<string, unknown>
  model: string | null
  functions: unknown[] | null
  tools: unknown[] | null
  toolChoice: unknown
  templateMetadata: Record<string, unknown> | null
  isRawTemplate: boolean
}

export interface PromptVersionRecord extends PromptVersionContent {
  id: string
  promptId: string
  version: number
  description: string | null
  labelId: string | null
  status: 'active' | 'archived'
  createdAt: string
}

export interface PromptRecord {
  id: string
  organizationId: string
  workspaceId: string
  collectionId: string
  slug: string
  name: string
  virtualKey: string | null
  defaultVersionId: string | null
  status: 'active' | 'archived'
  createdAt: string
  updatedAt: string
}

interface Row {
  id: string
  organization_id: string
  workspace_id: string
  collection_id: string
  slug: string
  name: string
  virtual_key: string | null
  default_version_id: string | null
  status: 'active' | 'archived'
  created_at: Date
  updated_at: Date
}

interface VersionRow {
  id: string
  prompt_id: string
  version: number
  template: string
  parameters: Record<string, unknown>
  model: string | null
  functions: unknown[] | null
  tools: unknown[] | null
  tool_choice: unknown
  template_metadata: Record<string, unknown> | null
  is_raw_template: boolean
  description: string | null
  label_id: string | null
  status: 'active' | 'archived'
  created_at: Date
}

function toRecord(row: Row): PromptRecord {
  return {
    id: row.id,
    organizationId: row.organization_id,
    workspaceId: row.workspace_id,
    collectionId: row.collection_id,
    slug: row.slug,
    name: row.name,
    virtualKey: row.virtual_key,
    defaultVersionId: row.default_version_id,
    status: row.status,
    createdAt: isoRequired(row.created_at),
    updatedAt: isoRequired(row.updated_at),
  }
}

function toVersion(row: VersionRow): PromptVersionRecord {
  return {
    id: row.id,
    promptId: row.prompt_id,
    version: row.version,
    template: row.template,
    parameters: row.parameters,
    model: row.model,
    functions: row.functions,
    tools: row.tools,
    toolChoice: row.tool_choice,
    templateMetadata: row.template_metadata,
    isRawTemplate: row.is_raw_template,
    description: row.description,
    labelId: row.label_id,
    status: row.status,
    createdAt: isoRequired(row.created_at),
  }
}

export interface PromptInput {
  organizationId: string
  workspaceId: string
  collectionId: string
  slug: string
  name: string
  virtualKey: string | null
}

export interface PromptChanges {
  name?: string
  collectionId?: string
  virtualKey?: string | null
}

export interface PromptListFilter {
  workspaceIds: readonly string[] | null
  collectionId?: string
  search?: string
}

export class PromptRepository {
  readonly #db: SqlExecutor
  readonly #sink: ChangeSink

  constructor(db: SqlExecutor, sink: ChangeSink) {
    this.#db = db
    this.#sink = sink
  }

  /** Creates the prompt with version 1, published. Run inside a transaction. */
  async create(input: PromptInput, content: PromptVersionContent, description: string | null): Promise<{ prompt: PromptRecord; version: PromptVersionRecord }> {
    const id = newId()
    await this.#db.query(
      'INSERT INTO prompts (id, organization_id, workspace_id, collection_id, slug, name, virtual_key) VALUES ($1, $2, $3, $4, $5, $6, $7)',
      [id, input.organizationId, input.workspaceId, input.collectionId, input.slug, input.name, input.virtualKey],
    )
    const version = await this.#insertVersion(id, 1, content, description)
    const rows = await this.#db.query<Row>('UPDATE prompts SET default_version_id = $2 WHERE id = $1 RETURNING *', [id, version.id])
    this.#sink.add({ resource: 'prompt', action: 'created', id })
    return { prompt: toRecord(rows[0]!), version }
  }

  async #insertVersion(promptId: string, number: number, content: PromptVersionContent, description: string | null): Promise<PromptVersionRecord> {
    const rows = await this.#db.query<VersionRow>(
      `INSERT INTO prompt_versions (id, prompt_id, version, template, parameters, model, functions, tools, tool_choice, template_metadata, is_raw_template, description)
       VALUES ($1, $2, $3, $4, $5::jsonb, $6, $7::jsonb, $8::jsonb, $9::jsonb, $10::jsonb, $11, $12) RETURNING *`,
      [newId(), promptId, number, content.template, json(content.parameters), content.model,
        content.functions === null ? null : json(content.functions), content.tools === null ? null : json(content.tools),
        content.toolChoice === undefined || content.toolChoice === null ? null : json(content.toolChoice),
        content.templateMetadata === null ? null : json(content.templateMetadata), content.isRawTemplate, description],
    )
    return toVersion(rows[0]!)
  }

  /** Writes the next version (never changing an earlier one). Run inside a transaction. */
  async addVersion(promptId: string, content: PromptVersionContent, description: string | null): Promise<PromptVersionRecord> {
    // The row lock orders concurrent writers of one prompt, so version numbers never collide.
    await this.#db.query('SELECT id FROM prompts WHERE id = $1 FOR UPDATE', [promptId])
    const [{ next }] = await this.#db.query<{ next: number }>('SELECT coalesce(max(version), 0) + 1 AS next FROM prompt_versions WHERE prompt_id = $1', [promptId]) as [{ next: number }]
    const version = await this.#insertVersion(promptId, Number(next), content, description)
    await this.#db.query('UPDATE prompts SET updated_at = now() WHERE id = $1', [promptId])
    this.#sink.add({ resource: 'prompt', action: 'updated', id: promptId })
    return version
  }

  async update(id: string, changes: PromptChanges): Promise<PromptRecord | null> {
    const rows = await this.#db.query<Row>(
      `UPDATE prompts SET name = coalesce($2, name), collection_id = coalesce($3, collection_id),
         virtual_key = CASE WHEN $4::boolean THEN $5 ELSE virtual_key END, updated_at = now() WHERE id = $1 RETURNING *`,
      [id, changes.name ?? null, changes.collectionId ?? null, changes.virtualKey !== undefined, changes.virtualKey ?? null],
    )
    if (rows[0]) this.#sink.add({ resource: 'prompt', action: 'updated', id })
    return rows[0] ? toRecord(rows[0]) : null
  }

  /** A version's description (a comment, not template content: it may change in place). */
  async describe(versionId: string, description: string | null): Promise<void> {
    await this.#db.query('UPDATE prompt_versions SET description = $2 WHERE id = $1', [versionId, description])
  }

  /** Publishes a version: completions without a version or label use it. */
  async publish(id: string, versionId: string): Promise<void> {
    await this.#db.query('UPDATE prompts SET default_version_id = $2, updated_at = now() WHERE id = $1', [id, versionId])
    this.#sink.add({ resource: 'prompt', action: 'updated', id })
  }

  /** Sets (or clears) a version's label, taking it off any other version of the prompt. Run inside a transaction. */
  async label(promptId: string, versionId: string, labelId: string | null): Promise<void> {
    if (labelId !== null) await this.#db.query('UPDATE prompt_versions SET label_id = NULL WHERE prompt_id = $1 AND label_id = $2 AND id <> $3', [promptId, labelId, versionId])
    await this.#db.query('UPDATE prompt_versions SET label_id = $3 WHERE prompt_id = $1 AND id = $2', [promptId, versionId, labelId])
    this.#sink.add({ resource: 'prompt', action: 'updated', id: promptId })
  }

  async get(organizationId: string, idOrSlug: string, workspaceId?: string): Promise<PromptRecord | null> {
    const rows = await this.#db.query<Row>(
      `SELECT * FROM prompts WHERE organization_id = $1 AND (id = $2 OR slug = $2) AND ($3::text IS NULL OR workspace_id = $3)
       ORDER BY (id = $2) DESC LIMIT 1`,
      [organizationId, idOrSlug, workspaceId ?? null],
    )
    return rows[0] ? toRecord(rows[0]) : null
  }

  async list(organizationId: string, filter: PromptListFilter): Promise<PromptRecord[]> {
    const rows = await this.#db.query<Row>(
      `SELECT * FROM prompts WHERE organization_id = $1
         AND ($2::jsonb IS NULL OR workspace_id = ANY(ARRAY(SELECT jsonb_array_elements_text($2::jsonb))))
         AND ($3::text IS NULL OR collection_id = $3) AND ($4::text IS NULL OR name ILIKE '%' || $4 || '%')
       ORDER BY created_at, id`,
      [organizationId, filter.workspaceIds === null ? null : json(filter.workspaceIds), filter.collectionId ?? null, filter.search ?? null],
    )
    return rows.map(toRecord)
  }

  /** Every prompt of the organisation (for the snapshot). */
  async listAll(organizationId: string): Promise<PromptRecord[]> {
    return this.list(organizationId, { workspaceIds: null })
  }

  /** Every version, newest first. */
  async versions(promptId: string): Promise<PromptVersionRecord[]> {
    const rows = await this.#db.query<VersionRow>('SELECT * FROM prompt_versions WHERE prompt_id = $1 ORDER BY version DESC', [promptId])
    return rows.map(toVersion)
  }

  /** One version by its id or its number. */
  async version(promptId: string, idOrNumber: string): Promise<PromptVersionRecord | null> {
    const number = /^[0-9]{1,9}$/.test(idOrNumber) ? Number(idOrNumber) : -1
    const rows = await this.#db.query<VersionRow>('SELECT * FROM prompt_versions WHERE prompt_id = $1 AND (id = $2 OR version = $3)', [promptId, idOrNumber, number])
    return rows[0] ? toVersion(rows[0]) : null
  }

  /** Published or labelled versions of the organisation's active prompts: what gateways serve. */
  async servedVersions(organizationId: string): Promise<PromptVersionRecord[]> {
    const rows = await this.#db.query<VersionRow>(
      `SELECT v.* FROM prompt_versions v JOIN prompts p ON p.id = v.prompt_id
       WHERE p.organization_id = $1 AND p.status = 'active' AND (v.id = p.default_version_id OR v.label_id IS NOT NULL)
       ORDER BY v.prompt_id, v.version`,
      [organizationId],
    )
    return rows.map(toVersion)
  }

  async delete(organizationId: string, id: string): Promise<boolean> {
    const rows = await this.#db.query('DELETE FROM prompts WHERE organization_id = $1 AND id = $2 RETURNING id', [organizationId, id])
    if (rows.length === 0) return false
    this.#sink.add({ resource: 'prompt', action: 'deleted', id })
    return true
  }
}
