/** Deployments: a named gateway deployment (production / non-production) with its config and workspaces. */
import { isoRequired, json, newId } from '../rows.ts'
import type { SqlExecutor } from '../sql.ts'
import { selectPage, Where } from './filters.ts'
import { deleteRow, setClause, updateRow } from './patch.ts'
import type { ChangeSink } from './sink.ts'
import type { ManagedBy } from './workspaces.ts'

export type DeploymentType = 'production' | 'non-production'

export interface DeploymentRecord {
  id: string
  organizationId: string
  slug: string
  name: string
  description: string | null
  type: DeploymentType
  configId: string | null
  allowAllWorkspaces: boolean
  allowedWorkspaceIds: string[]
  /** The reference's deployment_config and auth_settings documents (stored and answered as given). */
  deploymentConfig: Record<string, unknown>
  authSettings: Record<string, unknown>
  status: 'active' | 'archived'
  managedBy: ManagedBy
  createdAt: string
  updatedAt: string
}

interface Row {
  id: string
  organization_id: string
  slug: string
  name: string
  description: string | null
  type: DeploymentType
  config_id: string | null
  allow_all_workspaces: boolean
  allowed_workspace_ids: string[]
  deployment_config: Record<string, unknown>
  auth_settings: Record<string, unknown>
  status: 'active' | 'archived'
  managed_by: ManagedBy
  created_at: Date
  updated_at: Date
}

function toRecord(row: Row): DeploymentRecord {
  return {
    id: row.id,
    organizationId: row.organization_id,
    slug: row.slug,
    name: row.name,
    description: row.description,
    type: row.type,
    configId: row.config_id,
    allowAllWorkspaces: row.allow_all_workspaces,
    allowedWorkspaceIds: row.allowed_workspace_ids,
    deploymentConfig: row.deployment_config,
    authSettings: row.auth_settings,
    status: row.status,
    managedBy: row.managed_by,
    createdAt: isoRequired(row.created_at),
    updatedAt: isoRequired(row.updated_at),
  }
}

export interface DeploymentInput {
  organizationId: string
  slug: string
  name: string
  description?: string | null
  type: DeploymentType
  configId?: string | null
  allowAllWorkspaces?: boolean
  allowedWorkspaceIds?: string[]
  deploymentConfig?: Record<string, unknown>
  authSettings?: Record<string, unknown>
  managedBy?: ManagedBy
}

export type DeploymentPatch = Partial<Pick<DeploymentInput, 'name' | 'description' | 'type' | 'configId' | 'allowAllWorkspaces' | 'allowedWorkspaceIds' | 'deploymentConfig' | 'authSettings' | 'managedBy'>> & {
  status?: 'active' | 'archived'
}

export class DeploymentRepository {
  readonly #db: SqlExecutor
  readonly #sink: ChangeSink

  constructor(db: SqlExecutor, sink: ChangeSink) {
    this.#db = db
    this.#sink = sink
  }

  async create(input: DeploymentInput): Promise<DeploymentRecord> {
    const id = newId()
    const rows = await this.#db.query<Row>(
      `INSERT INTO deployments (id, organization_id, slug, name, description, type, config_id, allow_all_workspaces, allowed_workspace_ids, managed_by, deployment_config, auth_settings)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9::jsonb, $10, $11::jsonb, $12::jsonb) RETURNING *`,
      [id, input.organizationId, input.slug, input.name, input.description ?? null, input.type, input.configId ?? null,
        input.allowAllWorkspaces ?? true, json(input.allowedWorkspaceIds ?? []), input.managedBy ?? null, json(input.deploymentConfig ?? {}), json(input.authSettings ?? {})],
    )
    this.#sink.add({ resource: 'deployment', action: 'created', id })
    return toRecord(rows[0]!)
  }

  async get(organizationId: string, idOrSlug: string): Promise<DeploymentRecord | null> {
    const rows = await this.#db.query<Row>('SELECT * FROM deployments WHERE organization_id = $1 AND (id = $2 OR slug = $2) ORDER BY (id = $2) DESC LIMIT 1', [organizationId, idOrSlug])
    return rows[0] ? toRecord(rows[0]) : null
  }

  /** `workspaceId`: only deployments serving that workspace. */
  async list(
    organizationId: string,
    filter: { type?: DeploymentType; status?: 'active' | 'archived'; workspaceId?: string; search?: string } = {},
    page = 0,
    pageSize = 10_000,
  ): Promise<{ total: number; data: DeploymentRecord[] }> {
    const where = new Where().add('organization_id = ?', organizationId)
    where.maybe('type = ?', filter.type)
    where.maybe('status = ?', filter.status)
    if (filter.workspaceId !== undefined) where.add('(allow_all_workspaces OR allowed_workspace_ids @> ?::jsonb)', json([filter.workspaceId]))
    if (filter.search) where.add("(name ILIKE '%' || ? || '%' OR slug ILIKE '%' || ? || '%')", filter.search, filter.search)
    const { total, rows } = await selectPage<Row>(this.#db, 'deployments', where, page, pageSize)
    return { total, data: rows.map(toRecord) }
  }

  async update(organizationId: string, id: string, patch: DeploymentPatch): Promise<DeploymentRecord | null> {
    const set = setClause(patch, {
      name: ['name', 'value'], description: ['description', 'value'], type: ['type', 'value'], configId: ['config_id', 'value'],
      allowAllWorkspaces: ['allow_all_workspaces', 'value'], allowedWorkspaceIds: ['allowed_workspace_ids', 'jsonb'], status: ['status', 'value'],
      managedBy: ['managed_by', 'value'], deploymentConfig: ['deployment_config', 'jsonb'], authSettings: ['auth_settings', 'jsonb'],
    }, 3)
    const row = await updateRow<Row>(this.#db, 'deployments', organizationId, id, set)
    if (!row) return null
    this.#sink.add({ resource: 'deployment', action: 'updated', id })
    return toRecord(row)
  }

  async delete(organizationId: string, id: string): Promise<boolean> {
    if (!(await deleteRow(this.#db, 'deployments', organizationId, id))) return false
    this.#sink.add({ resource: 'deployment', action: 'deleted', id })
    return true
  }
}
