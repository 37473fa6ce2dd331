/**
 * Agent (A2A) servers into the snapshot, as MCP servers are (mcp.ts, whose rules they share: the
 * integration's workspaces, network and upstream credentials): each server with the agent's
 * JSON-RPC endpoint (from its synced card), the skills the integration and the server both enable,
 * its user access and the card itself. A server that cannot be served (archived, never synced, no
 * JSON-RPC interface in its card) is compiled `disabled` (the gateway answers 503 naming it) and
 * the reason is reported, never its credentials.
 */
import { agentJsonRpcEndpoint, type SnapshotAgentServer } from '@gatehouse/gateway/snapshot'
import type { Store } from '../store/index.ts'
import { compileServedServers, enabledTools, servedServerFields, type McpCompileSources } from './mcp.ts'

/** Every agent server of the workspaces in scope. */
export async function compileAgentServers(store: Store, sources: McpCompileSources, inScope: (workspaceId: string) => boolean): Promise<SnapshotAgentServer[]> {
  return compileServedServers(Promise.all([store.agentServers.list(sources.orgId), store.agentIntegrations.list(sources.orgId)]), inScope, async (server, integration) => {
    const problems: string[] = []
    const card = integration.serverInfo?.card ?? null
    const endpoint = card === null ? null : agentJsonRpcEndpoint(card, integration.url)
    if (card === null) problems.push(`integration ${integration.slug} has no synced agent card`)
    else if (endpoint === null) problems.push(`the agent card of integration ${integration.slug} declares no JSON-RPC interface, the only binding the gateway relays`)
    const fields = await servedServerFields(store.agentIntegrations, sources, `agentServers.${server.slug}`, server, integration, problems)
    return {
      ...fields,
      // A server with no endpoint is disabled; the integration's URL only fills the required field.
      url: endpoint ?? integration.url,
      skills: enabledTools(integration, server, 'skill'),
      card: card ?? {},
    }
  })
}
