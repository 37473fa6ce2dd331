/**
 * Syncs one stored integration (MCP or agent): opens its credentials, decides its network the way
 * the snapshot does, reads the server (MCP: sync.ts; agents: the agent card, agents/card.ts) and
 * records the outcome (sync status, server info or card, capabilities or skills). Used by the
 * scheduled worker and by the admin API.
 */
import type { SnapshotMcpAuth } from '@gatehouse/gateway/snapshot'
import { mcpNetwork, organisationAllowsPrivateNetworks, upstreamAuth } from '../compile/mcp.ts'
import type { Clock } from '../clock.ts'
import type { McpIntegrationRecord, McpSyncResult, Store } from '../store/index.ts'
import type { McpIntegrationRepository } from '../store/repos/mcp-integrations.ts'
import { syncMcpServer } from './sync.ts'

/** What a reader gets: the integration, the credentials Gatehouse presents, whether private addresses may be reached. */
export interface IntegrationEndpoint {
  integration: McpIntegrationRecord
  auth: SnapshotMcpAuth
  allowPrivateNetwork: boolean
}

export type IntegrationReader = (endpoint: IntegrationEndpoint) => Promise<McpSyncResult>

export const readMcpServer: IntegrationReader = ({ integration, auth, allowPrivateNetwork }) =>
  syncMcpServer({ url: integration.url, transport: integration.transport, auth, allowPrivateNetwork })

/** Reads the integration's endpoint without storing anything (the connectivity test). */
export async function readIntegration(store: Store, repository: McpIntegrationRepository, integration: McpIntegrationRecord, read: IntegrationReader): Promise<McpSyncResult> {
  const organization = await store.organizations.get(integration.organizationId)
  const problems: string[] = []
  const auth = await upstreamAuth(repository, integration, problems)
  if (problems.length > 0) return { ok: false, error: problems.join('; ') }
  const network = mcpNetwork(integration, organisationAllowsPrivateNetworks(organization?.settings ?? {}))
  return read({ integration, auth, allowPrivateNetwork: network === 'private-allowed' })
}

export async function syncIntegration(store: Store, repository: McpIntegrationRepository, read: IntegrationReader, organizationId: string, id: string, clock: Clock): Promise<McpIntegrationRecord | null> {
  const integration = await repository.get(organizationId, id)
  if (!integration) return null
  const result = await readIntegration(store, repository, integration, read)
  return repository.recordSync(organizationId, integration.id, result, clock())
}
