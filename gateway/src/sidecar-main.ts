/**
 * Runs a gateway as an injected sidecar (`gatehouse sidecar`). Boot settings, written by the
 * operator's admission webhook into the pod spec (none of them secret):
 *   GATEHOUSE_CONTROL_PLANE_URL    the control plane's snapshot stream
 *   GATEHOUSE_SIDECAR_DEPLOYMENT   namespace/name of the Gatehouse Deployment object binding this pod
 *   GATEHOUSE_SIDECAR_TOKEN_FILE   the projected ServiceAccount token (audience gatehouse)
 *   GATEHOUSE_PORT                 loopback port the application calls (default 8787)
 *   GATEHOUSE_HEALTH_HOST, GATEHOUSE_HEALTH_PORT   the probe listener (default 0.0.0.0:15787)
 *   GATEHOUSE_SNAPSHOT_CACHE       directory for the cached snapshot (default /var/run/gatehouse)
 *   GATEHOUSE_ACCESS_LOG, GATEHOUSE_ACCESS_LOG_LEVEL, GATEHOUSE_ACCESS_LOG_SAMPLE_RATE   the access log (telemetry/access-log.ts)
 * The data plane listens on 127.0.0.1 whatever the environment says: calls without a key are
 * admitted as the pod's identity, so it must be unreachable from outside the pod.
 */
import { hostname } from 'node:os'
import { randomBytes } from 'node:crypto'
import type { AddressInfo } from 'node:net'
import type { FastifyBaseLogger } from 'fastify'
import { RuntimeHolder } from './runtime/holder.ts'
import { buildGatewayServer } from './server.ts'
import { accessLogSettingsFromEnv } from './telemetry/access-log.ts'
import type { SidecarIdentity } from './snapshot/sidecar-seal.ts'
import { startSnapshotSync } from './sync/client.ts'
import { loadPersistedSnapshot } from './sync/persisted.ts'
import { sidecarChannel } from './sidecar/channel.ts'
import { serveHealth } from './sidecar/health.ts'
import { openSidecarCache } from './sidecar/local-cache.ts'

export const SIDECAR_HOST = '127.0.0.1'
export const DEFAULT_TOKEN_FILE = '/var/run/secrets/gatehouse.dev/token/token'
export const DEFAULT_CACHE_DIR = '/var/run/gatehouse'
export const DEFAULT_HEALTH_PORT = 15787

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

export async function runSidecar(env: NodeJS.ProcessEnv, logger: FastifyBaseLogger): Promise<RunningSidecar> {
  const controlPlaneUrl = required(env, 'GATEHOUSE_CONTROL_PLANE_URL')
  const deployment = required(env, 'GATEHOUSE_SIDECAR_DEPLOYMENT')
  if (!/^[a-z0-9-]+\/[a-z0-9.-]+$/.test(deployment)) throw new Error('GATEHOUSE_SIDECAR_DEPLOYMENT must be namespace/name')
  const cache = await openSidecarCache(env.GATEHOUSE_SNAPSHOT_CACHE ?? DEFAULT_CACHE_DIR)
  const holder = new RuntimeHolder()
  let identity = cache.identity
  const closers: Array<() => Promise<unknown> | unknown> = [() => holder.close()]

  // Serve at once from the cached slice (a restarted container), even with the control plane down.
  const cached = await loadPersistedSnapshot(cache.snapshotPath, cache.keyring).catch((error: unknown) => {
    logger.warn({ err: error }, 'the cached snapshot could not be read; waiting for the control plane')
    return null
  })
  if (cached !== null && identity !== null) {
    const result = holder.apply(cached)
    if (result.ok) logger.info({ generation: result.generation }, 'serving the cached snapshot')
  }

  const sync = startSnapshotSync({
    controlPlaneUrl,
    token: '',
    gatewayId: `sidecar-${env.POD_NAME ?? hostname()}`,
    holder,
    keyring: cache.keyring,
    persistPath: cache.snapshotPath,
    logger,
    connect: sidecarChannel({
      controlPlaneUrl,
      deployment,
      tokenFile: env.GATEHOUSE_SIDECAR_TOKEN_FILE ?? DEFAULT_TOKEN_FILE,
      onIdentity: (confirmed) => {
        if (identity === null || JSON.stringify(identity) !== JSON.stringify(confirmed)) logger.info({ identity: confirmed }, 'admitted by the control plane')
        identity = confirmed
        void cache.saveIdentity(confirmed).catch((error: unknown) => logger.warn({ err: error }, 'could not cache the sidecar identity'))
      },
    }),
  })
  closers.push(() => sync.stop())

  const app = buildGatewayServer({
    holder,
    // Keys are never checked in sidecar mode (the slice carries none a client could present).
    pepper: randomBytes(32).toString('base64url'),
    logger,
    processMetrics: true,
    accessLog: accessLogSettingsFromEnv(env),
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
