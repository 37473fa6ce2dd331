/**
 * Cohere v2 chat stream events -> OpenAI chunks. Text arrives in `content-delta`, reasoning in
 * `content-delta` (thinking) and `tool-plan-delta`, tool calls as start/delta/end triples, and the
 * finish reason with usage in `message-end`, where the last chunk carries both.
 */
import type { ResponseContext, StreamTransform, UpstreamEvent } from '../adapter.ts'
import { ProviderStreamError } from '../adapter.ts'
import type { ChatChunk, ChatChunkChoice, FinishReason, Usage } from '../canonical.ts'
import { emptyUsage, usageToOpenAI } from '../canonical.ts'
import { isRecord } from '../shared/errors.ts'
import { finishReasonFromTable, toOpenAIFinishReason } from '../shared/finish-reasons.ts'
import { parseCohereError } from './errors.ts'
import { cohereFinishReasons, usageFromCohere } from './response.ts'
import type { CohereUsage } from './types.ts'

export interface CohereStreamState {
  context: ResponseContext
  id: string
  roleSent: boolean
  /** Cohere's tool-call event index -> OpenAI tool call index. */
  toolCalls: Map<number, number>
  usage: Usage
  finishReason: FinishReason
}

function chunk(state: CohereStreamState, delta: ChatChunkChoice['delta'], finishReason: ChatChunkChoice['finish_reason'] = null): ChatChunk {
  if (!state.roleSent) {
    delta = { role: 'assistant', ...delta }
    state.roleSent = true
  }
  return { id: state.id, object: 'chat.completion.chunk', created: state.context.createdAt, model: state.context.requestModel, choices: [{ index: 0, delta, finish_reason: finishReason }] }
}

/** `delta.message` of an event, where Cohere puts every payload. */
function messageOf(data: Record<string, unknown>): Record<string, unknown> {
  return isRecord(data.delta) && isRecord(data.delta.message) ? data.delta.message : {}
}

function toolCallIndex(state: CohereStreamState, eventIndex: number): number {
  let index = state.toolCalls.get(eventIndex)
  if (index === undefined) {
    index = state.toolCalls.size
    state.toolCalls.set(eventIndex, index)
  }
  return index
}

function step(state: CohereStreamState, event: UpstreamEvent): ChatChunk[] {
  if (!isRecord(event.data)) return []
  const data = event.data
  const eventIndex = typeof data.index === 'number' ? data.index : 0
  switch (data.type ?? event.event) {
    case 'message-start':
      if (typeof data.id === 'string') state.id = data.id
      return [chunk(state, {})]
    case 'content-delta': {
      const content = messageOf(data).content
      if (!isRecord(content)) return []
      if (typeof content.thinking === 'string') return [chunk(state, { reasoning_content: content.thinking })]
      return typeof content.text === 'string' ? [chunk(state, { content: content.text })] : []
    }
    case 'tool-plan-delta': {
      const plan = messageOf(data).tool_plan
      return typeof plan === 'string' ? [chunk(state, { reasoning_content: plan })] : []
    }
    case 'tool-call-start': {
      const call = messageOf(data).tool_calls
      if (!isRecord(call) || !isRecord(call.function)) return []
      const index = toolCallIndex(state, eventIndex)
      const name = String(call.function.name ?? '')
      const args = typeof call.function.arguments === 'string' ? call.function.arguments : ''
      return [chunk(state, { tool_calls: [{ index, id: String(call.id ?? ''), type: 'function', function: { name, arguments: args } }] })]
    }
    case 'tool-call-delta': {
      const call = messageOf(data).tool_calls
      const args = isRecord(call) && isRecord(call.function) ? call.function.arguments : undefined
      return typeof args === 'string' ? [chunk(state, { tool_calls: [{ index: toolCallIndex(state, eventIndex), function: { arguments: args } }] })] : []
    }
    case 'message-end': {
      const delta = isRecord(data.delta) ? data.delta : {}
      if (isRecord(delta.error) || typeof delta.error === 'string') {
        throw new ProviderStreamError(parseCohereError(500, {}, { message: isRecord(delta.error) ? delta.error.message : delta.error }))
      }
      state.finishReason = finishReasonFromTable(cohereFinishReasons, typeof delta.finish_reason === 'string' ? delta.finish_reason : null)
      state.usage = usageFromCohere(delta.usage as CohereUsage | undefined)
      return [{ ...chunk(state, {}, toOpenAIFinishReason(state.finishReason)), usage: usageToOpenAI(state.usage) }]
    }
    default:
      // content-start/end, tool-call-end and citation events carry nothing OpenAI chunks have.
      return []
  }
}

export const cohereStream: StreamTransform<CohereStreamState, ChatChunk> = {
  start: (context) => ({ context, id: context.responseId, roleSent: false, toolCalls: new Map(), usage: emptyUsage(), finishReason: { unified: 'other' } }),
  step,
  finish: (state) => ({ chunks: [], usage: state.usage, finishReason: state.finishReason }),
}
