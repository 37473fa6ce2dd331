/**
 * Runs a gateway alone. Boot settings come from the environment, read once:
 *   GATEHOUSE_HOST, GATEHOUSE_PORT            where to listen (127.0.0.1:8787)
 *   GATEHOUSE_KEY_PEPPER                      pepper the control plane hashes API keys with (required)
 *   GATEHOUSE_CONTROL_PLANE_URL               subscribe to snapshots there and forward admin routes to it
 *   GATEHOUSE_GATEWAY_TOKEN                   shared token for the snapshot stream
 *   GATEHOUSE_ENCRYPTION_KEY                  keyring that opens sealed snapshots (stream and disk)
 *   GATEHOUSE_SNAPSHOT_CACHE                  where the last good snapshot is kept (sealed)
 *   GATEHOUSE_GATEWAY_ID                      this gateway's name in ACKs (default host-pid)
 *   GATEHOUSE_DEPLOYMENT                      the deployment (slug) this gateway serves: only its workspaces
 *   GATEHOUSE_SNAPSHOT_FILE                   alternatively: run from a plain snapshot JSON file (watched)
 *   GATEHOUSE_FORWARD_ADMIN                   'false': admin routes are not forwarded (data plane only)
 *   GATEHOUSE_METRICS_PORT                    where GET /metrics listens (9464; 'data': on the data-plane port)
 *   GATEHOUSE_METRICS_TOKEN                   when set, GET /metrics needs it as a bearer token
 *   GATEHOUSE_REDIS_KEY_PREFIX                prefix of the response cache's Redis keys (default gh)
 *   GATEHOUSE_JWT_JWKS_URL, GATEHOUSE_JWT_ISSUER, GATEHOUSE_JWT_AUDIENCE
 *                                             JWTs on the data plane, verified here (no control plane needed)
 *   GATEHOUSE_SHUTDOWN_DELAY_MS               on SIGTERM, how long /readyz fails while serving goes on (5000)
 *   GATEHOUSE_SHUTDOWN_TIMEOUT_MS             then how long requests in flight may finish (30000)
 * `gatehouse gateway --host --port --metrics-port` override the first two and the metrics port.
 *   GATEHOUSE_REDIS_URL | _SENTINELS (+ _SENTINEL_NAME) | _CLUSTER_NODES, GATEHOUSE_REDIS_USERNAME,
 *   GATEHOUSE_REDIS_PASSWORD, GATEHOUSE_REDIS_TIMEOUT_MS, GATEHOUSE_LIMITS_KEY_PREFIX
 *                                             one Redis connection for the rate-limit and budget counters and the
 *                                             response cache, shared by every replica (limits/from-env.ts);
 *                                             unset: both in this process only
 *   GATEHOUSE_USAGE_SPOOL                     directory usage records wait in while the control plane is away
 *   GATEHOUSE_USAGE_SPOOL_MAX_BYTES           bound of that spool (default 256 MiB; oldest bodies shed first)
 *   OTEL_EXPORTER_OTLP_(TRACES_)ENDPOINT, OTEL_TRACES_SAMPLER… traces (telemetry/tracing.ts; off when unset)
 *   GATEHOUSE_TRACE_CONTENT_WORKSPACES        workspaces (ids, slugs or *) whose message content goes on spans
 *   GATEHOUSE_ACCESS_LOG, GATEHOUSE_ACCESS_LOG_LEVEL, GATEHOUSE_ACCESS_LOG_SAMPLE_RATE
 *                                             the access log: on/off, level, share of successes logged (telemetry/access-log.ts)
 */
import { watchFile, unwatchFile } from 'node:fs'
import { readFile } from 'node:fs/promises'
import { hostname } from 'node:os'
import type { AddressInfo } from 'node:net'
import type { FastifyBaseLogger } from 'fastify'
import { RedisResponseCache } from './cache/redis.ts'
import { RedisSemanticFeed } from './cache/redis-semantic-feed.ts'
import { SemanticCache } from './cache/semantic-cache.ts'
import { SemanticIndex } from './cache/semantic-index.ts'
import { remoteAdminForwarder } from './http/remote-forwarder.ts'
import { dataPlaneJwtFromEnv } from './pipeline/authenticate-jwt.ts'
import { limiterFromEnv } from './limits/from-env.ts'
import { redisKeyPrefixesFromEnv } from './limits/redis-acl.ts'
import { limitsStage } from './pipeline/stages/limits.ts'
import { snapshotPricedCosts } from './pipeline/stages/limit-prices.ts'
import { RuntimeHolder } from './runtime/holder.ts'
import { drainAndClose, installReadinessGate, shutdownSettings } from './http/shutdown.ts'
import { buildGatewayServer } from './server.ts'
import { parseKeyring } from './snapshot/envelope.ts'
import { startSnapshotSync } from './sync/client.ts'
import { loadPersistedSnapshot } from './sync/persisted.ts'
import { DEFAULT_METRICS_PORT, serveMetrics } from './http/metrics-server.ts'
import { httpUsageTransport } from './usage/http-transport.ts'
import type { UsageShipper } from './usage/shipper.ts'
import { startUsageShipping } from './usage/start.ts'
import { startTracing } from './telemetry/tracing.ts'
import { contentWorkspacesSetting } from './telemetry/genai-content.ts'
import { accessLogSettingsFromEnv } from './telemetry/access-log.ts'

export interface RunningGateway {
  url: string
  /** Where GET /metrics answers (the data-plane URL when GATEHOUSE_METRICS_PORT=data). */
  metricsUrl: string
  holder: RuntimeHolder
  /** SIGTERM: readiness fails, serving goes on for the drain window, then requests in flight finish. */
  drain(): Promise<void>
  close(): Promise<void>
}

/** Command-line flags win over the environment. */
export interface GatewayListenOptions {
  host?: string | undefined
  port?: number | undefined
  /** A port, or 'data' to answer /metrics on the data-plane port. */
  metricsPort?: number | 'data' | undefined
}

/** GATEHOUSE_METRICS_PORT: a port number, or 'data' for the data-plane port. */
export function metricsPortSetting(value: string | undefined): number | 'data' {
  if (value === undefined || value === '') return DEFAULT_METRICS_PORT
  if (value === 'data') return 'data'
  const port = Number(value)
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`invalid metrics port '${value}': a port number, or 'data' for the data-plane port`)
  return port
}

function dataPort(value: string | undefined): number {
  const port = Number(value ?? 8787)
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`invalid GATEHOUSE_PORT '${value}'`)
  return port
}

function required(env: NodeJS.ProcessEnv, name: string): string {
  const value = env[name]
  if (!value) throw new Error(`${name} must be set`)
  return value
}

async function applyFile(holder: RuntimeHolder, path: string, logger: FastifyBaseLogger): Promise<void> {
  const result = holder.apply(JSON.parse(await readFile(path, 'utf8')))
  if (!result.ok) logger.error({ path, problems: result.problems }, 'snapshot file rejected; keeping the previous snapshot')
  else if (!result.unchanged) logger.info({ path, generation: result.generation }, 'snapshot file applied')
}

export async function runGateway(env: NodeJS.ProcessEnv, logger: FastifyBaseLogger, listen: GatewayListenOptions = {}): Promise<RunningGateway> {
  const shutdown = shutdownSettings(env)
  const metricsPort = listen.metricsPort ?? metricsPortSetting(env.GATEHOUSE_METRICS_PORT)
  const host = listen.host ?? env.GATEHOUSE_HOST ?? '127.0.0.1'
  const pepper = required(env, 'GATEHOUSE_KEY_PEPPER')
  const holder = new RuntimeHolder()
  const closers: Array<() => Promise<unknown> | unknown> = [() => holder.close()]
  // First, so the server below is built with its trace stage; last to close, so the final spans are flushed.
  const tracing = await startTracing({ serviceName: 'gatehouse-gateway' })
  if (tracing) closers.unshift(() => tracing.shutdown())
  let forwarder: ReturnType<typeof remoteAdminForwarder> | null = null
  let usage: UsageShipper | null = null

  const snapshotFile = env.GATEHOUSE_SNAPSHOT_FILE
  if (snapshotFile) {
    await applyFile(holder, snapshotFile, logger)
    watchFile(snapshotFile, { interval: 1000 }, () => void applyFile(holder, snapshotFile, logger).catch((error: unknown) => logger.error({ err: error }, 'snapshot file unreadable')))
    closers.push(() => unwatchFile(snapshotFile))
  } else {
    const controlPlaneUrl = required(env, 'GATEHOUSE_CONTROL_PLANE_URL')
    const keyring = parseKeyring(required(env, 'GATEHOUSE_ENCRYPTION_KEY'))
    const persistPath = env.GATEHOUSE_SNAPSHOT_CACHE ?? null
    if (persistPath) {
      // Serve at once from the last good snapshot, even if the control plane is down right now.
      const persisted = await loadPersistedSnapshot(persistPath, keyring).catch((error: unknown) => {
        logger.warn({ err: error }, 'the persisted snapshot could not be read; waiting for the control plane')
        return null
      })
      if (persisted !== null) {
        const result = holder.apply(persisted)
        if (result.ok) logger.info({ generation: result.generation }, 'serving the persisted snapshot')
      }
    }
    const sync = startSnapshotSync({
      controlPlaneUrl,
      token: required(env, 'GATEHOUSE_GATEWAY_TOKEN'),
      gatewayId: env.GATEHOUSE_GATEWAY_ID ?? `${hostname()}-${process.pid}`,
      ...(env.GATEHOUSE_DEPLOYMENT ? { deployment: env.GATEHOUSE_DEPLOYMENT } : {}),
      holder,
      keyring,
      persistPath,
      logger,
    })
    closers.push(() => sync.stop())
    // A gateway behind a public Ingress serves the data plane only unless asked to forward admin routes.
    if (env.GATEHOUSE_FORWARD_ADMIN !== 'false') {
      forwarder = remoteAdminForwarder(controlPlaneUrl)
      closers.push(() => forwarder?.close())
    }
    const delivery = httpUsageTransport({
      controlPlaneUrl,
      token: required(env, 'GATEHOUSE_GATEWAY_TOKEN'),
      onRefused: (status, body) => logger.error({ status, body }, 'the control plane refused a usage batch; it is dropped'),
    })
    const shipper = startUsageShipping({
      transport: delivery.transport,
      spoolDir: env.GATEHOUSE_USAGE_SPOOL ?? null,
      ...(env.GATEHOUSE_USAGE_SPOOL_MAX_BYTES ? { spoolMaxBytes: Number(env.GATEHOUSE_USAGE_SPOOL_MAX_BYTES) } : {}),
      onError: (error, context) => logger.warn({ err: (error as Error).message, context }, 'usage records not delivered yet; spooled for the next try'),
    })
    usage = shipper
    closers.push(() => delivery.close())
    closers.push(() => shipper.close())
  }

  const limits = limiterFromEnv(env)
  closers.push(() => limits.limiter.close())
  if (limits.shared) logger.info({ counters: limits.description }, 'rate limits and budgets are counted in Redis, shared by every replica')
  else logger.warn({ counters: limits.description }, 'rate limits and budgets are counted in this process only: set GATEHOUSE_REDIS_URL when several gateways run')
  const limitsFactory = limitsStage({
    limiter: limits.limiter, keyPrefix: limits.keyPrefix, log: logger, costs: snapshotPricedCosts(holder),
    ...(limits.reservationTtlMs ? { reservationTtlMs: limits.reservationTtlMs } : {}),
  })
  const cachePrefix = redisKeyPrefixesFromEnv(env).cacheKeyPrefix
  const responseCache = limits.redis ? new RedisResponseCache(limits.redis, { prefix: cachePrefix }) : null
  // Each replica indexes semantic entries in process, fed from Redis (cache/redis-semantic-feed.ts).
  const semanticIndex = new SemanticIndex()
  const semanticCache =
    limits.redis && responseCache
      ? new SemanticCache(responseCache, semanticIndex, new RedisSemanticFeed(limits.redis, responseCache, semanticIndex, { streamKey: `${cachePrefix}:semantic-log`, logger }))
      : null
  if (semanticCache) closers.push(() => semanticCache.close())
  const app = buildGatewayServer({
    holder,
    pepper,
    ...(responseCache ? { responseCache } : {}),
    ...(semanticCache ? { semanticCache } : {}),
    logger,
    processMetrics: true,
    accessLog: accessLogSettingsFromEnv(env),
    jwt: dataPlaneJwtFromEnv(env),
    metricsRoute: metricsPort === 'data',
    guardrailsAllowPrivateNetwork: env.GATEHOUSE_GUARDRAILS_ALLOW_PRIVATE_NETWORK === 'true',
    traceContentWorkspaces: contentWorkspacesSetting(env.GATEHOUSE_TRACE_CONTENT_WORKSPACES),
    features: { limits: limitsFactory },
    metricsRegistries: [limitsFactory.registry],
    ...(env.GATEHOUSE_METRICS_TOKEN ? { metricsToken: env.GATEHOUSE_METRICS_TOKEN } : {}),
    ...(forwarder ? { adminForwarder: forwarder.forward } : {}),
    ...(usage ? { usage } : {}),
  })
  const gate = installReadinessGate(app)
  const closeAll = async (): Promise<void> => {
    for (const closer of closers.reverse()) await closer()
  }
  try {
    await app.listen({ host, port: listen.port ?? dataPort(env.GATEHOUSE_PORT) })
  } catch (error) {
    await closeAll()
    throw error
  }
  const { address, port } = app.server.address() as AddressInfo
  const url = `http://${address.includes(':') ? `[${address}]` : address}:${port}`
  let metricsUrl = url
  if (metricsPort !== 'data') {
    const metrics = await serveMetrics(app.gatewayMetrics.registry, { host, port: metricsPort, token: env.GATEHOUSE_METRICS_TOKEN }).catch(async (error: unknown) => {
      await app.close()
      await closeAll()
      throw error
    })
    metricsUrl = metrics.url
    closers.push(() => metrics.close())
  }
  let appClosed = false
  const closeApp = async (): Promise<void> => {
    if (appClosed) return
    appClosed = true
    await app.close()
  }
  closers.push(closeApp)
  return {
    url,
    metricsUrl,
    holder,
    async drain() {
      await drainAndClose(app, gate, shutdown)
      appClosed = true
      await closeAll()
    },
    close: closeAll,
  }
}
