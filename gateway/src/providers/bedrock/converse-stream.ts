/**
 * Bedrock ConverseStream events (decoded from the AWS event stream as `{ event: <type>, data }`) ->
 * OpenAI chat.completion.chunk. The state maps content block indexes to OpenAI tool call indexes.
 * `messageStop` (the stop reason) arrives before `metadata` (the usage), so the finishing chunk
 * waits for the usage and rides with it, as on the other adapters; if the stream ends without
 * metadata, `finish` sends it.
 */
import type { ResponseContext, StreamTransform, UpstreamEvent } from '../adapter.ts'
import { ProviderStreamError } from '../adapter.ts'
import type { ChatChunk, ChatChunkChoice } from '../canonical.ts'
import { chatUsageWithCacheWrites } from '../anthropic/response.ts'
import { isRecord } from '../shared/errors.ts'
import { toOpenAIFinishReason } from '../shared/finish-reasons.ts'
import { converseFinishReason, usageFromConverse } from './converse-response.ts'
import { bedrockStreamFault } from './errors.ts'
import type { ConverseUsage } from './types.ts'

export interface ConverseStreamState {
  context: ResponseContext
  toolCallByBlock: Map<number, number>
  stopReason: string | null
  usage: ConverseUsage | null
  finishSent: boolean
}

function chunk(state: ConverseStreamState, delta: ChatChunkChoice['delta'], finishReason: ChatChunkChoice['finish_reason'] = null): ChatChunk {
  const { context } = state
  return {
    id: context.responseId,
    object: 'chat.completion.chunk',
    created: context.createdAt,
    model: context.requestModel,
    choices: [{ index: 0, delta, finish_reason: finishReason }],
  }
}

function finishingChunk(state: ConverseStreamState): ChatChunk {
  state.finishSent = true
  const finishing = chunk(state, {}, toOpenAIFinishReason(converseFinishReason(state.stopReason)))
  if (state.usage) finishing.usage = chatUsageWithCacheWrites(usageFromConverse(state.usage))
  return finishing
}

function onBlockStart(state: ConverseStreamState, data: Record<string, unknown>): ChatChunk[] {
  const index = data.contentBlockIndex
  const toolUse = isRecord(data.start) ? data.start.toolUse : undefined
  if (typeof index !== 'number' || !isRecord(toolUse)) return []
  const toolIndex = state.toolCallByBlock.size
  state.toolCallByBlock.set(index, toolIndex)
  return [chunk(state, { tool_calls: [{ index: toolIndex, id: String(toolUse.toolUseId), type: 'function', function: { name: String(toolUse.name), arguments: '' } }] })]
}

function onBlockDelta(state: ConverseStreamState, data: Record<string, unknown>): ChatChunk[] {
  const delta = data.delta
  if (!isRecord(delta)) return []
  if (typeof delta.text === 'string') return [chunk(state, { content: delta.text })]
  if (isRecord(delta.toolUse)) {
    const toolIndex = typeof data.contentBlockIndex === 'number' ? state.toolCallByBlock.get(data.contentBlockIndex) : undefined
    const input = delta.toolUse.input
    if (toolIndex === undefined || typeof input !== 'string' || input === '') return []
    return [chunk(state, { tool_calls: [{ index: toolIndex, function: { arguments: input } }] })]
  }
  // reasoningContent carries text, or a signature / redacted bytes that OpenAI clients cannot use.
  if (isRecord(delta.reasoningContent) && typeof delta.reasoningContent.text === 'string') return [chunk(state, { reasoning_content: delta.reasoningContent.text })]
  return []
}

export function converseStreamStep(state: ConverseStreamState, event: UpstreamEvent): ChatChunk[] {
  const fault = bedrockStreamFault(event)
  if (fault) throw new ProviderStreamError(fault)
  const data = event.data
  if (!isRecord(data)) return []
  switch (event.event) {
    case 'messageStart':
      return [chunk(state, { role: 'assistant', content: '' })]
    case 'contentBlockStart':
      return onBlockStart(state, data)
    case 'contentBlockDelta':
      return onBlockDelta(state, data)
    case 'messageStop':
      state.stopReason = typeof data.stopReason === 'string' ? data.stopReason : null
      return []
    case 'metadata':
      if (isRecord(data.usage)) state.usage = data.usage as ConverseUsage
      return state.stopReason !== null && !state.finishSent ? [finishingChunk(state)] : []
    default:
      // contentBlockStop carries nothing a chunk needs.
      return []
  }
}

export const converseStream: StreamTransform<ConverseStreamState, ChatChunk> = {
  start: (context) => ({ context, toolCallByBlock: new Map(), stopReason: null, usage: null, finishSent: false }),
  step: converseStreamStep,
  finish: (state) => ({
    chunks: state.stopReason !== null && !state.finishSent ? [finishingChunk(state)] : [],
    usage: usageFromConverse(state.usage),
    finishReason: converseFinishReason(state.stopReason),
  }),
}
