/** Deployments: a named gateway deployment (production / non-production) with its config and workspaces. */
import { json, newId } from '../rows.ts'
import type { SqlExecutor } from '../sql.ts'
import { boolean, jsonb, table, text, timestamp, type RecordOf } from '../table.ts'
import { selectPage, Where } from './filters.ts'
import { deleteRow, updateRow } from './patch.ts'
import type { ChangeSink } from './sink.ts'
import type { ManagedBy } from './workspaces.ts'

export type DeploymentType = 'production' | 'non-production'

/** The `deployments` table; `DeploymentRecord` and every query below derive from it. */
export const deploymentTable = table('deployments', {
  id: text().generated(newId),
  organizationId: text().insert(),
  slug: text().insert(),
  name: text().insert().patch(),
  description: text().nullable().insert().patch(),
  type: text<DeploymentType>().insert().patch(),
  configId: text().nullable().insert().patch(),
  allowAllWorkspaces: boolean().insert(true).patch(),
  allowedWorkspaceIds: jsonb<string[]>().insert([]).patch(),
  /** The reference's deployment_config and auth_settings documents (stored and answered as given). */
  deploymentConfig: jsonb<Record<string, unknown>>().insert({}).patch(),
  authSettings: jsonb<Record<string, unknown>>().insert({}).patch(),
  status: text<'active' | 'archived'>().patch(),
  managedBy: text<NonNullable<ManagedBy>>().nullable().insert().patch(),
  createdAt: timestamp(),
  updatedAt: timestamp(),
})

export type DeploymentRecord = RecordOf<typeof deploymentTable.fields>

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
    const record = await deploymentTable.create(this.#db, input)
    this.#sink.add({ resource: 'deployment', action: 'created', id: record.id })
    return record
  }

  async get(organizationId: string, idOrSlug: string): Promise<DeploymentRecord | null> {
    return deploymentTable.row(this.#db, 'WHERE organization_id = $1 AND (id = $2 OR slug = $2) ORDER BY (id = $2) DESC LIMIT 1', [organizationId, idOrSlug])
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
    return selectPage(this.#db, deploymentTable, where, page, pageSize)
  }

  async update(organizationId: string, id: string, patch: DeploymentPatch): Promise<DeploymentRecord | null> {
    const record = await updateRow(this.#db, deploymentTable, organizationId, id, deploymentTable.set(patch, 3))
    if (!record) return null
    this.#sink.add({ resource: 'deployment', action: 'updated', id })
    return record
  }

  async delete(organizationId: string, id: string): Promise<boolean> {
    if (!(await deleteRow(this.#db, 'deployments', organizationId, id))) return false
    this.#sink.add({ resource: 'deployment', action: 'deleted', id })
    return true
  }
}
