/**
 * The OpenAI-compatible inference routes: chat completions, text completions and embeddings. Each
 * declares its operation, its validator and which adapter operation serves it; the pipeline does
 * the rest (authentication, routing under a config or directly, policies, retries, accounting).
 */
import type { FastifyInstance } from 'fastify'
import { GatewayError, invalidParameter } from '../../core/errors.ts'
import type { JsonOperation, ProviderAdapter, StreamingOperation, Warning } from '../../providers/adapter.ts'
import { openAIUsageBatch } from '../../providers/shared/usage-chunk.ts'
import type { PipelineDeps } from '../../pipeline/build.ts'
import { attemptJson, attemptRelayedStream, attemptStream } from '../../pipeline/dispatch.ts'
import type { RouteSpec } from '../../pipeline/route-spec.ts'
import type { Exchange, Operation } from '../../pipeline/stage.ts'
import type { RouteTarget } from '../../routing/target.ts'
import { withForwardedHeaders } from '../../routing/run.ts'
import type { Body } from '../../validation/checks.ts'
import { validateChatRequest, validateCompletionRequest, validateEmbeddingsRequest } from '../../validation/inference.ts'
import { OPENAI_FORMAT, pipelineHandler } from '../pipeline-route.ts'

type OperationName = 'chat' | 'completions' | 'embeddings'
type ModelBody = Body & { model: string }
type AnyOperation = JsonOperation<ModelBody, unknown> | StreamingOperation<ModelBody, unknown, unknown>

function operationOf(adapter: ProviderAdapter, name: OperationName, target: RouteTarget): AnyOperation {
  const operation = adapter[name] as AnyOperation | undefined
  if (!operation) {
    throw new GatewayError('unsupported_operation', `Provider '@${target.provider.record.slug}' (${adapter.kind}) does not serve ${name}`)
  }
  return operation
}

export function requireObjectBody(body: unknown): Body {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw invalidParameter('body', 'The request body must be a JSON object')
  return body as Body
}

/** Parameters a provider cannot honour are reported in `x-gateway-warnings`, never silently dropped. */
export function addWarnings(exchange: Exchange, warnings: readonly Warning[]): void {
  if (warnings.length === 0) return
  exchange.responseHeaders['x-gateway-warnings'] = warnings.map((warning) => warning.parameter ?? warning.kind).join(', ')
}

/** The model the provider said it served, for the usage record. */
function servedModel(response: unknown): string | null {
  const model = (response as { model?: unknown } | null)?.model
  return typeof model === 'string' ? model : null
}

/** Whether the client asked for the usage chunk (`stream_options.include_usage`). */
function includeUsage(request: ModelBody): boolean {
  const options = request.stream_options
  return typeof options === 'object' && options !== null && (options as { include_usage?: unknown }).include_usage === true
}

/**
 * Chat streams answer usage the OpenAI way whatever the provider: translating adapters put it on
 * the finishing chunk, which becomes the finish plus a choices-free usage chunk, or loses its usage
 * when the client did not ask for it. Accounting reads the stream's result, not these chunks.
 * Applied by the dispatcher as it hands out each batch (no iterator of its own around the stream).
 */
function inOpenAIUsageForm(include: boolean): (batch: readonly unknown[]) => readonly unknown[] {
  return (batch) => openAIUsageBatch(batch, include)
}

function inferenceRoute(operation: Operation & { name: OperationName }, validate: (body: Body) => void): RouteSpec {
  return {
    operation,
    model: (exchange) => (typeof exchange.body?.model === 'string' ? exchange.body.model : undefined),
    validate: (body, exchange) => validate(requireObjectBody(body ?? exchange.rawBody)),
    async attempt(exchange, target, body, signal) {
      const request = body as ModelBody
      const adapterOperation = withForwardedHeaders(operationOf(target.route.provider.adapter, operation.name, target.route), target.forwardedHeaders)
      if (request.stream === true && 'stream' in adapterOperation) {
        const open = exchange.relayStreams ? attemptRelayedStream : attemptStream
        const mapBatch = operation.name === 'chat' ? inOpenAIUsageForm(includeUsage(request)) : undefined
        const outcome = await open(adapterOperation, target.route, request, { signal, mapBatch })
        addWarnings(exchange, outcome.warnings)
        return { kind: 'stream', status: 200, batches: outcome.chunks, result: outcome.result }
      }
      const outcome = await attemptJson(adapterOperation, target.route, request, { signal })
      addWarnings(exchange, outcome.warnings)
      exchange.facts.servedModel = servedModel(outcome.response)
      return { kind: 'json', status: 200, body: outcome.response, usage: outcome.usage }
    },
  }
}

export const inferenceRoutes: ReadonlyArray<{ path: string; spec: RouteSpec }> = [
  {
    path: '/v1/chat/completions',
    spec: inferenceRoute({ name: 'chat', endpointType: 'chatComplete', format: 'openai', textual: true, cacheable: true }, validateChatRequest),
  },
  {
    path: '/v1/completions',
    spec: inferenceRoute({ name: 'completions', endpointType: 'complete', format: 'openai', textual: true, cacheable: true }, validateCompletionRequest),
  },
  {
    path: '/v1/embeddings',
    spec: inferenceRoute({ name: 'embeddings', endpointType: 'embed', format: 'openai', textual: false, cacheable: true }, validateEmbeddingsRequest),
  },
]

export function registerInferenceRoutes(app: FastifyInstance, deps: PipelineDeps): void {
  for (const { path, spec } of inferenceRoutes) app.post(path, pipelineHandler(spec, deps, OPENAI_FORMAT))
}
