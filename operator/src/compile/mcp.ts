/**
 * MCP servers into the snapshot: each server with its integration's endpoint, the credentials
 * Gatehouse presents upstream (opened here, carried like provider credentials), the tools the
 * integration and the server both enable, and its user access. A server that cannot be served is
 * compiled `disabled` (the gateway answers 503 naming it) and the reason is reported, never its
 * credentials.
 */
import { providerNetwork, type ProviderNetwork, type SnapshotMcpAuth, type SnapshotMcpServer } from '@gatehouse/gateway/snapshot'
import type { McpIntegrationRecord, McpServerRecord, Store } from '../store/index.ts'
import type { McpIntegrationRepository } from '../store/repos/mcp-integrations.ts'

export interface McpCompileSources {
  orgId: string
  privateNetworksAllowed: boolean
  report: (path: string, message: string) => void
}

/** Which workspaces may use an integration: null = all of them. */
export function mcpIntegrationWorkspaces(integration: McpIntegrationRecord): ReadonlySet<string> | null {
  if (integration.workspaceId !== null) return new Set([integration.workspaceId])
  if (integration.globalWorkspaceAccess.enabled) return null
  return new Set(integration.workspaceAccess.filter((access) => access.enabled).map((access) => access.id))
}

/** The tools a server offers its callers: synced, enabled by the integration, and not switched off on the server. */
export function enabledTools(integration: McpIntegrationRecord, server: McpServerRecord, type: 'tool' | 'skill' = 'tool'): string[] {
  const off = new Set(server.capabilityOverrides.filter((o) => o.type === type && !o.enabled).map((o) => o.name))
  return integration.capabilities.filter((c) => c.type === type && c.enabled && !off.has(c.name)).map((c) => c.name)
}

/** Whether the integration's server may be on a private network: the same rule as providers (operator-declared, organisation setting, admin option). */
export function mcpNetwork(integration: McpIntegrationRecord, privateNetworksAllowed: boolean): ProviderNetwork {
  return providerNetwork({
    declaredByOperator: integration.managedBy !== null,
    organisationAllows: privateNetworksAllowed,
    options: integration.configurations.allow_private_network === true ? { allowPrivateNetwork: 'true' } : {},
  })
}

/** The organisation setting network_settings.allow_private_networks. */
export function organisationAllowsPrivateNetworks(settings: Readonly<Record<string, unknown>>): boolean {
  return (settings as { network_settings?: { allow_private_networks?: boolean } }).network_settings?.allow_private_networks === true
}

/** The credentials Gatehouse presents upstream; an incomplete OAuth setup adds a problem and presents none. */
export async function upstreamAuth(repository: McpIntegrationRepository, integration: McpIntegrationRecord, problems: string[]): Promise<SnapshotMcpAuth> {
  const credentials = await repository.decryptedCredentials(integration.organizationId, integration.id)
  switch (integration.authType) {
    case 'none':
      return { type: 'none' }
    case 'headers':
      return { type: 'headers', headers: credentials.headers ?? {} }
    case 'oauth_client_credentials': {
      const oauth = integration.configurations.oauth
      if (!oauth || !credentials.client_secret) {
        problems.push('OAuth client credentials are incomplete (token_url, client_id and client_secret are needed)')
        return { type: 'none' }
      }
      return { type: 'oauth_client_credentials', tokenUrl: oauth.token_url, clientId: oauth.client_id, clientSecret: credentials.client_secret, scope: oauth.scope ?? null, audience: oauth.audience ?? null }
    }
  }
}

/** The fields every served server (MCP or agent) compiles alike. */
export interface ServedServerFields {
  id: string
  slug: string
  name: string
  workspaceId: string
  integrationId: string
  network: ProviderNetwork
  auth: SnapshotMcpAuth
  defaultUserAccess: 'allow' | 'deny'
  userAccess: Record<string, boolean>
  status: 'active' | 'disabled'
}

/**
 * What MCP and agent servers share when compiled: the archived states, the integration's
 * workspaces, the upstream credentials, the network and user access. `problems` holds the
 * family's own checks; every problem is reported under `path` and makes the server `disabled`.
 */
export async function servedServerFields(repository: McpIntegrationRepository, sources: McpCompileSources, path: string, server: McpServerRecord, integration: McpIntegrationRecord, problems: string[]): Promise<ServedServerFields> {
  if (server.status !== 'active') problems.push('the server is archived')
  if (integration.status !== 'active') problems.push(`integration ${integration.slug} is archived`)
  const admitted = mcpIntegrationWorkspaces(integration)
  if (admitted !== null && !admitted.has(server.workspaceId)) problems.push(`integration ${integration.slug} is not enabled for this server's workspace`)
  const auth = await upstreamAuth(repository, integration, problems)
  for (const problem of problems) sources.report(path, problem)
  return {
    id: server.id,
    slug: server.slug,
    name: server.name,
    workspaceId: server.workspaceId,
    integrationId: integration.id,
    network: mcpNetwork(integration, sources.privateNetworksAllowed),
    auth,
    defaultUserAccess: server.defaultUserAccess,
    userAccess: Object.fromEntries(server.userAccess.map((entry) => [entry.user_id, entry.enabled])),
    status: problems.length > 0 ? 'disabled' : 'active',
  }
}

/** Every server of one family in the workspaces in scope, each compiled with its integration (a server without one is left out). */
export async function compileServedServers<T>(
  lists: Promise<[{ data: McpServerRecord[] }, { data: McpIntegrationRecord[] }]>,
  inScope: (workspaceId: string) => boolean,
  compileOne: (server: McpServerRecord, integration: McpIntegrationRecord) => Promise<T>,
): Promise<T[]> {
  const [servers, integrations] = await lists
  const byId = new Map(integrations.data.map((integration) => [integration.id, integration]))
  const compiled = await Promise.all(servers.data.filter((server) => inScope(server.workspaceId)).map((server) => {
    const integration = byId.get(server.integrationId)
    return integration ? compileOne(server, integration) : null
  }))
  return compiled.filter((server): server is Awaited<T> => server !== null)
}

/** Every MCP server of the workspaces in scope. */
export async function compileMcpServers(store: Store, sources: McpCompileSources, inScope: (workspaceId: string) => boolean): Promise<SnapshotMcpServer[]> {
  return compileServedServers(Promise.all([store.mcpServers.list(sources.orgId), store.mcpIntegrations.list(sources.orgId)]), inScope, async (server, integration) => {
    const problems: string[] = []
    // The relay speaks streamable HTTP; the legacy HTTP+SSE transport is synced but not relayed.
    if (integration.transport !== 'http') problems.push(`integration ${integration.slug} uses the legacy SSE transport, which the gateway does not relay`)
    const fields = await servedServerFields(store.mcpIntegrations, sources, `mcpServers.${server.slug}`, server, integration, problems)
    return { ...fields, url: integration.url, tools: enabledTools(integration, server) }
  })
}
