/**
 * MCP servers: a workspace's instance of an MCP integration, the Gatehouse URL its clients call,
 * with its own capability switches (on top of the integration's) and per-user access.
 */
import { isoRequired, json, newId } from '../rows.ts'
import type { SqlExecutor } from '../sql.ts'
import { Where } from './filters.ts'
import type { McpCapabilityType } from './mcp-integrations.ts'
import { deleteRow, setClause, updateRow } from './patch.ts'
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

export interface McpServerRecord {
  id: string
  organizationId: string
  workspaceId: string
  integrationId: string
  slug: string
  name: string
  description: string | null
  capabilityOverrides: McpCapabilityOverride[]
  defaultUserAccess: McpDefaultUserAccess
  userAccess: McpUserAccess[]
  status: 'active' | 'archived'
  ownerId: string | null
  createdAt: string
  updatedAt: string
}

interface Row {
  id: string
  organization_id: string
  workspace_id: string
  integration_id: string
  slug: string
  name: string
  description: string | null
  capability_overrides: McpCapabilityOverride[]
  default_user_access: McpDefaultUserAccess
  user_access: McpUserAccess[]
  status: 'active' | 'archived'
  owner_id: string | null
  created_at: Date
  updated_at: Date
}

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

function toRecord(row: Row): McpServerRecord {
  return {
    id: row.id,
    organizationId: row.organization_id,
    workspaceId: row.workspace_id,
    integrationId: row.integration_id,
    slug: row.slug,
    name: row.name,
    description: row.description,
    capabilityOverrides: row.capability_overrides,
    defaultUserAccess: row.default_user_access,
    userAccess: row.user_access,
    status: row.status,
    ownerId: row.owner_id,
    createdAt: isoRequired(row.created_at),
    updatedAt: isoRequired(row.updated_at),
  }
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

  constructor(db: SqlExecutor, sink: ChangeSink, family: ServerFamily = MCP_SERVERS) {
    this.#db = db
    this.#sink = sink
    this.#family = family
  }

  async create(input: McpServerInput): Promise<McpServerRecord> {
    const id = newId()
    const rows = await this.#db.query<Row>(
      `INSERT INTO ${this.#family.table} (id, organization_id, workspace_id, integration_id, slug, name, description, owner_id)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING *`,
      [id, input.organizationId, input.workspaceId, input.integrationId, input.slug, input.name, input.description ?? null, input.ownerId ?? null],
    )
    this.#sink.add({ resource: this.#family.resource, action: 'created', id })
    return toRecord(rows[0]!)
  }

  /** By id, or by slug inside `workspaceId` (slugs are unique per workspace). */
  async get(organizationId: string, idOrSlug: string, workspaceId?: string): Promise<McpServerRecord | null> {
    const rows = await this.#db.query<Row>(
      `SELECT * FROM ${this.#family.table} WHERE organization_id = $1 AND (id = $2 OR (slug = $2 AND ($3::text IS NULL OR workspace_id = $3)))
       ORDER BY (id = $2) DESC, created_at LIMIT 1`,
      [organizationId, idOrSlug, workspaceId ?? null],
    )
    return rows[0] ? toRecord(rows[0]) : null
  }

  async list(organizationId: string, filter: McpServerFilter = {}, page = 0, pageSize = 10_000): Promise<{ total: number; data: McpServerRecord[] }> {
    const where = new Where().add('organization_id = ?', organizationId)
    if (filter.workspaceIds !== undefined) where.add('workspace_id = ANY(ARRAY(SELECT jsonb_array_elements_text(?::jsonb)))', json(filter.workspaceIds))
    if (filter.ids !== undefined) where.add('(id = ANY(ARRAY(SELECT jsonb_array_elements_text(?::jsonb))) OR slug = ANY(ARRAY(SELECT jsonb_array_elements_text(?::jsonb))))', json(filter.ids), json(filter.ids))
    where.maybe('integration_id = ?', filter.integrationId)
    if (filter.search) where.add('(name ILIKE ? OR slug ILIKE ?)', `%${filter.search}%`, `%${filter.search}%`)
    const [count] = await this.#db.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${this.#family.table}${where.sql}`, where.params)
    const rows = await this.#db.query<Row>(`SELECT * FROM ${this.#family.table}${where.sql} ORDER BY created_at, id${where.page(page, pageSize)}`, where.params)
    return { total: count?.n ?? 0, data: rows.map(toRecord) }
  }

  async update(organizationId: string, id: string, patch: McpServerPatch): Promise<McpServerRecord | null> {
    const set = setClause(patch, {
      name: ['name', 'value'], description: ['description', 'value'], capabilityOverrides: ['capability_overrides', 'jsonb'],
      defaultUserAccess: ['default_user_access', 'value'], userAccess: ['user_access', 'jsonb'], status: ['status', 'value'],
    }, 3)
    const row = await updateRow<Row>(this.#db, this.#family.table, organizationId, id, set)
    if (row) this.#sink.add({ resource: this.#family.resource, action: 'updated', id })
    return row ? toRecord(row) : null
  }

  async delete(organizationId: string, id: string): Promise<boolean> {
    if (!(await deleteRow(this.#db, this.#family.table, organizationId, id))) return false
    this.#sink.add({ resource: this.#family.resource, action: 'deleted', id })
    return true
  }
}
