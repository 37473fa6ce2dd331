/**
 * Vertex AI chat: Gemini models through the Gemini transforms, Claude models through the Anthropic
 * ones. The request side knows the target; the response side does not, so it tells the two formats
 * apart by shape: an Anthropic message has `type: "message"`, and every Anthropic stream event
 * carries a `type`, which no Gemini chunk has.
 */
import type { ResponseContext, StreamingOperation, StreamTransform, UpstreamEvent } from '../adapter.ts'
import type { ChatChunk, ChatRequest, ChatResponse } from '../canonical.ts'
import { emptyUsage, usageFromOpenAI } from '../canonical.ts'
import { anthropicToChat } from '../anthropic/response.ts'
import { anthropicStream } from '../anthropic/stream.ts'
import { geminiChat } from '../google/chat.ts'
import { geminiStream } from '../google/stream.ts'
import { isRecord } from '../shared/errors.ts'
import { claudeChatToUpstream } from './claude.ts'
import { publisherOf, vertexModelPath } from './paths.ts'

const gemini = geminiChat((target) => vertexModelPath(target, 'google'))

function isAnthropicShaped(data: unknown): boolean {
  return isRecord(data) && typeof data.type === 'string'
}

interface VertexStreamState {
  context: ResponseContext
  // Chosen on the first event; both inner transforms keep their own opaque state.
  inner: { transform: StreamTransform<unknown, ChatChunk>; state: unknown } | null
}

const vertexChatStream: StreamTransform<VertexStreamState, ChatChunk> = {
  start: (context) => ({ context, inner: null }),
  step(state, event: UpstreamEvent) {
    if (!state.inner) {
      const transform = (isAnthropicShaped(event.data) ? anthropicStream : geminiStream) as StreamTransform<unknown, ChatChunk>
      state.inner = { transform, state: transform.start(state.context) }
    }
    return state.inner.transform.step(state.inner.state, event)
  },
  finish: (state) => state.inner?.transform.finish(state.inner.state) ?? { chunks: [], usage: emptyUsage(), finishReason: { unified: 'other' } },
}

export const vertexChat: StreamingOperation<ChatRequest, ChatResponse, ChatChunk> = {
  framing: 'sse',
  toUpstream: (request, target) => (publisherOf(target) === 'anthropic' ? claudeChatToUpstream(request, target) : gemini.toUpstream(request, target)),
  fromUpstream: (body, context) => (isRecord(body) && body.type === 'message' ? anthropicToChat(body, context) : gemini.fromUpstream(body, context)),
  usage: (response) => usageFromOpenAI(response.usage),
  stream: vertexChatStream,
}
