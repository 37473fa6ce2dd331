/**
 * Prometheus metrics of one gateway server. A registry per server (not prom-client's global one) so
 * several servers in one process (tests, embedded mode) never collide. The parts:
 *
 *  - HTTP level (every route, health and admin forwarding included): `gatehouse_http_*`, from
 *    fastify's onResponse hook;
 *  - per exchange (data-plane routes): `gatehouse_*` (exchange-metrics.ts) and the GenAI
 *    conventions' `gen_ai_*` (genai-metrics.ts), both fed one `ExchangeOutcome` by the pipeline's
 *    measure stage;
 *  - read at scrape time: snapshot and upstream health (runtime-metrics.ts), usage delivery
 *    (usage/metrics.ts), process (prom-client's default metrics, `gatehouse_` prefixed).
 *
 * Guardrail (guardrails/metrics.ts) and limit (pipeline/stages/limits.ts) metrics are registered by
 * their features on this registry or merged into it; docs/observability.md lists every metric.
 */
import { Registry, collectDefaultMetrics } from 'prom-client'
import type { RuntimeHolder } from '../runtime/holder.ts'
import { createExchangeMetrics, REQUEST_DURATION_BUCKETS } from './exchange-metrics.ts'
import { createGenAiMetrics } from './genai-metrics.ts'
import { boundedLabels, DEFAULT_MAX_MODEL_LABELS } from './labels.ts'
import type { ExchangeOutcome } from './outcome.ts'
import { registerSnapshotMetrics, registerUpstreamHealthMetrics } from './runtime-metrics.ts'
import { SeriesCounter, SeriesHistogram } from './series.ts'

export interface GatewayMetrics {
  readonly registry: Registry
  observeRequest(route: string, method: string, status: number, seconds: number): void
  /** One finished data-plane exchange. */
  observeExchange(outcome: ExchangeOutcome): void
}

export interface GatewayMetricsOptions {
  /** Process-level metrics (CPU, memory, event loop); off where several servers share a process. */
  processMetrics?: boolean
  /** Distinct model label values this registry admits before the rest read `other`. */
  maxModelLabels?: number
}

export function createGatewayMetrics(holder: RuntimeHolder, options: GatewayMetricsOptions = {}): GatewayMetrics {
  const registry = new Registry()
  if (options.processMetrics !== false) collectDefaultMetrics({ register: registry, prefix: 'gatehouse_' })
  const requests = new SeriesCounter({
    name: 'gatehouse_http_requests_total',
    help: 'HTTP requests answered by the gateway, by route template, method and status code.',
    labelNames: ['route', 'method', 'status'],
    registers: [registry],
  })
  const duration = new SeriesHistogram({
    name: 'gatehouse_http_request_duration_seconds',
    help: 'Time from request start to the end of the response (whole stream included), by route template.',
    labelNames: ['route', 'method'],
    buckets: REQUEST_DURATION_BUCKETS,
    registers: [registry],
  })
  registerSnapshotMetrics(registry, holder)
  registerUpstreamHealthMetrics(registry, holder)
  const labels = boundedLabels(options.maxModelLabels ?? DEFAULT_MAX_MODEL_LABELS)
  const exchanges = createExchangeMetrics(registry)
  const genAi = createGenAiMetrics(registry)
  return {
    registry,
    observeRequest(route, method, status, seconds) {
      requests.inc([route, method, String(status)])
      duration.observe([route, method], seconds)
    },
    observeExchange(outcome) {
      exchanges.observe(outcome, labels)
      genAi.observe(outcome, labels)
    },
  }
}
