/** Guardrails: stored, validated check lists with their actions. Every update is a new version. */
import { isoRequired, json, newId } from '../rows.ts'
import type { SqlExecutor } from '../sql.ts'
import { selectPage, Where } from './filters.ts'
import { deleteRow, setClause } from './patch.ts'
import type { ChangeSink } from './sink.ts'
import type { ManagedBy } from './workspaces.ts'

export interface GuardrailRecord {
  id: string
  organizationId: string
  /** null: an organisation-level guardrail. */
  workspaceId: string | null
  slug: string
  name: string
  checks: Array<Record<string, unknown>>
  actions: Record<string, unknown>
  hooks: string[]
  version: number
  versionId: string
  status: 'active' | 'archived'
  managedBy: ManagedBy
  createdBy: string | null
  createdAt: string
  updatedAt: string
}

interface Row {
  id: string
  organization_id: string
  workspace_id: string | null
  slug: string
  name: string
  checks: Array<Record<string, unknown>>
  actions: Record<string, unknown>
  hooks: string[]
  version: number
  version_id: string
  status: 'active' | 'archived'
  managed_by: ManagedBy
  created_by: string | null
  created_at: Date
  updated_at: Date
}

function toRecord(row: Row): GuardrailRecord {
  return {
    id: row.id,
    organizationId: row.organization_id,
    workspaceId: row.workspace_id,
    slug: row.slug,
    name: row.name,
    checks: row.checks,
    actions: row.actions,
    hooks: row.hooks,
    version: row.version,
    versionId: row.version_id,
    status: row.status,
    managedBy: row.managed_by,
    createdBy: row.created_by,
    createdAt: isoRequired(row.created_at),
    updatedAt: isoRequired(row.updated_at),
  }
}

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
    const id = newId()
    const rows = await this.#db.query<Row>(
      `INSERT INTO guardrails (id, organization_id, workspace_id, slug, name, checks, actions, hooks, version_id, managed_by, created_by)
       VALUES ($1, $2, $3, $4, $5, $6::jsonb, $7::jsonb, $8::jsonb, $9, $10, $11) RETURNING *`,
      [id, input.organizationId, input.workspaceId, input.slug, input.name, json(input.checks), json(input.actions), json(input.hooks), newId(),
        input.managedBy ?? null, input.createdBy ?? null],
    )
    this.#sink.add({ resource: 'guardrail', action: 'created', id })
    return toRecord(rows[0]!)
  }

  async get(organizationId: string, idOrSlug: string): Promise<GuardrailRecord | null> {
    const rows = await this.#db.query<Row>('SELECT * FROM guardrails WHERE organization_id = $1 AND (id = $2 OR slug = $2) ORDER BY (id = $2) DESC LIMIT 1', [organizationId, idOrSlug])
    return rows[0] ? toRecord(rows[0]) : null
  }

  /** `workspaceIds`: undefined any; null organisation-level only; else those workspaces' guardrails. */
  async list(organizationId: string, workspaceIds: string[] | null | undefined, page: number, pageSize: number): Promise<{ total: number; data: GuardrailRecord[] }> {
    const where = new Where().add('organization_id = ?', organizationId)
    if (workspaceIds === null) where.add('workspace_id IS NULL')
    else if (workspaceIds !== undefined) where.add('workspace_id = ANY(ARRAY(SELECT jsonb_array_elements_text(?::jsonb)))', json(workspaceIds))
    const { total, rows } = await selectPage<Row>(this.#db, 'guardrails', where, page, pageSize)
    return { total, data: rows.map(toRecord) }
  }

  /** Every active guardrail of the organisation (snapshot compile). */
  async listActive(organizationId: string): Promise<GuardrailRecord[]> {
    const rows = await this.#db.query<Row>("SELECT * FROM guardrails WHERE organization_id = $1 AND status = 'active' ORDER BY created_at, id", [organizationId])
    return rows.map(toRecord)
  }

  /** A change of checks, actions or hooks is a new version (new version id). */
  async update(organizationId: string, id: string, patch: GuardrailPatch): Promise<GuardrailRecord | null> {
    const newVersion = patch.checks !== undefined || patch.actions !== undefined || patch.hooks !== undefined
    const set = setClause({ ...patch, versionId: newVersion ? newId() : undefined }, {
      name: ['name', 'value'], checks: ['checks', 'jsonb'], actions: ['actions', 'jsonb'], hooks: ['hooks', 'jsonb'], status: ['status', 'value'],
      versionId: ['version_id', 'value'], managedBy: ['managed_by', 'value'],
    }, 3)
    const rows = await this.#db.query<Row>(
      `UPDATE guardrails SET ${set.sql}${newVersion ? ', version = version + 1' : ''} WHERE organization_id = $1 AND id = $2 RETURNING *`,
      [organizationId, id, ...set.params],
    )
    if (!rows[0]) return null
    this.#sink.add({ resource: 'guardrail', action: 'updated', id })
    return toRecord(rows[0])
  }

  async delete(organizationId: string, id: string): Promise<boolean> {
    if (!(await deleteRow(this.#db, 'guardrails', organizationId, id))) return false
    this.#sink.add({ resource: 'guardrail', action: 'deleted', id })
    return true
  }
}
