/**
 * Forwarding for the OpenAI-shaped groups Gatehouse does not reshape (files, batches, vector
 * stores, assistants...): the client's request goes to the provider with the stored credential in
 * place of the caller's, carrying only allowlisted headers, and its body untouched (a multipart
 * upload streams through without being held in memory). Only allowlisted response headers come back.
 */
import { Readable } from 'node:stream'
import type { HttpMethod } from '../providers/adapter.ts'
import { sendUpstream, type UpstreamResponse } from '../upstream/transport.ts'
import { header, type RequestHeaders } from '../core/headers.ts'
import { readErrorBody } from './dispatch.ts'
import { errorFromProvider } from '../upstream/provider-errors.ts'
import type { RouteTarget } from '../routing/target.ts'

export interface PassthroughCall {
  method: HttpMethod
  /** Path and query below the provider's base URL, e.g. `/files?purpose=batch`. */
  path: string
  headers: RequestHeaders
  /** A JSON object (re-serialised), the raw request stream (multipart), or nothing. */
  body: Record<string, unknown> | Readable | undefined
}

/**
 * Request headers that mean something to an OpenAI-shaped API. Never `authorization` (the stored
 * credential replaces it), never `x-gateway-*`, never hop-by-hop or encoding headers.
 */
const FORWARDED_REQUEST_HEADERS = ['accept', 'openai-beta', 'idempotency-key'] as const

/** Describe a raw body; a JSON body is re-serialised and described by the transport. */
const RAW_BODY_HEADERS = ['content-type', 'content-length'] as const

/** Response headers a client of these APIs reads; everything else (cookies, server, org ids) stays behind. */
const RELAYED_RESPONSE_HEADERS = new Set([
  'content-type',
  'content-length',
  'content-disposition',
  'retry-after',
  'retry-after-ms',
  'openai-processing-ms',
  'openai-version',
  'x-request-id',
])
const RELAYED_RESPONSE_PREFIXES = ['x-ratelimit-']

function pick(headers: RequestHeaders, names: readonly string[], into: Record<string, string>): void {
  for (const name of names) {
    const value = header(headers, name)
    if (value !== undefined) into[name] = value
  }
}

export function forwardedRequestHeaders(headers: RequestHeaders, rawBody: boolean): Record<string, string> {
  const out: Record<string, string> = {}
  pick(headers, FORWARDED_REQUEST_HEADERS, out)
  if (rawBody) pick(headers, RAW_BODY_HEADERS, out)
  return out
}

/** `withLength: false` when the body is re-framed (an event stream relayed chunk by chunk). */
export function relayedResponseHeaders(headers: Readonly<Record<string, string>>, withLength = true): Record<string, string> {
  const out: Record<string, string> = {}
  for (const [name, value] of Object.entries(headers)) {
    const relayed = RELAYED_RESPONSE_HEADERS.has(name) || RELAYED_RESPONSE_PREFIXES.some((prefix) => name.startsWith(prefix))
    if (relayed && (withLength || name !== 'content-length')) out[name] = value
  }
  return out
}

/**
 * Sends the call to the target's provider. A provider error is read (bounded) and thrown as the
 * catalog error for it, so callers of every group see one error shape; success returns the
 * response with its body unread, for the route to relay as it arrives.
 */
export async function forwardToProvider(target: RouteTarget, call: PassthroughCall, signal: AbortSignal): Promise<UpstreamResponse> {
  const rawBody = call.body instanceof Readable
  const response = await sendUpstream(
    target.provider.endpoint,
    { method: call.method, path: call.path, headers: forwardedRequestHeaders(call.headers, rawBody), body: call.body },
    { signal },
  )
  if (response.status >= 400) {
    const body = await readErrorBody(response)
    throw errorFromProvider(target.provider.adapter.parseError(response.status, response.headers, body), target.provider.record.slug)
  }
  return response
}
