/**
 * What the pipeline knows about one request: tracing identifiers, caller metadata, the runtime it
 * started with (kept until it ends), the authenticated key, and the abort signal that a client
 * disconnect fires.
 */
import { randomUUID } from 'node:crypto'
import { GatewayError } from '../errors.ts'
import type { CompiledKey, RuntimeConfig } from '../runtime/compile.ts'

export type RequestHeaders = Readonly<Record<string, string | string[] | undefined>>

export interface Trace {
  traceId: string
  spanId: string | null
  parentSpanId: string | null
  spanName: string | null
}

export interface RequestContext {
  readonly trace: Trace
  readonly metadata: Readonly<Record<string, unknown>>
  readonly runtime: RuntimeConfig
  readonly key: CompiledKey
  readonly workspaceId: string | null
  readonly signal: AbortSignal
  readonly startedAtMs: number
  /**
   * Sidecar mode: the pod the request comes from (`k8s.namespace.name`, `k8s.serviceaccount.name`,
   * `k8s.pod.name`), authenticated by the control plane; belongs on the usage record
   * (ExchangeFacts.annotations). Absent for key-authenticated requests.
   */
  readonly identity?: Readonly<Record<string, string>>
}

export function header(headers: RequestHeaders, name: string): string | undefined {
  const value = headers[name]
  return Array.isArray(value) ? value[0] : value
}

const MAX_ID_LENGTH = 256

function traceHeader(headers: RequestHeaders, name: string): string | null {
  const value = header(headers, name)
  if (value === undefined || value === '') return null
  if (value.length > MAX_ID_LENGTH) throw new GatewayError('invalid_header', `'${name}' must be at most ${MAX_ID_LENGTH} characters`, { param: name })
  return value
}

export function readTrace(headers: RequestHeaders): Trace {
  return {
    traceId: traceHeader(headers, 'x-gateway-trace-id') ?? randomUUID(),
    spanId: traceHeader(headers, 'x-gateway-span-id'),
    parentSpanId: traceHeader(headers, 'x-gateway-parent-span-id'),
    spanName: traceHeader(headers, 'x-gateway-span-name'),
  }
}

const MAX_METADATA_BYTES = 8192

/** `x-gateway-metadata` must be a JSON object; anything else is a 400. */
export function readMetadata(headers: RequestHeaders): Record<string, unknown> {
  const raw = header(headers, 'x-gateway-metadata')
  if (raw === undefined) return {}
  if (raw.length > MAX_METADATA_BYTES) {
    throw new GatewayError('invalid_header', `'x-gateway-metadata' must be at most ${MAX_METADATA_BYTES} bytes`, { param: 'x-gateway-metadata' })
  }
  let parsed: unknown
  try {
    parsed = JSON.parse(raw)
  } catch {
    throw new GatewayError('invalid_header', `'x-gateway-metadata' must be a JSON object`, { param: 'x-gateway-metadata' })
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new GatewayError('invalid_header', `'x-gateway-metadata' must be a JSON object`, { param: 'x-gateway-metadata' })
  }
  return parsed as Record<string, unknown>
}
