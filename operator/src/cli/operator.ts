/**
 * `gatehouse operator`: the control plane (admin API, snapshot stream, store) plus the Kubernetes
 * controllers that reconcile gatehouse.dev resources into the store. Every replica serves the
 * admin API and the stream and keeps its informers warm; only the Lease holder reconciles.
 *
 * Environment (besides the control plane's):
 *   KUBECONFIG                         outside a pod (in a pod the service account is used)
 *   GATEHOUSE_WATCH_NAMESPACE          watch one namespace (default: all)
 *   POD_NAMESPACE, POD_NAME            where the Lease lives and who holds it (set by the chart)
 *   GATEHOUSE_LEASE_NAME               default gatehouse-operator
 *   GATEHOUSE_LEASE_DURATION_SECONDS   default 15 (renew deadline 2/3 of it, retry every 2/15); also
 *                                      how long a replica's gateway report stays fresh
 */
import { randomBytes } from 'node:crypto'
import { hostname } from 'node:os'
import type { Logger } from 'pino'
import { GatewayReporter } from '../controllers/gateway-reports.ts'
import { ControllerManager } from '../controllers/manager.ts'
import { HttpKubeClient, loadKubeConfig } from '../kube/http-client.ts'
import { LeaderElector } from '../kube/leader-election.ts'
import { kubeSecretSource } from '../compile/secrets.ts'
import { resolveBinding } from '../sidecar/binding.ts'
import { kubeTokenReviewer } from '../sidecar/token-review.ts'
import { startWebhook } from '../webhook/index.ts'
import { webhookSettings } from '../webhook/settings.ts'
import { serveControlPlane, type ControlPlane, type ServeOptions } from './control-plane.ts'

const STREAM_SHUTDOWN_GRACE_MS = 2_000

export type OperatorOptions = ServeOptions

export interface Operator extends ControlPlane {
  url: string
  metricsUrl: string | null
  identity: string
  isLeader(): boolean
  /** The admission webhook's HTTPS URL, when it runs. */
  webhookUrl: string | null
}

function leaseTimings(env: NodeJS.ProcessEnv): { leaseDurationMs: number; renewDeadlineMs: number; retryPeriodMs: number } {
  const seconds = Number(env.GATEHOUSE_LEASE_DURATION_SECONDS ?? 15)
  if (!Number.isInteger(seconds) || seconds < 2 || seconds > 3600) throw new Error(`invalid GATEHOUSE_LEASE_DURATION_SECONDS '${env.GATEHOUSE_LEASE_DURATION_SECONDS}'`)
  const leaseDurationMs = seconds * 1000
  return { leaseDurationMs, renewDeadlineMs: Math.floor((leaseDurationMs * 2) / 3), retryPeriodMs: Math.floor((leaseDurationMs * 2) / 15) }
}

export async function runOperator(options: OperatorOptions & { logger: Logger }): Promise<Operator> {
  const { env, logger } = options
  const client = new HttpKubeClient(loadKubeConfig(env))
  const identity = env.POD_NAME ?? `${hostname()}-${process.pid}-${randomBytes(3).toString('hex')}`
  const timings = leaseTimings(env)
  const leaseNamespace = env.POD_NAMESPACE || 'default'
  const webhook = webhookSettings(env, leaseNamespace)
  const controlPlane = await serveControlPlane({
    ...options,
    kubernetesSecrets: kubeSecretSource(client, leaseNamespace),
    sidecars: { reviewToken: kubeTokenReviewer(client), resolveBinding: (namespace, name) => resolveBinding(client, namespace, name) },
  })
  let manager: ControllerManager
  try {
    const organization = await controlPlane.store.organizations.first()
    if (!organization) throw new Error('the control plane started without an organization')
    manager = new ControllerManager({
      client,
      store: controlPlane.store,
      organizationId: organization.id,
      publisher: controlPlane.publisher,
      registry: controlPlane.registry,
      logger,
      namespace: env.GATEHOUSE_WATCH_NAMESPACE || null,
      gatewayReports: { namespace: leaseNamespace, identity },
      ...(controlPlane.metrics ? { observeReconcile: controlPlane.metrics.observeReconcile } : {}),
    })
  } catch (error) {
    await controlPlane.close()
    throw error
  }
  const controllers = manager
  try {
    // Informers sync on every replica, so a replica that becomes leader starts from a full cache.
    await controllers.start()
  } catch (error) {
    await controllers.stop()
    await controlPlane.close()
    throw error
  }
  const elector = new LeaderElector({
    client,
    namespace: leaseNamespace,
    leaseName: env.GATEHOUSE_LEASE_NAME || 'gatehouse-operator',
    identity,
    ...timings,
    onStartedLeading: () => {
      logger.info({ identity }, 'became the leader')
      controllers.startReconciling()
    },
    onStoppedLeading: () => {
      logger.warn({ identity }, 'no longer the leader; reconciling stops')
      void controllers.stopReconciling()
    },
    onError: (error) => logger.warn({ err: error }, 'leader election round failed'),
  })
  controlPlane.metrics?.leadership(() => elector.isLeader)
  elector.start()
  // Every replica reports its gateways; the leader counts them all for `Programmed`.
  const reporter = new GatewayReporter({
    client,
    registry: controlPlane.registry,
    namespace: leaseNamespace,
    identity,
    reportTtlMs: timings.leaseDurationMs,
    onError: (error) => logger.warn({ err: error }, 'could not publish the gateway report'),
  })
  reporter.start()
  let webhookServer: Awaited<ReturnType<typeof startWebhook>> | null = null
  if (webhook) {
    try {
      // Sidecars reach the control plane over the webhook's TLS (an https GATEHOUSE_SIDECAR_CONTROL_PLANE_URL).
      webhookServer = await startWebhook(client, leaseNamespace, webhook, logger, (request, response) => controlPlane.adminApp.routing(request, response))
      logger.info({ url: webhookServer.url }, 'sidecar injection webhook is serving')
    } catch (error) {
      await reporter.stop()
      await elector.stop()
      await controllers.stop()
      await controlPlane.close()
      throw error
    }
  }
  logger.info({ url: controlPlane.url, metricsUrl: controlPlane.metricsUrl, identity, generation: controlPlane.publisher.latest?.generation }, 'operator is serving')
  return {
    ...controlPlane,
    identity,
    isLeader: () => elector.isLeader,
    webhookUrl: webhookServer?.url ?? null,
    async close() {
      await webhookServer?.close()
      // Stop writing first, then hand the Lease over, so two leaders never overlap.
      await controllers.stopReconciling()
      await elector.stop()
      await reporter.stop()
      await controllers.stop()
      // Gateways' snapshot streams never end on their own and would hold the server open; after a
      // grace period for ordinary requests they are cut, and gateways reconnect to another replica.
      const cutStreams = setTimeout(() => controlPlane.adminApp.server.closeAllConnections(), STREAM_SHUTDOWN_GRACE_MS)
      try {
        await controlPlane.close()
      } finally {
        clearTimeout(cutStreams)
      }
    },
  }
}
