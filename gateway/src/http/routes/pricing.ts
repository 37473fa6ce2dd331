/**
 * The public pricing lookup, unauthenticated on purpose (DESIGN): the shipped table's price of a
 * model in the spec's ModelPricingConfig shape, or 404 `{"error":"Model not found"}`. Model ids
 * may contain `/` (`meta-llama/Llama-3.3-70B`), hence the wildcard.
 */
import type { FastifyInstance } from 'fastify'
import { PUBLIC_PRICING_PATH, publicPricingAnswer } from '../../pricing/index.ts'

export function registerPricingRoute(app: FastifyInstance): void {
  app.get<{ Params: { provider: string; '*': string } }>(PUBLIC_PRICING_PATH, async (request, reply) => {
    const answer = publicPricingAnswer(request.params.provider, request.params['*'])
    return reply.code(answer.status).send(answer.body)
  })
}
