/**
 * GET /v1/models. With a provider named in the headers, the provider's own list (for providers
 * that serve OpenAI's /models); otherwise the models enabled on the providers this workspace may
 * use, written `@slug/model` so each id routes by itself.
 */
import type { FastifyInstance } from 'fastify'
import { beginRequest, type PipelineDeps } from '../../pipeline/begin.ts'
import { providerFromHeaders, resolveProvider } from '../../pipeline/resolve-route.ts'
import { providerVisibleTo } from '../../runtime/compile.ts'
import { sendUpstream } from '../../upstream/transport.ts'
import { errorFromProvider } from '../../pipeline/provider-errors.ts'

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
    const seen = new Set<string>()
    const data: Array<{ id: string; object: 'model'; created: number; owned_by: string }> = []
    for (const { record } of context.runtime.providers.values()) {
      if (seen.has(record.id) || !providerVisibleTo(record, context.workspaceId)) continue
      seen.add(record.id)
      if (named !== null && record.slug !== named && record.id !== named) continue
      for (const model of record.models) data.push({ id: `@${record.slug}/${model}`, object: 'model', created: 0, owned_by: record.slug })
    }
    return { object: 'list', data }
  })
}
