/**
 * Claude on Bedrock through InvokeModel (`/model/{id}/invoke` and `/invoke-with-response-stream`):
 * the body is the Anthropic Messages body with `anthropic_version: "bedrock-2023-05-31"`, no
 * `model` (it is in the path) and no `stream` (the path says it); the answer is an Anthropic
 * message, and the stream wraps each Anthropic event in a `chunk` event as base64 `bytes`.
 * Everything Anthropic-shaped is the anthropic adapter's own code; this module only adds the
 * Bedrock envelope.
 */
import type { NativeMessagesOperation, StreamTransform, TargetContext, Translated, UpstreamEvent } from '../adapter.ts'
import { MalformedResponseError, ProviderStreamError } from '../adapter.ts'
import { relayAnthropicEvents } from '../anthropic/native.ts'
import { chatToAnthropicBody } from '../anthropic/request.ts'
import { expectAnthropicMessage, usageFromAnthropic } from '../anthropic/response.ts'
import { anthropicStream, type AnthropicStreamState } from '../anthropic/stream.ts'
import type { AnthropicUsage } from '../anthropic/types.ts'
import type { ChatChunk, ChatRequest } from '../canonical.ts'
import { isRecord } from '../shared/errors.ts'
import { bedrockStreamFault } from './errors.ts'
import { modelPath } from './paths.ts'

export const BEDROCK_ANTHROPIC_VERSION = 'bedrock-2023-05-31'

/** Bedrock takes beta flags in the body, as a list (`options.anthropicBeta` is comma-separated). */
function betaField(options: Readonly<Record<string, string>>): { anthropic_beta?: string[] } {
  const betas = (options.anthropicBeta ?? '').split(',').map((beta) => beta.trim()).filter((beta) => beta !== '')
  return betas.length > 0 ? { anthropic_beta: betas } : {}
}

function invokeUpstream(target: TargetContext, stream: boolean, body: Record<string, unknown>): Translated['upstream'] {
  return {
    method: 'POST',
    path: modelPath(target.upstreamModel, stream ? 'invoke-with-response-stream' : 'invoke'),
    headers: {},
    body: { anthropic_version: BEDROCK_ANTHROPIC_VERSION, ...body, ...betaField(target.options) },
  }
}

export function invokeRequest(request: ChatRequest, target: TargetContext): Translated {
  const { body, warnings } = chatToAnthropicBody(request, target)
  return { upstream: invokeUpstream(target, request.stream === true, { ...body }), warnings }
}

/** The Anthropic event inside an invoke stream `chunk`; null for events that carry none. Throws on in-band exceptions. */
export function unwrapInvokeChunk(event: UpstreamEvent): UpstreamEvent | null {
  const fault = bedrockStreamFault(event)
  if (fault) throw new ProviderStreamError(fault)
  if (event.event !== 'chunk' || !isRecord(event.data) || typeof event.data.bytes !== 'string') return null
  let inner: unknown
  try {
    inner = JSON.parse(Buffer.from(event.data.bytes, 'base64').toString('utf8'))
  } catch {
    throw new MalformedResponseError('an invoke stream chunk does not hold JSON')
  }
  if (!isRecord(inner)) throw new MalformedResponseError('an invoke stream chunk does not hold an event object')
  return typeof inner.type === 'string' ? { event: inner.type, data: inner } : { data: inner }
}

export const invokeChatStream: StreamTransform<AnthropicStreamState, ChatChunk> = {
  start: anthropicStream.start,
  step(state, event) {
    const inner = unwrapInvokeChunk(event)
    return inner ? anthropicStream.step(state, inner) : []
  },
  finish: anthropicStream.finish,
}

// Foundation model ids, cross-region profiles (`us.anthropic...`) and ARNs naming them.
const ANTHROPIC_MODEL = /(?:^|[./:])anthropic\./

/** `POST /v1/messages` bodies for Claude on Bedrock: native, with the Bedrock envelope. */
export const bedrockNativeMessages: NativeMessagesOperation = {
  framing: 'aws-eventstream',
  // Application inference profile ARNs do not name the model: `mode: invoke` says it is Claude.
  accepts: (target) => target.options.mode === 'invoke' || ANTHROPIC_MODEL.test(target.upstreamModel),
  toUpstream(body, target) {
    const { model: _model, stream, ...rest } = body
    return { upstream: invokeUpstream(target, stream === true, rest), warnings: [] }
  },
  fromUpstream: (body) => expectAnthropicMessage(body),
  usage: (response) => usageFromAnthropic(response.usage as AnthropicUsage | undefined),
  stream: relayAnthropicEvents(unwrapInvokeChunk),
}
