/**
 * GET /v1/health, unauthenticated on purpose: the control plane's health with its service
 * identifier, so a caller behind one base URL can tell which plane answered. The store is
 * pinged; when it is unreachable the answer is 503 with Retry-After.
 */
import type { FastifyInstance } from 'fastify'
import type { AdminContext } from '../context.ts'

export const CONTROL_PLANE_SERVICE = 'gatehouse-control-plane'
const VERSION = '0.1.0'

export function healthRoutes(app: FastifyInstance, ctx: AdminContext): void {
  app.get('/', { config: { publicRoute: true } }, async (_request, reply) => {
    const time = ctx.clock().toISOString()
    try {
      await ctx.store.ping()
    } catch {
      return reply.code(503).header('retry-after', '2').send({ status: 'unavailable', reason: 'the admin store is unreachable', service: CONTROL_PLANE_SERVICE, version: VERSION, time })
    }
    // Same shape as the gateway's /v1/health; `service` tells the two planes apart.
    return { status: 'ok', service: CONTROL_PLANE_SERVICE, version: VERSION, time }
  })
}
