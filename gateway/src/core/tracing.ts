/**
 * The tracing switch every layer reads. The OpenTelemetry SDK is loaded (telemetry/tracing.ts) only
 * when a process is configured to export traces; until then nothing on the request path touches the
 * OpenTelemetry API beyond reading `tracingEnabled()`, so a gateway without tracing pays one boolean
 * test where a span would be made.
 */
import { context, createContextKey, propagation } from '@opentelemetry/api'
import type { RequestHeaders } from './headers.ts'

let enabled = false
/** The headers the registered propagators read (`traceparent`, `tracestate`, `baggage` by default), lowercase as Node gives them. */
let propagationFields: readonly string[] = []
let spanless = false

/** What W3C's propagators (`tracecontext`, `baggage`: OTEL_PROPAGATORS's default) read and write. */
const W3C_FIELDS: ReadonlySet<string> = new Set(['traceparent', 'tracestate', 'baggage'])

export function tracingEnabled(): boolean {
  return enabled
}

/**
 * Set once the SDK is registered (and back to false when it is shut down). `rootsNeverSampled`:
 * the sampler drops every span without a parent, and every child of an unsampled parent (always
 * off, alone or under the parent-based sampler; a trace-id ratio of 0).
 */
export function setTracingEnabled(value: boolean, options: { rootsNeverSampled?: boolean } = {}): void {
  enabled = value
  propagationFields = value ? propagation.fields().map((name) => name.toLowerCase()) : []
  spanless = value && spanlessRootsAllowed(propagationFields, options.rootsNeverSampled === true)
}

/**
 * Whether a request that starts a trace may go without a span (`spanlessRoots`): when the sampler
 * drops every root, and the propagators are W3C's, `traceparent` among them, so that what an
 * unsampled root sends upstream is one `traceparent` with flags 00 and nothing else (a root has no
 * tracestate, and a request with no propagation header brings no baggage).
 */
export function spanlessRootsAllowed(fields: readonly string[], rootsNeverSampled: boolean): boolean {
  return rootsNeverSampled && fields.includes('traceparent') && fields.every((field) => W3C_FIELDS.has(field))
}

/**
 * Whether requests that start their trace are left without a span (see `spanlessRootsAllowed`):
 * the SDK's span for such a request is never recorded, so it is not made; the request's context
 * carries the `traceparent` it would have sent (telemetry/caller-context.ts `unsampledRootContext`).
 * Under callgrind (test/bench/instructions.ts --variant trace0) the span, the context it went into
 * and the propagators' writing were about 10,000 instructions a request.
 */
export function spanlessRoots(): boolean {
  return spanless
}

/** The `traceparent` an unsampled root's context carries for upstream calls, written once. */
export const UPSTREAM_TRACEPARENT = createContextKey('gatehouse: traceparent of an unsampled root')

/**
 * Whether a request carries a header one of the registered propagators reads (a propagator names
 * them in `fields()`). When it carries none, extracting finds nothing, and most requests carry none:
 * skipping it saves the composite propagator's walk and one header lookup a propagator (under
 * callgrind, 2026-11-29: `callerParent` less its ids' checks, 2,093 instructions a request before,
 * 1,251 after).
 */
export function carriesPropagation(headers: RequestHeaders): boolean {
  for (let index = 0; index < propagationFields.length; index++) if (headers[propagationFields[index]!] !== undefined) return true
  return false
}

/**
 * Writes `traceparent`, `tracestate` and `baggage` for the active span (the upstream attempt's) into
 * an outgoing request's headers. Called before the request is signed, so a signer that signs every
 * header (AWS SigV4) signs these too and the provider checks what was really sent.
 */
export function injectTraceContext(headers: Record<string, string>): void {
  if (!enabled) return
  const active = context.active()
  const traceparent = active.getValue(UPSTREAM_TRACEPARENT)
  if (typeof traceparent === 'string') headers.traceparent = traceparent
  else propagation.inject(active, headers)
}
