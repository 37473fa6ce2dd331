/**
 * MCP integrations: upstream MCP servers the organisation (or one workspace) registered. Header
 * values and an OAuth client secret are sealed with the keyring before they reach SQL (context
 * `mcp_integration:<id>`) and opened only by `decryptedCredentials` (snapshot compiler, sync);
 * records never carry them. The sync writes what the server said about itself (`recordSync`) and
 * replicas claim due rows with `claimDue` so each integration is synced by one replica at a time.
 */
import { envelopeKeyId, type Keyring } from '../../crypto/envelope.ts'
import { json, newId } from '../rows.ts'
import type { SqlExecutor } from '../sql.ts'
import { jsonb, table, text, timestamp, type RecordOf, type Table } from '../table.ts'
import { Where } from './filters.ts'
import type { GlobalWorkspaceAccess, WorkspaceAccess } from './integrations.ts'
import { deleteRow, updateRow } from './patch.ts'
import type { ChangeSink } from './sink.ts'
import type { ManagedBy } from './workspaces.ts'

export type McpAuthType = 'none' | 'headers' | 'oauth_client_credentials'
export type McpTransport = 'http' | 'sse'
/** MCP servers offer tools, prompts, resources and templates; agents (A2A) offer skills. */
export type McpCapabilityType = 'tool' | 'prompt' | 'resource' | 'resource_template' | 'skill'
export type McpSyncStatus = 'pending' | 'success' | 'failed'

/** One thing the server offers, as the sync read it, with the organisation's switch. */
export interface McpCapability {
  name: string
  type: McpCapabilityType
  title?: string | null
  description?: string | null
  icons?: unknown[] | null
  input_schema?: unknown
  output_schema?: unknown
  annotations?: unknown
  uri?: string | null
  uri_template?: string | null
  mime_type?: string | null
  enabled: boolean
  created_at: string
  last_updated_at: string
}

/** The server's `initialize` answer (its `serverInfo` Implementation). */
export interface McpServerInfo {
  name: string | null
  version: string | null
  title: string | null
  description: string | null
  icons: unknown[] | null
  website_url: string | null
  instructions: string | null
  /** Agent integrations: the whole agent card as last synced (the gateway serves it rewritten). */
  card?: Record<string, unknown>
}

/** Secret parts: header values, an OAuth client secret. */
export interface McpCredentials {
  headers?: Record<string, string>
  client_secret?: string
}

/** Non-secret settings: which headers are set (names only), the OAuth client. */
export interface McpConfigurations {
  header_names?: string[]
  oauth?: { token_url: string; client_id: string; scope?: string; audience?: string }
  /** Organisation admins only: the server may be on a private network (loopback, RFC 1918). */
  allow_private_network?: boolean
  /** Agent integrations: where the agent card is read, relative to the URL (default `/.well-known/agent-card.json`). */
  card_path?: string
}

/** The `mcp_integrations` table (and `agent_integrations`, the same columns); records and queries derive from it. */
export const mcpIntegrationTable = table('mcp_integrations', {
  id: text().insert(),
  organizationId: text().insert(),
  workspaceId: text().nullable().insert(),
  slug: text().insert(),
  name: text().insert().patch(),
  description: text().nullable().insert().patch(),
  url: text().insert().patch(),
  authType: text<McpAuthType>().insert().patch(),
  transport: text<McpTransport>().insert().patch(),
  configurations: jsonb<McpConfigurations>().insert({}).patch(),
  /** The sealed envelope; never part of a record (see `McpIntegrationRecord`). */
  credentialsEncrypted: text().nullable().insert().patch(),
  globalWorkspaceAccess: jsonb<GlobalWorkspaceAccess>().patch(),
  workspaceAccess: jsonb<WorkspaceAccess[]>().patch(),
  capabilities: jsonb<McpCapability[]>().patch(),
  serverInfo: jsonb<McpServerInfo>().nullable(),
  protocolVersion: text().nullable(),
  capabilityFlags: jsonb<Record<string, unknown>>().nullable(),
  syncStatus: text<McpSyncStatus>(),
  syncError: text().nullable(),
  lastSyncedAt: timestamp().nullable(),
  status: text<'active' | 'archived'>().patch(),
  ownerId: text().nullable().insert(),
  managedBy: text<NonNullable<ManagedBy>>().nullable(),
  createdAt: timestamp(),
  updatedAt: timestamp(),
})

type McpIntegrationRow = RecordOf<typeof mcpIntegrationTable.fields>

/** An integration as answered: the sealed credentials replaced by facts about them. */
export type McpIntegrationRecord = Omit<McpIntegrationRow, 'credentialsEncrypted'> & {
  hasCredentials: boolean
  credentialsKeyId: string | null
}

export interface McpIntegrationInput {
  organizationId: string
  workspaceId: string | null
  slug: string
  name: string
  description?: string | null
  url: string
  authType: McpAuthType
  transport: McpTransport
  configurations?: McpConfigurations
  /** Plain; sealed here. */
  credentials?: McpCredentials
  ownerId?: string | null
}

export type McpIntegrationPatch = Partial<Pick<McpIntegrationInput, 'name' | 'description' | 'url' | 'authType' | 'transport' | 'configurations' | 'credentials'>> & {
  globalWorkspaceAccess?: GlobalWorkspaceAccess
  workspaceAccess?: WorkspaceAccess[]
  capabilities?: McpCapability[]
  status?: 'active' | 'archived'
}

/** What one sync found: the server's answer, or why it could not be read. */
export type McpSyncResult =
  | { ok: true; serverInfo: McpServerInfo; protocolVersion: string | null; capabilityFlags: Record<string, unknown>; capabilities: Array<Omit<McpCapability, 'enabled' | 'created_at' | 'last_updated_at'>> }
  | { ok: false; error: string }

export interface McpIntegrationFilter {
  /** undefined: any; null: organisation-level only; string[]: those workspaces. */
  workspaceIds?: string[] | null
  workspaceScoped?: boolean
  search?: string
}

/**
 * MCP integrations and agent (A2A) integrations are the same kind of row in two tables: an upstream
 * endpoint with credentials, workspace access, what it offers (capabilities; skills for agents)
 * and what it said about itself (server info; the agent card for agents), kept up to date by a sync.
 */
export interface IntegrationFamily {
  readonly table: 'mcp_integrations' | 'agent_integrations'
  readonly resource: 'mcp_integration' | 'agent_integration'
}

export const MCP_INTEGRATIONS: IntegrationFamily = { table: 'mcp_integrations', resource: 'mcp_integration' }
export const AGENT_INTEGRATIONS: IntegrationFamily = { table: 'agent_integrations', resource: 'agent_integration' }

export class McpIntegrationRepository {
  readonly #db: SqlExecutor
  readonly #sink: ChangeSink
  readonly #keyring: Keyring | null
  readonly #family: IntegrationFamily
  readonly #table: Table<typeof mcpIntegrationTable.fields>

  constructor(db: SqlExecutor, sink: ChangeSink, keyring: Keyring | null, family: IntegrationFamily = MCP_INTEGRATIONS) {
    this.#db = db
    this.#sink = sink
    this.#keyring = keyring
    this.#family = family
    this.#table = mcpIntegrationTable.renamed(family.table)
  }

  #toRecord({ credentialsEncrypted, ...row }: McpIntegrationRow): McpIntegrationRecord {
    return {
      ...row,
      hasCredentials: credentialsEncrypted !== null,
      credentialsKeyId: credentialsEncrypted === null ? null : envelopeKeyId(credentialsEncrypted),
    }
  }

  #seal(id: string, credentials: McpCredentials | undefined): string | null {
    const empty = !credentials || (Object.keys(credentials.headers ?? {}).length === 0 && !credentials.client_secret)
    if (empty) return null
    if (!this.#keyring) throw new Error('MCP integration credentials need GATEHOUSE_ENCRYPTION_KEY')
    return this.#keyring.seal(JSON.stringify(credentials), `${this.#family.resource}:${id}`)
  }

  async create(input: McpIntegrationInput): Promise<McpIntegrationRecord> {
    const id = newId()
    const row = await this.#table.create(this.#db, { ...input, id, credentialsEncrypted: this.#seal(id, input.credentials) })
    this.#sink.add({ resource: this.#family.resource, action: 'created', id })
    return this.#toRecord(row)
  }

  async get(organizationId: string, idOrSlug: string): Promise<McpIntegrationRecord | null> {
    const row = await this.#table.row(this.#db, 'WHERE organization_id = $1 AND (id = $2 OR slug = $2) ORDER BY (id = $2) DESC LIMIT 1', [organizationId, idOrSlug])
    return row ? this.#toRecord(row) : null
  }

  async list(organizationId: string, filter: McpIntegrationFilter = {}, page = 0, pageSize = 10_000): Promise<{ total: number; data: McpIntegrationRecord[] }> {
    const where = new Where().add('organization_id = ?', organizationId)
    if (filter.workspaceIds === null) where.add('workspace_id IS NULL')
    else if (filter.workspaceIds !== undefined) where.add('(workspace_id IS NULL OR workspace_id = ANY(ARRAY(SELECT jsonb_array_elements_text(?::jsonb))))', json(filter.workspaceIds))
    if (filter.workspaceScoped !== undefined) where.add(filter.workspaceScoped ? 'workspace_id IS NOT NULL' : 'workspace_id IS NULL')
    if (filter.search) where.add("(name ILIKE ? OR slug ILIKE ?)", `%${filter.search}%`, `%${filter.search}%`)
    const [count] = await this.#db.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${this.#family.table}${where.sql}`, where.params)
    const rows = await this.#table.rows(this.#db, `${where.sql} ORDER BY created_at, id${where.page(page, pageSize)}`, where.params)
    return { total: count?.n ?? 0, data: rows.map((row) => this.#toRecord(row)) }
  }

  async update(organizationId: string, id: string, patch: McpIntegrationPatch): Promise<McpIntegrationRecord | null> {
    const { credentials, ...rest } = patch
    // `credentialsEncrypted: null` (credentials emptied) clears the column; `set` skips only undefined.
    const set = this.#table.set({ ...rest, credentialsEncrypted: credentials === undefined ? undefined : this.#seal(id, credentials) }, 3)
    const row = await updateRow(this.#db, this.#table, organizationId, id, set)
    if (row) this.#sink.add({ resource: this.#family.resource, action: 'updated', id })
    return row ? this.#toRecord(row) : null
  }

  async delete(organizationId: string, id: string): Promise<boolean> {
    if (!(await deleteRow(this.#db, this.#family.table, organizationId, id))) return false
    this.#sink.add({ resource: this.#family.resource, action: 'deleted', id })
    return true
  }

  /** For the snapshot compiler and the sync only. */
  async decryptedCredentials(organizationId: string, id: string): Promise<McpCredentials> {
    const rows = await this.#db.query<{ credentials_encrypted: string | null }>(`SELECT credentials_encrypted FROM ${this.#family.table} WHERE organization_id = $1 AND id = $2`, [organizationId, id])
    const sealed = rows[0]?.credentials_encrypted
    if (!sealed) return {}
    if (!this.#keyring) throw new Error('MCP integration credentials need GATEHOUSE_ENCRYPTION_KEY')
    return JSON.parse(this.#keyring.open(sealed, `${this.#family.resource}:${id}`)) as McpCredentials
  }

  /**
   * Claims active integrations whose last sync is older than `intervalMs` (or never ran) and that no
   * replica holds, holding them for `leaseMs`. One statement with SKIP LOCKED: replicas racing for
   * the same row get it once.
   */
  async claimDue(now: Date, intervalMs: number, leaseMs: number, limit: number): Promise<Array<{ organizationId: string; id: string }>> {
    const rows = await this.#db.query<{ organization_id: string; id: string }>(
      `UPDATE ${this.#family.table} SET sync_claimed_until = $2
       WHERE id IN (
         SELECT id FROM ${this.#family.table}
         WHERE status = 'active'
           AND (sync_claimed_until IS NULL OR sync_claimed_until < $1)
           AND (last_synced_at IS NULL OR last_synced_at < $3)
         ORDER BY last_synced_at NULLS FIRST, id
         LIMIT $4
         FOR UPDATE SKIP LOCKED)
       RETURNING organization_id, id`,
      [now, new Date(now.getTime() + leaseMs), new Date(now.getTime() - intervalMs), limit],
    )
    return rows.map((row) => ({ organizationId: row.organization_id, id: row.id }))
  }

  /**
   * Stores what a sync found and releases the claim. A successful sync replaces the capability
   * list, keeping each known capability's switch (new ones start enabled); a failed one keeps the
   * last known capabilities and server info and records why.
   */
  async recordSync(organizationId: string, id: string, result: McpSyncResult, now: Date): Promise<McpIntegrationRecord | null> {
    const current = await this.get(organizationId, id)
    if (!current || current.id !== id) return null
    let rows: object[]
    if (result.ok) {
      const known = new Map(current.capabilities.map((capability) => [`${capability.type}:${capability.name}`, capability]))
      const stamp = now.toISOString()
      const capabilities: McpCapability[] = result.capabilities.map((found) => {
        const previous = known.get(`${found.type}:${found.name}`)
        return { ...found, enabled: previous?.enabled ?? true, created_at: previous?.created_at ?? stamp, last_updated_at: stamp }
      })
      rows = await this.#db.query(
        `UPDATE ${this.#family.table} SET server_info = $3::jsonb, protocol_version = $4, capability_flags = $5::jsonb, capabilities = $6::jsonb,
           sync_status = 'success', sync_error = NULL, last_synced_at = $7, sync_claimed_until = NULL, updated_at = now()
         WHERE organization_id = $1 AND id = $2 RETURNING ${this.#table.columns}`,
        [organizationId, id, json(result.serverInfo), result.protocolVersion, json(result.capabilityFlags), json(capabilities), now],
      )
    } else {
      rows = await this.#db.query(
        `UPDATE ${this.#family.table} SET sync_status = 'failed', sync_error = $3, last_synced_at = $4, sync_claimed_until = NULL, updated_at = now()
         WHERE organization_id = $1 AND id = $2 RETURNING ${this.#table.columns}`,
        [organizationId, id, result.error.slice(0, 1000), now],
      )
    }
    this.#sink.add({ resource: this.#family.resource, action: 'updated', id })
    return rows[0] ? this.#toRecord(this.#table.toRecord(rows[0])) : null
  }
}
