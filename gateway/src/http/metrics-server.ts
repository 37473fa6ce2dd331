/**
 * The Prometheus endpoint. By default it listens on its own port (GATEHOUSE_METRICS_PORT, 9464):
 * the data-plane port faces clients, and counters by route and provider are not theirs to read.
 * A bearer token (GATEHOUSE_METRICS_TOKEN) can guard it on either port.
 */
import { timingSafeEqual } from 'node:crypto'
import type { AddressInfo } from 'node:net'
import Fastify, { type FastifyInstance } from 'fastify'
import type { Registry } from 'prom-client'
import { GatewayError } from '../core/errors.ts'
import { renderError } from './error-handler.ts'

export const DEFAULT_METRICS_PORT = 9464

function tokenMatches(header: string | undefined, token: string): boolean {
  const expected = Buffer.from(`Bearer ${token}`)
  const given = Buffer.from(header ?? '')
  return given.length === expected.length && timingSafeEqual(given, expected)
}

export function registerMetricsRoute(app: FastifyInstance, registry: Registry, token: string | undefined): void {
  app.get('/metrics', async (request, reply) => {
    if (token !== undefined && !tokenMatches(request.headers.authorization, token)) {
      throw new GatewayError('missing_api_key', 'The metrics endpoint needs its bearer token')
    }
    return reply.header('content-type', registry.contentType).send(await registry.metrics())
  })
}

export interface MetricsServer {
  url: string
  close(): Promise<void>
}

/** A separate small server answering GET /metrics only. */
export async function serveMetrics(registry: Registry, options: { host: string; port: number; token?: string | undefined }): Promise<MetricsServer> {
  const app = Fastify({ logger: false })
  app.setErrorHandler((error, request, reply) => renderError(error, request, reply))
  app.setNotFoundHandler((request, reply) => renderError(new GatewayError('route_not_found', `This port serves GET /metrics only, not ${request.method} ${request.url.split('?')[0]}`), request, reply))
  registerMetricsRoute(app, registry, options.token)
  await app.listen({ host: options.host, port: options.port })
  const { address, port } = app.server.address() as AddressInfo
  return { url: `http://${address.includes(':') ? `[${address}]` : address}:${port}`, close: () => app.close() }
}
