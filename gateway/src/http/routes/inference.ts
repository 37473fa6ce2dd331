/**
 * The OpenAI-compatible inference routes: chat completions, text completions and embeddings. Each
 * is the same pipeline over a different adapter operation and validator.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { JsonOperation, ProviderAdapter, StreamingOperation, Warning } from '../../providers/adapter.ts'
import { GatewayError, invalidParameter } from '../../errors.ts'
import { validateChatRequest, validateCompletionRequest, validateEmbeddingsRequest } from '../../validation/inference.ts'
import type { Body } from '../../validation/checks.ts'
import { beginRequest, type PipelineDeps } from '../../pipeline/begin.ts'
import { attemptJson, attemptStream } from '../../pipeline/dispatch.ts'
import { resolveDirectTarget, type RouteTarget } from '../../pipeline/resolve-route.ts'
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

function responseHeaders(target: RouteTarget, warnings: Warning[], traceId: string): Record<string, string> {
  return { 'x-gateway-trace-id': traceId, 'x-gateway-provider': target.provider.record.slug, ...warningHeaders(warnings) }
}

export function registerInferenceRoutes(app: FastifyInstance, deps: PipelineDeps): void {
  for (const route of routes) {
    app.post(route.path, async (request: FastifyRequest, reply: FastifyReply) => {
      const context = beginRequest(deps, request, reply)
      const body = requireObjectBody(request.body)
      route.validate(body)
      const request_ = body as Body & { model: string }
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
