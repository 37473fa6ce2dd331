/**
 * The tracing switch every layer reads. The OpenTelemetry SDK is loaded (telemetry/tracing.ts) only
 * when a process is configured to export traces; until then nothing on the request path touches the
 * OpenTelemetry API beyond reading `tracingEnabled()`, so a gateway without tracing pays one boolean
 * test where a span would be made.
 */
import { context, createContextKey, propagation, trace, TraceFlags, type Context, type SpanContext } from '@opentelemetry/api'
import type { RequestHeaders } from './headers.ts'

let enabled = false
/** The headers the registered propagators read (`traceparent`, `tracestate`, `baggage` by default), lowercase as Node gives them. */
let propagationFields: readonly string[] = []
let spanless = false
let traceparentOnly = false

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
  traceparentOnly = value && w3cPropagation(propagationFields)
}

/** Whether the propagators are W3C's (`tracecontext`, with or without `baggage`): `traceparent` among what they write, nothing but W3C's. */
function w3cPropagation(fields: readonly string[]): boolean {
  return fields.includes('traceparent') && fields.every((field) => W3C_FIELDS.has(field))
}

/**
 * Whether W3C's propagator would write nothing but `traceparent` for a span of ours: the
 * propagators are W3C's, the span has no tracestate and its context no baggage. The upstream
 * call's context then carries that header (`withUpstreamTraceparent`), written once, instead of
 * the propagators checking the span's ids and writing it for each request sent (under callgrind,
 * about 3,000 instructions a traced attempt). Otherwise the propagators inject as usual.
 */
export function traceparentAlone(spanContext: SpanContext, parent: Context): boolean {
  return traceparentOnly && spanContext.traceState === undefined && propagation.getBaggage(parent) === undefined
}

/**
 * Whether a request that starts a trace may go without a span (`spanlessRoots`): when the sampler
 * drops every root, and the propagators are W3C's, `traceparent` among them, so that what an
 * unsampled root sends upstream is one `traceparent` with flags 00 and nothing else (a root has no
 * tracestate, and a request with no propagation header brings no baggage).
 */
export function spanlessRootsAllowed(fields: readonly string[], rootsNeverSampled: boolean): boolean {
  return rootsNeverSampled && w3cPropagation(fields)
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

/** The `traceparent` a context carries for upstream calls, written once (`withUpstreamTraceparent`). */
const UPSTREAM_TRACEPARENT = createContextKey('gatehouse: traceparent written once')

interface UpstreamTraceparent {
  /** The span context it was written for: a context below it with another span (a child) does not use it. */
  readonly spanContext: SpanContext
  readonly header: string
}

/** The `traceparent` W3C's propagator writes for `spanContext` (W3CTraceContextPropagator in @opentelemetry/core). */
function traceparentOf(spanContext: SpanContext): string {
  return `00-${spanContext.traceId}-${spanContext.spanId}-0${Number(spanContext.traceFlags || TraceFlags.NONE).toString(16)}`
}

/**
 * `active` carrying the `traceparent` header to send for its span, written once, where W3C's
 * propagator would write it and nothing else: an unsampled root's (telemetry/caller-context.ts),
 * an attempt span's (`traceparentAlone`). `injectTraceContext` writes it while that span is the
 * active one.
 */
export function withUpstreamTraceparent(active: Context): Context {
  const spanContext = trace.getSpanContext(active)
  if (spanContext === undefined) return active
  return active.setValue(UPSTREAM_TRACEPARENT, { spanContext, header: traceparentOf(spanContext) } satisfies UpstreamTraceparent)
}

/** The header `withUpstreamTraceparent` stored for the active span of `active`; undefined without one. */
export function upstreamTraceparentOf(active: Context): string | undefined {
  const stored = active.getValue(UPSTREAM_TRACEPARENT) as UpstreamTraceparent | undefined
  return stored !== undefined && stored.spanContext === trace.getSpanContext(active) ? stored.header : undefined
}

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
  const traceparent = upstreamTraceparentOf(active)
  if (traceparent !== undefined) headers.traceparent = traceparent
  else propagation.inject(active, headers)
}
