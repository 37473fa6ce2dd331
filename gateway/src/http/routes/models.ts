/**
 * GET /v1/models. With a provider named (header, or a config), the provider's own list for
 * providers that serve OpenAI's /models, else the models enabled on it; with none named, the
 * models enabled on every provider this workspace may use, written `@slug/model` so each id
 * routes by itself.
 */
import type { FastifyInstance } from 'fastify'
import type { PipelineDeps } from '../../pipeline/build.ts'
import type { RouteSpec } from '../../pipeline/route-spec.ts'
import type { Answer, Exchange } from '../../pipeline/stage.ts'
import type { CompiledProvider } from '../../routing/target.ts'
import { providerVisibleTo } from '../../runtime/compile.ts'
import { errorFromProvider } from '../../upstream/provider-errors.ts'
import { sendUpstream } from '../../upstream/transport.ts'
import { OPENAI_FORMAT, pipelineHandler } from '../pipeline-route.ts'

interface ModelEntry {
  id: string
  object: 'model'
  created: number
  owned_by: string
}

/** The enabled models of the providers the caller may use; only `only`'s when given. */
function listEnabled(exchange: Exchange, only: CompiledProvider | null): Answer {
  const { runtime, workspaceId } = exchange.context
  const seen = new Set<string>()
  const data: ModelEntry[] = []
  for (const { record } of runtime.providers.values()) {
    if (seen.has(record.id) || !providerVisibleTo(record, workspaceId)) continue
    seen.add(record.id)
    if (only !== null && record.id !== only.record.id) continue
    for (const model of record.models) data.push({ id: `@${record.slug}/${model}`, object: 'model', created: 0, owned_by: record.slug })
  }
  return { kind: 'json', status: 200, body: { object: 'list', data }, usage: null }
}

export const modelsRoute: RouteSpec = {
  operation: { name: 'models', endpointType: 'models', format: 'openai', textual: false, cacheable: false },
  model: () => undefined,
  async attempt(exchange, target, _body, signal) {
    const provider = target.route.provider
    if (!provider.adapter.passthrough) return listEnabled(exchange, provider)
    const upstream = await sendUpstream(provider.endpoint, { method: 'GET', path: '/models', headers: {} }, { signal })
    const body: unknown = await upstream.body.json().catch(() => null)
    if (upstream.status >= 400) throw errorFromProvider(provider.adapter.parseError(upstream.status, upstream.headers, body), provider.record.slug)
    return { kind: 'json', status: 200, body, usage: null }
  },
  answerUnrouted: async (exchange) => listEnabled(exchange, null),
}

export function registerModelRoutes(app: FastifyInstance, deps: PipelineDeps): void {
  app.get('/v1/models', pipelineHandler(modelsRoute, deps, OPENAI_FORMAT))
}
