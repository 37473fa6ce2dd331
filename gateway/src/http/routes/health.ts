/** Unauthenticated on purpose (DESIGN): liveness, readiness and a health answer with a service id. */
import type { FastifyInstance } from 'fastify'
import type { RuntimeHolder } from '../../runtime/holder.ts'

export interface ServiceIdentity {
  service: string
  version: string
  instanceId: string
}

export function registerHealthRoutes(app: FastifyInstance, holder: RuntimeHolder, identity: ServiceIdentity): void {
  app.get('/livez', async () => ({ status: 'ok' }))
  app.get('/readyz', async (_request, reply) => {
    const runtime = holder.current
    if (!runtime) return reply.code(503).header('retry-after', '1').send({ status: 'not_ready', reason: 'no configuration loaded yet' })
    return { status: 'ready', generation: runtime.generation }
  })
  app.get('/v1/health', async (_request, reply) => {
    const runtime = holder.current
    return reply.code(runtime ? 200 : 503).send({
      status: runtime ? 'ok' : 'starting',
      service: identity.service,
      version: identity.version,
      instance_id: identity.instanceId,
      snapshot: runtime ? { generation: runtime.generation, hash: runtime.hash } : null,
    })
  })
}
