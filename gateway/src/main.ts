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
 *   GATEHOUSE_METRICS_TOKEN                   when set, GET /metrics needs it as a bearer token
 *   GATEHOUSE_USAGE_SPOOL                     directory usage records wait in while the control plane is away
 *   GATEHOUSE_USAGE_SPOOL_MAX_BYTES           bound of that spool (default 256 MiB; oldest bodies shed first)
 */
import { watchFile, unwatchFile } from 'node:fs'
import { readFile } from 'node:fs/promises'
import { hostname } from 'node:os'
import type { AddressInfo } from 'node:net'
import type { FastifyBaseLogger } from 'fastify'
import { remoteAdminForwarder } from './http/remote-forwarder.ts'
import { RuntimeHolder } from './runtime/holder.ts'
import { buildGatewayServer } from './server.ts'
import { parseKeyring } from './snapshot/envelope.ts'
import { startSnapshotSync } from './sync/client.ts'
import { loadPersistedSnapshot } from './sync/persisted.ts'
import { httpUsageTransport } from './usage/http-transport.ts'
import type { UsageShipper } from './usage/shipper.ts'
import { startUsageShipping } from './usage/start.ts'

export interface RunningGateway {
  url: string
  holder: RuntimeHolder
  close(): Promise<void>
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

export async function runGateway(env: NodeJS.ProcessEnv, logger: FastifyBaseLogger): Promise<RunningGateway> {
  const pepper = required(env, 'GATEHOUSE_KEY_PEPPER')
  const holder = new RuntimeHolder()
  const closers: Array<() => Promise<unknown> | unknown> = [() => holder.close()]
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
    forwarder = remoteAdminForwarder(controlPlaneUrl)
    closers.push(() => forwarder?.close())
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

  const app = buildGatewayServer({
    holder,
    pepper,
    logger,
    processMetrics: true,
    ...(env.GATEHOUSE_METRICS_TOKEN ? { metricsToken: env.GATEHOUSE_METRICS_TOKEN } : {}),
    ...(forwarder ? { adminForwarder: forwarder.forward } : {}),
    ...(usage ? { usage } : {}),
  })
  await app.listen({ host: env.GATEHOUSE_HOST ?? '127.0.0.1', port: Number(env.GATEHOUSE_PORT ?? 8787) })
  closers.push(() => app.close())
  const { address, port } = app.server.address() as AddressInfo
  return {
    url: `http://${address.includes(':') ? `[${address}]` : address}:${port}`,
    holder,
    async close() {
      for (const closer of closers.reverse()) await closer()
    },
  }
}
