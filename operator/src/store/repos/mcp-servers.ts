/**
 * MCP servers: a workspace's instance of an MCP integration, the Gatehouse URL its clients call,
 * with its own capability switches (on top of the integration's) and per-user access.
 */
import { json, newId } from '../rows.ts'
import type { SqlExecutor } from '../sql.ts'
import { jsonb, table, text, timestamp, type RecordOf, type Table } from '../table.ts'
import { Where } from './filters.ts'
import type { McpCapabilityType } from './mcp-integrations.ts'
import { deleteRow, updateRow } from './patch.ts'
import type { ChangeSink } from './sink.ts'

export interface McpCapabilityOverride {
  name: string
  type: McpCapabilityType
  enabled: boolean
}

export interface McpUserAccess {
  user_id: string
  enabled: boolean
}

export type McpDefaultUserAccess = 'allow' | 'deny'

/** The `mcp_servers` table (and `agent_servers`, the same columns); `McpServerRecord` and every query derive from it. */
export const mcpServerTable = table('mcp_servers', {
  id: text().generated(newId),
  organizationId: text().insert(),
  workspaceId: text().insert(),
  integrationId: text().insert(),
  slug: text().insert(),
  name: text().insert().patch(),
  description: text().nullable().insert().patch(),
  capabilityOverrides: jsonb<McpCapabilityOverride[]>().patch(),
  defaultUserAccess: text<McpDefaultUserAccess>().patch(),
  userAccess: jsonb<McpUserAccess[]>().patch(),
  status: text<'active' | 'archived'>().patch(),
  ownerId: text().nullable().insert(),
  createdAt: timestamp(),
  updatedAt: timestamp(),
})

export type McpServerRecord = RecordOf<typeof mcpServerTable.fields>

export interface McpServerInput {
  organizationId: string
  workspaceId: string
  integrationId: string
  slug: string
  name: string
  description?: string | null
  ownerId?: string | null
}

export interface McpServerPatch {
  name?: string
  description?: string | null
  capabilityOverrides?: McpCapabilityOverride[]
  defaultUserAccess?: McpDefaultUserAccess
  userAccess?: McpUserAccess[]
  status?: 'active' | 'archived'
}

export interface McpServerFilter {
  workspaceIds?: string[]
  ids?: string[]
  integrationId?: string
  search?: string
}

/** MCP servers and agent servers: a workspace's instance of an integration of the same family. */
export interface ServerFamily {
  readonly table: 'mcp_servers' | 'agent_servers'
  readonly resource: 'mcp_server' | 'agent_server'
}

export const MCP_SERVERS: ServerFamily = { table: 'mcp_servers', resource: 'mcp_server' }
export const AGENT_SERVERS: ServerFamily = { table: 'agent_servers', resource: 'agent_server' }

export class McpServerRepository {
  readonly #db: SqlExecutor
  readonly #sink: ChangeSink
  readonly #family: ServerFamily
  readonly #table: Table<typeof mcpServerTable.fields>

  constructor(db: SqlExecutor, sink: ChangeSink, family: ServerFamily = MCP_SERVERS) {
    this.#db = db
    this.#sink = sink
    this.#family = family
    this.#table = mcpServerTable.renamed(family.table)
  }

  async create(input: McpServerInput): Promise<McpServerRecord> {
    const record = await this.#table.create(this.#db, input)
    this.#sink.add({ resource: this.#family.resource, action: 'created', id: record.id })
    return record
  }

  /** By id, or by slug inside `workspaceId` (slugs are unique per workspace). */
  async get(organizationId: string, idOrSlug: string, workspaceId?: string): Promise<McpServerRecord | null> {
    return this.#table.row(
      this.#db,
      'WHERE organization_id = $1 AND (id = $2 OR (slug = $2 AND ($3::text IS NULL OR workspace_id = $3))) ORDER BY (id = $2) DESC, created_at LIMIT 1',
      [organizationId, idOrSlug, workspaceId ?? null],
    )
  }

  async list(organizationId: string, filter: McpServerFilter = {}, page = 0, pageSize = 10_000): Promise<{ total: number; data: McpServerRecord[] }> {
    const where = new Where().add('organization_id = ?', organizationId)
    if (filter.workspaceIds !== undefined) where.add('workspace_id = ANY(ARRAY(SELECT jsonb_array_elements_text(?::jsonb)))', json(filter.workspaceIds))
    if (filter.ids !== undefined) where.add('(id = ANY(ARRAY(SELECT jsonb_array_elements_text(?::jsonb))) OR slug = ANY(ARRAY(SELECT jsonb_array_elements_text(?::jsonb))))', json(filter.ids), json(filter.ids))
    where.maybe('integration_id = ?', filter.integrationId)
    if (filter.search) where.add('(name ILIKE ? OR slug ILIKE ?)', `%${filter.search}%`, `%${filter.search}%`)
    const [count] = await this.#db.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${this.#family.table}${where.sql}`, where.params)
    const data = await this.#table.rows(this.#db, `${where.sql} ORDER BY created_at, id${where.page(page, pageSize)}`, where.params)
    return { total: count?.n ?? 0, data }
  }

  async update(organizationId: string, id: string, patch: McpServerPatch): Promise<McpServerRecord | null> {
    const record = await updateRow(this.#db, this.#table, organizationId, id, this.#table.set(patch, 3))
    if (record) this.#sink.add({ resource: this.#family.resource, action: 'updated', id })
    return record ?? null
  }

  async delete(organizationId: string, id: string): Promise<boolean> {
    if (!(await deleteRow(this.#db, this.#family.table, organizationId, id))) return false
    this.#sink.add({ resource: this.#family.resource, action: 'deleted', id })
    return true
  }
}
