/**
 * Builds the gateway's HTTP server. Never listens by itself: tests use `inject` or listen on an
 * ephemeral port, `main` decides the address.
 */
import { randomUUID } from 'node:crypto'
import Fastify, { LogController, type FastifyInstance } from 'fastify'
import type { FastifyBaseLogger } from 'fastify'
import { GatewayError } from './core/errors.ts'
import { randomTraceId } from './core/random-id.ts'
import { renderError } from './http/error-handler.ts'
import { registerJsonBodyParser } from './http/json-body.ts'
import { lazySchemaCompilers } from './http/schema-compilers.ts'
import { registerAdminForward, type AdminForwarder } from './http/routes/admin-forward.ts'
import { registerHealthRoutes } from './http/routes/health.ts'
import { registerInferenceRoutes } from './http/routes/inference.ts'
import { registerMcpRoutes } from './http/routes/mcp.ts'
import { registerAgentRoutes } from './http/routes/agents.ts'
import { registerMessagesRoute } from './http/routes/messages.ts'
import { registerModelRoutes } from './http/routes/models.ts'
import { registerPassthroughRoutes } from './http/routes/passthrough.ts'
import { registerPricingRoute } from './http/routes/pricing.ts'
import { registerPromptRoutes } from './http/routes/prompts.ts'
import { registerRealtimeRoute } from './http/routes/realtime.ts'
import { loopbackOnly, type SidecarAuth } from './pipeline/authenticate-sidecar.ts'
import { readTrace } from './pipeline/context.ts'
import { MemoryResponseCache } from './cache/memory.ts'
import type { ResponseCache } from './cache/response-cache.ts'
import { SemanticCache } from './cache/semantic-cache.ts'
import { SemanticIndex } from './cache/semantic-index.ts'
import type { PipelineFeatures } from './pipeline/build.ts'
import { cacheStage } from './pipeline/stages/cache.ts'
import type { DataPlaneJwt } from './pipeline/authenticate-jwt.ts'
import { accountStage } from './pipeline/stages/account.ts'
import { traceStage } from './pipeline/stages/trace.ts'
import { tracingEnabled } from './core/tracing.ts'
import type { RuntimeHolder } from './runtime/holder.ts'
import { Registry } from 'prom-client'
import { createGatewayMetrics, type GatewayMetrics } from './telemetry/metrics.ts'
import { registerMetricsRoute } from './http/metrics-server.ts'
import { createGuardrailMetrics } from './guardrails/metrics.ts'
import { guardrailFeature } from './pipeline/stages/guardrails.ts'
import { registerUsageMetrics } from './usage/metrics.ts'
import { createAccessLog, DEFAULT_ACCESS_LOG, type AccessLogSettings } from './telemetry/access-log.ts'
import { measureStage } from './pipeline/stages/measure.ts'
import { holdTickObjectShape } from './core/tick-shape.ts'
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
  /**
   * false: no /metrics on this server; the process serves `app.gatewayMetrics.registry` on its own
   * port (telemetry/metrics-server.ts). Default true (tests, and GATEHOUSE_METRICS_PORT=data).
   */
  metricsRoute?: boolean
  /** Process-level metrics (CPU, memory, event loop); off where several servers share a process. */
  processMetrics?: boolean
  /** Optional pipeline stages (accounting, limits, tracing); `cache` and the guardrail stages replace the default ones. */
  features?: PipelineFeatures
  /** Where cached answers live: Redis shared by replicas; in process when not given. */
  responseCache?: ResponseCache
  /** Semantic mode's index over `responseCache` (with Redis: fed from it, cache/redis-semantic-feed.ts); in process when neither is given. */
  semanticCache?: SemanticCache
  /** Sidecar mode: loopback peers only, no key, every call as the pod's identity (pipeline/authenticate-sidecar.ts). */
  sidecar?: SidecarAuth
  /** Data-plane JWT verification (`DataPlaneJwt.fromEnv`); absent: API keys only. */
  jwt?: DataPlaneJwt | null
  /** Guardrail webhooks, partner checks and image fetches may reach private and loopback addresses. */
  guardrailsAllowPrivateNetwork?: boolean
  /** Feature stages' own metrics (limits), served on /metrics with the server's. */
  metricsRegistries?: Registry[]
  /** Workspaces (ids or slugs, `*`) whose message content goes on spans when tracing is on (GATEHOUSE_TRACE_CONTENT_WORKSPACES). */
  traceContentWorkspaces?: readonly string[]
  /** Where usage records go: the account stage is composed with this sink (unless `features.account` is given) and its delivery metrics served. */
  usage?: UsageShipper
  /** The access log (one line per data-plane exchange, on `logger`): settings, or null for none. Default: on, info, every exchange. */
  accessLog?: AccessLogSettings | null
  /** Distinct model label values the metrics admit before the rest read `other` (telemetry/labels.ts). */
  maxModelLabels?: number
}

export const DEFAULT_MAX_BODY_BYTES = 25 * 1024 * 1024

declare module 'fastify' {
  interface FastifyInstance {
    gatewayMetrics: GatewayMetrics
  }
}

function registerMetrics(app: FastifyInstance, own: GatewayMetrics, token: string | undefined, route: boolean, extra: readonly Registry[]): void {
  // Feature stages' registries (limits) are served with the server's own.
  const metrics: GatewayMetrics = extra.length === 0 ? own : { ...own, registry: Registry.merge([own.registry, ...extra]) }
  // onResponse also runs for hijacked (streamed) replies, once the stream has ended.
  app.addHook('onResponse', (request, reply, done) => {
    metrics.observeRequest(request.routeOptions.url ?? 'unmatched', request.method, reply.statusCode, reply.elapsedTime / 1000)
    done()
  })
  app.decorate('gatewayMetrics', metrics)
  if (route) registerMetricsRoute(app, metrics.registry, token)
}

export function buildGatewayServer(options: GatewayServerOptions): FastifyInstance {
  // Keeps process.nextTick on V8's fast path for the life of the process (core/tick-shape.ts).
  holdTickObjectShape()
  const app = Fastify({
    loggerInstance: options.logger,
    // Per-request log lines cost CPU on every call; access logs belong to the log sink, not here.
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES,
    return503OnClosing: true,
    forceCloseConnections: 'idle',
    // A trace id is generated per request anyway; fastify's own counter is enough for its logs.
    requestIdHeader: false,
    schemaController: { compilersFactory: lazySchemaCompilers() },
  })
  app.decorateRequest('gatewayTrace', null as never)
  registerJsonBodyParser(app)

  // Hooks are callback-style, not async: they run on every request, and a promise each is
  // measurable on the hot path.
  app.addHook('onRequest', (request, reply, done) => {
    try {
      request.gatewayTrace = readTrace(request.headers)
    } catch (error) {
      request.gatewayTrace = { traceId: randomTraceId(), spanId: null, parentSpanId: null, spanName: null }
      reply.header('x-gateway-trace-id', request.gatewayTrace.traceId)
      done(error as Error)
      return
    }
    reply.header('x-gateway-trace-id', request.gatewayTrace.traceId)
    done()
  })
  if (options.sidecar) {
    // Key-less calls are admitted as the pod: nothing but the pod itself may reach this server.
    app.addHook('onRequest', (request, _reply, done) => {
      try {
        loopbackOnly(request.socket.remoteAddress)
      } catch (error) {
        done(error as Error)
        return
      }
      done()
    })
  }
  app.setErrorHandler((error, request, reply) => renderError(error, request, reply))
  app.setNotFoundHandler((request, reply) =>
    renderError(new GatewayError('route_not_found', `No route ${request.method} ${request.url.split('?')[0]}`), request, reply),
  )

  const metrics = createGatewayMetrics(options.holder, { processMetrics: options.processMetrics ?? false, ...(options.maxModelLabels ? { maxModelLabels: options.maxModelLabels } : {}) })
  if (options.usage) registerUsageMetrics(metrics.registry, options.usage)

  const responseCache = options.responseCache ?? new MemoryResponseCache()
  if (!options.responseCache) app.addHook('onClose', () => responseCache.close())
  const semanticCache = options.semanticCache ?? (options.responseCache ? undefined : new SemanticCache(responseCache, new SemanticIndex()))
  if (semanticCache && !options.semanticCache) app.addHook('onClose', () => semanticCache.close())
  const guardrails = guardrailFeature({
    allowPrivateNetwork: options.guardrailsAllowPrivateNetwork ?? false,
    metrics: createGuardrailMetrics(metrics.registry),
    onAsyncResults: (exchange, results) => options.logger?.info({ traceId: exchange.context.trace.traceId, hookResults: results }, 'async guardrail verdicts'),
    onProblems: (problems) => options.logger?.warn({ problems }, 'guardrail checks this gateway cannot run; they fail on every request'),
  })
  const accessLogSettings = options.accessLog === undefined ? DEFAULT_ACCESS_LOG : options.accessLog
  const accessLog = options.logger && accessLogSettings ? createAccessLog(options.logger, accessLogSettings) : null
  // After every feature registered its metrics on the server's registry: the merge copies what is there.
  registerMetrics(app, metrics, options.metricsToken, options.metricsRoute ?? true, options.metricsRegistries ?? [])
  const features: PipelineFeatures = {
    measure: measureStage({ observe: (outcome) => metrics.observeExchange(outcome), accessLog }),
    cache: cacheStage({ cache: responseCache, ...(semanticCache ? { semantic: semanticCache } : {}), logger: app.log }),
    guardrailsBefore: guardrails.before,
    guardrailsAfter: guardrails.after,
    ...(options.usage ? { account: accountStage({ sink: options.usage }) } : {}),
    // Spans only where the process started tracing (telemetry/tracing.ts): no stage otherwise.
    ...(tracingEnabled() ? { trace: traceStage({ contentWorkspaces: options.traceContentWorkspaces ?? [] }) } : {}),
    ...options.features,
  }
  const deps = { holder: options.holder, pepper: options.pepper, now: options.now ?? Date.now, features, jwt: options.jwt ?? null, ...(options.sidecar ? { sidecar: options.sidecar } : {}) }
  registerHealthRoutes(app, options.holder, { service: 'gatehouse-gateway', version: options.version ?? '0.1.0', instanceId: randomUUID() })
  registerInferenceRoutes(app, deps)
  registerModelRoutes(app, deps)
  registerPassthroughRoutes(app, deps)
  registerRealtimeRoute(app, deps)
  registerMessagesRoute(app, deps)
  registerPromptRoutes(app, deps)
  registerMcpRoutes(app, deps)
  registerAgentRoutes(app, deps)
  registerPricingRoute(app)
  registerAdminForward(app, options.adminForwarder)
  return app
}
