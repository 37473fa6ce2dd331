/**
 * What the agent relay reads of an A2A JSON-RPC request: its method and id, and whether the relay
 * carries that method. Both bindings' names are known: A2A 0.3 (`message/send`, `message/stream`,
 * `tasks/get`, ...) and A2A 1.0 (`SendMessage`, `SendStreamingMessage`, `GetTask`, ...); the
 * agent's answer passes unread.
 *
 * Carried: sending and streaming messages, and reading, listing, cancelling and re-subscribing to
 * tasks. Refused: push-notification configs (the agent would then call a URL of the client's
 * choosing itself, outside Gatehouse's limits and records) and the extended card (it would hand
 * out the agent's own URLs and the skills Gatehouse switched off).
 */
import { GatewayError } from '../core/errors.ts'
import type { JsonRpcId } from '../mcp/messages.ts'

/** The methods the relay carries, in both bindings. */
export const RELAYED_METHODS: ReadonlySet<string> = new Set([
  'message/send', 'message/stream', 'tasks/get', 'tasks/cancel', 'tasks/resubscribe',
  'SendMessage', 'SendStreamingMessage', 'GetTask', 'CancelTask', 'ListTasks', 'SubscribeToTask',
])

/** JSON-RPC "method not found". */
export const METHOD_NOT_FOUND = -32601

export interface AgentRequest {
  readonly id: JsonRpcId | null
  readonly method: string
}

function isId(value: unknown): value is JsonRpcId {
  return typeof value === 'string' || (typeof value === 'number' && Number.isFinite(value))
}

/** Reads one JSON-RPC request (a 400 for anything else: batches, notifications-only bodies, responses). */
export function readAgentRequest(body: unknown): AgentRequest {
  if (Array.isArray(body)) throw new GatewayError('unsupported_parameter', 'JSON-RPC batches are not supported; send one request per call')
  if (typeof body !== 'object' || body === null) throw new GatewayError('invalid_parameter', 'The body must be one JSON-RPC request (an object)')
  const message = body as Record<string, unknown>
  if (message.jsonrpc !== '2.0') throw new GatewayError('invalid_parameter', 'The body must be a JSON-RPC 2.0 request (jsonrpc: "2.0")', { param: 'jsonrpc' })
  if (typeof message.method !== 'string' || message.method.length === 0) throw new GatewayError('invalid_parameter', 'The request needs a method', { param: 'method' })
  return { id: isId(message.id) ? message.id : null, method: message.method }
}

/** The JSON-RPC error answering a method the relay does not carry; null when it may go upstream. */
export function methodRefusal(request: AgentRequest): Record<string, unknown> | null {
  if (RELAYED_METHODS.has(request.method)) return null
  return { jsonrpc: '2.0', id: request.id, error: { code: METHOD_NOT_FOUND, message: `Method ${request.method} is not available through Gatehouse` } }
}
