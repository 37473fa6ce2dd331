/**
 * The agent servers of a runtime, indexed once per snapshot, and the checks before a request is
 * relayed or the card is served: the caller holds `agents.invoke`, the server exists in the
 * caller's workspace and is active, and the caller's user is allowed on it.
 */
import type { RuntimeConfig } from '../runtime/compile.ts'
import type { SnapshotAgentServer } from '../snapshot/agents.ts'
import { requireScope, ServedServers } from '../relay/served-servers.ts'

export const AGENTS_INVOKE_SCOPE = 'agents.invoke'

/** A server with its enabled skills as a set (the card's skills are filtered by it). */
export interface CompiledAgentServer {
  readonly record: SnapshotAgentServer
  readonly skills: ReadonlySet<string>
}

const servers = new ServedServers<SnapshotAgentServer, CompiledAgentServer>({
  what: 'agent server',
  records: (runtime) => runtime.snapshot.agentServers,
  compile: (record) => ({ record, skills: new Set(record.skills) }),
})

/** The caller's agent server, checked: scope, workspace, status and user access (403/404/503). */
export function agentServerFor(runtime: RuntimeConfig, workspaceId: string, reference: string, scopes: readonly string[], userId: string | null): CompiledAgentServer {
  requireScope(scopes, AGENTS_INVOKE_SCOPE, 'Calling agents')
  const server = servers.find(runtime, workspaceId, reference)
  servers.requireUserAccess(server, userId)
  return server
}
