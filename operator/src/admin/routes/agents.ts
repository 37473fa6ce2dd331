/**
 * Agent (A2A) integrations and servers: /v1/agent-integrations (with /skills, /workspaces,
 * /metadata, /sync, /test, and POST /fetch-agent-card) and /v1/agent-servers (with /skills,
 * /user-access, /metadata, /test). They mirror MCP integrations and servers (the same routes, see
 * mcp-integrations.ts and mcp-servers.ts): an agent integration registers an agent by its URL; its
 * agent card (`/.well-known/agent-card.json`, or `configurations.card_path`) is read through the
 * SSRF-checked fetch on create, on `/sync` and on the sync schedule; the card's skills are the
 * capabilities, switched per integration and per server. Scopes: organisation_agent_integrations,
 * workspace_agent_integrations, agent_servers. The data plane serves each server at
 * `/v1/agents/{slug}` (JSON-RPC) with its card under `/.well-known/agent-card.json`, to keys holding
 * `agents.invoke` (gateway/src/http/routes/agents.ts).
 */
import type { FastifyInstance } from 'fastify'
import { z } from 'zod'
import { organisationAllowsPrivateNetworks } from '../../compile/mcp.ts'
import { fetchAgentCard, readAgentCard } from '../../agents/card.ts'
import type { AdminContext } from '../context.ts'
import { audit, parse, principalOf } from '../http.ts'
import { integrationFamilyRoutes, type IntegrationRoutesFamily } from './mcp-integrations.ts'
import { serverFamilyRoutes, type ServerRoutesFamily } from './mcp-servers.ts'
import { refuseSelfGrantedPrivateNetwork } from './network-access.ts'
import { requireScope, targetWorkspace, workspaceRefSchema } from './resource-access.ts'

export const AGENT_INTEGRATION_ROUTES: IntegrationRoutesFamily = {
  what: 'agent integration',
  resource: 'agent_integration',
  scopes: 'agent_integrations',
  object: 'agent-integration',
  capabilitiesPath: 'skills',
  transportRequired: false,
  repository: (store) => store.agentIntegrations,
  read: fetchAgentCard,
}

export const AGENT_SERVER_ROUTES: ServerRoutesFamily = {
  what: 'agent server',
  resource: 'agent_server',
  scope: 'agent_servers',
  object: 'agent-server',
  capabilitiesPath: 'skills',
  integrationField: 'agent_integration_id',
  integrations: AGENT_INTEGRATION_ROUTES,
  repository: (store) => store.agentServers,
  dataPlanePath: (server) => `/v1/agents/${server.slug}`,
}

const fetchCardSchema = z.strictObject({
  url: z.url({ protocol: /^https?$/ }).max(2048),
  card_path: z.string().min(1).max(1024).regex(/^[^\s?#]*$/, 'a path, without query or fragment').optional(),
  workspace_id: workspaceRefSchema.optional(),
  /** Static headers the agent needs to show its card (not stored). */
  headers: z.record(z.string().min(1).max(255).regex(/^[A-Za-z0-9!#$%&'*+.^_`|~-]+$/), z.string().max(16_384)).optional(),
  allow_private_network: z.boolean().optional(),
})

const registerIntegrations = integrationFamilyRoutes(AGENT_INTEGRATION_ROUTES)

export function agentIntegrationRoutes(app: FastifyInstance, ctx: AdminContext): void {
  /** Reads an agent's card before it is registered: nothing is stored. */
  app.post('/fetch-agent-card', async (request) => {
    const principal = principalOf(request)
    const body = parse(fetchCardSchema, request.body)
    const workspaceId = await targetWorkspace(ctx, principal, body.workspace_id)
    requireScope(principal, `${workspaceId === null ? 'organisation' : 'workspace'}_agent_integrations.create`, workspaceId, 'agent integrations')
    refuseSelfGrantedPrivateNetwork(principal, body.allow_private_network === undefined ? undefined : { allow_private_network: body.allow_private_network })
    const organization = await ctx.store.organizations.get(principal.organizationId)
    const allowPrivateNetwork = body.allow_private_network === true || organisationAllowsPrivateNetworks(organization?.settings ?? {})
    const result = await readAgentCard({ url: body.url, cardPath: body.card_path, auth: body.headers ? { type: 'headers', headers: body.headers } : { type: 'none' }, allowPrivateNetwork })
    audit(request, { action: 'agent_integration.fetch_card', resourceType: 'agent_integration', resourceId: body.url, workspaceId, details: { success: result.ok } })
    return result.ok ? { success: true, agent_card: result.card } : { success: false, error: result.error }
  })
  registerIntegrations(app, ctx)
}

export const agentServerRoutes = serverFamilyRoutes(AGENT_SERVER_ROUTES)
