/**
 * What the pipeline knows about one request: tracing identifiers, the runtime it started with
 * (kept until it ends), the abort signal a client disconnect fires, and, once the authenticate
 * stage ran, who is calling and the caller's metadata.
 */
import { GatewayError } from '../core/errors.ts'
import { header, type RequestHeaders } from '../core/headers.ts'
import { randomTraceId } from '../core/random-id.ts'
import type { CompiledConfig } from '../routing/select.ts'
import type { CompiledKey, RuntimeConfig } from '../runtime/compile.ts'

export interface Trace {
  traceId: string
  spanId: string | null
  parentSpanId: string | null
  spanName: string | null
}

/**
 * Who is calling. A workspace API key today; a JWT or a sidecar's bound pod identity produce the
 * same shape, so nothing after authentication cares which it was.
 */
export interface Principal {
  readonly kind: 'api_key' | 'jwt' | 'sidecar'
  /** The key id, the token's subject, or the pod identity. */
  readonly id: string
  readonly workspaceId: string
  readonly userId: string | null
  readonly scopes: readonly string[]
  /** The config a request runs under when it names none (the key's, else the workspace's, else the deployment's). */
  readonly defaultConfig: CompiledConfig | null
  /** The API key, when one authenticated the request. */
  readonly key: CompiledKey | null
  /** Identity details that belong on the usage record (a pod's namespace, service account, name). */
  readonly attributes: Readonly<Record<string, string>>
}

export interface RequestContext {
  readonly trace: Trace
  readonly runtime: RuntimeConfig
  readonly signal: AbortSignal
  readonly startedAtMs: number
  /** Set by the authenticate stage; reading it earlier is a programming error. */
  readonly principal: Principal
  readonly workspaceId: string
  /** The `x-gateway-metadata` object (read right after authentication). */
  readonly metadata: Readonly<Record<string, unknown>>
}

/** The context of one exchange; `authenticated` is called once, by the authenticate stage. */
export class ExchangeContext implements RequestContext {
  readonly trace: Trace
  readonly runtime: RuntimeConfig
  readonly signal: AbortSignal
  readonly startedAtMs: number
  #principal: Principal | null = null
  #metadata: Readonly<Record<string, unknown>> = {}

  constructor(trace: Trace, runtime: RuntimeConfig, signal: AbortSignal, startedAtMs: number) {
    this.trace = trace
    this.runtime = runtime
    this.signal = signal
    this.startedAtMs = startedAtMs
  }

  get principal(): Principal {
    if (this.#principal === null) throw new GatewayError('internal_error', 'The request was used before it was authenticated')
    return this.#principal
  }

  get workspaceId(): string {
    return this.principal.workspaceId
  }

  get metadata(): Readonly<Record<string, unknown>> {
    return this.#metadata
  }

  get isAuthenticated(): boolean {
    return this.#principal !== null
  }

  authenticated(principal: Principal, metadata: Readonly<Record<string, unknown>>): void {
    this.#principal = principal
    this.#metadata = metadata
  }
}

const MAX_ID_LENGTH = 256

function traceHeader(headers: RequestHeaders, name: string): string | null {
  const value = header(headers, name)
  if (value === undefined || value === '') return null
  if (value.length > MAX_ID_LENGTH) throw new GatewayError('invalid_header', `'${name}' must be at most ${MAX_ID_LENGTH} characters`, { param: name })
  return value
}

/** `traceparent`'s trace id (version 00 layout, not all zeros), or null. */
const TRACEPARENT = /^[0-9a-f]{2}-([0-9a-f]{32})-[0-9a-f]{16}-[0-9a-f]{2}/

function traceparentTraceId(headers: RequestHeaders): string | null {
  const value = header(headers, 'traceparent')
  const traceId = value === undefined ? undefined : TRACEPARENT.exec(value)?.[1]
  return traceId === undefined || /^0+$/.test(traceId) ? null : traceId
}

/**
 * A caller on W3C trace context without `x-gateway-trace-id` gets its trace id back as the gateway
 * trace id; a caller without either gets a new W3C trace id, which is the request's OpenTelemetry
 * trace id as it is.
 */
export function readTrace(headers: RequestHeaders): Trace {
  return {
    traceId: traceHeader(headers, 'x-gateway-trace-id') ?? traceparentTraceId(headers) ?? randomTraceId(),
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
