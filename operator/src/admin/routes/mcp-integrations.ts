/**
 * MCP integrations: /v1/mcp-integrations, with /workspaces, /capabilities, /metadata, /sync and
 * /test. An integration registers an upstream MCP server (URL, transport, how Gatehouse
 * authenticates to it); workspaces create MCP servers onto it. Organisation integrations need the
 * organisation_mcp_integrations scopes, a workspace's own the workspace_mcp_integrations scopes.
 *
 * Header values and the OAuth client secret are sealed at rest and never answered (header names
 * with masked values, `has_client_secret`). Creating or changing the endpoint or its credentials
 * syncs at once (the answer does not wait for it); the worker re-syncs on its schedule.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { z } from 'zod'
import { conflict, invalid, notFound } from '../../errors.ts'
import type { Principal } from '../../identity/principal.ts'
import { readIntegration, readMcpServer, syncIntegration, type IntegrationReader } from '../../mcp/sync-integration.ts'
import type { McpIntegrationRepository } from '../../store/repos/mcp-integrations.ts'
import type { Store } from '../../store/index.ts'
import type { McpCapability, McpConfigurations, McpCredentials, McpIntegrationRecord, WorkspaceAccess } from '../../store/index.ts'
import type { AdminContext } from '../context.ts'
import { audit, pagination, parse, principalOf } from '../http.ts'
import { capabilityCounts, capabilityPage, capabilityUpdateSchema, onePagedQuery } from './mcp-capabilities.ts'
import { refuseSelfGrantedPrivateNetwork } from './network-access.ts'
import { descriptionSchema, listWorkspaces, nameSchema, refuseManaged, requireScope, slugFromName, slugSchema, targetWorkspace, visibleOr404, workspaceRefSchema } from './resource-access.ts'

/** What differs between the MCP and the agent (A2A) integration routes; everything else is shared. */
export interface IntegrationRoutesFamily {
  /** `MCP integration`, `agent integration` (messages). */
  readonly what: string
  /** Audit actions and resource type: `mcp_integration`, `agent_integration`. */
  readonly resource: 'mcp_integration' | 'agent_integration'
  /** `organisation_<scopes>.*` and `workspace_<scopes>.*`. */
  readonly scopes: 'mcp_integrations' | 'agent_integrations'
  readonly object: 'mcp-integration' | 'agent-integration'
  /** `capabilities` (MCP) or `skills` (agents). */
  readonly capabilitiesPath: 'capabilities' | 'skills'
  readonly transportRequired: boolean
  repository(store: Store): McpIntegrationRepository
  readonly read: IntegrationReader
}

export const MCP_INTEGRATION_ROUTES: IntegrationRoutesFamily = {
  what: 'MCP integration',
  resource: 'mcp_integration',
  scopes: 'mcp_integrations',
  object: 'mcp-integration',
  capabilitiesPath: 'capabilities',
  transportRequired: true,
  repository: (store) => store.mcpIntegrations,
  read: readMcpServer,
}

/** An HTTP header name (RFC 9110 token). */
const headerNameSchema = z.string().min(1).max(255).regex(/^[A-Za-z0-9!#$%&'*+.^_`|~-]+$/, 'a header name is letters, digits and !#$%&\'*+.^_`|~-')
/** Headers the relay sets itself: an integration may not replace them. */
const RESERVED_HEADERS = new Set(['host', 'content-length', 'content-type', 'accept', 'connection', 'transfer-encoding', 'mcp-session-id', 'mcp-protocol-version', 'last-event-id'])
const customHeadersSchema = z.record(headerNameSchema, z.string().min(1).max(16_384))
  .refine((headers) => Object.keys(headers).length <= 32, 'at most 32 headers')
  .refine((headers) => !Object.keys(headers).some((name) => RESERVED_HEADERS.has(name.toLowerCase())), 'content-type, accept, host and the MCP transport headers are set by Gatehouse')
const oauthSchema = z.strictObject({
  token_url: z.url({ protocol: /^https?$/ }).max(2048),
  client_id: z.string().min(1).max(1024),
  client_secret: z.string().min(1).max(16_384).optional(),
  scope: z.string().max(2048).optional(),
  audience: z.string().max(2048).optional(),
})
const configurationsSchema = z.strictObject({
  custom_headers: customHeadersSchema.optional(),
  oauth: oauthSchema.optional(),
  allow_private_network: z.boolean().optional(),
  /** Agent integrations: where the agent card is read, relative to the URL. */
  card_path: z.string().min(1).max(1024).regex(/^[^\s?#]*$/, 'a path, without query or fragment').optional(),
})
const urlSchema = z.url({ protocol: /^https?$/ }).max(2048)
const authTypeSchema = z.enum(['none', 'headers', 'oauth_client_credentials', 'oauth_auto']).refine((type) => type !== 'oauth_auto', 'oauth_auto (per-user OAuth connections) is not supported; use headers or oauth_client_credentials')
const transportSchema = z.enum(['http', 'sse'])

const createSchema = z.strictObject({
  name: nameSchema,
  url: urlSchema,
  auth_type: authTypeSchema,
  // Agent integrations have no transport to choose (A2A over HTTP); MCP ones must say.
  transport: transportSchema.optional(),
  slug: slugSchema.optional(),
  description: descriptionSchema.optional(),
  workspace_id: workspaceRefSchema.optional(),
  organisation_id: z.string().min(1).max(255).optional(),
  configurations: configurationsSchema.optional(),
})

const updateSchema = z.strictObject({
  name: nameSchema.optional(),
  description: descriptionSchema.optional(),
  url: urlSchema.optional(),
  auth_type: authTypeSchema.optional(),
  transport: transportSchema.optional(),
  configurations: configurationsSchema.optional(),
  status: z.enum(['active', 'archived']).optional(),
})

const listQuery = z.object({
  workspace_id: workspaceRefSchema.optional(),
  type: z.enum(['workspace', 'organisation', 'organization', 'all']).default('all'),
  search: z.string().max(255).optional(),
}).loose()

const workspacesUpdateSchema = z.strictObject({
  workspaces: z.array(z.strictObject({ id: workspaceRefSchema, enabled: z.boolean() })).max(1000),
  global_workspace_access: z.strictObject({ enabled: z.boolean() }).optional(),
  override_existing_workspace_access: z.boolean().default(false),
})

type AuthType = Exclude<z.infer<typeof authTypeSchema>, 'oauth_auto'>

/** Splits configurations into what is stored in clear and what is sealed; checks they fit the auth type. */
function splitConfigurations(authType: AuthType, configurations: z.infer<typeof configurationsSchema> | undefined, previousSecret: string | undefined): { configurations: McpConfigurations; credentials: McpCredentials } {
  const headers = configurations?.custom_headers
  const oauth = configurations?.oauth
  if (authType === 'headers' && (!headers || Object.keys(headers).length === 0)) throw invalid('configurations.custom_headers', 'configurations.custom_headers: auth_type headers needs at least one header')
  if (authType !== 'headers' && headers) throw invalid('configurations.custom_headers', `configurations.custom_headers: only for auth_type headers (this one is ${authType})`)
  if (authType === 'oauth_client_credentials' && !oauth) throw invalid('configurations.oauth', 'configurations.oauth: auth_type oauth_client_credentials needs token_url, client_id and client_secret')
  if (authType !== 'oauth_client_credentials' && oauth) throw invalid('configurations.oauth', `configurations.oauth: only for auth_type oauth_client_credentials (this one is ${authType})`)
  const clientSecret = oauth?.client_secret ?? previousSecret
  if (oauth && !clientSecret) throw invalid('configurations.oauth.client_secret', 'configurations.oauth.client_secret is required')
  const stored: McpConfigurations = {}
  if (headers) stored.header_names = Object.keys(headers)
  if (oauth) stored.oauth = { token_url: oauth.token_url, client_id: oauth.client_id, ...(oauth.scope ? { scope: oauth.scope } : {}), ...(oauth.audience ? { audience: oauth.audience } : {}) }
  if (configurations?.allow_private_network !== undefined) stored.allow_private_network = configurations.allow_private_network
  if (configurations?.card_path !== undefined) stored.card_path = configurations.card_path
  const credentials: McpCredentials = {}
  if (headers) credentials.headers = headers
  if (oauth && clientSecret) credentials.client_secret = clientSecret
  return { configurations: stored, credentials }
}

/** What the answers show of configurations: header names with masked values, never a secret. */
function configurationsView(record: McpIntegrationRecord): Record<string, unknown> {
  const { header_names: names, oauth, allow_private_network: allowPrivate, card_path: cardPath } = record.configurations
  return {
    ...(cardPath !== undefined ? { card_path: cardPath } : {}),
    ...(names ? { custom_headers: Object.fromEntries(names.map((name) => [name, '********'])) } : {}),
    ...(oauth ? { oauth: { ...oauth, has_client_secret: record.hasCredentials } } : {}),
    ...(allowPrivate !== undefined ? { allow_private_network: allowPrivate } : {}),
  }
}

export function mcpMetadataView(record: McpIntegrationRecord): Record<string, unknown> {
  const info = record.serverInfo
  return {
    server_name: info?.name ?? null,
    server_version: info?.version ?? null,
    title: info?.title ?? null,
    description: info?.description ?? null,
    icons: info?.icons ?? null,
    website_url: info?.website_url ?? null,
    instructions: info?.instructions ?? null,
    protocol_version: record.protocolVersion,
    capability_flags: record.capabilityFlags,
    sync_status: record.syncStatus,
    last_synced_at: record.lastSyncedAt,
    sync_error: record.syncError,
  }
}

export function mcpIntegrationView(record: McpIntegrationRecord, detail: boolean, family: IntegrationRoutesFamily = MCP_INTEGRATION_ROUTES): Record<string, unknown> {
  const metadata = mcpMetadataView(record)
  return {
    id: record.id,
    organisation_id: record.organizationId,
    workspace_id: record.workspaceId,
    type: record.workspaceId === null ? 'organisation' : 'workspace',
    name: record.name,
    slug: record.slug,
    description: record.description,
    owner_id: record.ownerId,
    status: record.status,
    url: record.url,
    auth_type: record.authType,
    transport: record.transport,
    configurations: configurationsView(record),
    // The server's own account of itself (from the last sync).
    server_name: metadata.server_name,
    server_version: metadata.server_version,
    title: metadata.title,
    server_description: metadata.description,
    icons: metadata.icons,
    protocol_version: metadata.protocol_version,
    sync_status: metadata.sync_status,
    last_synced_at: metadata.last_synced_at,
    workspaces_count: record.workspaceAccess.filter((access) => access.enabled).length,
    managed_by: record.managedBy,
    created_at: record.createdAt,
    last_updated_at: record.updatedAt,
    ...(detail ? { global_workspace_access: record.globalWorkspaceAccess, sync_error: record.syncError } : {}),
    object: family.object,
  }
}

export function integrationFamilyRoutes(family: IntegrationRoutesFamily): (app: FastifyInstance, ctx: AdminContext) => void {
  return (app, ctx) => registerIntegrationRoutes(app, ctx, family)
}

export const mcpIntegrationRoutes = integrationFamilyRoutes(MCP_INTEGRATION_ROUTES)

function registerIntegrationRoutes(app: FastifyInstance, ctx: AdminContext, family: IntegrationRoutesFamily): void {
  const repository = family.repository(ctx.store)
  const what = family.what
  function requireIntegrationScope(principal: Principal, action: string, workspaceId: string | null): void {
    requireScope(principal, `${workspaceId === null ? 'organisation' : 'workspace'}_${family.scopes}.${action}`, workspaceId, `${what}s`)
  }
  async function loadMcpIntegration(_ctx: AdminContext, principal: Principal, reference: string): Promise<McpIntegrationRecord> {
    return visibleOr404(principal, await repository.get(principal.organizationId, reference), what)
  }

  /** Syncs in the background after a write that may change what the server says (the answer does not wait). */
  function syncSoon(request: FastifyRequest, record: McpIntegrationRecord): void {
    void syncIntegration(ctx.store, repository, family.read, record.organizationId, record.id, ctx.clock).catch((error: unknown) => {
      request.log.warn({ err: error, integrationId: record.id }, `${what} sync failed`)
    })
  }

  app.post('/', async (request) => {
    const principal = principalOf(request)
    const body = parse(createSchema, request.body)
    const workspaceId = await targetWorkspace(ctx, principal, body.workspace_id)
    requireIntegrationScope(principal, 'create', workspaceId)
    refuseSelfGrantedPrivateNetwork(principal, body.configurations)
    const org = principal.organizationId
    const slug = body.slug ?? slugFromName(body.name)
    if (!slug) throw invalid('slug', 'slug: give a slug (the name has no letters or digits to derive one from)')
    if (await repository.get(org, slug)) throw conflict(`${what} "${slug}" already exists`, 'slug')
    if (family.transportRequired && body.transport === undefined) throw invalid('transport', 'transport: required (http or sse)')
    const split = splitConfigurations(body.auth_type as AuthType, body.configurations, undefined)
    const created = await repository.create({
      organizationId: org,
      workspaceId,
      slug,
      name: body.name,
      description: body.description ?? null,
      url: body.url,
      authType: body.auth_type as AuthType,
      transport: body.transport ?? 'http',
      configurations: split.configurations,
      credentials: split.credentials,
      ownerId: principal.user?.id ?? null,
    })
    audit(request, { action: `${family.resource}.create`, resourceType: family.resource, resourceId: created.id, workspaceId })
    syncSoon(request, created)
    return { id: created.id, slug: created.slug }
  })

  app.get('/', async (request) => {
    const principal = principalOf(request)
    const query = parse(listQuery, request.query)
    const { page, pageSize } = pagination({ page_size: 100, ...(request.query as object) })
    let workspaces: string[] | null | undefined = await listWorkspaces(ctx, principal, query.workspace_id)
    if (query.type === 'organisation' || query.type === 'organization') {
      if (!principal.isOrganisationLevel) return { data: [], total: 0, has_more: false }
      workspaces = null
    }
    if (workspaces === null || workspaces === undefined) requireIntegrationScope(principal, 'list', null)
    else for (const workspaceId of workspaces) requireIntegrationScope(principal, 'list', workspaceId)
    const result = await repository.list(principal.organizationId, {
      workspaceIds: workspaces,
      ...(query.type === 'workspace' ? { workspaceScoped: true } : {}),
      ...(query.search ? { search: query.search } : {}),
    }, page, pageSize)
    return { data: result.data.map((record) => mcpIntegrationView(record, false, family)), total: result.total, has_more: (page + 1) * pageSize < result.total }
  })

  app.get<{ Params: { id: string } }>('/:id', async (request) => {
    const principal = principalOf(request)
    const record = await loadMcpIntegration(ctx, principal, request.params.id)
    requireIntegrationScope(principal, 'read', record.workspaceId)
    return mcpIntegrationView(record, true, family)
  })

  app.put<{ Params: { id: string } }>('/:id', async (request) => {
    const principal = principalOf(request)
    const record = await loadMcpIntegration(ctx, principal, request.params.id)
    requireIntegrationScope(principal, 'update', record.workspaceId)
    refuseManaged(record, what, record.slug)
    const body = parse(updateSchema, request.body)
    refuseSelfGrantedPrivateNetwork(principal, body.configurations)
    const authType = (body.auth_type ?? record.authType) as AuthType
    const reconfigured = body.configurations !== undefined || body.auth_type !== undefined
    let split: ReturnType<typeof splitConfigurations> | null = null
    if (reconfigured) {
      const previous = await repository.decryptedCredentials(record.organizationId, record.id)
      // Headers must be given again when they change; an OAuth client secret is kept unless a new one is given.
      split = splitConfigurations(authType, body.configurations, previous.client_secret)
    }
    const updated = await repository.update(record.organizationId, record.id, {
      name: body.name,
      description: body.description,
      url: body.url,
      authType: body.auth_type === undefined ? undefined : authType,
      transport: body.transport,
      configurations: split?.configurations,
      credentials: split?.credentials,
      status: body.status,
    })
    if (!updated) throw notFound(what)
    audit(request, { action: `${family.resource}.update`, resourceType: family.resource, resourceId: record.id, workspaceId: record.workspaceId })
    if (reconfigured || body.url !== undefined || body.transport !== undefined) syncSoon(request, updated)
    return {}
  })

  app.delete<{ Params: { id: string } }>('/:id', async (request) => {
    const principal = principalOf(request)
    const record = await loadMcpIntegration(ctx, principal, request.params.id)
    requireIntegrationScope(principal, 'delete', record.workspaceId)
    refuseManaged(record, what, record.slug)
    await repository.delete(record.organizationId, record.id)
    audit(request, { action: `${family.resource}.delete`, resourceType: family.resource, resourceId: record.id, workspaceId: record.workspaceId })
    return {}
  })

  app.get<{ Params: { id: string } }>('/:id/workspaces', async (request) => {
    const principal = principalOf(request)
    const record = await loadMcpIntegration(ctx, principal, request.params.id)
    requireIntegrationScope(principal, 'read', record.workspaceId)
    const items = record.workspaceAccess.map((access) => ({ id: access.id, enabled: access.enabled, status: access.enabled ? 'active' : 'disabled', created_at: record.createdAt, last_updated_at: record.updatedAt }))
    if ((request.query as { version?: unknown }).version !== undefined) return { data: items, total: items.length, global_workspace_access: record.globalWorkspaceAccess }
    return { workspaces: items, global_workspace_access: record.globalWorkspaceAccess }
  })

  app.put<{ Params: { id: string } }>('/:id/workspaces', async (request) => {
    const principal = principalOf(request)
    const record = await loadMcpIntegration(ctx, principal, request.params.id)
    if (record.workspaceId !== null) throw invalid('workspaces', 'a workspace integration belongs to its workspace; workspace access applies to organisation integrations')
    requireIntegrationScope(principal, 'update', null)
    refuseManaged(record, what, record.slug)
    const body = parse(workspacesUpdateSchema, request.body)
    const access = new Map<string, WorkspaceAccess>(body.override_existing_workspace_access ? [] : record.workspaceAccess.map((entry) => [entry.id, entry]))
    for (const [index, entry] of body.workspaces.entries()) {
      const workspace = await ctx.store.workspaces.get(record.organizationId, entry.id)
      if (!workspace) throw invalid(`workspaces[${index}].id`, `workspaces[${index}].id: workspace not found`)
      access.set(workspace.id, { id: workspace.id, enabled: entry.enabled })
    }
    await repository.update(record.organizationId, record.id, { workspaceAccess: [...access.values()], globalWorkspaceAccess: body.global_workspace_access })
    audit(request, { action: `${family.resource}.workspaces.update`, resourceType: family.resource, resourceId: record.id, details: { workspaces: body.workspaces.length } })
    return { success: true }
  })

  app.get<{ Params: { id: string } }>(`/:id/${family.capabilitiesPath}`, async (request) => {
    const principal = principalOf(request)
    const record = await loadMcpIntegration(ctx, principal, request.params.id)
    requireIntegrationScope(principal, 'read', record.workspaceId)
    const query = parse(onePagedQuery, request.query)
    const items = record.capabilities.filter((capability) => (query.type === undefined || capability.type === query.type) && (query.search === undefined || capability.name.includes(query.search)))
    return { ...capabilityPage(items, query), counts: capabilityCounts(record.capabilities) }
  })

  app.put<{ Params: { id: string } }>(`/:id/${family.capabilitiesPath}`, async (request) => {
    const principal = principalOf(request)
    const record = await loadMcpIntegration(ctx, principal, request.params.id)
    requireIntegrationScope(principal, 'update', record.workspaceId)
    const body = parse(capabilityUpdateSchema, request.body)
    const byKey = new Map<string, McpCapability>(record.capabilities.map((capability) => [`${capability.type}:${capability.name}`, capability]))
    const stamp = ctx.clock().toISOString()
    for (const [index, change] of body.capabilities.entries()) {
      const known = byKey.get(`${change.type}:${change.name}`)
      if (!known) throw invalid(`capabilities[${index}].name`, `capabilities[${index}].name: the server offers no ${change.type} "${change.name}" (as of its last sync)`)
      byKey.set(`${change.type}:${change.name}`, { ...known, enabled: change.enabled, last_updated_at: stamp })
    }
    await repository.update(record.organizationId, record.id, { capabilities: [...byKey.values()] })
    audit(request, { action: `${family.resource}.capabilities.update`, resourceType: family.resource, resourceId: record.id, workspaceId: record.workspaceId, details: { changed: body.capabilities.length } })
    return { success: true }
  })

  app.get<{ Params: { id: string } }>('/:id/metadata', async (request) => {
    const principal = principalOf(request)
    const record = await loadMcpIntegration(ctx, principal, request.params.id)
    requireIntegrationScope(principal, 'read', record.workspaceId)
    return mcpMetadataView(record)
  })

  /** Syncs now and answers what was found (or why nothing could be read). */
  app.post<{ Params: { id: string } }>('/:id/sync', async (request) => {
    const principal = principalOf(request)
    const record = await loadMcpIntegration(ctx, principal, request.params.id)
    requireIntegrationScope(principal, 'update', record.workspaceId)
    const synced = await syncIntegration(ctx.store, repository, family.read, record.organizationId, record.id, ctx.clock)
    if (!synced) throw notFound(what)
    audit(request, { action: `${family.resource}.sync`, resourceType: family.resource, resourceId: record.id, workspaceId: record.workspaceId, details: { sync_status: synced.syncStatus } })
    return mcpMetadataView(synced)
  })

  app.post<{ Params: { id: string } }>('/:id/test', async (request) => {
    const principal = principalOf(request)
    const record = await loadMcpIntegration(ctx, principal, request.params.id)
    requireIntegrationScope(principal, 'read', record.workspaceId)
    return connectivityTest(ctx, family, record)
  })
}

/** Connects and reads the server without storing anything: `{success, response_time_ms, url, server_name, error?}`. */
export async function connectivityTest(ctx: AdminContext, family: IntegrationRoutesFamily, record: McpIntegrationRecord): Promise<Record<string, unknown>> {
  const startedAtMs = Date.now()
  const result = await readIntegration(ctx.store, family.repository(ctx.store), record, family.read)
  const responseTimeMs = Date.now() - startedAtMs
  return result.ok
    ? { success: true, response_time_ms: responseTimeMs, url: record.url, server_name: result.serverInfo.name }
    : { success: false, response_time_ms: responseTimeMs, url: record.url, server_name: record.serverInfo?.name ?? null, error: result.error }
}
