/**
 * Anthropic stream events -> OpenAI chat.completion.chunk. The state remembers which content block
 * is which tool call (OpenAI numbers tool calls from 0; Anthropic numbers every block, text and
 * thinking included), plus the usage and stop reason that arrive in `message_start` and
 * `message_delta`. Usage rides on the chunk that carries the finish reason, as both arrive together.
 */
import type { ResponseContext, StreamTransform, UpstreamEvent } from '../adapter.ts'
import { ProviderStreamError } from '../adapter.ts'
import type { ChatChunk, ChatChunkChoice, FinishReason, Usage } from '../canonical.ts'
import { isRecord } from '../shared/errors.ts'
import { toOpenAIFinishReason } from '../shared/finish-reasons.ts'
import { anthropicStreamErrorInfo } from './errors.ts'
import { anthropicFinishReason, chatUsageWithCacheWrites, usageFromAnthropic } from './response.ts'
import type { AnthropicUsage } from './types.ts'

/** What accounting needs from any Anthropic event stream, translated or relayed natively. */
export interface AnthropicAccounting {
  /** Cumulative usage fields as Anthropic reports them: `message_delta` updates what it carries. */
  usage: AnthropicUsage
  stopReason: string | null
}

function mergeUsage(accounting: AnthropicAccounting, usage: unknown): void {
  if (!isRecord(usage)) return
  for (const [key, value] of Object.entries(usage)) {
    if (value !== null && value !== undefined) (accounting.usage as Record<string, unknown>)[key] = value
  }
}

/** Records usage from `message_start`/`message_delta` and the stop reason; throws on an `error` event. */
export function recordAccounting(accounting: AnthropicAccounting, type: unknown, data: Record<string, unknown>): void {
  if (type === 'message_start' && isRecord(data.message)) mergeUsage(accounting, data.message.usage)
  else if (type === 'message_delta') {
    mergeUsage(accounting, data.usage)
    if (isRecord(data.delta) && typeof data.delta.stop_reason === 'string') accounting.stopReason = data.delta.stop_reason
  } else if (type === 'error') throw new ProviderStreamError(anthropicStreamErrorInfo(data))
}

export function accountingResult(accounting: AnthropicAccounting): { usage: Usage; finishReason: FinishReason } {
  return { usage: usageFromAnthropic(accounting.usage), finishReason: anthropicFinishReason(accounting.stopReason) }
}

/** The event type: `data.type` and the SSE event name agree; the type survives framings without names (Bedrock invoke). */
export function anthropicEventType(event: UpstreamEvent): unknown {
  return isRecord(event.data) && event.data.type !== undefined ? event.data.type : event.event
}

export interface AnthropicStreamState extends AnthropicAccounting {
  context: ResponseContext
  id: string
  model: string
  /** Content block index -> OpenAI tool call index. */
  toolCallByBlock: Map<number, number>
}

function chunk(state: AnthropicStreamState, delta: ChatChunkChoice['delta'], finishReason: ChatChunkChoice['finish_reason'] = null): ChatChunk {
  return {
    id: state.id,
    object: 'chat.completion.chunk',
    created: state.context.createdAt,
    model: state.model,
    choices: [{ index: 0, delta, finish_reason: finishReason }],
  }
}

function finishReasonOf(state: AnthropicStreamState): FinishReason {
  return anthropicFinishReason(state.stopReason)
}

function onBlockStart(state: AnthropicStreamState, data: Record<string, unknown>): ChatChunk[] {
  const block = data.content_block
  const index = data.index
  if (!isRecord(block) || typeof index !== 'number') return []
  if (block.type === 'tool_use') {
    const toolIndex = state.toolCallByBlock.size
    state.toolCallByBlock.set(index, toolIndex)
    return [chunk(state, { tool_calls: [{ index: toolIndex, id: String(block.id), type: 'function', function: { name: String(block.name), arguments: '' } }] })]
  }
  // Blocks usually start empty, but the format allows initial text.
  if (block.type === 'text' && typeof block.text === 'string' && block.text !== '') return [chunk(state, { content: block.text })]
  if (block.type === 'thinking' && typeof block.thinking === 'string' && block.thinking !== '') return [chunk(state, { reasoning_content: block.thinking })]
  return []
}

function onBlockDelta(state: AnthropicStreamState, data: Record<string, unknown>): ChatChunk[] {
  const delta = data.delta
  if (!isRecord(delta)) return []
  switch (delta.type) {
    case 'text_delta':
      return typeof delta.text === 'string' ? [chunk(state, { content: delta.text })] : []
    case 'thinking_delta':
      return typeof delta.thinking === 'string' ? [chunk(state, { reasoning_content: delta.thinking })] : []
    case 'input_json_delta': {
      const toolIndex = typeof data.index === 'number' ? state.toolCallByBlock.get(data.index) : undefined
      if (toolIndex === undefined || typeof delta.partial_json !== 'string' || delta.partial_json === '') return []
      return [chunk(state, { tool_calls: [{ index: toolIndex, function: { arguments: delta.partial_json } }] })]
    }
    default:
      // signature_delta and citations_delta have no OpenAI equivalent.
      return []
  }
}

function onMessageDelta(state: AnthropicStreamState, data: Record<string, unknown>): ChatChunk[] {
  if (!isRecord(data.delta) || typeof data.delta.stop_reason !== 'string') return []
  const finishing = chunk(state, {}, toOpenAIFinishReason(finishReasonOf(state)))
  finishing.usage = chatUsageWithCacheWrites(usageFromAnthropic(state.usage))
  return [finishing]
}

export function anthropicStreamStep(state: AnthropicStreamState, event: UpstreamEvent): ChatChunk[] {
  const data = event.data
  if (!isRecord(data)) return []
  const type = anthropicEventType(event)
  recordAccounting(state, type, data)
  switch (type) {
    case 'message_start': {
      const message = isRecord(data.message) ? data.message : {}
      if (typeof message.id === 'string') state.id = message.id
      if (typeof message.model === 'string') state.model = message.model
      return [chunk(state, { role: 'assistant', content: '' })]
    }
    case 'content_block_start':
      return onBlockStart(state, data)
    case 'content_block_delta':
      return onBlockDelta(state, data)
    case 'message_delta':
      return onMessageDelta(state, data)
    default:
      // content_block_stop, message_stop and ping carry nothing a chunk needs.
      return []
  }
}

export const anthropicStream: StreamTransform<AnthropicStreamState, ChatChunk> = {
  start: (context) => ({
    context,
    id: context.responseId,
    model: context.requestModel,
    usage: {},
    stopReason: null,
    toolCallByBlock: new Map(),
  }),
  step: anthropicStreamStep,
  finish: (state) => ({ chunks: [], ...accountingResult(state) }),
}
