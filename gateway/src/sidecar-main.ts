/**
 * Runs a gateway as an injected sidecar (`gatehouse sidecar`). Boot settings, written by the
 * operator's admission webhook into the pod spec (none of them secret):
 *   GATEHOUSE_CONTROL_PLANE_URL    the control plane's snapshot stream
 *   GATEHOUSE_SIDECAR_DEPLOYMENT   namespace/name of the Gatehouse Deployment object binding this pod
 *   GATEHOUSE_SIDECAR_TOKEN_FILE   the projected ServiceAccount token (audience gatehouse)
 *   GATEHOUSE_PORT                 loopback port the application calls (default 8787)
 *   GATEHOUSE_HEALTH_HOST, GATEHOUSE_HEALTH_PORT   the probe listener (default 0.0.0.0:15787)
 *   GATEHOUSE_SNAPSHOT_CACHE       directory for the cached snapshot (default /var/run/gatehouse)
 *   GATEHOUSE_CONTROL_PLANE_CA     PEM bundle the control plane's TLS certificate must chain to (https URLs;
 *                                  the webhook writes the operator's webhook CA), or GATEHOUSE_CONTROL_PLANE_CA_FILE
 *   GATEHOUSE_USAGE_SPOOL          directory usage records wait in while the control plane is away (default: memory)
 *   GATEHOUSE_ACCESS_LOG, GATEHOUSE_ACCESS_LOG_LEVEL, GATEHOUSE_ACCESS_LOG_SAMPLE_RATE   the access log (telemetry/access-log.ts)
 *   OTEL_EXPORTER_OTLP_(TRACES_)ENDPOINT, OTEL_*  traces (telemetry/tracing.ts; off when unset)
 *   GATEHOUSE_TRACE_CONTENT_WORKSPACES  workspaces whose message content goes on spans
 * The data plane listens on 127.0.0.1 whatever the environment says: calls without a key are
 * admitted as the pod's identity, so it must be unreachable from outside the pod.
 *
 * Like a central gateway, a sidecar ACKs each snapshot it applies, ships usage records to the
 * control plane (with its ServiceAccount token, for its bound workspace only) and counts limits
 * and budgets in the shared Redis, whose connection arrives sealed on the stream (and is kept,
 * sealed, in the cache for restarts); until then it counts in process.
 */
import { hostname } from 'node:os'
import { randomBytes } from 'node:crypto'
import { readFile } from 'node:fs/promises'
import type { AddressInfo } from 'node:net'
import type { FastifyBaseLogger } from 'fastify'
import { Agent } from './core/undici.ts'
import { limiterFromEnv } from './limits/from-env.ts'
import { MemoryLimiter } from './limits/memory-limiter.ts'
import { SwitchableLimiter } from './limits/switchable-limiter.ts'
import { snapshotPricedCosts } from './pipeline/stages/limit-prices.ts'
import { limitsStage } from './pipeline/stages/limits.ts'
import { RuntimeHolder } from './runtime/holder.ts'
import { buildGatewayServer } from './server.ts'
import { accessLogSettingsFromEnv } from './telemetry/access-log.ts'
import { contentWorkspacesSetting } from './telemetry/genai-content.ts'
import { startTracing } from './telemetry/tracing.ts'
import type { SidecarIdentity } from './snapshot/sidecar-seal.ts'
import { SIDECAR_USAGE_PATH, type SidecarSettings } from './snapshot/sync-protocol.ts'
import { startSnapshotSync } from './sync/client.ts'
import { loadPersistedSnapshot } from './sync/persisted.ts'
import { httpUsageTransport } from './usage/http-transport.ts'
import { startUsageShipping } from './usage/start.ts'
import { deploymentQuery, readServiceAccountToken, sidecarAcknowledge, sidecarChannel } from './sidecar/channel.ts'
import { serveHealth } from './sidecar/health.ts'
import { openSidecarCache } from './sidecar/local-cache.ts'

export const SIDECAR_HOST = '127.0.0.1'
export const DEFAULT_TOKEN_FILE = '/var/run/secrets/gatehouse.dev/token/token'
export const DEFAULT_CACHE_DIR = '/var/run/gatehouse'
export const DEFAULT_HEALTH_PORT = 15787
/** The key prefix the limits stage is built with; the shared settings' prefix replaces it (SwitchableLimiter). */
const STAGE_KEY_PREFIX = 'gh:'

export interface RunningSidecar {
  url: string
  healthUrl: string
  holder: RuntimeHolder
  identity(): SidecarIdentity | null
  close(): Promise<void>
}

function required(env: NodeJS.ProcessEnv, name: string): string {
  const value = env[name]
  if (!value) throw new Error(`${name} must be set`)
  return value
}

function port(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const value = Number(env[name] ?? fallback)
  if (!Number.isInteger(value) || value < 0 || value > 65535) throw new Error(`${name} must be a port number`)
  return value
}

/** TLS to the control plane: the CA bundle its certificate must chain to (the operator's webhook CA). */
async function controlPlaneTls(env: NodeJS.ProcessEnv, controlPlaneUrl: string): Promise<{ ca: string } | undefined> {
  const caFile = env.GATEHOUSE_CONTROL_PLANE_CA_FILE
  const ca = env.GATEHOUSE_CONTROL_PLANE_CA || (caFile ? await readFile(caFile, 'utf8') : null)
  if (!ca) return undefined
  if (!controlPlaneUrl.startsWith('https:')) throw new Error('a control-plane CA needs an https GATEHOUSE_CONTROL_PLANE_URL')
  return { ca }
}

export async function runSidecar(env: NodeJS.ProcessEnv, logger: FastifyBaseLogger): Promise<RunningSidecar> {
  const controlPlaneUrl = required(env, 'GATEHOUSE_CONTROL_PLANE_URL')
  const deployment = required(env, 'GATEHOUSE_SIDECAR_DEPLOYMENT')
  if (!/^[a-z0-9-]+\/[a-z0-9.-]+$/.test(deployment)) throw new Error('GATEHOUSE_SIDECAR_DEPLOYMENT must be namespace/name')
  const tokenFile = env.GATEHOUSE_SIDECAR_TOKEN_FILE ?? DEFAULT_TOKEN_FILE
  const tls = await controlPlaneTls(env, controlPlaneUrl)
  const cache = await openSidecarCache(env.GATEHOUSE_SNAPSHOT_CACHE ?? DEFAULT_CACHE_DIR)
  const holder = new RuntimeHolder()
  let identity = cache.identity
  const closers: Array<() => Promise<unknown> | unknown> = [() => holder.close()]
  // First, so the server below is built with its trace stage; last to close, so the final spans are flushed.
  const tracing = await startTracing({ serviceName: 'gatehouse-sidecar' })
  if (tracing) closers.unshift(() => tracing.shutdown())
  const dispatcher = tls ? new Agent({ connect: tls }) : undefined
  if (dispatcher) closers.push(() => dispatcher.close())

  // Serve at once from the cached slice (a restarted container), even with the control plane down.
  const cached = await loadPersistedSnapshot(cache.snapshotPath, cache.keyring).catch((error: unknown) => {
    logger.warn({ err: error }, 'the cached snapshot could not be read; waiting for the control plane')
    return null
  })
  if (cached !== null && identity !== null) {
    const result = holder.apply(cached)
    if (result.ok) logger.info({ generation: result.generation }, 'serving the cached snapshot')
  }

  // Counters: in process until the control plane's settings (or the cached ones) name the shared Redis.
  const limiter = new SwitchableLimiter(new MemoryLimiter(), STAGE_KEY_PREFIX)
  closers.push(() => limiter.close())
  let settingsText: string | null = null
  const useSettings = async (settings: SidecarSettings, fromCache: boolean): Promise<void> => {
    const text = JSON.stringify(settings)
    if (text === settingsText) return
    settingsText = text
    const setup = limiterFromEnv(settings.counters)
    await limiter.replace(setup.limiter, setup.keyPrefix)
    logger.info({ counters: setup.description, fromCache }, setup.shared ? 'rate limits and budgets are counted in the shared store' : 'rate limits and budgets are counted in this process only')
    if (!fromCache) await cache.saveSettings(settings).catch((error: unknown) => logger.warn({ err: error }, 'could not cache the sidecar settings'))
  }
  if (cache.settings !== null) await useSettings(cache.settings, true)
  const limitsFactory = limitsStage({ limiter, keyPrefix: STAGE_KEY_PREFIX, log: logger, costs: snapshotPricedCosts(holder) })

  const sync = startSnapshotSync({
    controlPlaneUrl,
    token: '',
    gatewayId: `sidecar-${env.POD_NAME ?? hostname()}`,
    holder,
    keyring: cache.keyring,
    persistPath: cache.snapshotPath,
    logger,
    ...(dispatcher ? { dispatcher } : {}),
    acknowledge: sidecarAcknowledge({ controlPlaneUrl, deployment, tokenFile, ...(dispatcher ? { dispatcher } : {}) }),
    connect: sidecarChannel({
      controlPlaneUrl,
      deployment,
      tokenFile,
      onIdentity: (confirmed) => {
        if (identity === null || JSON.stringify(identity) !== JSON.stringify(confirmed)) logger.info({ identity: confirmed }, 'admitted by the control plane')
        identity = confirmed
        void cache.saveIdentity(confirmed).catch((error: unknown) => logger.warn({ err: error }, 'could not cache the sidecar identity'))
      },
      onSettings: (settings) => useSettings(settings, false).catch((error: unknown) => logger.error({ err: error }, 'the shared-counter settings could not be used; counting as before')),
    }),
  })
  closers.push(() => sync.stop())

  // Usage records go to the control plane as the pod: its token, its binding, its workspace only.
  const delivery = httpUsageTransport({
    controlPlaneUrl,
    token: () => readServiceAccountToken(tokenFile),
    path: `${SIDECAR_USAGE_PATH}?${deploymentQuery(deployment)}`,
    ...(tls ? { connect: tls } : {}),
    onRefused: (status, body) => logger.error({ status, body }, 'the control plane refused a usage batch; it is dropped'),
  })
  const usage = startUsageShipping({
    transport: delivery.transport,
    spoolDir: env.GATEHOUSE_USAGE_SPOOL ?? null,
    onError: (error, context) => logger.warn({ err: (error as Error).message, context }, 'usage records not delivered yet; kept for the next try'),
  })
  closers.push(() => delivery.close())
  closers.push(() => usage.close())

  const app = buildGatewayServer({
    holder,
    // Keys are never checked in sidecar mode (the slice carries none a client could present).
    pepper: randomBytes(32).toString('base64url'),
    logger,
    processMetrics: true,
    accessLog: accessLogSettingsFromEnv(env),
    traceContentWorkspaces: contentWorkspacesSetting(env.GATEHOUSE_TRACE_CONTENT_WORKSPACES),
    features: { limits: limitsFactory },
    metricsRegistries: [limitsFactory.registry],
    usage,
    sidecar: { identity: () => identity },
  })
  await app.listen({ host: SIDECAR_HOST, port: port(env, 'GATEHOUSE_PORT', 8787) })
  closers.push(() => app.close())
  const health = await serveHealth(env.GATEHOUSE_HEALTH_HOST ?? '0.0.0.0', port(env, 'GATEHOUSE_HEALTH_PORT', DEFAULT_HEALTH_PORT), () => holder.ready && identity !== null)
  closers.push(() => health.close())
  const { port: bound } = app.server.address() as AddressInfo
  return {
    url: `http://${SIDECAR_HOST}:${bound}`,
    healthUrl: health.url,
    holder,
    identity: () => identity,
    async close() {
      for (const closer of closers.reverse()) await closer()
    },
  }
}
