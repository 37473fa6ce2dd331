/** Guardrails: stored, validated check lists with their actions. Every update is a new version. */
import { json, newId } from '../rows.ts'
import type { SqlExecutor } from '../sql.ts'
import { jsonb, number, table, text, timestamp, type RecordOf } from '../table.ts'
import { selectPage, Where } from './filters.ts'
import { deleteRow, updateRow } from './patch.ts'
import type { ChangeSink } from './sink.ts'
import type { ManagedBy } from './workspaces.ts'

/** The `guardrails` table; `GuardrailRecord` and every query below derive from it. */
export const guardrailTable = table('guardrails', {
  id: text().generated(newId),
  organizationId: text().insert(),
  /** null: an organisation-level guardrail. */
  workspaceId: text().nullable().insert(),
  slug: text().insert(),
  name: text().insert().patch(),
  checks: jsonb<Array<Record<string, unknown>>>().insert().patch(),
  actions: jsonb<Record<string, unknown>>().insert().patch(),
  hooks: jsonb<string[]>().insert().patch(),
  version: number(),
  versionId: text().generated(newId).patch(),
  status: text<'active' | 'archived'>().patch(),
  managedBy: text<NonNullable<ManagedBy>>().nullable().insert().patch(),
  createdBy: text().nullable().insert(),
  createdAt: timestamp(),
  updatedAt: timestamp(),
})

export type GuardrailRecord = RecordOf<typeof guardrailTable.fields>

export interface GuardrailInput {
  organizationId: string
  workspaceId: string | null
  slug: string
  name: string
  checks: Array<Record<string, unknown>>
  actions: Record<string, unknown>
  hooks: string[]
  managedBy?: ManagedBy
  createdBy?: string | null
}

export type GuardrailPatch = Partial<Pick<GuardrailInput, 'name' | 'checks' | 'actions' | 'hooks' | 'managedBy'>> & { status?: 'active' | 'archived' }

export class GuardrailRepository {
  readonly #db: SqlExecutor
  readonly #sink: ChangeSink

  constructor(db: SqlExecutor, sink: ChangeSink) {
    this.#db = db
    this.#sink = sink
  }

  async create(input: GuardrailInput): Promise<GuardrailRecord> {
    const record = await guardrailTable.create(this.#db, input)
    this.#sink.add({ resource: 'guardrail', action: 'created', id: record.id })
    return record
  }

  async get(organizationId: string, idOrSlug: string): Promise<GuardrailRecord | null> {
    return guardrailTable.row(this.#db, 'WHERE organization_id = $1 AND (id = $2 OR slug = $2) ORDER BY (id = $2) DESC LIMIT 1', [organizationId, idOrSlug])
  }

  /** `workspaceIds`: undefined any; null organisation-level only; else those workspaces' guardrails. */
  async list(organizationId: string, workspaceIds: string[] | null | undefined, page: number, pageSize: number): Promise<{ total: number; data: GuardrailRecord[] }> {
    const where = new Where().add('organization_id = ?', organizationId)
    if (workspaceIds === null) where.add('workspace_id IS NULL')
    else if (workspaceIds !== undefined) where.add('workspace_id = ANY(ARRAY(SELECT jsonb_array_elements_text(?::jsonb)))', json(workspaceIds))
    return selectPage(this.#db, guardrailTable, where, page, pageSize)
  }

  /** Every active guardrail of the organisation (snapshot compile). */
  async listActive(organizationId: string): Promise<GuardrailRecord[]> {
    return guardrailTable.rows(this.#db, "WHERE organization_id = $1 AND status = 'active' ORDER BY created_at, id", [organizationId])
  }

  /** A change of checks, actions or hooks is a new version (new version id). */
  async update(organizationId: string, id: string, patch: GuardrailPatch): Promise<GuardrailRecord | null> {
    const newVersion = patch.checks !== undefined || patch.actions !== undefined || patch.hooks !== undefined
    const set = guardrailTable.set({ ...patch, versionId: newVersion ? newId() : undefined }, 3)
    const record = await updateRow(this.#db, guardrailTable, organizationId, id, newVersion ? { ...set, sql: `${set.sql}, version = version + 1` } : set)
    if (!record) return null
    this.#sink.add({ resource: 'guardrail', action: 'updated', id })
    return record
  }

  async delete(organizationId: string, id: string): Promise<boolean> {
    if (!(await deleteRow(this.#db, 'guardrails', organizationId, id))) return false
    this.#sink.add({ resource: 'guardrail', action: 'deleted', id })
    return true
  }
}
