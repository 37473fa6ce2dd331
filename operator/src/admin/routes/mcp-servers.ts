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
import { connectivityTest, mcpMetadataView } from './mcp-integrations.ts'
import { descriptionSchema, listWorkspaces, nameSchema, requireScope, slugFromName, slugSchema, targetWorkspace, visibleOr404, workspaceRefSchema } from './resource-access.ts'

const createSchema = z.strictObject({
  name: nameSchema,
  mcp_integration_id: z.string().min(1).max(255),
  workspace_id: workspaceRefSchema.optional(),
  slug: slugSchema.optional(),
  description: descriptionSchema.optional(),
})

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

/** The Gatehouse path clients call (relative to the gateway's address). */
export function mcpServerPath(server: McpServerRecord): string {
  return `/v1/mcp/${server.slug}/mcp`
}

function serverView(server: McpServerRecord, integration: McpIntegrationRecord | undefined, workspace: { name: string; slug: string } | undefined): Record<string, unknown> {
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
    mcp_integration_id: server.integrationId,
    mcp_integration_slug: integration?.slug ?? null,
    mcp_integration_url: integration?.url ?? null,
    auth_type: integration?.authType ?? null,
    url: mcpServerPath(server),
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
    object: 'mcp-server',
  }
}

function requireServerScope(principal: Principal, action: string, workspaceId: string): void {
  requireScope(principal, `mcp_servers.${action}`, workspaceId, 'MCP servers')
}

export function mcpServerRoutes(app: FastifyInstance, ctx: AdminContext): void {
  async function load(principal: Principal, reference: string): Promise<{ server: McpServerRecord; integration: McpIntegrationRecord }> {
    const server = visibleOr404(principal, await ctx.store.mcpServers.get(principal.organizationId, reference), 'MCP server')
    const integration = await ctx.store.mcpIntegrations.get(principal.organizationId, server.integrationId)
    if (!integration) throw notFound('MCP server')
    return { server, integration }
  }

  app.post('/', async (request) => {
    const principal = principalOf(request)
    const body = parse(createSchema, request.body)
    const workspaceId = await targetWorkspace(ctx, principal, body.workspace_id)
    if (workspaceId === null) throw invalid('workspace_id', 'workspace_id is required: an MCP server belongs to a workspace')
    requireServerScope(principal, 'create', workspaceId)
    const org = principal.organizationId
    const integration = await ctx.store.mcpIntegrations.get(org, body.mcp_integration_id)
    if (!integration || (integration.workspaceId !== null && integration.workspaceId !== workspaceId)) throw invalid('mcp_integration_id', 'mcp_integration_id: MCP integration not found')
    const admitted = mcpIntegrationWorkspaces(integration)
    if (admitted !== null && !admitted.has(workspaceId)) throw invalid('mcp_integration_id', `mcp_integration_id: the integration ${integration.slug} is not enabled for this workspace`)
    const slug = body.slug ?? slugFromName(body.name)
    if (!slug) throw invalid('slug', 'slug: give a slug (the name has no letters or digits to derive one from)')
    if (await ctx.store.mcpServers.get(org, slug, workspaceId)) throw conflict(`an MCP server "${slug}" already exists in this workspace`, 'slug')
    const server = await ctx.store.mcpServers.create({ organizationId: org, workspaceId, integrationId: integration.id, slug, name: body.name, description: body.description ?? null, ownerId: principal.user?.id ?? null })
    audit(request, { action: 'mcp_server.create', resourceType: 'mcp_server', resourceId: server.id, workspaceId })
    return { id: server.id, slug: server.slug }
  })

  app.get('/', async (request) => {
    const principal = principalOf(request)
    const query = parse(listQuery, request.query)
    const { page, pageSize } = pagination({ page_size: 100, ...(request.query as object) })
    const workspaces = await listWorkspaces(ctx, principal, query.workspace_id)
    if (workspaces === undefined) requireScope(principal, 'mcp_servers.list', null, 'MCP servers')
    else for (const workspaceId of workspaces) requireServerScope(principal, 'list', workspaceId)
    const org = principal.organizationId
    const result = await ctx.store.mcpServers.list(org, {
      ...(workspaces === undefined ? {} : { workspaceIds: workspaces }),
      ...(query.id ? { ids: query.id.split(',').map((id) => id.trim()).filter(Boolean) } : {}),
      ...(query.search ? { search: query.search } : {}),
    }, page, pageSize)
    const [integrations, allWorkspaces] = await Promise.all([ctx.store.mcpIntegrations.list(org), ctx.store.workspaces.listAll(org)])
    const integrationById = new Map(integrations.data.map((integration) => [integration.id, integration]))
    const workspaceById = new Map(allWorkspaces.map((workspace) => [workspace.id, workspace]))
    return { data: result.data.map((server) => serverView(server, integrationById.get(server.integrationId), workspaceById.get(server.workspaceId))), total: result.total }
  })

  app.get<{ Params: { id: string } }>('/:id', async (request) => {
    const principal = principalOf(request)
    const { server, integration } = await load(principal, request.params.id)
    requireServerScope(principal, 'read', server.workspaceId)
    return {
      ...serverView(server, integration, undefined),
      mcp_integration_details: { id: integration.id, slug: integration.slug, status: integration.status, url: integration.url, transport: integration.transport, auth_type: integration.authType },
    }
  })

  app.put<{ Params: { id: string } }>('/:id', async (request) => {
    const principal = principalOf(request)
    const { server } = await load(principal, request.params.id)
    requireServerScope(principal, 'update', server.workspaceId)
    const body = parse(updateSchema, request.body)
    await ctx.store.mcpServers.update(server.organizationId, server.id, { name: body.name, description: body.description })
    audit(request, { action: 'mcp_server.update', resourceType: 'mcp_server', resourceId: server.id, workspaceId: server.workspaceId })
    return {}
  })

  app.delete<{ Params: { id: string } }>('/:id', async (request) => {
    const principal = principalOf(request)
    const { server } = await load(principal, request.params.id)
    requireServerScope(principal, 'delete', server.workspaceId)
    await ctx.store.mcpServers.delete(server.organizationId, server.id)
    audit(request, { action: 'mcp_server.delete', resourceType: 'mcp_server', resourceId: server.id, workspaceId: server.workspaceId })
    return {}
  })

  app.post<{ Params: { id: string } }>('/:id/test', async (request) => {
    const principal = principalOf(request)
    const { server, integration } = await load(principal, request.params.id)
    requireServerScope(principal, 'read', server.workspaceId)
    return connectivityTest(ctx, integration)
  })

  app.get<{ Params: { id: string } }>('/:id/metadata', async (request) => {
    const principal = principalOf(request)
    const { server, integration } = await load(principal, request.params.id)
    requireServerScope(principal, 'read', server.workspaceId)
    return mcpMetadataView(integration)
  })

  app.get<{ Params: { id: string } }>('/:id/capabilities', async (request) => {
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

  app.put<{ Params: { id: string } }>('/:id/capabilities', async (request) => {
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
    await ctx.store.mcpServers.update(server.organizationId, server.id, { capabilityOverrides: [...overrides.values()] })
    audit(request, { action: 'mcp_server.capabilities.update', resourceType: 'mcp_server', resourceId: server.id, workspaceId: server.workspaceId, details: { changed: body.capabilities.length } })
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
    await ctx.store.mcpServers.update(server.organizationId, server.id, { userAccess: [...access.values()], defaultUserAccess: body.default_user_access })
    audit(request, { action: 'mcp_server.user_access.update', resourceType: 'mcp_server', resourceId: server.id, workspaceId: server.workspaceId, details: { users: body.user_access?.length ?? 0, default_user_access: body.default_user_access ?? null } })
    return { success: true }
  })
}
