/**
 * Routing configs: the current version of each (workspace, slug) in `configs`, and every version
 * ever written in `config_versions` (each upsert is a new version).
 */
import type { SqlExecutor } from '../sql.ts'
import { newId } from '../rows.ts'
import { boolean, jsonb, number, table, text, timestamp, type RecordOf } from '../table.ts'
import type { ChangeSink } from './sink.ts'
import type { ManagedBy } from './workspaces.ts'
import { deleteRow } from './patch.ts'

/** The `configs` table: the current version of each (workspace, slug). */
export const configTable = table('configs', {
  id: text().generated(newId),
  organizationId: text().insert(),
  workspaceId: text().nullable().insert(),
  slug: text().insert(),
  name: text().insert(),
  version: number(),
  config: jsonb<Record<string, unknown>>().insert(),
  isDefault: boolean().insert(false),
  status: text<'active' | 'archived'>().insert('active'),
  managedBy: text<NonNullable<ManagedBy>>().nullable().insert(),
  createdAt: timestamp(),
  updatedAt: timestamp(),
})

export type ConfigRecord = RecordOf<typeof configTable.fields> & {
  /** Id of the version this write created (set by `upsert` only). */
  versionId?: string
}

/** The `config_versions` table: every version ever written. */
export const configVersionTable = table('config_versions', {
  id: text().generated(newId),
  configId: text().insert(),
  version: number().insert(),
  name: text().insert(),
  config: jsonb<Record<string, unknown>>().insert(),
  createdAt: timestamp(),
})

export type ConfigVersionRecord = RecordOf<typeof configVersionTable.fields>

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
    const insert = configTable.insert(input)
    const [row] = await this.#db.query<{ inserted: boolean }>(
      `${insert.sql} ON CONFLICT (organization_id, workspace_id, slug) DO UPDATE SET ${configTable.excluded(['name', 'config', 'isDefault', 'status', 'managedBy'])},
         version = configs.version + 1, updated_at = now()
       RETURNING ${configTable.columns}, (xmax = 0) AS inserted`,
      insert.params,
    )
    const record = configTable.toRecord(row!)
    const version = await configVersionTable.create(this.#db, { configId: record.id, version: record.version, name: record.name, config: record.config })
    this.#sink.add({ resource: 'config', action: row!.inserted ? 'created' : 'updated', id: record.id })
    return { ...record, versionId: version.id }
  }

  /** Every version of a config, newest first. */
  async versions(configId: string): Promise<ConfigVersionRecord[]> {
    return configVersionTable.rows(this.#db, 'WHERE config_id = $1 ORDER BY version DESC', [configId])
  }

  /** One version by its id or its number. */
  async version(configId: string, idOrNumber: string): Promise<ConfigVersionRecord | null> {
    const number = /^[0-9]{1,9}$/.test(idOrNumber) ? Number(idOrNumber) : -1
    return configVersionTable.row(this.#db, 'WHERE config_id = $1 AND (id = $2 OR version = $3)', [configId, idOrNumber, number])
  }

  async get(organizationId: string, idOrSlug: string, workspaceId?: string | null): Promise<ConfigRecord | null> {
    return workspaceId === undefined
      ? configTable.row(this.#db, 'WHERE organization_id = $1 AND (id = $2 OR slug = $2) ORDER BY (id = $2) DESC LIMIT 1', [organizationId, idOrSlug])
      : configTable.row(
        this.#db,
        'WHERE organization_id = $1 AND (id = $2 OR slug = $2) AND workspace_id IS NOT DISTINCT FROM $3 ORDER BY (id = $2) DESC LIMIT 1',
        [organizationId, idOrSlug, workspaceId],
      )
  }

  async list(organizationId: string, workspaceId?: string | null): Promise<ConfigRecord[]> {
    return workspaceId === undefined
      ? configTable.rows(this.#db, 'WHERE organization_id = $1 ORDER BY created_at, id', [organizationId])
      : configTable.rows(this.#db, 'WHERE organization_id = $1 AND workspace_id IS NOT DISTINCT FROM $2 ORDER BY created_at, id', [organizationId, workspaceId])
  }

  async delete(organizationId: string, id: string): Promise<boolean> {
    if (!(await deleteRow(this.#db, 'configs', organizationId, id))) return false
    this.#sink.add({ resource: 'config', action: 'deleted', id })
    return true
  }
}
