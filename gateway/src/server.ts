/**
 * Builds the gateway's HTTP server. Never listens by itself: tests use `inject` or listen on an
 * ephemeral port, `main` decides the address.
 */
import { randomUUID } from 'node:crypto'
import Fastify, { LogController, type FastifyInstance } from 'fastify'
import type { FastifyBaseLogger } from 'fastify'
import { GatewayError } from './core/errors.ts'
import { renderError } from './http/error-handler.ts'
import { registerAdminForward, type AdminForwarder } from './http/routes/admin-forward.ts'
import { registerHealthRoutes } from './http/routes/health.ts'
import { registerInferenceRoutes } from './http/routes/inference.ts'
import { registerMessagesRoute } from './http/routes/messages.ts'
import { registerModelRoutes } from './http/routes/models.ts'
import { registerPassthroughRoutes } from './http/routes/passthrough.ts'
import { registerPricingRoute } from './http/routes/pricing.ts'
import { registerRealtimeRoute } from './http/routes/realtime.ts'
import { readTrace } from './pipeline/context.ts'
import type { PipelineFeatures } from './pipeline/build.ts'
import { accountStage } from './pipeline/stages/account.ts'
import type { RuntimeHolder } from './runtime/holder.ts'
import { createGatewayMetrics, type GatewayMetrics } from './telemetry/metrics.ts'
import { registerUsageMetrics } from './usage/metrics.ts'
import type { UsageShipper } from './usage/shipper.ts'

export interface GatewayServerOptions {
  holder: RuntimeHolder
  /** Pepper for HMAC-SHA256 of API keys; the same one the control plane hashes with. */
  pepper: string
  adminForwarder?: AdminForwarder
  logger?: FastifyBaseLogger
  version?: string
  maxBodyBytes?: number
  now?: () => number
  /** When set, GET /metrics needs `Authorization: Bearer <token>`; else it is open (DESIGN). */
  metricsToken?: string
  /** Process-level metrics (CPU, memory, event loop); off where several servers share a process. */
  processMetrics?: boolean
  /** Optional pipeline stages (accounting, limits, guardrails, cache, tracing). */
  features?: PipelineFeatures
  /** Where usage records go: the account stage is composed with this sink (unless `features.account` is given) and its delivery metrics served. */
  usage?: UsageShipper
}

export const DEFAULT_MAX_BODY_BYTES = 25 * 1024 * 1024

function registerMetrics(app: FastifyInstance, metrics: GatewayMetrics, token: string | undefined): void {
  // onResponse also runs for hijacked (streamed) replies, once the stream has ended.
  app.addHook('onResponse', (request, reply, done) => {
    metrics.observeRequest(request.routeOptions.url ?? 'unmatched', request.method, reply.statusCode, reply.elapsedTime / 1000)
    done()
  })
  app.get('/metrics', async (request, reply) => {
    if (token !== undefined && request.headers.authorization !== `Bearer ${token}`) {
      throw new GatewayError('missing_api_key', 'The metrics endpoint needs its bearer token')
    }
    return reply.header('content-type', metrics.registry.contentType).send(await metrics.registry.metrics())
  })
}

export function buildGatewayServer(options: GatewayServerOptions): FastifyInstance {
  const app = Fastify({
    loggerInstance: options.logger,
    // Per-request log lines cost CPU on every call; access logs belong to the log sink, not here.
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES,
    return503OnClosing: true,
    forceCloseConnections: 'idle',
    // A trace id is generated per request anyway; fastify's own counter is enough for its logs.
    requestIdHeader: false,
  })
  app.decorateRequest('gatewayTrace', null as never)

  // Hooks are callback-style, not async: they run on every request, and a promise each is
  // measurable on the hot path.
  app.addHook('onRequest', (request, reply, done) => {
    try {
      request.gatewayTrace = readTrace(request.headers)
    } catch (error) {
      request.gatewayTrace = { traceId: randomUUID(), spanId: null, parentSpanId: null, spanName: null }
      reply.header('x-gateway-trace-id', request.gatewayTrace.traceId)
      done(error as Error)
      return
    }
    reply.header('x-gateway-trace-id', request.gatewayTrace.traceId)
    done()
  })
  app.setErrorHandler((error, request, reply) => renderError(error, request, reply))
  app.setNotFoundHandler((request, reply) =>
    renderError(new GatewayError('route_not_found', `No route ${request.method} ${request.url.split('?')[0]}`), request, reply),
  )

  const metrics = createGatewayMetrics(options.holder, { processMetrics: options.processMetrics ?? false })
  registerMetrics(app, metrics, options.metricsToken)
  if (options.usage) registerUsageMetrics(metrics.registry, options.usage)

  const features = options.usage && !options.features?.account ? { ...options.features, account: accountStage({ sink: options.usage }) } : options.features
  const deps = { holder: options.holder, pepper: options.pepper, now: options.now ?? Date.now, ...(features ? { features } : {}) }
  registerHealthRoutes(app, options.holder, { service: 'gatehouse-gateway', version: options.version ?? '0.1.0', instanceId: randomUUID() })
  registerInferenceRoutes(app, deps)
  registerModelRoutes(app, deps)
  registerPassthroughRoutes(app, deps)
  registerRealtimeRoute(app, deps)
  registerMessagesRoute(app, deps)
  registerPricingRoute(app)
  registerAdminForward(app, options.adminForwarder)
  return app
}
