/**
 * Syncs one stored MCP integration: opens its credentials, decides its network the way the
 * snapshot does, reads the server (sync.ts) and records the outcome (sync status, server info,
 * capabilities). Used by the scheduled worker and by `POST /mcp-integrations/{id}/sync`.
 */
import { mcpNetwork, organisationAllowsPrivateNetworks, upstreamAuth } from '../compile/mcp.ts'
import type { Clock } from '../clock.ts'
import type { McpIntegrationRecord, McpSyncResult, Store } from '../store/index.ts'
import { syncMcpServer, type McpSyncOptions } from './sync.ts'

/** Reads the integration's server without storing anything (the connectivity test). */
export async function readMcpIntegration(store: Store, integration: McpIntegrationRecord, options: McpSyncOptions = {}): Promise<McpSyncResult> {
  const organization = await store.organizations.get(integration.organizationId)
  const problems: string[] = []
  const auth = await upstreamAuth(store, integration, problems)
  if (problems.length > 0) return { ok: false, error: problems.join('; ') }
  const network = mcpNetwork(integration, organisationAllowsPrivateNetworks(organization?.settings ?? {}))
  return syncMcpServer({ url: integration.url, transport: integration.transport, auth, allowPrivateNetwork: network === 'private-allowed' }, options)
}

export async function syncMcpIntegration(store: Store, organizationId: string, id: string, clock: Clock, options: McpSyncOptions = {}): Promise<McpIntegrationRecord | null> {
  const integration = await store.mcpIntegrations.get(organizationId, id)
  if (!integration) return null
  const result = await readMcpIntegration(store, integration, options)
  return store.mcpIntegrations.recordSync(organizationId, integration.id, result, clock())
}
