/**
 * MCP servers: /v1/mcp-servers, with /capabilities, /user-access, /metadata and /test. A server is
 * a workspace's instance of an MCP integration, served by the gateway at `/v1/mcp/{slug}/mcp` to
 * keys holding `mcp.invoke`. Needs the mcp_servers scopes in the server's workspace.
 *
 * Capabilities: the integration's list (from its last sync) with the server's own switches on top
 * (`integration_enabled` shows the integration's); a tool is served only when both are on. User
 * access: `default_user_access` (allow or deny) with per-user overrides.
 */
import type { FastifyInstance } from 'fastify'
import { z } from 'zod'
import { conflict, invalid, notFound } from '../../errors.ts'
import type { Principal } from '../../identity/principal.ts'
import { mcpIntegrationWorkspaces } from '../../compile/mcp.ts'
import type { McpCapabilityOverride, McpIntegrationRecord, McpServerRecord, McpUserAccess } from '../../store/index.ts'
import type { AdminContext } from '../context.ts'
import { audit, pagination, parse, principalOf } from '../http.ts'
import { capabilityCounts, capabilityPage, capabilityUpdateSchema, onePagedQuery } from './mcp-capabilities.ts'
import { connectivityTest, mcpMetadataView, MCP_INTEGRATION_ROUTES, type IntegrationRoutesFamily } from './mcp-integrations.ts'
import type { Store } from '../../store/index.ts'
import type { McpServerRepository } from '../../store/repos/mcp-servers.ts'
import { descriptionSchema, listWorkspaces, nameSchema, requireScope, slugFromName, slugSchema, targetWorkspace, visibleOr404, workspaceRefSchema } from './resource-access.ts'

/** What differs between MCP servers and agent servers; the routes are shared. */
export interface ServerRoutesFamily {
  readonly what: string
  readonly resource: 'mcp_server' | 'agent_server'
  /** `mcp_servers.*` or `agent_servers.*`. */
  readonly scope: 'mcp_servers' | 'agent_servers'
  readonly object: 'mcp-server' | 'agent-server'
  readonly capabilitiesPath: 'capabilities' | 'skills'
  /** The body and answer field naming the integration. */
  readonly integrationField: 'mcp_integration_id' | 'agent_integration_id'
  readonly integrations: IntegrationRoutesFamily
  repository(store: Store): McpServerRepository
  /** The Gatehouse path clients call; null where the data plane does not serve the family (agents). */
  dataPlanePath(server: McpServerRecord): string | null
}

/** The Gatehouse path clients call (relative to the gateway's address). */
export function mcpServerPath(server: McpServerRecord): string {
  return `/v1/mcp/${server.slug}/mcp`
}

export const MCP_SERVER_ROUTES: ServerRoutesFamily = {
  what: 'MCP server',
  resource: 'mcp_server',
  scope: 'mcp_servers',
  object: 'mcp-server',
  capabilitiesPath: 'capabilities',
  integrationField: 'mcp_integration_id',
  integrations: MCP_INTEGRATION_ROUTES,
  repository: (store) => store.mcpServers,
  dataPlanePath: mcpServerPath,
}

interface CreateBody {
  name: string
  workspace_id?: string | undefined
  slug?: string | undefined
  description?: string | null | undefined
  [integrationField: string]: unknown
}

function createSchema(family: ServerRoutesFamily): z.ZodType<CreateBody> {
  return z.strictObject({
    name: nameSchema,
    [family.integrationField]: z.string().min(1).max(255),
    workspace_id: workspaceRefSchema.optional(),
    slug: slugSchema.optional(),
    description: descriptionSchema.optional(),
    // A computed key widens zod's inferred type to an index signature; the shape is the one above.
  }) as unknown as z.ZodType<CreateBody>
}

const updateSchema = z.strictObject({
  name: nameSchema.optional(),
  description: descriptionSchema.optional(),
})

const listQuery = z.object({
  workspace_id: workspaceRefSchema.optional(),
  id: z.string().max(10_000).optional(),
  search: z.string().max(255).optional(),
}).loose()

const userAccessSchema = z.strictObject({
  user_access: z.array(z.strictObject({ user_id: z.string().min(1).max(255), enabled: z.boolean() })).max(10_000).optional(),
  default_user_access: z.enum(['allow', 'deny']).optional(),
})

function serverView(family: ServerRoutesFamily, server: McpServerRecord, integration: McpIntegrationRecord | undefined, workspace: { name: string; slug: string } | undefined): Record<string, unknown> {
  const metadata = integration ? mcpMetadataView(integration) : null
  return {
    id: server.id,
    organisation_id: server.organizationId,
    workspace_id: server.workspaceId,
    workspace_name: workspace?.name ?? null,
    workspace_slug: workspace?.slug ?? null,
    name: server.name,
    slug: server.slug,
    description: server.description,
    status: server.status,
    owner_id: server.ownerId,
    [family.integrationField]: server.integrationId,
    [family.integrationField.replace(/_id$/, '_slug')]: integration?.slug ?? null,
    [family.integrationField.replace(/_id$/, '_url')]: integration?.url ?? null,
    auth_type: integration?.authType ?? null,
    url: family.dataPlanePath(server),
    server_name: metadata?.server_name ?? null,
    server_version: metadata?.server_version ?? null,
    title: metadata?.title ?? null,
    server_description: metadata?.description ?? null,
    icons: metadata?.icons ?? null,
    protocol_version: metadata?.protocol_version ?? null,
    sync_status: metadata?.sync_status ?? null,
    last_synced_at: metadata?.last_synced_at ?? null,
    created_at: server.createdAt,
    last_updated_at: server.updatedAt,
    object: family.object,
  }
}

export function serverFamilyRoutes(family: ServerRoutesFamily): (app: FastifyInstance, ctx: AdminContext) => void {
  return (app, ctx) => registerServerRoutes(app, ctx, family)
}

export const mcpServerRoutes = serverFamilyRoutes(MCP_SERVER_ROUTES)

function registerServerRoutes(app: FastifyInstance, ctx: AdminContext, family: ServerRoutesFamily): void {
  const servers = family.repository(ctx.store)
  const integrations = family.integrations.repository(ctx.store)
  const what = family.what
  const create = createSchema(family)
  function requireServerScope(principal: Principal, action: string, workspaceId: string): void {
    requireScope(principal, `${family.scope}.${action}`, workspaceId, `${what}s`)
  }
  async function load(principal: Principal, reference: string): Promise<{ server: McpServerRecord; integration: McpIntegrationRecord }> {
    const server = visibleOr404(principal, await servers.get(principal.organizationId, reference), what)
    const integration = await integrations.get(principal.organizationId, server.integrationId)
    if (!integration) throw notFound(what)
    return { server, integration }
  }

  app.post('/', async (request) => {
    const principal = principalOf(request)
    const body = parse(create, request.body)
    const integrationReference = body[family.integrationField] as string
    const workspaceId = await targetWorkspace(ctx, principal, body.workspace_id)
    if (workspaceId === null) throw invalid('workspace_id', `workspace_id is required: ${what}s belong to a workspace`)
    requireServerScope(principal, 'create', workspaceId)
    const org = principal.organizationId
    const integration = await integrations.get(org, integrationReference)
    if (!integration || (integration.workspaceId !== null && integration.workspaceId !== workspaceId)) throw invalid(family.integrationField, `${family.integrationField}: ${family.integrations.what} not found`)
    const admitted = mcpIntegrationWorkspaces(integration)
    if (admitted !== null && !admitted.has(workspaceId)) throw invalid(family.integrationField, `${family.integrationField}: the integration ${integration.slug} is not enabled for this workspace`)
    const slug = body.slug ?? slugFromName(body.name)
    if (!slug) throw invalid('slug', 'slug: give a slug (the name has no letters or digits to derive one from)')
    if (await servers.get(org, slug, workspaceId)) throw conflict(`${what} "${slug}" already exists in this workspace`, 'slug')
    const server = await servers.create({ organizationId: org, workspaceId, integrationId: integration.id, slug, name: body.name, description: body.description ?? null, ownerId: principal.user?.id ?? null })
    audit(request, { action: `${family.resource}.create`, resourceType: family.resource, resourceId: server.id, workspaceId })
    return { id: server.id, slug: server.slug }
  })

  app.get('/', async (request) => {
    const principal = principalOf(request)
    const query = parse(listQuery, request.query)
    const { page, pageSize } = pagination({ page_size: 100, ...(request.query as object) })
    const workspaces = await listWorkspaces(ctx, principal, query.workspace_id)
    if (workspaces === undefined) requireScope(principal, `${family.scope}.list`, null, `${what}s`)
    else for (const workspaceId of workspaces) requireServerScope(principal, 'list', workspaceId)
    const org = principal.organizationId
    const result = await servers.list(org, {
      ...(workspaces === undefined ? {} : { workspaceIds: workspaces }),
      ...(query.id ? { ids: query.id.split(',').map((id) => id.trim()).filter(Boolean) } : {}),
      ...(query.search ? { search: query.search } : {}),
    }, page, pageSize)
    const [allIntegrations, allWorkspaces] = await Promise.all([integrations.list(org), ctx.store.workspaces.listAll(org)])
    const integrationById = new Map(allIntegrations.data.map((integration) => [integration.id, integration]))
    const workspaceById = new Map(allWorkspaces.map((workspace) => [workspace.id, workspace]))
    return { data: result.data.map((server) => serverView(family, server, integrationById.get(server.integrationId), workspaceById.get(server.workspaceId))), total: result.total }
  })

  app.get<{ Params: { id: string } }>('/:id', async (request) => {
    const principal = principalOf(request)
    const { server, integration } = await load(principal, request.params.id)
    requireServerScope(principal, 'read', server.workspaceId)
    return {
      ...serverView(family, server, integration, undefined),
      [family.integrationField.replace(/_id$/, '_details')]: { id: integration.id, slug: integration.slug, status: integration.status, url: integration.url, transport: integration.transport, auth_type: integration.authType },
    }
  })

  app.put<{ Params: { id: string } }>('/:id', async (request) => {
    const principal = principalOf(request)
    const { server } = await load(principal, request.params.id)
    requireServerScope(principal, 'update', server.workspaceId)
    const body = parse(updateSchema, request.body)
    await servers.update(server.organizationId, server.id, { name: body.name, description: body.description })
    audit(request, { action: `${family.resource}.update`, resourceType: family.resource, resourceId: server.id, workspaceId: server.workspaceId })
    return {}
  })

  app.delete<{ Params: { id: string } }>('/:id', async (request) => {
    const principal = principalOf(request)
    const { server } = await load(principal, request.params.id)
    requireServerScope(principal, 'delete', server.workspaceId)
    await servers.delete(server.organizationId, server.id)
    audit(request, { action: `${family.resource}.delete`, resourceType: family.resource, resourceId: server.id, workspaceId: server.workspaceId })
    return {}
  })

  app.post<{ Params: { id: string } }>('/:id/test', async (request) => {
    const principal = principalOf(request)
    const { server, integration } = await load(principal, request.params.id)
    requireServerScope(principal, 'read', server.workspaceId)
    return connectivityTest(ctx, family.integrations, integration)
  })

  app.get<{ Params: { id: string } }>('/:id/metadata', async (request) => {
    const principal = principalOf(request)
    const { server, integration } = await load(principal, request.params.id)
    requireServerScope(principal, 'read', server.workspaceId)
    return mcpMetadataView(integration)
  })

  app.get<{ Params: { id: string } }>(`/:id/${family.capabilitiesPath}`, async (request) => {
    const principal = principalOf(request)
    const { server, integration } = await load(principal, request.params.id)
    requireServerScope(principal, 'read', server.workspaceId)
    const query = parse(onePagedQuery, request.query)
    const overrides = new Map(server.capabilityOverrides.map((override) => [`${override.type}:${override.name}`, override.enabled]))
    const items = integration.capabilities.map((capability) => {
      const own = overrides.get(`${capability.type}:${capability.name}`) ?? true
      return { ...capability, enabled: own && capability.enabled, integration_enabled: capability.enabled }
    })
    const shown = items.filter((item) => (query.type === undefined || item.type === query.type) && (query.search === undefined || item.name.includes(query.search)))
    return { ...capabilityPage(shown, query), counts: capabilityCounts(items) }
  })

  app.put<{ Params: { id: string } }>(`/:id/${family.capabilitiesPath}`, async (request) => {
    const principal = principalOf(request)
    const { server, integration } = await load(principal, request.params.id)
    requireServerScope(principal, 'update', server.workspaceId)
    const body = parse(capabilityUpdateSchema, request.body)
    const known = new Set(integration.capabilities.map((capability) => `${capability.type}:${capability.name}`))
    const overrides = new Map<string, McpCapabilityOverride>(server.capabilityOverrides.map((override) => [`${override.type}:${override.name}`, override]))
    for (const [index, change] of body.capabilities.entries()) {
      const key = `${change.type}:${change.name}`
      if (!known.has(key)) throw invalid(`capabilities[${index}].name`, `capabilities[${index}].name: the server offers no ${change.type} "${change.name}" (as of its last sync)`)
      overrides.set(key, change)
    }
    await servers.update(server.organizationId, server.id, { capabilityOverrides: [...overrides.values()] })
    audit(request, { action: `${family.resource}.capabilities.update`, resourceType: family.resource, resourceId: server.id, workspaceId: server.workspaceId, details: { changed: body.capabilities.length } })
    return { success: true }
  })

  app.get<{ Params: { id: string } }>('/:id/user-access', async (request) => {
    const principal = principalOf(request)
    const { server } = await load(principal, request.params.id)
    requireServerScope(principal, 'read', server.workspaceId)
    const query = parse(onePagedQuery, request.query)
    const members = (await ctx.store.members.list(server.workspaceId, {}, 0, 10_000)).data
    const overrides = new Map(server.userAccess.map((entry) => [entry.user_id, entry.enabled]))
    const users = new Map<string, { first_name: string | null; last_name: string | null }>()
    for (const member of members) users.set(member.userId, { first_name: member.firstName, last_name: member.lastName })
    for (const entry of server.userAccess) if (!users.has(entry.user_id)) users.set(entry.user_id, { first_name: null, last_name: null })
    const items = [...users.entries()]
      .filter(([userId, names]) => query.search === undefined || [userId, names.first_name, names.last_name].some((value) => value?.includes(query.search!)))
      .map(([userId, names]) => {
        const override = overrides.get(userId)
        // Per-user OAuth connections are not built: no user is ever connected.
        return { user_id: userId, ...names, enabled: override ?? server.defaultUserAccess === 'allow', has_override: override !== undefined, connection_status: 'not_connected' }
      })
    return { ...capabilityPage(items, query), default_user_access: server.defaultUserAccess }
  })

  app.put<{ Params: { id: string } }>('/:id/user-access', async (request) => {
    const principal = principalOf(request)
    const { server } = await load(principal, request.params.id)
    requireServerScope(principal, 'update', server.workspaceId)
    const body = parse(userAccessSchema, request.body)
    const access = new Map<string, McpUserAccess>(server.userAccess.map((entry) => [entry.user_id, entry]))
    for (const entry of body.user_access ?? []) access.set(entry.user_id, entry)
    await servers.update(server.organizationId, server.id, { userAccess: [...access.values()], defaultUserAccess: body.default_user_access })
    audit(request, { action: `${family.resource}.user_access.update`, resourceType: family.resource, resourceId: server.id, workspaceId: server.workspaceId, details: { users: body.user_access?.length ?? 0, default_user_access: body.default_user_access ?? null } })
    return { success: true }
  })
}
