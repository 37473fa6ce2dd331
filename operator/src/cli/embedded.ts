/**
 * Embedded mode: control plane and gateway in one process, PGlite in a data directory (or
 * PostgreSQL when GATEHOUSE_DATABASE_URL is set), in-memory runtime state. The gateway receives
 * snapshots in-process and forwards admin routes to the control plane in-process, so one port
 * serves both planes.
 */
import type { AddressInfo } from 'node:net'
import type { FastifyInstance } from 'fastify'
import { accessLogSettingsFromEnv, buildGatewayServer, contentWorkspacesSetting, drainAndClose, installReadinessGate, limiterFromEnv, limitsStage, RuntimeHolder, serveMetrics, shutdownSettings, snapshotPricedCosts, startUsageShipping, type AdminForwarder } from '@gatehouse/gateway'
import { inProcessUsageTransport } from '../distribution/usage-routes.ts'
import { startControlPlane, type ControlPlane, type ControlPlaneOptions } from './control-plane.ts'

export interface EmbeddedOptions extends ControlPlaneOptions {
  host: string
  port: number
  /** Where GET /metrics listens: a port of its own (the command's default), or 'data' (the default here). */
  metricsPort?: number | 'data'
}

export interface EmbeddedGatehouse extends ControlPlane {
  url: string
  metricsUrl: string
  holder: RuntimeHolder
  /** SIGTERM: readiness fails, serving goes on for the drain window, then requests in flight finish. */
  drain(): Promise<void>
}

/** In-process forwarding: the admin app answers through fastify's inject, with no socket. */
export function inProcessForwarder(adminApp: FastifyInstance): AdminForwarder {
  return async (request) => {
    const response = await adminApp.inject({
      method: request.method as 'GET',
      url: request.url,
      headers: request.headers as Record<string, string>,
      ...(request.body === undefined ? {} : { payload: request.body }),
      ...(request.remoteAddress === undefined ? {} : { remoteAddress: request.remoteAddress }),
    })
    return { status: response.statusCode, headers: response.headers, body: response.rawPayload }
  }
}

export async function startEmbedded(options: EmbeddedOptions): Promise<EmbeddedGatehouse> {
  // One limiter for both planes: the gateway counts in it, the admin API reads current usage from it.
  const limits = limiterFromEnv(options.env)
  const controlPlane = await startControlPlane({ ...options, limitCounters: { keyPrefix: limits.keyPrefix, usage: (keys) => limits.limiter.usage(keys) } }).catch(async (error: unknown) => {
    await limits.limiter.close()
    throw error
  })
  const holder = new RuntimeHolder()
  const limitsFactory = limitsStage({ limiter: limits.limiter, keyPrefix: limits.keyPrefix, log: options.logger, costs: snapshotPricedCosts(holder) })
  const unsubscribe = controlPlane.publisher.subscribe((snapshot) => {
    const result = holder.apply(snapshot)
    if (!result.ok) options.logger.error({ generation: snapshot.generation, problems: result.problems }, 'snapshot rejected by the gateway')
  })
  const metricsPort = options.metricsPort ?? 'data'
  // Usage records take the gateway's usual path (batches, spool) and land in this process's store.
  const usage = startUsageShipping({
    transport: inProcessUsageTransport(controlPlane.store),
    spoolDir: options.dataDir === null ? null : `${options.dataDir}/usage-spool`,
    onError: (error, context) => options.logger.warn({ err: error, context }, 'usage records not stored yet; kept for the next try'),
  })
  const gateway = buildGatewayServer({
    holder,
    usage,
    pepper: controlPlane.secrets.keyPepper,
    logger: options.logger,
    adminForwarder: inProcessForwarder(controlPlane.adminApp),
    processMetrics: true,
    accessLog: accessLogSettingsFromEnv(options.env),
    metricsRoute: metricsPort === 'data',
    features: { limits: limitsFactory },
    metricsRegistries: [limitsFactory.registry],
    traceContentWorkspaces: contentWorkspacesSetting(options.env.GATEHOUSE_TRACE_CONTENT_WORKSPACES),
    ...(options.env.GATEHOUSE_METRICS_TOKEN ? { metricsToken: options.env.GATEHOUSE_METRICS_TOKEN } : {}),
  })
  const gate = installReadinessGate(gateway)
  let metricsServer: { url: string; close(): Promise<void> } | null = null
  const closeRest = async (): Promise<void> => {
    await metricsServer?.close()
    await usage.close()
    unsubscribe()
    await holder.close()
    await controlPlane.close()
    await limits.limiter.close()
  }
  const close = async (): Promise<void> => {
    await gateway.close()
    await closeRest()
  }
  try {
    if (!holder.ready) throw new Error('the first snapshot could not be compiled; see the log above')
    await gateway.listen({ host: options.host, port: options.port })
    if (metricsPort !== 'data') {
      metricsServer = await serveMetrics(gateway.gatewayMetrics.registry, { host: options.host, port: metricsPort, token: options.env.GATEHOUSE_METRICS_TOKEN })
    }
  } catch (error) {
    await close()
    throw error
  }
  const { port } = gateway.server.address() as AddressInfo
  const host = options.host.includes(':') ? `[${options.host}]` : options.host
  const url = `http://${host}:${port}`
  return {
    ...controlPlane,
    url,
    metricsUrl: metricsServer?.url ?? url,
    holder,
    drain: async () => {
      await drainAndClose(gateway, gate, shutdownSettings(options.env))
      await closeRest()
    },
    close,
  }
}
