/**
 * Saved prompts on the data plane: `POST /v1/prompts/{promptId}/completions` and `…/render`.
 *
 * Completions run the normal pipeline (authentication, accounting, limits, guardrails, cache,
 * routing under a config or to one provider) as the inference route the prompt version is: a chat
 * template as chat completions, a raw template as text completions. Prompts are found in the
 * caller's workspace, so the branch is chosen right after authentication (`buildBranchingPipeline`)
 * and every later stage sees that operation (endpoint type on the usage record, limits, guardrails,
 * cache). The validate stage renders the prompt from the snapshot (`{variables, ...overrides at
 * the root}`) and replaces the exchange's body with the request it renders to, so guardrails, the
 * cache key and the usage record see the rendered request. The prompt's virtual key routes the
 * request when neither `x-gateway-provider`, an `@slug/` model nor a config does. The usage
 * record names the prompt and the version. Render answers `{success, data: <the request>}` after
 * authentication only: it calls no provider and needs the `prompts.render` scope.
 */
import type { FastifyInstance } from 'fastify'
import { GatewayError } from '../../core/errors.ts'
import { buildBranchingPipeline, buildLocalPipeline, type PipelineDeps } from '../../pipeline/build.ts'
import type { RouteSpec } from '../../pipeline/route-spec.ts'
import type { Exchange } from '../../pipeline/stage.ts'
import { providerFromHeaders } from '../../routing/target.ts'
import { resolvePrompt, type ResolvedPrompt } from '../../runtime/prompt-index.ts'
import { renderPromptRequest } from '../../snapshot/prompts.ts'
import { OPENAI_FORMAT, pipelineHandlerOf, serveExchange, startExchange } from '../pipeline-route.ts'
import { inferenceRoutes, requireObjectBody } from './inference.ts'

export const RENDER_SCOPE = 'prompts.render'

/** The prompt each exchange names, resolved once its caller (and so its workspace) is known. */
const resolved = new WeakMap<Exchange, ResolvedPrompt>()
/** Exchanges whose body is already the rendered request (later validations check a config's overrides only). */
const rendered = new WeakSet<Exchange>()

function promptReference(exchange: Exchange): string {
  const reference = exchange.params.promptId
  if (!reference) throw new GatewayError('not_found', 'No prompt named in the path', { param: 'promptId' })
  return reference
}

/** The prompt and version the exchange's path names in the caller's workspace; 404 when none. */
function exchangePrompt(exchange: Exchange): ResolvedPrompt {
  let prompt = resolved.get(exchange)
  if (prompt === undefined) {
    prompt = resolvePrompt(exchange.context.runtime, exchange.context.workspaceId, promptReference(exchange))
    resolved.set(exchange, prompt)
  }
  return prompt
}

function renderExchange(exchange: Exchange): Record<string, unknown> {
  const prompt = exchangePrompt(exchange)
  return renderPromptRequest(prompt.version, requireObjectBody(exchange.rawBody), prompt.partials)
}

function inferenceRoute(path: string): RouteSpec {
  return inferenceRoutes.find((route) => route.path === path)!.spec
}

/**
 * Prompt completions as the inference route `base` serves them: the first validation renders the
 * prompt into the body and checks it as `base` checks its requests; `base` attempts each target.
 */
function promptCompletions(base: RouteSpec): RouteSpec {
  return {
    operation: { ...base.operation, name: 'prompt-completions' },
    model(exchange) {
      const model = typeof exchange.body?.model === 'string' ? exchange.body.model : undefined
      const virtualKey = resolved.get(exchange)?.prompt.virtualKey ?? null
      // The prompt's provider applies only when the request chose none itself.
      if (model === undefined || virtualKey === null || model.startsWith('@') || providerFromHeaders(exchange.headers) !== null) return model
      return `@${virtualKey}/${model}`
    },
    validate(body, exchange) {
      if (rendered.has(exchange)) return base.validate?.(body, exchange)
      const request = renderExchange(exchange)
      rendered.add(exchange)
      exchange.body = request
      const prompt = exchangePrompt(exchange)
      exchange.facts.promptId = prompt.prompt.id
      exchange.facts.promptVersionId = prompt.version.id
      base.validate?.(request, exchange)
    },
    attempt: base.attempt,
  }
}

export const promptChatRoute = promptCompletions(inferenceRoute('/v1/chat/completions'))
export const promptTextRoute = promptCompletions(inferenceRoute('/v1/completions'))

/** A raw template is a text completion, any other a chat completion. */
function chooseCompletionsRoute(exchange: Exchange): RouteSpec {
  try {
    return exchangePrompt(exchange).version.isRawTemplate ? promptTextRoute : promptChatRoute
  } catch (error) {
    // An unknown prompt: the chat branch's validation refuses it again, once the account stage runs, so the refusal is recorded.
    if (error instanceof GatewayError) return promptChatRoute
    throw error
  }
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
  return Promise.resolve({ kind: 'json', status: 200, body: { success: true, data: renderExchange(exchange) }, usage: null })
}

export function registerPromptRoutes(app: FastifyInstance, deps: PipelineDeps): void {
  const completions = buildBranchingPipeline(promptChatRoute, [promptChatRoute, promptTextRoute], chooseCompletionsRoute, deps)
  app.post('/v1/prompts/:promptId/completions', pipelineHandlerOf(promptChatRoute, completions, deps, OPENAI_FORMAT))
  const render = buildLocalPipeline(promptRenderRoute, deps, renderAnswer)
  app.post('/v1/prompts/:promptId/render', (request, reply) => serveExchange(render.run, startExchange(promptRenderRoute, deps, render, request, reply), reply, OPENAI_FORMAT))
}
