/**
 * Secret references: where a secret lives (an environment variable of the control plane, or a key
 * of a Kubernetes Secret), never its value. Credential fields of integrations and providers map
 * onto them (`secret_mappings`); the snapshot compiler reads the value when it builds a snapshot.
 */
import { isoRequired, json, newId } from '../rows.ts'
import type { SqlExecutor } from '../sql.ts'
import { selectPage, Where } from './filters.ts'
import { deleteRow, setClause, updateRow } from './patch.ts'
import type { ChangeSink } from './sink.ts'
import type { ManagedBy } from './workspaces.ts'

export type SecretManagerType = 'environment' | 'kubernetes' | 'hashicorp_vault'

export interface SecretReferenceRecord {
  id: string
  organizationId: string
  slug: string
  name: string
  description: string | null
  managerType: SecretManagerType
  /** The environment variable's name, or the Secret's `name` (or `namespace/name`). */
  secretPath: string
  /** The key inside a Kubernetes Secret, or the field of a JSON secret value. */
  secretKey: string | null
  allowAllWorkspaces: boolean
  allowedWorkspaceIds: string[]
  tags: Record<string, string>
  status: 'active' | 'archived'
  managedBy: ManagedBy
  createdBy: string | null
  createdAt: string
  updatedAt: string
}

interface Row {
  id: string
  organization_id: string
  slug: string
  name: string
  description: string | null
  manager_type: SecretManagerType
  secret_path: string
  secret_key: string | null
  allow_all_workspaces: boolean
  allowed_workspace_ids: string[]
  tags: Record<string, string>
  status: 'active' | 'archived'
  managed_by: ManagedBy
  created_by: string | null
  created_at: Date
  updated_at: Date
}

function toRecord(row: Row): SecretReferenceRecord {
  return {
    id: row.id,
    organizationId: row.organization_id,
    slug: row.slug,
    name: row.name,
    description: row.description,
    managerType: row.manager_type,
    secretPath: row.secret_path,
    secretKey: row.secret_key,
    allowAllWorkspaces: row.allow_all_workspaces,
    allowedWorkspaceIds: row.allowed_workspace_ids,
    tags: row.tags,
    status: row.status,
    managedBy: row.managed_by,
    createdBy: row.created_by,
    createdAt: isoRequired(row.created_at),
    updatedAt: isoRequired(row.updated_at),
  }
}

export interface SecretReferenceInput {
  organizationId: string
  slug: string
  name: string
  description?: string | null
  managerType: SecretManagerType
  secretPath: string
  secretKey?: string | null
  allowAllWorkspaces?: boolean
  allowedWorkspaceIds?: string[]
  tags?: Record<string, string>
  managedBy?: ManagedBy
  createdBy?: string | null
}

export type SecretReferencePatch = Partial<Pick<SecretReferenceInput,
  'name' | 'description' | 'managerType' | 'secretPath' | 'secretKey' | 'allowAllWorkspaces' | 'allowedWorkspaceIds' | 'tags'>>

export class SecretReferenceRepository {
  readonly #db: SqlExecutor
  readonly #sink: ChangeSink

  constructor(db: SqlExecutor, sink: ChangeSink) {
    this.#db = db
    this.#sink = sink
  }

  async create(input: SecretReferenceInput): Promise<SecretReferenceRecord> {
    const id = newId()
    const rows = await this.#db.query<Row>(
      `INSERT INTO secret_references (id, organization_id, slug, name, description, manager_type, secret_path, secret_key,
         allow_all_workspaces, allowed_workspace_ids, tags, managed_by, created_by)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10::jsonb, $11::jsonb, $12, $13) RETURNING *`,
      [
        id, input.organizationId, input.slug, input.name, input.description ?? null, input.managerType, input.secretPath, input.secretKey ?? null,
        input.allowAllWorkspaces ?? true, json(input.allowedWorkspaceIds ?? []), json(input.tags ?? {}), input.managedBy ?? null, input.createdBy ?? null,
      ],
    )
    this.#sink.add({ resource: 'secret_reference', action: 'created', id })
    return toRecord(rows[0]!)
  }

  async get(organizationId: string, idOrSlug: string): Promise<SecretReferenceRecord | null> {
    const rows = await this.#db.query<Row>('SELECT * FROM secret_references WHERE organization_id = $1 AND (id = $2 OR slug = $2) ORDER BY (id = $2) DESC LIMIT 1', [organizationId, idOrSlug])
    return rows[0] ? toRecord(rows[0]) : null
  }

  async list(
    organizationId: string,
    filter: { managerType?: SecretManagerType; search?: string; tags?: Record<string, string> } = {},
    page = 0,
    pageSize = 10_000,
  ): Promise<{ total: number; data: SecretReferenceRecord[] }> {
    const where = new Where().add('organization_id = ?', organizationId)
    where.maybe('manager_type = ?', filter.managerType)
    if (filter.search) where.add("(name ILIKE '%' || ? || '%' OR slug ILIKE '%' || ? || '%')", filter.search, filter.search)
    if (filter.tags && Object.keys(filter.tags).length > 0) where.add('tags @> ?::jsonb', json(filter.tags))
    const { total, rows } = await selectPage<Row>(this.#db, 'secret_references', where, page, pageSize)
    return { total, data: rows.map(toRecord) }
  }

  async update(organizationId: string, id: string, patch: SecretReferencePatch): Promise<SecretReferenceRecord | null> {
    const set = setClause(patch, {
      name: ['name', 'value'], description: ['description', 'value'], managerType: ['manager_type', 'value'], secretPath: ['secret_path', 'value'],
      secretKey: ['secret_key', 'value'], allowAllWorkspaces: ['allow_all_workspaces', 'value'], allowedWorkspaceIds: ['allowed_workspace_ids', 'jsonb'],
      tags: ['tags', 'jsonb'],
    }, 3)
    const row = await updateRow<Row>(this.#db, 'secret_references', organizationId, id, set)
    if (!row) return null
    this.#sink.add({ resource: 'secret_reference', action: 'updated', id })
    return toRecord(row)
  }

  /** Integrations and providers whose secret_mappings name this reference (blocks deletion). */
  async usages(organizationId: string, id: string): Promise<Array<{ type: 'integration' | 'provider'; slug: string }>> {
    const probe = json([{ secret_reference_id: id }])
    const rows = await this.#db.query<{ type: 'integration' | 'provider'; slug: string }>(
      `SELECT 'integration' AS type, slug FROM integrations WHERE organization_id = $1 AND secret_mappings @> $2::jsonb
       UNION ALL SELECT 'provider' AS type, slug FROM providers WHERE organization_id = $1 AND secret_mappings @> $2::jsonb`,
      [organizationId, probe],
    )
    return rows
  }

  async delete(organizationId: string, id: string): Promise<boolean> {
    if (!(await deleteRow(this.#db, 'secret_references', organizationId, id))) return false
    this.#sink.add({ resource: 'secret_reference', action: 'deleted', id })
    return true
  }
}
