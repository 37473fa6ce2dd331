/**
 * Prompt partials: named template pieces (`{{>name}}` in a prompt) with their own immutable
 * versions. Updating the text writes a new version; `publish` picks the version gateways render.
 */
import type { SqlExecutor } from '../sql.ts'
import { json, newId } from '../rows.ts'
import { number, table, text, timestamp, type RecordOf } from '../table.ts'
import type { ChangeSink } from './sink.ts'

/** The `prompt_partials` table; `PromptPartialRecord` and every query below derive from it. */
export const promptPartialTable = table('prompt_partials', {
  id: text().insert(),
  organizationId: text().insert(),
  workspaceId: text().insert(),
  collectionId: text().nullable().insert(),
  slug: text().insert(),
  name: text().insert().patch(),
  defaultVersionId: text().nullable(),
  status: text<'active' | 'archived'>().patch(),
  createdAt: timestamp(),
  updatedAt: timestamp(),
})

export type PromptPartialRecord = RecordOf<typeof promptPartialTable.fields>

/** The `prompt_partial_versions` table: every version of every partial. */
export const promptPartialVersionTable = table('prompt_partial_versions', {
  id: text().generated(newId),
  partialId: text().insert(),
  version: number().insert(),
  template: text().insert(),
  description: text().nullable().insert(),
  createdAt: timestamp(),
})

export type PromptPartialVersionRecord = RecordOf<typeof promptPartialVersionTable.fields>

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
    const insert = promptPartialTable.insert({ ...input, id })
    await this.#db.query(insert.sql, insert.params)
    const version = await this.#insertVersion(id, 1, template, description)
    const [row] = await this.#db.query(`UPDATE prompt_partials SET default_version_id = $2 WHERE id = $1 RETURNING ${promptPartialTable.columns}`, [id, version.id])
    this.#sink.add({ resource: 'prompt', action: 'created', id })
    return { partial: promptPartialTable.toRecord(row!), version }
  }

  async #insertVersion(partialId: string, number: number, template: string, description: string | null): Promise<PromptPartialVersionRecord> {
    return promptPartialVersionTable.create(this.#db, { partialId, version: number, template, description })
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
    const set = promptPartialTable.set(changes, 2)
    const [row] = await this.#db.query(`UPDATE prompt_partials SET ${set.sql} WHERE id = $1 RETURNING ${promptPartialTable.columns}`, [id, ...set.params])
    if (row) this.#sink.add({ resource: 'prompt', action: 'updated', id })
    return row ? promptPartialTable.toRecord(row) : null
  }

  async publish(id: string, versionId: string): Promise<void> {
    await this.#db.query('UPDATE prompt_partials SET default_version_id = $2, updated_at = now() WHERE id = $1', [id, versionId])
    this.#sink.add({ resource: 'prompt', action: 'updated', id })
  }

  /** By id, slug or name (templates name partials by name). */
  async get(organizationId: string, idOrSlug: string, workspaceId?: string): Promise<PromptPartialRecord | null> {
    return promptPartialTable.row(
      this.#db,
      'WHERE organization_id = $1 AND (id = $2 OR slug = $2 OR name = $2) AND ($3::text IS NULL OR workspace_id = $3) ORDER BY (id = $2) DESC LIMIT 1',
      [organizationId, idOrSlug, workspaceId ?? null],
    )
  }

  async list(organizationId: string, workspaceIds: readonly string[] | null, collectionId?: string): Promise<PromptPartialRecord[]> {
    return promptPartialTable.rows(
      this.#db,
      `WHERE organization_id = $1
         AND ($2::jsonb IS NULL OR workspace_id = ANY(ARRAY(SELECT jsonb_array_elements_text($2::jsonb))))
         AND ($3::text IS NULL OR collection_id = $3) ORDER BY created_at, id`,
      [organizationId, workspaceIds === null ? null : json(workspaceIds), collectionId ?? null],
    )
  }

  async versions(partialId: string): Promise<PromptPartialVersionRecord[]> {
    return promptPartialVersionTable.rows(this.#db, 'WHERE partial_id = $1 ORDER BY version DESC', [partialId])
  }

  async version(partialId: string, idOrNumber: string): Promise<PromptPartialVersionRecord | null> {
    const number = /^[0-9]{1,9}$/.test(idOrNumber) ? Number(idOrNumber) : -1
    return promptPartialVersionTable.row(this.#db, 'WHERE partial_id = $1 AND (id = $2 OR version = $3)', [partialId, idOrNumber, number])
  }

  /** The published text of every active partial (for the snapshot). */
  async published(organizationId: string): Promise<Array<{ partial: PromptPartialRecord; version: PromptPartialVersionRecord }>> {
    const rows = await this.#db.query(
      `SELECT ${promptPartialTable.columnsOf('p')}, ${promptPartialVersionTable.columnsOf('v', 'v_')}
       FROM prompt_partials p JOIN prompt_partial_versions v ON v.id = p.default_version_id
       WHERE p.organization_id = $1 AND p.status = 'active' ORDER BY p.created_at, p.id`,
      [organizationId],
    )
    return rows.map((row) => ({ partial: promptPartialTable.toRecord(row), version: promptPartialVersionTable.toRecord(row, 'v_') }))
  }

  async delete(organizationId: string, id: string): Promise<boolean> {
    const rows = await this.#db.query('DELETE FROM prompt_partials WHERE organization_id = $1 AND id = $2 RETURNING id', [organizationId, id])
    if (rows.length === 0) return false
    this.#sink.add({ resource: 'prompt', action: 'deleted', id })
    return true
  }
}
