/** Routing configs: the current version of each (workspace, slug). Version history is a later layer. */
import type { SqlExecutor } from '../sql.ts'
import { isoRequired, json, newId } from '../rows.ts'
import type { ChangeSink } from './sink.ts'
import type { ManagedBy } from './workspaces.ts'

export interface ConfigRecord {
  id: string
  organizationId: string
  workspaceId: string | null
  slug: string
  name: string
  version: number
  config: Record<string, unknown>
  isDefault: boolean
  status: 'active' | 'archived'
  managedBy: ManagedBy
  createdAt: string
  updatedAt: string
}

interface Row {
  id: string
  organization_id: string
  workspace_id: string | null
  slug: string
  name: string
  version: number
  config: Record<string, unknown>
  is_default: boolean
  status: 'active' | 'archived'
  managed_by: ManagedBy
  created_at: Date
  updated_at: Date
}

function toRecord(row: Row): ConfigRecord {
  return {
    id: row.id,
    organizationId: row.organization_id,
    workspaceId: row.workspace_id,
    slug: row.slug,
    name: row.name,
    version: row.version,
    config: row.config,
    isDefault: row.is_default,
    status: row.status,
    managedBy: row.managed_by,
    createdAt: isoRequired(row.created_at),
    updatedAt: isoRequired(row.updated_at),
  }
}

export interface ConfigInput {
  organizationId: string
  workspaceId: string | null
  slug: string
  name: string
  config: Record<string, unknown>
  isDefault?: boolean
  status?: 'active' | 'archived'
  managedBy?: ManagedBy
}

export class ConfigRepository {
  readonly #db: SqlExecutor
  readonly #sink: ChangeSink

  constructor(db: SqlExecutor, sink: ChangeSink) {
    this.#db = db
    this.#sink = sink
  }

  /** Creates version 1, or writes the next version over the same (workspace, slug). */
  async upsert(input: ConfigInput): Promise<ConfigRecord> {
    const rows = await this.#db.query<Row & { inserted: boolean }>(
      `INSERT INTO configs (id, organization_id, workspace_id, slug, name, config, is_default, status, managed_by)
       VALUES ($1, $2, $3, $4, $5, $6::jsonb, $7, $8, $9)
       ON CONFLICT (organization_id, workspace_id, slug) DO UPDATE SET name = EXCLUDED.name, config = EXCLUDED.config,
         is_default = EXCLUDED.is_default, status = EXCLUDED.status, managed_by = EXCLUDED.managed_by,
         version = configs.version + 1, updated_at = now()
       RETURNING *, (xmax = 0) AS inserted`,
      [newId(), input.organizationId, input.workspaceId, input.slug, input.name, json(input.config), input.isDefault ?? false, input.status ?? 'active', input.managedBy ?? null],
    )
    const row = rows[0]!
    this.#sink.add({ resource: 'config', action: row.inserted ? 'created' : 'updated', id: row.id })
    return toRecord(row)
  }

  async get(organizationId: string, idOrSlug: string, workspaceId?: string | null): Promise<ConfigRecord | null> {
    const rows = workspaceId === undefined
      ? await this.#db.query<Row>('SELECT * FROM configs WHERE organization_id = $1 AND (id = $2 OR slug = $2) ORDER BY (id = $2) DESC LIMIT 1', [organizationId, idOrSlug])
      : await this.#db.query<Row>(
        'SELECT * FROM configs WHERE organization_id = $1 AND (id = $2 OR slug = $2) AND workspace_id IS NOT DISTINCT FROM $3 ORDER BY (id = $2) DESC LIMIT 1',
        [organizationId, idOrSlug, workspaceId],
      )
    return rows[0] ? toRecord(rows[0]) : null
  }

  async list(organizationId: string, workspaceId?: string | null): Promise<ConfigRecord[]> {
    const rows = workspaceId === undefined
      ? await this.#db.query<Row>('SELECT * FROM configs WHERE organization_id = $1 ORDER BY created_at, id', [organizationId])
      : await this.#db.query<Row>('SELECT * FROM configs WHERE organization_id = $1 AND workspace_id IS NOT DISTINCT FROM $2 ORDER BY created_at, id', [organizationId, workspaceId])
    return rows.map(toRecord)
  }

  async delete(organizationId: string, id: string): Promise<boolean> {
    const rows = await this.#db.query('DELETE FROM configs WHERE organization_id = $1 AND id = $2 RETURNING id', [organizationId, id])
    if (rows.length === 0) return false
    this.#sink.add({ resource: 'config', action: 'deleted', id })
    return true
  }
}
