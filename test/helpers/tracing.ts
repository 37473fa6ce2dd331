/**
 * Tracing for an end-to-end test file: the gateway's real SDK, which reads `process.env` (each
 * test file runs in its own worker process), exporting OTLP http/json to a loopback receiver
 * (otlp-receiver.ts) every 50 ms.
 */
import { startTracing, type Tracing } from '@gatehouse/gateway'

/** Starts tracing to `endpoint`, with `env` (more OTEL_* variables) set as well. */
export function startTracingTo(endpoint: string, env: Record<string, string> = {}): Promise<Tracing | null> {
  Object.assign(process.env, { OTEL_EXPORTER_OTLP_ENDPOINT: endpoint, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json', OTEL_BSP_SCHEDULE_DELAY: '50', ...env })
  return startTracing({ serviceName: 'gatehouse-gateway' })
}
