/**
 * The control plane's parts, composed once for both modes: the admin store with its migrations,
 * the first organization and bootstrap key, resources from files, the snapshot publisher fed by the
 * store's change feed, the admin API, background workers, and (when a gateway token is set) the
 * snapshot stream that remote gateways subscribe to.
 */
import type { AddressInfo } from 'node:net'
import type { FastifyInstance } from 'fastify'
import type { Logger } from 'pino'
import { serveMetrics } from '@gatehouse/gateway'
import { parseKeyring } from '@gatehouse/gateway/snapshot'
import { buildAdminApp } from '../admin/app.ts'
import type { LimitCounters } from '../admin/context.ts'
import { redisLimitCounters } from '../admin/redis-counters.ts'
import { DeploymentPublishers } from '../compile/deployment-publishers.ts'
import { secretReader, type KubernetesSecretSource } from '../compile/secrets.ts'
import { vaultSettingsFromEnv } from '../compile/vault.ts'
import { compileSnapshot } from '../compile/snapshot.ts'
import { GatewayRegistry } from '../distribution/gateway-registry.ts'
import { SnapshotPublisher } from '../distribution/publisher.ts'
import { registerSyncRoutes } from '../distribution/sync-routes.ts'
import { registerSidecarRoutes, type SidecarAdmission } from '../sidecar/routes.ts'
import { sidecarSettingsFromEnv } from '../sidecar/settings.ts'
import { registerUsageIngestRoute } from '../distribution/usage-routes.ts'
import { ensureBootstrapAdminKey, ensureOrganization } from '../identity/bootstrap.ts'
import { applyFileSet, watchFileSet, type FileSetWatch } from '../resources/file-set.ts'
import { fileSecretResolver, problemError, readResourceFiles } from '../resources/files.ts'
import { openStore, storeOnDatabase, type Store } from '../store/index.ts'
import type { SqlDatabase } from '../store/sql.ts'
import { ssoSettingsFromEnv } from '../sso/config.ts'
import { startWorkers } from '../workers/index.ts'
import { localSecrets, type LocalSecrets } from './boot-config.ts'
import { ControlPlaneMetrics } from './control-plane-metrics.ts'

export interface ControlPlaneOptions {
  /** null keeps the embedded database in memory (tests). */
  dataDir: string | null
  resourceFiles: string[]
  env: NodeJS.ProcessEnv
  logger: Logger
  /** Where secret references to Kubernetes Secrets are read in a cluster (the operator's client). */
  kubernetesSecrets?: KubernetesSecretSource
  /** Checks sidecars' ServiceAccount tokens and bindings (operator mode): serves the sidecar stream. */
  sidecars?: SidecarAdmission
  /** Re-apply the resources files when they change (embedded mode). */
  watchResourceFiles?: boolean
  /** The gateways' budget counters (embedded: the gateway's own limiter); default: Redis at GATEHOUSE_REDIS_URL, if set. */
  limitCounters?: LimitCounters
  /** Opens the database instead of `dataDir` (tests hand in a copy of a migrated PGlite template). */
  openDatabase?: () => Promise<SqlDatabase>
  /** Prometheus metrics of this process (control-plane-metrics.ts); serveControlPlane serves them. */
  metrics?: ControlPlaneMetrics
}

export interface ControlPlane {
  store: Store
  secrets: LocalSecrets
  adminApp: FastifyInstance
  publisher: SnapshotPublisher
  registry: GatewayRegistry
  /** The bootstrap admin key, only when this start generated it (shown once). */
  generatedAdminKey: string | null
  /** The watch on the resources files, when asked for. */
  fileWatch: FileSetWatch | null
  metrics: ControlPlaneMetrics | null
  close(): Promise<void>
}

/** JWT sign-in on the admin API, when an identity provider's JWKS is configured. */
function jwtSettings(env: NodeJS.ProcessEnv): { jwt?: { jwksUrl: string; issuer: string; audience: string } } {
  const { GATEHOUSE_JWT_JWKS_URL: jwksUrl, GATEHOUSE_JWT_ISSUER: issuer, GATEHOUSE_JWT_AUDIENCE: audience } = env
  if (!jwksUrl) return {}
  if (!issuer || !audience) throw new Error('GATEHOUSE_JWT_JWKS_URL needs GATEHOUSE_JWT_ISSUER and GATEHOUSE_JWT_AUDIENCE')
  return { jwt: { jwksUrl, issuer, audience } }
}

/** Kubernetes probes for a control-plane process: alive while it runs, ready while its store answers. */
function registerProbes(app: FastifyInstance, store: Store): void {
  app.get('/livez', { config: { publicRoute: true } }, async () => ({ status: 'ok' }))
  app.get('/readyz', { config: { publicRoute: true } }, async (_request, reply) => {
    try {
      await store.ping()
      return { status: 'ready' }
    } catch {
      return reply.code(503).header('retry-after', '2').send({ status: 'not_ready', reason: 'the admin store does not answer' })
    }
  })
}

export async function startControlPlane(options: ControlPlaneOptions): Promise<ControlPlane> {
  const { env, logger } = options
  // Resources are read and checked before anything is written: a bad file stops the start cleanly.
  const files = await readResourceFiles(options.resourceFiles)
  if (files.problems.length > 0) throw problemError(files.problems[0]!)
  const secrets = await localSecrets(options.dataDir, env)
  const store = options.openDatabase
    ? await storeOnDatabase(await options.openDatabase(), { encryptionKey: secrets.encryptionKey })
    : await openStore(
    env.GATEHOUSE_DATABASE_URL
      ? { kind: 'postgres', url: env.GATEHOUSE_DATABASE_URL, encryptionKey: secrets.encryptionKey }
      : { kind: 'pglite', dataDir: options.dataDir === null ? null : `${options.dataDir}/db`, encryptionKey: secrets.encryptionKey },
  )
  const closers: Array<() => Promise<unknown> | unknown> = [() => store.close()]
  const close = async (): Promise<void> => {
    for (const closer of closers.reverse()) await closer()
  }
  try {
    const organization = await ensureOrganization(store)
    const bootstrap = await ensureBootstrapAdminKey(store, secrets.keyPepper, env.GATEHOUSE_ADMIN_API_KEY)
    // References are checked against the store too (rows created through the admin API), and
    // rows of objects no longer in the files are removed.
    const fileTarget = { store, organizationId: organization.id, env }
    await applyFileSet(fileTarget, options.resourceFiles)

    // Secret references: environment variables, Vault KV v2 secrets (GATEHOUSE_VAULT_ADDR/TOKEN),
    // and Kubernetes Secret keys: from the cluster when the operator runs, else from the
    // resources files' v1/Secret objects.
    const fileSecrets = fileSecretResolver(files, env)
    const readSecret = secretReader({ env, vault: vaultSettingsFromEnv(env), kubernetes: options.kubernetesSecrets ?? (({ name, key }) => fileSecrets.resolveSecret({ name, key })) })
    const { metrics } = options
    const publisher = new SnapshotPublisher((generation) => compileSnapshot(store, { generation, readSecret }), {
      onError: (error) => {
        metrics?.snapshotFailed()
        logger.error({ err: error }, 'compiling a snapshot failed; gateways keep the last good one')
      },
    })
    const deployments = new DeploymentPublishers((generation, deployment) => compileSnapshot(store, { generation, deployment, readSecret }), {
      onError: (error, deployment) => {
        metrics?.snapshotFailed()
        logger.error({ err: error, deployment }, 'compiling a deployment snapshot failed; its gateways keep the last good one')
      },
    })
    closers.push(store.onChange(() => {
      publisher.schedule()
      deployments.schedule()
    }))
    const registry = new GatewayRegistry()
    if (metrics) closers.push(metrics.watch(publisher, registry))
    await publisher.publish()

    let limitCounters = options.limitCounters
    if (!limitCounters && env.GATEHOUSE_REDIS_URL) {
      const counters = redisLimitCounters(env.GATEHOUSE_REDIS_URL, env.GATEHOUSE_LIMITS_KEY_PREFIX ?? 'gh:')
      closers.push(() => counters.close())
      limitCounters = counters
    }
    const sso = ssoSettingsFromEnv(env, parseKeyring(secrets.encryptionKey))
    const adminApp = buildAdminApp({ store, pepper: secrets.keyPepper, logger, ...jwtSettings(env), ...(limitCounters ? { limitCounters } : {}), ...(sso ? { sso } : {}), ...(metrics ? { observeRequest: metrics.observeAdminRequest } : {}) })
    if (env.GATEHOUSE_GATEWAY_TOKEN) {
      registerSyncRoutes(adminApp, { publisher, deployments, registry, keyring: parseKeyring(secrets.encryptionKey), gatewayToken: env.GATEHOUSE_GATEWAY_TOKEN })
      registerUsageIngestRoute(adminApp, { store, gatewayToken: env.GATEHOUSE_GATEWAY_TOKEN })
    }
    if (options.sidecars) {
      registerSidecarRoutes(adminApp, {
        ...options.sidecars,
        deployments,
        registry,
        store,
        settings: sidecarSettingsFromEnv(env),
        onError: (error, message) => logger.warn({ err: error }, message),
      })
    }
    registerProbes(adminApp, store)
    await adminApp.ready()
    closers.push(() => adminApp.close())
    closers.push(startWorkers({ store, logger, pepper: secrets.keyPepper, env, ...(limitCounters ? { limitCounters } : {}) }))
    const fileWatch = options.watchResourceFiles && options.resourceFiles.length > 0 ? watchFileSet(fileTarget, options.resourceFiles, logger) : null
    if (fileWatch) closers.push(() => fileWatch.close())
    return {
      store,
      secrets,
      adminApp,
      publisher,
      registry,
      generatedAdminKey: bootstrap.created && bootstrap.rawKey !== undefined ? bootstrap.rawKey : null,
      fileWatch,
      metrics: metrics ?? null,
      close,
    }
  } catch (error) {
    await close()
    throw error
  }
}

export interface ServeOptions extends ControlPlaneOptions {
  host: string
  port: number
  /** Where GET /metrics listens (its own port, as the gateway's; 0: any free one); absent: no metrics. */
  metricsPort?: number
}

/** `gatehouse control-plane`: the control plane alone, serving the admin API and the snapshot stream. */
export async function serveControlPlane(options: ServeOptions): Promise<ControlPlane & { url: string; metricsUrl: string | null }> {
  const metrics = options.metrics ?? (options.metricsPort === undefined ? undefined : new ControlPlaneMetrics())
  const controlPlane = await startControlPlane({ ...options, ...(metrics ? { metrics } : {}) })
  let metricsServer: Awaited<ReturnType<typeof serveMetrics>> | null = null
  try {
    await controlPlane.adminApp.listen({ host: options.host, port: options.port })
    // Same host as the admin API; the token guard is the gateway's (GATEHOUSE_METRICS_TOKEN).
    if (metrics && options.metricsPort !== undefined) {
      metricsServer = await serveMetrics(metrics.registry, { host: options.host, port: options.metricsPort, token: options.env.GATEHOUSE_METRICS_TOKEN })
    }
  } catch (error) {
    await controlPlane.close()
    throw error
  }
  const { address, port } = controlPlane.adminApp.server.address() as AddressInfo
  const close = async (): Promise<void> => {
    await metricsServer?.close()
    await controlPlane.close()
  }
  return { ...controlPlane, close, url: `http://${address.includes(':') ? `[${address}]` : address}:${port}`, metricsUrl: metricsServer?.url ?? null }
}
