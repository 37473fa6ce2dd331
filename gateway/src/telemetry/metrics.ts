/**
 * Prometheus metrics of one gateway server: request counts and latency by route and status, and
 * the snapshot it runs. A registry per server (not prom-client's global one) so several servers in
 * one process (tests, embedded mode) never collide.
 */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client'
import type { RuntimeHolder } from '../runtime/holder.ts'

export interface GatewayMetrics {
  readonly registry: Registry
  observeRequest(route: string, method: string, status: number, seconds: number): void
}

export function createGatewayMetrics(holder: RuntimeHolder, options: { processMetrics?: boolean } = {}): GatewayMetrics {
  const registry = new Registry()
  if (options.processMetrics !== false) collectDefaultMetrics({ register: registry, prefix: 'gatehouse_' })
  const requests = new Counter({
    name: 'gatehouse_http_requests_total',
    help: 'HTTP requests answered by the gateway, by route template, method and status code.',
    labelNames: ['route', 'method', 'status'] as const,
    registers: [registry],
  })
  const duration = new Histogram({
    name: 'gatehouse_http_request_duration_seconds',
    help: 'Time from request start to the end of the response (whole stream included), by route template.',
    labelNames: ['route', 'method'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120],
    registers: [registry],
  })
  const rejected: Counter = new Counter({
    name: 'gatehouse_snapshot_rejections_total',
    help: 'Snapshots this gateway refused (validation or compile problems); it kept the previous one.',
    registers: [registry],
  })
  holder.onRejected(() => rejected.inc())
  new Gauge({
    name: 'gatehouse_snapshot_generation',
    help: 'Generation of the snapshot this gateway serves (-1 before the first one).',
    registers: [registry],
    collect() {
      this.set(holder.current?.generation ?? -1)
    },
  })
  return {
    registry,
    observeRequest(route, method, status, seconds) {
      requests.inc({ route, method, status })
      duration.observe({ route, method }, seconds)
    },
  }
}
