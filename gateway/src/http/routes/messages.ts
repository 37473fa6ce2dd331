/**
 * `POST /v1/messages`: the Anthropic Messages API in front of any provider, so Anthropic SDK users
 * (and tools built on it) can use Gatehouse too. A target that speaks Messages itself gets the body
 * natively; any other gets it translated to a chat request, and the answer (or stream) translated
 * back. Errors on this route take Anthropic's shape, `{"type":"error","error":{"type","message"}}`,
 * and the Anthropic SDK's `x-api-key` header may carry the Gatehouse key.
 */
import { randomUUID } from 'node:crypto'
import type { FastifyInstance } from 'fastify'
import { GatewayError, invalidParameter } from '../../core/errors.ts'
import { header } from '../../core/headers.ts'
import type { StreamingOperation, UpstreamEvent } from '../../providers/adapter.ts'
import type { ChatChunk, ChatRequest, Usage } from '../../providers/canonical.ts'
import {
  anthropicErrorEnvelope,
  anthropicRequestToChat,
  chatResponseToAnthropic,
  chatStreamToAnthropic,
  nativeMessagesFor,
  type AnthropicErrorEnvelope,
  type AnthropicSseEvent,
} from '../../providers/anthropic/inbound.ts'
import type { PipelineDeps } from '../../pipeline/build.ts'
import { attemptJson, attemptStream } from '../../pipeline/dispatch.ts'
import type { RouteSpec } from '../../pipeline/route-spec.ts'
import type { Answer, Exchange } from '../../pipeline/stage.ts'
import type { RouteTarget } from '../../routing/target.ts'
import { renderError } from '../error-handler.ts'
import { pipelineHandler, type AnswerFormat } from '../pipeline-route.ts'
import { addWarnings } from './inference.ts'

export const MESSAGES_PATH = '/v1/messages'

type MessagesBody = Record<string, unknown> & { model: string }

/** Errors on this route in Anthropic's envelope: the Anthropic SDKs read `error.type`. */
function anthropicErrorBody(error: GatewayError): AnthropicErrorEnvelope {
  return anthropicErrorEnvelope(error.status, error.message)
}

/** Anthropic events written as they are: the event name, and the event object as data; no `[DONE]`. */
const ANTHROPIC_FORMAT: AnswerFormat = {
  sse: {
    done: false,
    eventName: (chunk) => (chunk as AnthropicSseEvent).event,
    data: (chunk) => (chunk as AnthropicSseEvent).data,
    errorData: anthropicErrorBody,
  },
}

function requireBody(body: unknown): Record<string, unknown> {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw invalidParameter('body', 'The request body must be a JSON object')
  return body as Record<string, unknown>
}

/** The body goes to a provider that speaks Messages, with the caller's `anthropic-beta` features. */
async function sendNative(
  operation: StreamingOperation<MessagesBody, Record<string, unknown>, UpstreamEvent>,
  target: RouteTarget,
  body: MessagesBody,
  exchange: Exchange,
  signal: AbortSignal,
): Promise<Answer> {
  const beta = header(exchange.headers, 'anthropic-beta')
  const withBeta: typeof operation =
    beta === undefined
      ? operation
      : {
          ...operation,
          toUpstream: (messages, targetContext) => {
            const translated = operation.toUpstream(messages, targetContext)
            translated.upstream.headers = { ...translated.upstream.headers, 'anthropic-beta': beta }
            return translated
          },
        }
  if (body.stream === true) {
    const outcome = await attemptStream(withBeta, target, body, { signal })
    addWarnings(exchange, outcome.warnings)
    return { kind: 'stream', status: 200, batches: outcome.chunks, result: outcome.result }
  }
  const outcome = await attemptJson(withBeta, target, body, { signal })
  addWarnings(exchange, outcome.warnings)
  return { kind: 'json', status: 200, body: outcome.response, usage: outcome.usage }
}

async function* translatedEvents(
  batches: AsyncIterable<ChatChunk[]>,
  usage: () => Usage | undefined,
  requestModel: string,
  nowMs: number,
): AsyncGenerator<AnthropicSseEvent[]> {
  const state = chatStreamToAnthropic.start({ requestModel, responseId: `msg_${randomUUID().replaceAll('-', '')}`, createdAt: Math.floor(nowMs / 1000) })
  for await (const chunks of batches) yield chunks.flatMap((chunk) => chatStreamToAnthropic.step(state, chunk))
  yield chatStreamToAnthropic.finish(state, usage())
}

/** The body becomes a chat request for the target's chat operation, and the answer a Messages answer. */
async function sendTranslated(target: RouteTarget, body: Record<string, unknown>, exchange: Exchange, signal: AbortSignal): Promise<Answer> {
  const translation = anthropicRequestToChat(body)
  const [problem] = translation.problems
  if (problem !== undefined || translation.request === null) {
    throw invalidParameter(problem?.param ?? 'body', translation.problems.map((each) => each.message).join('; ') || 'The request body must be a JSON object')
  }
  const { adapter, record } = target.provider
  if (!adapter.chat) throw new GatewayError('unsupported_operation', `Provider '@${record.slug}' (${adapter.kind}) does not serve chat, which /v1/messages needs`)
  const chatRequest: ChatRequest = translation.request
  const requestModel = String(body.model)

  if (chatRequest.stream === true) {
    const outcome = await attemptStream(adapter.chat, target, chatRequest, { signal })
    addWarnings(exchange, [...translation.warnings, ...outcome.warnings])
    const events = translatedEvents(outcome.chunks, () => outcome.result()?.usage, requestModel, exchange.context.startedAtMs)
    return { kind: 'stream', status: 200, batches: events, result: outcome.result }
  }
  const outcome = await attemptJson(adapter.chat, target, chatRequest, { signal })
  addWarnings(exchange, [...translation.warnings, ...outcome.warnings])
  return { kind: 'json', status: 200, body: chatResponseToAnthropic(outcome.response, { requestModel }, outcome.usage), usage: outcome.usage }
}

function requestedModel(exchange: Exchange): string | undefined {
  const model = exchange.body?.model
  return typeof model === 'string' && model !== '' ? model : undefined
}

export const messagesRoute: RouteSpec = {
  operation: { name: 'messages', endpointType: 'messages', format: 'anthropic', textual: true, cacheable: true },
  model: requestedModel,
  validate: (body, exchange) => void requireBody(body ?? exchange.rawBody),
  attempt(exchange, target, body, signal) {
    const route = target.route
    const model = requestedModel(exchange)
    const payload = body ?? {}
    const native = nativeMessagesFor(route.provider.adapter, { upstreamModel: route.upstreamModel, options: route.provider.record.options })
    if (native && model !== undefined) return sendNative(native, route, { ...payload, model }, exchange, signal)
    return sendTranslated(route, payload, exchange, signal)
  },
}

export function registerMessagesRoute(app: FastifyInstance, deps: PipelineDeps): void {
  app.register(async (scope) => {
    scope.setErrorHandler((error, request, reply) => renderError(error, request, reply, anthropicErrorBody))
    // The Anthropic SDK sends its key as `x-api-key`; on this route that may be the Gatehouse key.
    // The explicit Gatehouse header and a bearer token still come first.
    scope.addHook('onRequest', async (request) => {
      const apiKey = header(request.headers, 'x-api-key')
      if (apiKey !== undefined && header(request.headers, 'x-gateway-api-key') === undefined && header(request.headers, 'authorization') === undefined) {
        request.headers['x-gateway-api-key'] = apiKey
      }
    })
    scope.post(MESSAGES_PATH, pipelineHandler(messagesRoute, deps, ANTHROPIC_FORMAT))
  })
}
