/**
 * Claude on Vertex AI: the Anthropic Messages body (the anthropic adapter's transforms, reused)
 * posted to `:rawPredict` / `:streamRawPredict`, with `anthropic_version` in the body instead of a
 * header and no `model` field (the URL names the model).
 */
import type { NativeMessagesOperation, TargetContext, Translated } from '../adapter.ts'
import type { ChatRequest } from '../canonical.ts'
import { relayAnthropicEvents } from '../anthropic/native.ts'
import { chatToAnthropicBody } from '../anthropic/request.ts'
import { expectAnthropicMessage, usageFromAnthropic } from '../anthropic/response.ts'
import type { AnthropicUsage } from '../anthropic/types.ts'
import { publisherOf, vertexModelPath } from './paths.ts'

export const vertexAnthropicVersion = 'vertex-2023-10-16'

function rawPredict(body: Record<string, unknown>, target: TargetContext, stream: boolean): Translated['upstream'] {
  const { model: _model, ...rest } = body
  return {
    method: 'POST',
    path: `${vertexModelPath(target, 'anthropic')}:${stream ? 'streamRawPredict' : 'rawPredict'}`,
    headers: {},
    body: { anthropic_version: vertexAnthropicVersion, ...rest, ...(stream && { stream: true }) },
  }
}

export function claudeChatToUpstream(request: ChatRequest, target: TargetContext): Translated {
  const { body, warnings } = chatToAnthropicBody(request, target)
  return { upstream: rawPredict(body as unknown as Record<string, unknown>, target, request.stream === true), warnings }
}

/** `POST /v1/messages` bodies for Claude on Vertex, relayed natively. */
export const vertexNativeMessages: NativeMessagesOperation = {
  framing: 'sse',
  accepts: (target) => publisherOf(target) === 'anthropic',
  toUpstream: (body, target) => ({ upstream: rawPredict(body, target, body.stream === true), warnings: [] }),
  fromUpstream: (body) => expectAnthropicMessage(body),
  usage: (response) => usageFromAnthropic(response.usage as AnthropicUsage | undefined),
  stream: relayAnthropicEvents(),
}
