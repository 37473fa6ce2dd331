/**
 * The OpenAI-compatible inference routes: chat completions, text completions and embeddings. Each
 * is the same pipeline over a different adapter operation and validator. A request under a config
 * (`x-gateway-config`, or its key's or workspace's default) runs through the routing executor
 * (strategies, retries, circuit breakers); any other goes straight to the one target its headers
 * or model name, with no routing work at all.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { JsonOperation, ProviderAdapter, StreamingOperation, TargetContext, Translated, Warning } from '../../providers/adapter.ts'
import { GatewayError, invalidParameter } from '../../errors.ts'
import { validateChatRequest, validateCompletionRequest, validateEmbeddingsRequest } from '../../validation/inference.ts'
import type { Body } from '../../validation/checks.ts'
import { beginRequest, type PipelineDeps } from '../../pipeline/begin.ts'
import type { RequestContext } from '../../pipeline/context.ts'
import { attemptJson, attemptStream, type Outcome } from '../../pipeline/dispatch.ts'
import { resolveDirectTarget, type RouteTarget } from '../../pipeline/resolve-route.ts'
import { bindPlan, type BoundTarget } from '../../routing/bind.ts'
import { PlanExecutor, type ExecutionTrace } from '../../routing/execute.ts'
import type { PlanLeaf, PlanNode, ProviderRef } from '../../routing/plan.ts'
import { systemClock } from '../../routing/retry.ts'
import { selectConfig } from '../../routing/select.ts'
import { withRequestTimeout } from '../../routing/timeout.ts'
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

/** What happened under a config: the target that answered (or failed last) and its retries. */
function routingHeaders(trace: ExecutionTrace<BoundTarget>, traceId: string): Record<string, string> {
  const leaf = trace.leaf
  if (leaf === null) return { 'x-gateway-trace-id': traceId }
  return {
    'x-gateway-trace-id': traceId,
    'x-gateway-provider': leaf.target.route.provider.record.slug,
    'x-gateway-target-path': leaf.path,
    'x-gateway-retry-attempt-count': String(trace.retries),
  }
}

/** The operation with the client headers a config forwards added under the adapter's own (which win). */
function withForwardedHeaders(operation: AnyOperation, forwarded: Readonly<Record<string, string>> | null): AnyOperation {
  if (forwarded === null) return operation
  const toUpstream = (request: Body & { model: string }, target: TargetContext): Translated => {
    const translated = operation.toUpstream(request, target)
    return { ...translated, upstream: { ...translated.upstream, headers: { ...forwarded, ...translated.upstream.headers } } }
  }
  // A prototype link keeps every other member (stream transform, framing) exactly as the adapter has it.
  return Object.assign(Object.create(operation) as AnyOperation, { toUpstream })
}

interface ConfiguredRequest {
  route: InferenceRoute
  context: RequestContext
  body: Body & { model: string }
  request: FastifyRequest
  reply: FastifyReply
}

async function serveWithConfig(deps: PipelineDeps, plan: PlanNode<ProviderRef>, { route, context, body, request, reply }: ConfiguredRequest): Promise<unknown> {
  const bound = bindPlan(plan, { runtime: context.runtime, workspaceId: context.workspaceId, model: body.model, headers: request.headers })
  const attempt = (leaf: PlanLeaf<BoundTarget>, signal: AbortSignal): Promise<Outcome<unknown, unknown>> => {
    const target = leaf.target.route
    const operation = withForwardedHeaders(operationOf(target.provider.adapter, route.operation, target), leaf.target.forwardedHeaders)
    const payload = leaf.settings.overrideParams === null ? body : { ...body, ...leaf.settings.overrideParams }
    // Overrides come from a config, not the client, but must meet the same limits before they go out.
    if (payload !== body) route.validate(payload)
    const send = (attemptSignal: AbortSignal): Promise<Outcome<unknown, unknown>> =>
      payload.stream === true && 'stream' in operation
        ? attemptStream(operation, target, payload, { signal: attemptSignal })
        : attemptJson(operation, target, payload, { signal: attemptSignal })
    const timeoutMs = leaf.settings.requestTimeoutMs
    return timeoutMs === null ? send(signal) : withRequestTimeout(timeoutMs, signal, send)
  }
  const executor = new PlanExecutor<BoundTarget, Outcome<unknown, unknown>>(attempt, {
    breakers: deps.holder.breakers,
    clock: systemClock,
    random: Math.random,
    signal: context.signal,
    conditions: { metadata: context.metadata, params: body },
  })
  let outcome: Outcome<unknown, unknown>
  try {
    outcome = await executor.run(bound)
  } catch (error) {
    reply.headers(routingHeaders(executor.trace, context.trace.traceId))
    throw error
  }
  const headers = { ...routingHeaders(executor.trace, context.trace.traceId), ...warningHeaders(outcome.warnings) }
  if (outcome.kind === 'stream') {
    reply.hijack()
    startSse(reply.raw, 200, headers)
    await pipeSse(reply.raw, outcome.chunks)
    return undefined
  }
  return reply.headers(headers).send(outcome.response)
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
      return reply.headers(responseHeaders(target, outcome.warnings, context.trace.traceId)).send(outcome.response)
    })
  }
}
