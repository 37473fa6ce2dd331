/**
 * Embedded mode: control plane and gateway in one process, PGlite in a data directory (or
 * PostgreSQL when GATEHOUSE_DATABASE_URL is set), in-memory runtime state. The gateway receives
 * snapshots in-process and forwards admin routes to the control plane in-process, so one port
 * serves both planes.
 */
import type { AddressInfo } from 'node:net'
import type { FastifyInstance } from 'fastify'
import { buildGatewayServer, limiterFromEnv, limitsStage, RuntimeHolder, type AdminForwarder } from '@gatehouse/gateway'
import { startControlPlane, type ControlPlane, type ControlPlaneOptions } from './control-plane.ts'

export interface EmbeddedOptions extends ControlPlaneOptions {
  host: string
  port: number
}

export interface EmbeddedGatehouse extends ControlPlane {
  url: string
  holder: RuntimeHolder
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
  const limitsFactory = limitsStage({ limiter: limits.limiter, keyPrefix: limits.keyPrefix, log: options.logger })
  const holder = new RuntimeHolder()
  const unsubscribe = controlPlane.publisher.subscribe((snapshot) => {
    const result = holder.apply(snapshot)
    if (!result.ok) options.logger.error({ generation: snapshot.generation, problems: result.problems }, 'snapshot rejected by the gateway')
  })
  const gateway = buildGatewayServer({
    holder,
    pepper: controlPlane.secrets.keyPepper,
    logger: options.logger,
    adminForwarder: inProcessForwarder(controlPlane.adminApp),
    processMetrics: true,
    features: { limits: limitsFactory },
    metricsRegistries: [limitsFactory.registry],
    ...(options.env.GATEHOUSE_METRICS_TOKEN ? { metricsToken: options.env.GATEHOUSE_METRICS_TOKEN } : {}),
  })
  const close = async (): Promise<void> => {
    await gateway.close()
    unsubscribe()
    await holder.close()
    await controlPlane.close()
    await limits.limiter.close()
  }
  try {
    if (!holder.ready) throw new Error('the first snapshot could not be compiled; see the log above')
    await gateway.listen({ host: options.host, port: options.port })
  } catch (error) {
    await close()
    throw error
  }
  const { port } = gateway.server.address() as AddressInfo
  const host = options.host.includes(':') ? `[${options.host}]` : options.host
  return { ...controlPlane, url: `http://${host}:${port}`, holder, close }
}
