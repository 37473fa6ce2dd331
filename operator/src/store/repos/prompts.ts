/**
 * Prompts and their versions. A prompt row holds what may change in place (name, collection,
 * virtual key, the published version); each version holds a template and its model settings and
 * never changes after it is written: only its label and status move. A label marks at most one
 * version of a prompt, so setting it on a version takes it off the one that had it.
 */
import type { SqlExecutor } from '../sql.ts'
import { json, newId } from '../rows.ts'
import { boolean, jsonb, number, table, text, timestamp, type RecordOf } from '../table.ts'
import type { ChangeSink } from './sink.ts'

/** The fields every version carries; a new version is written whenever one of them changes. */
/** The `prompt_versions` table: every version ever written (content never changes in place). */
export const promptVersionTable = table('prompt_versions', {
  id: text().generated(newId),
  promptId: text().insert(),
  version: number().insert(),
  template: text().insert(),
  parameters: jsonb<Record<string, unknown>>().insert(),
  model: text().nullable().insert(),
  functions: jsonb<unknown[]>().nullable().insert(),
  tools: jsonb<unknown[]>().nullable().insert(),
  toolChoice: jsonb<unknown>().nullable().insert(),
  templateMetadata: jsonb<Record<string, unknown>>().nullable().insert(),
  isRawTemplate: boolean().insert(),
  description: text().nullable().insert(),
  labelId: text().nullable(),
  status: text<'active' | 'archived'>(),
  createdAt: timestamp(),
})

export type PromptVersionRecord = RecordOf<typeof promptVersionTable.fields>

/** What a version holds (the template and its settings). */
export type PromptVersionContent = Pick<PromptVersionRecord,
  'template' | 'parameters' | 'model' | 'functions' | 'tools' | 'toolChoice' | 'templateMetadata' | 'isRawTemplate'>

/** The `prompts` table; `PromptRecord` and every query below derive from it. */
export const promptTable = table('prompts', {
  id: text().insert(),
  organizationId: text().insert(),
  workspaceId: text().insert(),
  collectionId: text().insert().patch(),
  slug: text().insert(),
  name: text().insert().patch(),
  virtualKey: text().nullable().insert().patch(),
  defaultVersionId: text().nullable(),
  status: text<'active' | 'archived'>(),
  createdAt: timestamp(),
  updatedAt: timestamp(),
})

export type PromptRecord = RecordOf<typeof promptTable.fields>

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
    const insert = promptTable.insert({ ...input, id })
    await this.#db.query(insert.sql, insert.params)
    const version = await this.#insertVersion(id, 1, content, description)
    const [row] = await this.#db.query(`UPDATE prompts SET default_version_id = $2 WHERE id = $1 RETURNING ${promptTable.columns}`, [id, version.id])
    this.#sink.add({ resource: 'prompt', action: 'created', id })
    return { prompt: promptTable.toRecord(row!), version }
  }

  async #insertVersion(promptId: string, number: number, content: PromptVersionContent, description: string | null): Promise<PromptVersionRecord> {
    return promptVersionTable.create(this.#db, { ...content, promptId, version: number, description })
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
    const set = promptTable.set(changes, 2)
    const [row] = await this.#db.query(`UPDATE prompts SET ${set.sql} WHERE id = $1 RETURNING ${promptTable.columns}`, [id, ...set.params])
    if (row) this.#sink.add({ resource: 'prompt', action: 'updated', id })
    return row ? promptTable.toRecord(row) : null
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
    return promptTable.row(
      this.#db,
      'WHERE organization_id = $1 AND (id = $2 OR slug = $2) AND ($3::text IS NULL OR workspace_id = $3) ORDER BY (id = $2) DESC LIMIT 1',
      [organizationId, idOrSlug, workspaceId ?? null],
    )
  }

  async list(organizationId: string, filter: PromptListFilter): Promise<PromptRecord[]> {
    return promptTable.rows(
      this.#db,
      `WHERE organization_id = $1
         AND ($2::jsonb IS NULL OR workspace_id = ANY(ARRAY(SELECT jsonb_array_elements_text($2::jsonb))))
         AND ($3::text IS NULL OR collection_id = $3) AND ($4::text IS NULL OR name ILIKE '%' || $4 || '%')
       ORDER BY created_at, id`,
      [organizationId, filter.workspaceIds === null ? null : json(filter.workspaceIds), filter.collectionId ?? null, filter.search ?? null],
    )
  }

  /** Every prompt of the organisation (for the snapshot). */
  async listAll(organizationId: string): Promise<PromptRecord[]> {
    return this.list(organizationId, { workspaceIds: null })
  }

  /** Every version, newest first. */
  async versions(promptId: string): Promise<PromptVersionRecord[]> {
    return promptVersionTable.rows(this.#db, 'WHERE prompt_id = $1 ORDER BY version DESC', [promptId])
  }

  /** One version by its id or its number. */
  async version(promptId: string, idOrNumber: string): Promise<PromptVersionRecord | null> {
    const number = /^[0-9]{1,9}$/.test(idOrNumber) ? Number(idOrNumber) : -1
    return promptVersionTable.row(this.#db, 'WHERE prompt_id = $1 AND (id = $2 OR version = $3)', [promptId, idOrNumber, number])
  }

  /** Published or labelled versions of the organisation's active prompts: what gateways serve. */
  async servedVersions(organizationId: string): Promise<PromptVersionRecord[]> {
    const rows = await this.#db.query(
      `SELECT ${promptVersionTable.columnsOf('v')} FROM prompt_versions v JOIN prompts p ON p.id = v.prompt_id
       WHERE p.organization_id = $1 AND p.status = 'active' AND (v.id = p.default_version_id OR v.label_id IS NOT NULL)
       ORDER BY v.prompt_id, v.version`,
      [organizationId],
    )
    return rows.map((row) => promptVersionTable.toRecord(row))
  }

  async delete(organizationId: string, id: string): Promise<boolean> {
    const rows = await this.#db.query('DELETE FROM prompts WHERE organization_id = $1 AND id = $2 RETURNING id', [organizationId, id])
    if (rows.length === 0) return false
    this.#sink.add({ resource: 'prompt', action: 'deleted', id })
    return true
  }
}
