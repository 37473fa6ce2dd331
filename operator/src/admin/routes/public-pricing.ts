/**
 * The public pricing lookup on the control plane (the gateway answers it the same way):
 * unauthenticated on purpose, the shipped table only (an organisation's overrides are not public).
 */
import type { FastifyInstance } from 'fastify'
import { PUBLIC_PRICING_PATH, publicPricingAnswer } from '@gatehouse/gateway/snapshot'

export function publicPricingRoutes(app: FastifyInstance): void {
  app.get<{ Params: { provider: string; '*': string } }>(PUBLIC_PRICING_PATH, { config: { publicRoute: true } }, async (request, reply) => {
    const answer = publicPricingAnswer(request.params.provider, request.params['*'])
    return reply.code(answer.status).send(answer.body)
  })
}
