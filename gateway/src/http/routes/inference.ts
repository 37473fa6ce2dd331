/**
 * The OpenAI-compatible inference routes: chat completions, text completions and embeddings. Each
 * is the same pipeline over a different adapter operation and validator. A request under a config
 * (`x-gateway-config`, or its key's or workspace's default) runs through the routing executor
 * (strategies, retries, circuit breakers); any other goes straight to the one target its headers
 * or model name, with no routing work at all.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { JsonOperation, ProviderAdapter, StreamingOperation, Warning } from '../../providers/adapter.ts'
import { GatewayError, invalidParameter } from '../../errors.ts'
import { validateChatRequest, validateCompletionRequest, validateEmbeddingsRequest } from '../../validation/inference.ts'
import type { Body } from '../../validation/checks.ts'
import { beginRequest, type PipelineDeps } from '../../pipeline/begin.ts'
import type { RequestContext } from '../../pipeline/context.ts'
import { attemptJson, attemptStream, type Outcome } from '../../pipeline/dispatch.ts'
import { resolveDirectTarget, type RouteTarget } from '../../pipeline/resolve-route.ts'
import type { PlanNode, ProviderRef } from '../../routing/plan.ts'
import { ConfiguredRoute, withForwardedHeaders } from '../../routing/run.ts'
import { selectConfig } from '../../routing/select.ts'
import { toJsonText } from '../../pipeline/raw-json.ts'
import { pipeSse, startSse } from '../sse-writer.ts'

type OperationName = 'chat' | 'completions' | 'embeddings'

interface InferenceRoute {
  path: string
  operation: OperationName
  validate(body: Body): void
}

const routes: InferenceRoute[] = [
  { path: '/v1/chat/completions', operation: 'chat', validate: validateChatRequest },
  { path: '/v1/completions', operation: 'completions', validate: validateCompletionRequest },
  { path: '/v1/embeddings', operation: 'embeddings', validate: validateEmbeddingsRequest },
]

type AnyOperation = JsonOperation<Body & { model: string }, unknown> | StreamingOperation<Body & { model: string }, unknown, unknown>

function operationOf(adapter: ProviderAdapter, name: OperationName, target: RouteTarget): AnyOperation {
  const operation = adapter[name] as AnyOperation | undefined
  if (!operation) {
    throw new GatewayError('unsupported_operation', `Provider '@${target.provider.record.slug}' (${adapter.kind}) does not serve ${name}`)
  }
  return operation
}

function requireObjectBody(body: unknown): Body {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw invalidParameter('body', 'The request body must be a JSON object')
  return body as Body
}

/** Parameters a provider cannot honour are reported, never silently dropped. */
function warningHeaders(warnings: Warning[]): Record<string, string> {
  if (warnings.length === 0) return {}
  return { 'x-gateway-warnings': warnings.map((warning) => warning.parameter ?? warning.kind).join(', ') }
}

/** What every routed answer carries: the trace id, the provider that served it, and any warnings. */
export function responseHeaders(target: RouteTarget, warnings: Warning[], traceId: string): Record<string, string> {
  return { 'x-gateway-trace-id': traceId, 'x-gateway-provider': target.provider.record.slug, ...warningHeaders(warnings) }
}

/** An answer passed through unchanged goes out as the provider's own JSON text, not re-serialised. */
function sendJson(reply: FastifyReply, response: unknown): FastifyReply {
  return reply.type('application/json; charset=utf-8').send(toJsonText(response))
}

interface ConfiguredRequest {
  route: InferenceRoute
  context: RequestContext
  body: Body & { model: string }
  request: FastifyRequest
  reply: FastifyReply
}

async function serveWithConfig(deps: PipelineDeps, plan: PlanNode<ProviderRef>, { route, context, body, request, reply }: ConfiguredRequest): Promise<unknown> {
  const configured = new ConfiguredRoute<Body & { model: string }, Outcome<unknown, unknown>>(deps.holder.targetHealth, context, body, (target, payload, signal) => {
    const operation = withForwardedHeaders(operationOf(target.route.provider.adapter, route.operation, target.route), target.forwardedHeaders)
    // Overrides come from a config, not the client, but must meet the same limits before they go out.
    if (payload !== body) route.validate(payload)
    return payload.stream === true && 'stream' in operation
      ? attemptStream(operation, target.route, payload, { signal })
      : attemptJson(operation, target.route, payload, { signal })
  })
  let outcome: Outcome<unknown, unknown>
  try {
    outcome = await configured.run(plan, request.headers, body.model)
  } catch (error) {
    reply.headers(configured.headers())
    throw error
  }
  const headers = { ...configured.headers(), ...warningHeaders(outcome.warnings) }
  if (outcome.kind === 'stream') {
    reply.hijack()
    startSse(reply.raw, 200, headers)
    await pipeSse(reply.raw, outcome.chunks)
    return undefined
  }
  return sendJson(reply.headers(headers), outcome.response)
}

export function registerInferenceRoutes(app: FastifyInstance, deps: PipelineDeps): void {
  for (const route of routes) {
    app.post(route.path, async (request: FastifyRequest, reply: FastifyReply) => {
      const context = beginRequest(deps, request, reply)
      const body = requireObjectBody(request.body)
      route.validate(body)
      const request_ = body as Body & { model: string }
      const plan = selectConfig(context.runtime, context.workspaceId, request.headers, context.key.defaultConfig)
      if (plan !== null) return serveWithConfig(deps, plan, { route, context, body: request_, request, reply })
      const target = resolveDirectTarget(context.runtime, context.workspaceId, request.headers, request_.model)
      const operation = operationOf(target.provider.adapter, route.operation, target)

      if (body.stream === true && 'stream' in operation) {
        const outcome = await attemptStream(operation, target, request_, { signal: context.signal })
        reply.hijack()
        startSse(reply.raw, 200, responseHeaders(target, outcome.warnings, context.trace.traceId))
        await pipeSse(reply.raw, outcome.chunks)
        return
      }
      const outcome = await attemptJson(operation, target, request_, { signal: context.signal })
      return sendJson(reply.headers(responseHeaders(target, outcome.warnings, context.trace.traceId)), outcome.response)
    })
  }
}
