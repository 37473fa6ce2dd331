/**
 * What the CLIENT span of one upstream call says, whoever the upstream is: a model provider, an MCP
 * server or an A2A agent. Plain values built here, so one piece of span machinery
 * (pipeline/attempt-span.ts) makes every client span, and the names follow the conventions:
 * GenAI (`execute_tool {tool}`, `invoke_agent {agent}`) and MCP (`mcp.method.name`, `{method}` for
 * a method that calls no tool). The builders run only for a recording span.
 * https://opentelemetry.io/docs/specs/semconv/gen-ai/gen-ai-agent-spans/
 * https://opentelemetry.io/docs/specs/semconv/gen-ai/mcp/
 */
import type { Attributes } from '@opentelemetry/api'
import type { SnapshotAgentServer } from '../snapshot/agents.ts'
import type { SnapshotMcpServer } from '../snapshot/mcp.ts'

export interface UpstreamSpanSpec {
  readonly name: string
  readonly attributes: Attributes
  /** Whether the answer is a model's, so its `gen_ai.response.*` and usage are read off it (a relayed JSON-RPC answer is not). */
  readonly modelAnswer: boolean
}

/** `server.address` and `server.port` of the URL called (the scheme's port when the URL names none). */
export function serverAddressAttributes(url: URL): Attributes {
  return {
    'server.address': url.hostname,
    'server.port': url.port === '' ? (url.protocol === 'https:' ? 443 : 80) : Number(url.port),
  }
}

/** One MCP request to the upstream server; `method` is null for a GET (the server's event stream) or DELETE (ending a session). */
export function mcpCallSpan(server: SnapshotMcpServer, method: string | null, toolName: string | null, httpMethod: string): UpstreamSpanSpec {
  const attributes: Attributes = {
    ...serverAddressAttributes(new URL(server.url)),
    'gatehouse.mcp.server.id': server.id,
    'gatehouse.mcp.server.slug': server.slug,
  }
  if (method !== null) attributes['mcp.method.name'] = method
  if (toolName !== null) {
    attributes['gen_ai.operation.name'] = 'execute_tool'
    attributes['gen_ai.tool.name'] = toolName
    return { name: `execute_tool ${toolName}`, attributes, modelAnswer: false }
  }
  return { name: method ?? `MCP ${httpMethod}`, attributes, modelAnswer: false }
}

/** The A2A methods that hand the agent a message (both bindings): those are `invoke_agent`; reading tasks is not. */
const INVOKING_METHODS: ReadonlySet<string> = new Set(['message/send', 'message/stream', 'SendMessage', 'SendStreamingMessage'])

/** The agent's name as its card gives it, else the server's. */
function agentName(server: SnapshotAgentServer): string {
  return typeof server.card.name === 'string' && server.card.name !== '' ? server.card.name : server.name
}

/** One A2A JSON-RPC call to the upstream agent. */
export function agentCallSpan(server: SnapshotAgentServer, method: string): UpstreamSpanSpec {
  const name = agentName(server)
  const attributes: Attributes = {
    ...serverAddressAttributes(new URL(server.url)),
    'gen_ai.agent.name': name,
    // The agent as Gatehouse serves it: one upstream agent may be served as several servers.
    'gen_ai.agent.id': server.id,
    'gatehouse.agent.server.id': server.id,
    'gatehouse.agent.server.slug': server.slug,
    'gatehouse.agent.method': method,
  }
  if (!INVOKING_METHODS.has(method)) return { name: `${method} ${name}`, attributes, modelAnswer: false }
  attributes['gen_ai.operation.name'] = 'invoke_agent'
  return { name: `invoke_agent ${name}`, attributes, modelAnswer: false }
}

/** What a relayed request's SERVER span adds when it ends: the server called, the method and the tool. */
export function relayedServerAttributes(facts: {
  readonly mcp: { serverId: string; method: string | null; toolName: string | null } | null
  readonly agent: { serverId: string; method: string | null } | null
}, attributes: Attributes = {}): Attributes {
  if (facts.mcp !== null) {
    attributes['gatehouse.mcp.server.id'] = facts.mcp.serverId
    if (facts.mcp.method !== null) attributes['mcp.method.name'] = facts.mcp.method
    if (facts.mcp.toolName !== null) attributes['gen_ai.tool.name'] = facts.mcp.toolName
  }
  if (facts.agent !== null) {
    attributes['gatehouse.agent.server.id'] = facts.agent.serverId
    if (facts.agent.method !== null) attributes['gatehouse.agent.method'] = facts.agent.method
  }
  return attributes
}
