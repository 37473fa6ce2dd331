/**
 * The tracing switch every layer reads. The OpenTelemetry SDK is loaded (telemetry/tracing.ts) only
 * when a process is configured to export traces; until then nothing on the request path touches the
 * OpenTelemetry API beyond reading `tracingEnabled()`, so a gateway without tracing pays one boolean
 * test where a span would be made.
 */
import { context, propagation } from '@opentelemetry/api'

let enabled = false

export function tracingEnabled(): boolean {
  return enabled
}

/** Set once the SDK is registered (and back to false when it is shut down). */
export function setTracingEnabled(value: boolean): void {
  enabled = value
}

/**
 * Writes `traceparent`, `tracestate` and `baggage` for the active span (the upstream attempt's) into
 * an outgoing request's headers. Called before the request is signed, so a signer that signs every
 * header (AWS SigV4) signs these too and the provider checks what was really sent.
 */
export function injectTraceContext(headers: Record<string, string>): void {
  if (!enabled) return
  propagation.inject(context.active(), headers)
}
