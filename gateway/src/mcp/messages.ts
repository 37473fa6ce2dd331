/**
 * What the relay reads of the JSON-RPC messages it carries (MCP over streamable HTTP): the method
 * of a client request, the tool a `tools/call` names, and, in the server's answers, the result of
 * a `tools/list`, whose tools it filters to those the caller may use. Everything else passes
 * unchanged; the relay never needs to understand the rest of the protocol.
 */
import { GatewayError } from '../core/errors.ts'

export type JsonRpcId = string | number

/** A client message as the relay sees it. */
export interface ClientMessage {
  /** The request's id; null for a notification or a response (the client answering the server). */
  readonly id: JsonRpcId | null
  readonly method: string | null
  /** `tools/call` only: the tool's name. */
  readonly toolName: string | null
}

/** JSON-RPC "invalid params": the code MCP servers answer for an unknown tool. */
export const INVALID_PARAMS = -32602

function isId(value: unknown): value is JsonRpcId {
  return typeof value === 'string' || (typeof value === 'number' && Number.isFinite(value))
}

/**
 * Reads one client message. Batches (JSON arrays) are refused: MCP dropped them in 2025-06-18, and
 * refusing them keeps "one tool call per request" true for limits and usage records.
 */
export function readClientMessage(body: unknown): ClientMessage {
  if (Array.isArray(body)) throw new GatewayError('unsupported_parameter', 'JSON-RPC batches are not supported; send one message per request (MCP 2025-06-18)')
  if (typeof body !== 'object' || body === null) throw new GatewayError('invalid_parameter', 'The body must be one JSON-RPC message (an object)')
  const message = body as Record<string, unknown>
  if (message.jsonrpc !== '2.0') throw new GatewayError('invalid_parameter', 'The body must be a JSON-RPC 2.0 message (jsonrpc: "2.0")', { param: 'jsonrpc' })
  const method = typeof message.method === 'string' ? message.method : null
  const id = isId(message.id) ? message.id : null
  let toolName: string | null = null
  if (method === 'tools/call') {
    const name = (message.params as { name?: unknown } | undefined)?.name
    if (typeof name !== 'string' || name.length === 0) throw new GatewayError('invalid_parameter', 'tools/call needs params.name', { param: 'params.name' })
    toolName = name
  }
  return { id: method === null ? null : id, method, toolName }
}

/** The JSON-RPC error answering a call to a tool the caller may not use (as a server answers an unknown tool). */
export function toolRefusal(id: JsonRpcId | null, toolName: string): Record<string, unknown> {
  return { jsonrpc: '2.0', id, error: { code: INVALID_PARAMS, message: `Tool ${toolName} is not available on this server` } }
}

/**
 * A server message with a `tools/list` result answering `requestId`, its tools narrowed to those
 * `allowed`; any other message is returned as it was (same object).
 */
export function filterToolList(message: unknown, requestId: JsonRpcId, allowed: ReadonlySet<string>): unknown {
  if (typeof message !== 'object' || message === null || Array.isArray(message)) return message
  const { id, result } = message as { id?: unknown; result?: unknown }
  if (id !== requestId || typeof result !== 'object' || result === null) return message
  const tools = (result as { tools?: unknown }).tools
  if (!Array.isArray(tools)) return message
  const kept = tools.filter((tool) => typeof (tool as { name?: unknown } | null)?.name === 'string' && allowed.has((tool as { name: string }).name))
  return { ...message, result: { ...result, tools: kept } }
}
