/**
 * Agent (A2A) servers into the snapshot, as MCP servers are (mcp.ts, whose rules they share: the
 * integration's workspaces, network and upstream credentials): each server with the agent's
 * JSON-RPC endpoint (from its synced card), the skills the integration and the server both enable,
 * its user access and the card itself. A server that cannot be served (archived, never synced, no
 * JSON-RPC interface in its card) is compiled `disabled` (the gateway answers 503 naming it) and
 * the reason is reported, never its credentials.
 */
import { agentJsonRpcEndpoint, type SnapshotAgentServer } from '@gatehouse/gateway/snapshot'
import type { McpIntegrationRecord, McpServerRecord, Store } from '../store/index.ts'
import { enabledTools, mcpIntegrationWorkspaces, mcpNetwork, upstreamAuth, type McpCompileSources } from './mcp.ts'

async function compileServer(store: Store, sources: McpCompileSources, server: McpServerRecord, integration: McpIntegrationRecord | undefined): Promise<SnapshotAgentServer | null> {
  if (!integration) return null
  const path = `agentServers.${server.slug}`
  const problems: string[] = []
  if (server.status !== 'active') problems.push('the server is archived')
  if (integration.status !== 'active') problems.push(`integration ${integration.slug} is archived`)
  const admitted = mcpIntegrationWorkspaces(integration)
  if (admitted !== null && !admitted.has(server.workspaceId)) problems.push(`integration ${integration.slug} is not enabled for this server's workspace`)
  const card = integration.serverInfo?.card ?? null
  const endpoint = card === null ? null : agentJsonRpcEndpoint(card, integration.url)
  if (card === null) problems.push(`integration ${integration.slug} has no synced agent card`)
  else if (endpoint === null) problems.push(`the agent card of integration ${integration.slug} declares no JSON-RPC interface, the only binding the gateway relays`)
  const auth = await upstreamAuth(store.agentIntegrations, integration, problems)
  for (const problem of problems) sources.report(path, problem)
  return {
    id: server.id,
    slug: server.slug,
    name: server.name,
    workspaceId: server.workspaceId,
    integrationId: integration.id,
    // A server with no endpoint is disabled; the integration's URL only fills the required field.
    url: endpoint ?? integration.url,
    network: mcpNetwork(integration, sources.privateNetworksAllowed),
    auth,
    skills: enabledTools(integration, server, 'skill'),
    card: card ?? {},
    defaultUserAccess: server.defaultUserAccess,
    userAccess: Object.fromEntries(server.userAccess.map((entry) => [entry.user_id, entry.enabled])),
    status: problems.length > 0 ? 'disabled' : 'active',
  }
}

/** Every agent server of the workspaces in scope. */
export async function compileAgentServers(store: Store, sources: McpCompileSources, inScope: (workspaceId: string) => boolean): Promise<SnapshotAgentServer[]> {
  const [servers, integrations] = await Promise.all([store.agentServers.list(sources.orgId), store.agentIntegrations.list(sources.orgId)])
  const byId = new Map(integrations.data.map((integration) => [integration.id, integration]))
  const compiled = await Promise.all(servers.data.filter((server) => inScope(server.workspaceId)).map((server) => compileServer(store, sources, server, byId.get(server.integrationId))))
  return compiled.filter((server): server is SnapshotAgentServer => server !== null)
}
