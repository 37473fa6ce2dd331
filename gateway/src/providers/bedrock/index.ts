/**
 * AWS Bedrock runtime. Chat goes through the Converse API by default (every Bedrock chat model), or
 * through InvokeModel with the Anthropic Messages body when the target sets `mode: invoke` (Claude
 * only; `../anthropic` does the translating). `POST /v1/messages` bodies for Claude pass natively
 * through InvokeModel. Target options: `region` (required), `mode` (`converse` | `invoke`),
 * `anthropicBeta`. Requests are signed with SigV4 for the `bedrock` service by the transport.
 */
import { GatewayError } from '../../core/errors.ts'
import type { ProviderAdapter, ResponseContext, StreamingOperation, StreamTransform, TargetContext, UpstreamEvent } from '../adapter.ts'
import { anthropicToChat, usageFromChatResponse } from '../anthropic/response.ts'
import type { ChatChunk, ChatRequest, ChatResponse } from '../canonical.ts'
import { emptyUsage } from '../canonical.ts'
import { isRecord } from '../shared/errors.ts'
import { converseRequest } from './converse-request.ts'
import { converseToChat } from './converse-response.ts'
import { converseStream } from './converse-stream.ts'
import { parseBedrockError } from './errors.ts'
import { bedrockNativeMessages, invokeChatStream, invokeRequest } from './invoke.ts'
import { bedrockBaseUrl } from './paths.ts'

export type BedrockChatMode = 'converse' | 'invoke'

export function bedrockChatMode(options: Readonly<Record<string, string>>): BedrockChatMode {
  const mode = options.mode ?? 'converse'
  if (mode === 'converse' || mode === 'invoke') return mode
  throw new GatewayError('invalid_config', `Bedrock option 'mode' must be 'converse' or 'invoke', not '${mode.slice(0, 40)}'`, { param: 'options.mode' })
}

interface BedrockStreamState {
  context: ResponseContext
  // The two wire formats share nothing, so whichever the first event shows is used to the end.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  inner: { transform: StreamTransform<any, ChatChunk>; state: unknown } | null
}

function innerTransform(event: UpstreamEvent): StreamTransform<unknown, ChatChunk> {
  // Invoke streams carry only `chunk` events (and exceptions, which both transforms throw on).
  return (event.event === 'chunk' ? invokeChatStream : converseStream) as StreamTransform<unknown, ChatChunk>
}

/** The response and stream transforms get no target, so they tell the two formats apart by shape. */
const bedrockChatStream: StreamTransform<BedrockStreamState, ChatChunk> = {
  start: (context) => ({ context, inner: null }),
  step(state, event) {
    if (!state.inner) {
      const transform = innerTransform(event)
      state.inner = { transform, state: transform.start(state.context) }
    }
    return state.inner.transform.step(state.inner.state, event)
  },
  finish: (state) => (state.inner ? state.inner.transform.finish(state.inner.state) : { chunks: [], usage: emptyUsage(), finishReason: { unified: 'other' } }),
}

export const bedrockChat: StreamingOperation<ChatRequest, ChatResponse, ChatChunk> = {
  framing: 'aws-eventstream',
  toUpstream: (request: ChatRequest, target: TargetContext) =>
    bedrockChatMode(target.options) === 'invoke' ? invokeRequest(request, target) : converseRequest(request, target),
  fromUpstream: (body, context) => (isRecord(body) && body.type === 'message' ? anthropicToChat(body, context) : converseToChat(body, context)),
  usage: usageFromChatResponse,
  stream: bedrockChatStream,
}

export const bedrock: ProviderAdapter = {
  kind: 'bedrock',
  defaultBaseUrl: null,
  baseUrlFor: bedrockBaseUrl,
  auth: { type: 'aws-sigv4', service: 'bedrock' },
  passthrough: false,
  chat: bedrockChat,
  messages: bedrockNativeMessages,
  parseError: parseBedrockError,
}
