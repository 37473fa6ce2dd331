/**
 * One request from the gateway to a relayed server (an MCP server, an A2A agent): through the
 * SSRF-checked dispatcher with the server's network setting, with only the headers the protocol
 * needs plus Gatehouse's credentials (the client's own never travel), and the answer's protocol
 * headers picked out for the client. The upstream refusing Gatehouse's credentials is a
 * dependency failure (the client authenticated to Gatehouse), never a 401 to the client. The
 * `traceparent` sent names the active span: the call's CLIENT span when the request is traced.
 */
import { request as undiciRequest } from '../core/undici.ts'
import { GatewayError } from '../core/errors.ts'
import { header, type RequestHeaders } from '../core/headers.ts'
import { injectTraceContext } from '../core/tracing.ts'
import { ssrfSafeDispatcher } from '../upstream/ssrf.ts'
import { transportError } from '../upstream/transport.ts'

export interface UpstreamCall {
  readonly url: string
  readonly method: 'POST' | 'GET' | 'DELETE'
  readonly headers: Record<string, string>
  /** JSON text (POST only). */
  readonly body?: string
  readonly allowPrivateNetwork: boolean
  readonly signal: AbortSignal
  /** Names the server in errors: "The MCP server 'tools'". */
  readonly label: string
}

/** A relayed server's answer: JSON the relay read (and may have changed), or the upstream's bytes as they come. */
export type RelayedAnswer =
  | { readonly kind: 'json'; readonly status: number; readonly headers: Record<string, string>; readonly body: unknown }
  | { readonly kind: 'bytes'; readonly status: number; readonly headers: Record<string, string>; readonly body: AsyncIterable<Uint8Array>; readonly eventStream: boolean }

export interface UpstreamResponse {
  readonly status: number
  readonly headers: Record<string, string | string[] | undefined>
  readonly body: AsyncIterable<Uint8Array> & { dump(): Promise<void> }
}

/** The client headers named in `names` (lower case), as the upstream gets them. */
export function pickRequestHeaders(headers: RequestHeaders, names: readonly string[]): Record<string, string> {
  const out: Record<string, string> = {}
  for (const name of names) {
    const value = header(headers, name)
    if (value !== undefined) out[name] = value
  }
  return out
}

/** The upstream response headers named in `names` (lower case) that the client gets back. */
export function pickResponseHeaders(headers: Record<string, string | string[] | undefined>, names: readonly string[]): Record<string, string> {
  const out: Record<string, string> = {}
  for (const name of names) {
    const value = headers[name]
    if (typeof value === 'string') out[name] = value
  }
  return out
}

export async function callUpstream(call: UpstreamCall): Promise<UpstreamResponse> {
  const headers = { ...call.headers }
  injectTraceContext(headers)
  let response: Awaited<ReturnType<typeof undiciRequest>>
  try {
    response = await undiciRequest(call.url, {
      method: call.method,
      headers,
      ...(call.body !== undefined ? { body: call.body } : {}),
      dispatcher: ssrfSafeDispatcher(call.allowPrivateNetwork),
      signal: call.signal,
    })
  } catch (error) {
    throw transportError(error, call.signal)
  }
  const status = response.statusCode
  if (status === 401 || status === 403) {
    await response.body.dump()
    throw new GatewayError('upstream_error', `${call.label} refused Gatehouse's credentials (HTTP ${status})`)
  }
  return { status, headers: response.headers, body: response.body }
}
