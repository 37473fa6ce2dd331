/**
 * GET /v1/models. With a provider named in the headers, the provider's own list (for providers
 * that serve OpenAI's /models); otherwise the models enabled on the providers this workspace may
 * use, written `@slug/model` so each id routes by itself.
 */
import type { FastifyInstance } from 'fastify'
import { beginRequest, type PipelineDeps } from '../../pipeline/begin.ts'
import { providerFromHeaders, resolveProvider } from '../../pipeline/resolve-route.ts'
import { sendUpstream } from '../../upstream/transport.ts'
import { errorFromProvider } from '../../pipeline/provider-errors.ts'
import { listReachableModels } from '../../pipeline/model-list.ts'

export function registerModelRoutes(app: FastifyInstance, deps: PipelineDeps): void {
  app.get('/v1/models', async (request, reply) => {
    const context = beginRequest(deps, request, reply)
    reply.header('x-gateway-trace-id', context.trace.traceId)
    const named = providerFromHeaders(request.headers)
    if (named !== null) {
      const provider = resolveProvider(context.runtime, context.workspaceId, named)
      if (provider.adapter.passthrough) {
        const upstream = await sendUpstream(provider.endpoint, { method: 'GET', path: '/models', headers: {} }, { signal: context.signal })
        const body = await upstream.body.json().catch(() => null)
        if (upstream.status >= 400) throw errorFromProvider(provider.adapter.parseError(upstream.status, upstream.headers, body), provider.record.slug, provider.endpoint.credentials)
        return reply.header('x-gateway-provider', provider.record.slug).send(body)
      }
    }
    return { object: 'list', data: await listReachableModels(context.runtime, context.workspaceId, context.signal, named) }
  })
}
