/**
 * Routing configs: the current version of each (workspace, slug) in `configs`, and every version
 * ever written in `config_versions` (each upsert is a new version).
 */
import type { SqlExecutor } from '../sql.ts'
import { isoRequired, json, newId } from '../rows.ts'
import type { ChangeSink } from './sink.ts'
import type { ManagedBy } from './workspaces.ts'
import { deleteRow } from './patch.ts'

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
  /** Id of the version this write created (set by `upsert` only). */
  versionId?: string
}

export interface ConfigVersionRecord {
  id: string
  configId: string
  version: number
  name: string
  config: Record<string, unknown>
  createdAt: string
}

interface VersionRow {
  id: string
  config_id: string
  version: number
  name: string
  config: Record<string, unknown>
  created_at: Date
}

function toVersion(row: VersionRow): ConfigVersionRecord {
  return { id: row.id, configId: row.config_id, version: row.version, name: row.name, config: row.config, createdAt: isoRequired(row.created_at) }
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
    const versionId = newId()
    await this.#db.query('INSERT INTO config_versions (id, config_id, version, name, config) VALUES ($1, $2, $3, $4, $5::jsonb)',
      [versionId, row.id, row.version, row.name, json(row.config)])
    this.#sink.add({ resource: 'config', action: row.inserted ? 'created' : 'updated', id: row.id })
    return { ...toRecord(row), versionId }
  }

  /** Every version of a config, newest first. */
  async versions(configId: string): Promise<ConfigVersionRecord[]> {
    const rows = await this.#db.query<VersionRow>('SELECT * FROM config_versions WHERE config_id = $1 ORDER BY version DESC', [configId])
    return rows.map(toVersion)
  }

  /** One version by its id or its number. */
  async version(configId: string, idOrNumber: string): Promise<ConfigVersionRecord | null> {
    const number = /^[0-9]{1,9}$/.test(idOrNumber) ? Number(idOrNumber) : -1
    const rows = await this.#db.query<VersionRow>('SELECT * FROM config_versions WHERE config_id = $1 AND (id = $2 OR version = $3)', [configId, idOrNumber, number])
    return rows[0] ? toVersion(rows[0]) : null
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
    if (!(await deleteRow(this.#db, 'configs', organizationId, id))) return false
    this.#sink.add({ resource: 'config', action: 'deleted', id })
    return true
  }
}
