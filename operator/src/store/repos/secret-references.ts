/**
 * Secret references: where a secret lives (an environment variable of the control plane, or a key
 * of a Kubernetes Secret), never its value. Credential fields of integrations and providers map
 * onto them (`secret_mappings`); the snapshot compiler reads the value when it builds a snapshot.
 */
import { json, newId } from '../rows.ts'
import type { SqlExecutor } from '../sql.ts'
import { boolean, jsonb, table, text, timestamp, type RecordOf } from '../table.ts'
import { selectPage, Where } from './filters.ts'
import { deleteRow, updateRow } from './patch.ts'
import type { ChangeSink } from './sink.ts'
import type { ManagedBy } from './workspaces.ts'

export type SecretManagerType = 'environment' | 'kubernetes' | 'hashicorp_vault'

/** The `secret_references` table; `SecretReferenceRecord` and every query below derive from it. */
export const secretReferenceTable = table('secret_references', {
  id: text().generated(newId),
  organizationId: text().insert(),
  slug: text().insert(),
  name: text().insert().patch(),
  description: text().nullable().insert().patch(),
  managerType: text<SecretManagerType>().insert().patch(),
  /** The environment variable's name, or the Secret's `name` (or `namespace/name`). */
  secretPath: text().insert().patch(),
  /** The key inside a Kubernetes Secret, or the field of a JSON secret value. */
  secretKey: text().nullable().insert().patch(),
  allowAllWorkspaces: boolean().insert(true).patch(),
  allowedWorkspaceIds: jsonb<string[]>().insert([]).patch(),
  tags: jsonb<Record<string, string>>().insert({}).patch(),
  status: text<'active' | 'archived'>(),
  managedBy: text<NonNullable<ManagedBy>>().nullable().insert(),
  createdBy: text().nullable().insert(),
  createdAt: timestamp(),
  updatedAt: timestamp(),
})

export type SecretReferenceRecord = RecordOf<typeof secretReferenceTable.fields>

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
    const record = await secretReferenceTable.create(this.#db, input)
    this.#sink.add({ resource: 'secret_reference', action: 'created', id: record.id })
    return record
  }

  async get(organizationId: string, idOrSlug: string): Promise<SecretReferenceRecord | null> {
    return secretReferenceTable.row(this.#db, 'WHERE organization_id = $1 AND (id = $2 OR slug = $2) ORDER BY (id = $2) DESC LIMIT 1', [organizationId, idOrSlug])
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
    return selectPage(this.#db, secretReferenceTable, where, page, pageSize)
  }

  async update(organizationId: string, id: string, patch: SecretReferencePatch): Promise<SecretReferenceRecord | null> {
    const record = await updateRow(this.#db, secretReferenceTable, organizationId, id, secretReferenceTable.set(patch, 3))
    if (!record) return null
    this.#sink.add({ resource: 'secret_reference', action: 'updated', id })
    return record
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
