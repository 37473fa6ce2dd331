/**
 * The MCP relay: one client request to Gatehouse's MCP endpoint becomes one request to the
 * upstream server's streamable HTTP endpoint, with Gatehouse's credentials instead of the
 * client's (MCP forbids passing the client's token on), and the answer comes back as the server
 * sent it, JSON or an event stream, except that a `tools/list` result is narrowed to the tools the
 * caller may use. A `tools/call` of any other tool is answered here, never sent upstream.
 *
 * Why a relay and not an SDK server in front of an SDK client: the relay is stateless (the
 * upstream's `Mcp-Session-Id` passes through, so any gateway replica serves any request of a
 * session), adds no second session to keep alive per client, and needs to read only two methods.
 */
import { GatewayError } from '../core/errors.ts'
import type { RequestHeaders } from '../core/headers.ts'
import { toJsonText } from '../core/raw-json.ts'
import { callUpstream, pickRequestHeaders, pickResponseHeaders, type RelayedAnswer } from '../relay/upstream-call.ts'
import { maxBufferedResponseBytes } from '../upstream/transport.ts'
import { filterToolList, readClientMessage, toolRefusal, type ClientMessage } from './messages.ts'
import type { CompiledMcpServer } from './servers.ts'
import { rewriteSseMessages } from './sse-rewrite.ts'
import type { McpUpstreamAuth } from './upstream-auth.ts'

/** Client headers that belong to the MCP transport and go upstream; everything else (credentials first) stays here. */
const FORWARDED_REQUEST_HEADERS = ['accept', 'content-type', 'mcp-session-id', 'mcp-protocol-version', 'last-event-id'] as const
/** Upstream headers the client needs back. */
const RETURNED_RESPONSE_HEADERS = ['content-type', 'mcp-session-id', 'mcp-protocol-version'] as const

export interface McpRelayRequest {
  readonly method: 'POST' | 'GET' | 'DELETE'
  readonly headers: RequestHeaders
  readonly body: unknown
  readonly signal: AbortSignal
}

/** What the relay learned about the request, for usage records. */
export interface McpRelayFacts {
  method: string | null
  toolName: string | null
  denied: boolean
}

/** The refusal of a tool this server does not enable; null when the message may go upstream. */
export function refuseDisallowedTool(server: CompiledMcpServer, message: ClientMessage): Record<string, unknown> | null {
  if (message.toolName === null || server.tools.has(message.toolName)) return null
  return toolRefusal(message.id, message.toolName)
}

async function readJson(body: AsyncIterable<Uint8Array>): Promise<unknown> {
  const limit = maxBufferedResponseBytes()
  const parts: Uint8Array[] = []
  let size = 0
  for await (const part of body) {
    size += part.byteLength
    if (size > limit) throw new GatewayError('upstream_response_too_large', 'The MCP server answered more than the relay buffers')
    parts.push(part)
  }
  const text = Buffer.concat(parts).toString('utf8')
  try {
    return JSON.parse(text)
  } catch {
    throw new GatewayError('upstream_malformed_response', 'The MCP server answered with JSON that does not parse')
  }
}

/**
 * Reads a POST's client message into `facts` (a GET or DELETE carries none: null). `refusal` is the
 * answer to a tool this server does not enable, given here and never sent upstream.
 */
export function admitMcp(server: CompiledMcpServer, request: McpRelayRequest, facts: McpRelayFacts): { message: ClientMessage | null; refusal: Record<string, unknown> | null } {
  if (request.method !== 'POST') return { message: null, refusal: null }
  const message = readClientMessage(request.body)
  facts.method = message.method
  facts.toolName = message.toolName
  const refusal = refuseDisallowedTool(server, message)
  if (refusal !== null) facts.denied = true
  return { message, refusal }
}

/** Sends an admitted request (`message`: from `admitMcp`) to the upstream server. */
export async function relayMcp(server: CompiledMcpServer, request: McpRelayRequest, message: ClientMessage | null, auth: McpUpstreamAuth): Promise<RelayedAnswer> {
  const record = server.record
  const allowPrivateNetwork = record.network === 'private-allowed'
  const credentials = await auth.headers(record.auth, allowPrivateNetwork)
  const response = await callUpstream({
    url: record.url,
    method: request.method,
    headers: { ...pickRequestHeaders(request.headers, FORWARDED_REQUEST_HEADERS), ...credentials },
    ...(request.method === 'POST' ? { body: toJsonText(request.body) } : {}),
    allowPrivateNetwork,
    signal: request.signal,
    label: `The MCP server '${record.slug}'`,
  })
  const status = response.status
  const headers = pickResponseHeaders(response.headers, RETURNED_RESPONSE_HEADERS)
  const contentType = headers['content-type'] ?? ''
  const listId = message?.method === 'tools/list' && message.id !== null ? message.id : null
  if (listId !== null && status < 300 && contentType.startsWith('application/json')) {
    return { kind: 'json', status, headers, body: filterToolList(await readJson(response.body), listId, server.tools) }
  }
  const eventStream = contentType.startsWith('text/event-stream')
  const body = listId !== null && eventStream ? rewriteSseMessages(response.body, (event) => filterToolList(event, listId, server.tools)) : response.body
  return { kind: 'bytes', status, headers, body, eventStream }
}
