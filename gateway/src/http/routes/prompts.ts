/**
 * Saved prompts on the data plane: `POST /v1/prompts/{promptId}/completions` and `…/render`.
 *
 * Completions run the normal pipeline (authentication, accounting, limits, guardrails, cache,
 * routing under a config or to one provider): the validate stage renders the prompt from the
 * snapshot (`{variables, ...overrides at the root}`) and replaces the exchange's body with the
 * chat completions request it renders to, so every later stage (guardrails, cache key, usage
 * record) sees the rendered request. The prompt's virtual key routes the request when neither
 * `x-gateway-provider`, an `@slug/` model nor a config does. The usage record names the prompt and
 * the version. Render answers `{success, data: <the request>}` after authentication only: it calls
 * no provider and needs the `prompts.render` scope.
 */
import type { FastifyInstance } from 'fastify'
import { GatewayError } from '../../core/errors.ts'
import { buildLocalPipeline, type PipelineDeps } from '../../pipeline/build.ts'
import type { RouteSpec } from '../../pipeline/route-spec.ts'
import type { Exchange } from '../../pipeline/stage.ts'
import { providerFromHeaders } from '../../routing/target.ts'
import { resolvePrompt, type ResolvedPrompt } from '../../runtime/prompt-index.ts'
import { renderPromptRequest } from '../../snapshot/prompts.ts'
import { validateChatRequest } from '../../validation/inference.ts'
import { OPENAI_FORMAT, pipelineHandler, serveExchange, startExchange } from '../pipeline-route.ts'
import { inferenceRoutes, requireObjectBody } from './inference.ts'

export const RENDER_SCOPE = 'prompts.render'

/** The prompt each exchange rendered (set once, by the first validation). */
const rendered = new WeakMap<Exchange, ResolvedPrompt>()

function promptReference(exchange: Exchange): string {
  const reference = exchange.params.promptId
  if (!reference) throw new GatewayError('not_found', 'No prompt named in the path', { param: 'promptId' })
  return reference
}

/** Renders the exchange's prompt request into a chat request; the body becomes that request. */
function renderExchange(exchange: Exchange): { prompt: ResolvedPrompt; body: Record<string, unknown> } {
  const request = requireObjectBody(exchange.rawBody)
  const prompt = resolvePrompt(exchange.context.runtime, exchange.context.workspaceId, promptReference(exchange))
  return { prompt, body: renderPromptRequest(prompt.version, request, prompt.partials) }
}

const chat = inferenceRoutes.find((route) => route.path === '/v1/chat/completions')!.spec

export const promptCompletionsRoute: RouteSpec = {
  operation: { name: 'prompt-completions', endpointType: 'chatComplete', format: 'openai', textual: true, cacheable: true },
  model(exchange) {
    const model = typeof exchange.body?.model === 'string' ? exchange.body.model : undefined
    const virtualKey = rendered.get(exchange)?.prompt.virtualKey ?? null
    // The prompt's provider applies only when the request chose none itself.
    if (model === undefined || virtualKey === null || model.startsWith('@') || providerFromHeaders(exchange.headers) !== null) return model
    return `@${virtualKey}/${model}`
  },
  validate(body, exchange) {
    if (!rendered.has(exchange)) {
      const { prompt, body: request } = renderExchange(exchange)
      rendered.set(exchange, prompt)
      exchange.body = request
      exchange.facts.promptId = prompt.prompt.id
      exchange.facts.promptVersionId = prompt.version.id
      validateChatRequest(request)
      return
    }
    validateChatRequest(requireObjectBody(body))
  },
  attempt: chat.attempt,
}

export const promptRenderRoute: RouteSpec = {
  operation: { name: 'prompt-render', endpointType: 'chatComplete', format: 'openai', textual: false, cacheable: false },
  model: () => undefined,
  attempt: () => Promise.reject(new GatewayError('internal_error', 'Rendering a prompt calls no provider')),
}

function renderAnswer(exchange: Exchange): Promise<{ kind: 'json'; status: number; body: unknown; usage: null }> {
  const principal = exchange.context.principal
  if (principal.kind !== 'sidecar' && !principal.scopes.includes(RENDER_SCOPE)) {
    throw new GatewayError('insufficient_scope', `Rendering a prompt needs the ${RENDER_SCOPE} scope`)
  }
  const { body } = renderExchange(exchange)
  return Promise.resolve({ kind: 'json', status: 200, body: { success: true, data: body }, usage: null })
}

export function registerPromptRoutes(app: FastifyInstance, deps: PipelineDeps): void {
  app.post('/v1/prompts/:promptId/completions', pipelineHandler(promptCompletionsRoute, deps, OPENAI_FORMAT))
  const render = buildLocalPipeline(promptRenderRoute, deps, renderAnswer)
  app.post('/v1/prompts/:promptId/render', (request, reply) => serveExchange(render.run, startExchange(promptRenderRoute, deps, render, request, reply), reply, OPENAI_FORMAT))
}
