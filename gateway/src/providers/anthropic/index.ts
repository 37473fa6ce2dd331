/**
 * Anthropic (Messages API). Chat requests are translated to and from the Messages format;
 * `POST /v1/messages` bodies pass natively. Claude on Bedrock reuses these transforms with
 * Bedrock's paths and signing (`../bedrock/invoke.ts`).
 */
import type { ProviderAdapter, StreamingOperation, TargetContext, Translated } from '../adapter.ts'
import type { ChatChunk, ChatRequest, ChatResponse } from '../canonical.ts'
import { parseAnthropicError } from './errors.ts'
import { anthropicHeaders, anthropicNativeMessages } from './native.ts'
import { chatToAnthropicBody } from './request.ts'
import { anthropicToChat, usageFromChatResponse } from './response.ts'
import { anthropicStream } from './stream.ts'

function toUpstream(request: ChatRequest, target: TargetContext): Translated {
  const { body, warnings } = chatToAnthropicBody(request, target)
  return {
    upstream: {
      method: 'POST',
      path: '/messages',
      headers: anthropicHeaders(target.options),
      body: { model: target.upstreamModel, ...body, ...(request.stream === true && { stream: true }) },
    },
    warnings,
  }
}

export const anthropicChat: StreamingOperation<ChatRequest, ChatResponse, ChatChunk> = {
  framing: 'sse',
  toUpstream,
  fromUpstream: anthropicToChat,
  usage: usageFromChatResponse,
  stream: anthropicStream,
}

export const anthropic: ProviderAdapter = {
  kind: 'anthropic',
  defaultBaseUrl: 'https://api.anthropic.com/v1',
  auth: { type: 'header', name: 'x-api-key' },
  // Anthropic serves none of OpenAI's other API groups at OpenAI's paths.
  passthrough: false,
  chat: anthropicChat,
  messages: anthropicNativeMessages,
  parseError: parseAnthropicError,
}
