/**
 * The A2A relay: one JSON-RPC request to Gatehouse's agent endpoint becomes one request to the
 * agent's JSON-RPC endpoint, with Gatehouse's credentials instead of the client's, and the answer
 * (JSON, or an event stream for `message/stream`) comes back byte for byte. Stateless like the MCP
 * relay: task ids are the agent's, so any replica serves any request.
 */
import type { RequestHeaders } from '../core/headers.ts'
import { toJsonText } from '../core/raw-json.ts'
import type { McpUpstreamAuth } from '../mcp/upstream-auth.ts'
import { callUpstream, pickRequestHeaders, pickResponseHeaders, type RelayedAnswer } from '../relay/upstream-call.ts'
import { methodRefusal, readAgentRequest, type AgentRequest } from './messages.ts'
import type { CompiledAgentServer } from './servers.ts'

/** Client headers of the A2A HTTP binding that go upstream (1.0 and 0.3 names); credentials stay here. */
const FORWARDED_REQUEST_HEADERS = ['accept', 'content-type', 'a2a-version', 'a2a-extensions', 'x-a2a-extensions'] as const
const RETURNED_RESPONSE_HEADERS = ['content-type', 'a2a-version', 'a2a-extensions', 'x-a2a-extensions'] as const

export interface AgentRelayRequest {
  readonly headers: RequestHeaders
  readonly body: unknown
  readonly signal: AbortSignal
}

/** What the relay learned, for the usage record and the span. */
export interface AgentRelayFacts {
  method: string | null
  refused: boolean
}

/**
 * Reads the JSON-RPC request into `facts`. `refusal` answers a method the relay does not carry,
 * given here and never sent upstream.
 */
export function admitAgent(request: AgentRelayRequest, facts: AgentRelayFacts): { message: AgentRequest; refusal: Record<string, unknown> | null } {
  const message = readAgentRequest(request.body)
  facts.method = message.method
  const refusal = methodRefusal(message)
  if (refusal !== null) facts.refused = true
  return { message, refusal }
}

/** Sends an admitted request to the agent; its answer comes back as it is. */
export async function relayAgent(server: CompiledAgentServer, request: AgentRelayRequest, auth: McpUpstreamAuth): Promise<RelayedAnswer> {
  const record = server.record
  const allowPrivateNetwork = record.network === 'private-allowed'
  const credentials = await auth.headers(record.auth, allowPrivateNetwork)
  const response = await callUpstream({
    url: record.url,
    method: 'POST',
    headers: { ...pickRequestHeaders(request.headers, FORWARDED_REQUEST_HEADERS), ...credentials },
    body: toJsonText(request.body),
    allowPrivateNetwork,
    signal: request.signal,
    label: `The agent server '${record.slug}'`,
  })
  const headers = pickResponseHeaders(response.headers, RETURNED_RESPONSE_HEADERS)
  const eventStream = (headers['content-type'] ?? '').startsWith('text/event-stream')
  return { kind: 'bytes', status: response.status, headers, body: response.body, eventStream }
}
