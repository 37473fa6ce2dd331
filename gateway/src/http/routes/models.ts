/**
 * GET /v1/models. With a provider named (header, or a config), the provider's own list for
 * providers that serve OpenAI's /models, else the models enabled on it; with none named, the
 * models enabled on every provider this workspace may use, written `@slug/model` so each id
 * routes by itself.
 */
import type { FastifyInstance } from 'fastify'
import type { PipelineDeps } from '../../pipeline/build.ts'
import type { RouteSpec } from '../../pipeline/route-spec.ts'
import { listReachableModels } from '../../pipeline/model-list.ts'
import type { Answer } from '../../pipeline/stage.ts'
import type { CompiledProvider } from '../../routing/target.ts'
import { errorFromProvider } from '../../upstream/provider-errors.ts'
import { sendUpstream } from '../../upstream/transport.ts'
import { OPENAI_FORMAT, pipelineHandler } from '../pipeline-route.ts'

/** The enabled models of one provider (one that does not serve OpenAI's /models). */
function listEnabled(provider: CompiledProvider): Answer {
  const data = provider.record.models.map((model) => ({ id: `@${provider.record.slug}/${model}`, object: 'model', created: 0, owned_by: provider.record.slug }))
  return { kind: 'json', status: 200, body: { object: 'list', data }, usage: null }
}

export const modelsRoute: RouteSpec = {
  operation: { name: 'models', endpointType: 'models', format: 'openai', textual: false, cacheable: false },
  model: () => undefined,
  async attempt(exchange, target, _body, signal) {
    const provider = target.route.provider
    if (!provider.adapter.passthrough) return listEnabled(provider)
    const upstream = await sendUpstream(provider.endpoint, { method: 'GET', path: '/models', headers: {} }, { signal })
    const body: unknown = await upstream.body.json().catch(() => null)
    if (upstream.status >= 400) throw errorFromProvider(provider.adapter.parseError(upstream.status, upstream.headers, body), provider.record.slug, provider.endpoint.credentials)
    return { kind: 'json', status: 200, body, usage: null }
  },
  answerUnrouted: async (exchange) => ({ kind: 'json', status: 200, body: { object: 'list', data: await listReachableModels(exchange.context.runtime, exchange.context.workspaceId, exchange.context.signal) }, usage: null }),
}

export function registerModelRoutes(app: FastifyInstance, deps: PipelineDeps): void {
  app.get('/v1/models', pipelineHandler(modelsRoute, deps, OPENAI_FORMAT))
}
