/**
 * The MCP servers of a runtime, indexed once per snapshot, and the checks before a request is
 * relayed: the caller holds `mcp.invoke`, the server exists in the caller's workspace and is
 * active, the caller's user is allowed on it, and (for `tools/call`) the tool is enabled.
 */
import { GatewayError } from '../core/errors.ts'
import type { RuntimeConfig } from '../runtime/compile.ts'
import type { SnapshotMcpServer } from '../snapshot/mcp.ts'

export const MCP_INVOKE_SCOPE = 'mcp.invoke'

/** A server with its enabled tools as a set (checked on every call and list). */
export interface CompiledMcpServer {
  readonly record: SnapshotMcpServer
  readonly tools: ReadonlySet<string>
}

const indexes = new WeakMap<RuntimeConfig, Map<string, CompiledMcpServer>>()

function indexOf(runtime: RuntimeConfig): Map<string, CompiledMcpServer> {
  let index = indexes.get(runtime)
  if (!index) {
    index = new Map()
    for (const record of runtime.snapshot.mcpServers) {
      const compiled: CompiledMcpServer = { record, tools: new Set(record.tools) }
      index.set(`id:${record.id}`, compiled)
      index.set(`${record.workspaceId}/${record.slug}`, compiled)
    }
    indexes.set(runtime, index)
  }
  return index
}

/** The server named by slug or id in the caller's workspace; 404 when there is none (other workspaces' servers included). */
export function findMcpServer(runtime: RuntimeConfig, workspaceId: string, reference: string): CompiledMcpServer {
  const index = indexOf(runtime)
  const server = index.get(`${workspaceId}/${reference}`) ?? index.get(`id:${reference}`)
  if (!server || server.record.workspaceId !== workspaceId) throw new GatewayError('not_found', `No MCP server '${reference}' in this workspace`)
  if (server.record.status !== 'active') {
    throw new GatewayError('upstream_unavailable', `The MCP server '${server.record.slug}' is not available (its integration is archived or cannot be served)`, { headers: { 'retry-after': '30' } })
  }
  return server
}

export function requireMcpScope(scopes: readonly string[]): void {
  if (!scopes.includes(MCP_INVOKE_SCOPE)) throw new GatewayError('insufficient_scope', `Calling MCP servers needs the ${MCP_INVOKE_SCOPE} scope`)
}

/** The server's user access: a user's own override, else the default (service keys have no user). */
export function requireUserAccess(server: CompiledMcpServer, userId: string | null): void {
  const override = userId === null ? undefined : server.record.userAccess[userId]
  const allowed = override ?? server.record.defaultUserAccess === 'allow'
  if (!allowed) throw new GatewayError('forbidden', `This caller may not use the MCP server '${server.record.slug}'`)
}
