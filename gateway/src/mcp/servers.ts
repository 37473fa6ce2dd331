/**
 * The MCP servers of a runtime, indexed once per snapshot, and the checks before a request is
 * relayed: the caller holds `mcp.invoke`, the server exists in the caller's workspace and is
 * active, the caller's user is allowed on it, and (for `tools/call`) the tool is enabled.
 */
import type { RuntimeConfig } from '../runtime/compile.ts'
import type { SnapshotMcpServer } from '../snapshot/mcp.ts'
import { requireScope, ServedServers } from '../relay/served-servers.ts'

export const MCP_INVOKE_SCOPE = 'mcp.invoke'

/** A server with its enabled tools as a set (checked on every call and list). */
export interface CompiledMcpServer {
  readonly record: SnapshotMcpServer
  readonly tools: ReadonlySet<string>
}

const servers = new ServedServers<SnapshotMcpServer, CompiledMcpServer>({
  what: 'MCP server',
  records: (runtime) => runtime.snapshot.mcpServers,
  compile: (record) => ({ record, tools: new Set(record.tools) }),
})

/** The server named by slug or id in the caller's workspace; 404 when there is none (other workspaces' servers included). */
export function findMcpServer(runtime: RuntimeConfig, workspaceId: string, reference: string): CompiledMcpServer {
  return servers.find(runtime, workspaceId, reference)
}

export function requireMcpScope(scopes: readonly string[]): void {
  requireScope(scopes, MCP_INVOKE_SCOPE, 'Calling MCP servers')
}

/** The server's user access: a user's own override, else the default (service keys have no user). */
export function requireUserAccess(server: CompiledMcpServer, userId: string | null): void {
  servers.requireUserAccess(server, userId)
}
