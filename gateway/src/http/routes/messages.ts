/**
 * `POST /v1/messages`: the Anthropic Messages API in front of any provider, so Anthropic SDK users
 * (and tools built on it) can use Gatehouse too. A target that speaks Messages itself gets the body
 * natively; any other gets it translated to a chat request, and the answer (or stream) translated
 * back. Errors on this route take Anthropic's shape, `{"type":"error","error":{"type","message"}}`,
 * and the Anthropic SDK's `x-api-key` header may carry the Gatehouse key.
 */
import { randomUUID } from 'node:crypto'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { GatewayError, invalidParameter } from '../../errors.ts'
import type { StreamingOperation, UpstreamEvent, Warning } from '../../providers/adapter.ts'
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
import { beginRequest, type PipelineDeps } from '../../pipeline/begin.ts'
import type { RequestContext } from '../../pipeline/context.ts'
import { header } from '../../pipeline/context.ts'
import { attemptJson, attemptStream } from '../../pipeline/dispatch.ts'
import { resolveDirectTarget, type RouteTarget } from '../../pipeline/resolve-route.ts'
import { renderError } from '../error-handler.ts'
import { pipeSse, startSse, type PipeSseOptions } from '../sse-writer.ts'
import { responseHeaders } from './inference.ts'

export const MESSAGES_PATH = '/v1/messages'

type MessagesBody = Record<string, unknown> & { model: string }

/** Errors on this route in Anthropic's envelope: the Anthropic SDKs read `error.type`. */
function anthropicErrorBody(error: GatewayError): AnthropicErrorEnvelope {
  return anthropicErrorEnvelope(error.status, error.message)
}

/** Anthropic events written as they are: the event name, and the event object as data; no `[DONE]`. */
const anthropicSse: PipeSseOptions = {
  done: false,
  eventName: (chunk) => (chunk as AnthropicSseEvent).event,
  data: (chunk) => (chunk as AnthropicSseEvent).data,
  errorData: anthropicErrorBody,
}

function requireBody(body: unknown): Record<string, unknown> {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw invalidParameter('body', 'The request body must be a JSON object')
  return body as Record<string, unknown>
}

async function streamEvents(reply: FastifyReply, headers: Record<string, string>, events: AsyncIterable<ReadonlyArray<AnthropicSseEvent | UpstreamEvent>>): Promise<void> {
  reply.hijack()
  startSse(reply.raw, 200, headers)
  await pipeSse(reply.raw, events, anthropicSse)
}

/** The body goes to a provider that speaks Messages, with the caller's `anthropic-beta` features. */
async function sendNative(
  operation: StreamingOperation<MessagesBody, Record<string, unknown>, UpstreamEvent>,
  target: RouteTarget,
  body: MessagesBody,
  request: FastifyRequest,
  reply: FastifyReply,
  context: RequestContext,
): Promise<void> {
  const beta = header(request.headers, 'anthropic-beta')
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
    const outcome = await attemptStream(withBeta, target, body, { signal: context.signal })
    await streamEvents(reply, responseHeaders(target, outcome.warnings, context.trace.traceId), outcome.chunks)
    return
  }
  const outcome = await attemptJson(withBeta, target, body, { signal: context.signal })
  await reply.headers(responseHeaders(target, outcome.warnings, context.trace.traceId)).send(outcome.response)
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
async function sendTranslated(target: RouteTarget, body: Record<string, unknown>, reply: FastifyReply, context: RequestContext): Promise<void> {
  const translation = anthropicRequestToChat(body)
  const [problem] = translation.problems
  if (problem !== undefined || translation.request === null) {
    throw invalidParameter(problem?.param ?? 'body', translation.problems.map((each) => each.message).join('; ') || 'The request body must be a JSON object')
  }
  const { adapter, record } = target.provider
  if (!adapter.chat) throw new GatewayError('unsupported_operation', `Provider '@${record.slug}' (${adapter.kind}) does not serve chat, which /v1/messages needs`)
  const chatRequest: ChatRequest = translation.request
  const requestModel = String(body.model)
  const warnings = (more: Warning[]): Warning[] => [...translation.warnings, ...more]

  if (chatRequest.stream === true) {
    const outcome = await attemptStream(adapter.chat, target, chatRequest, { signal: context.signal })
    const events = translatedEvents(outcome.chunks, () => outcome.result()?.usage, requestModel, context.startedAtMs)
    await streamEvents(reply, responseHeaders(target, warnings(outcome.warnings), context.trace.traceId), events)
    return
  }
  const outcome = await attemptJson(adapter.chat, target, chatRequest, { signal: context.signal })
  await reply
    .headers(responseHeaders(target, warnings(outcome.warnings), context.trace.traceId))
    .send(chatResponseToAnthropic(outcome.response, { requestModel }, outcome.usage))
}

async function handle(deps: PipelineDeps, request: FastifyRequest, reply: FastifyReply): Promise<void> {
  const context = beginRequest(deps, request, reply)
  const body = requireBody(request.body)
  const model = typeof body.model === 'string' && body.model !== '' ? body.model : undefined
  const target = resolveDirectTarget(context.runtime, context.workspaceId, request.headers, model)
  const native = nativeMessagesFor(target.provider.adapter, { upstreamModel: target.upstreamModel, options: target.provider.record.options })
  if (native && model !== undefined) return sendNative(native, target, { ...body, model }, request, reply, context)
  return sendTranslated(target, body, reply, context)
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
    scope.post(MESSAGES_PATH, (request, reply) => handle(deps, request, reply))
  })
}
