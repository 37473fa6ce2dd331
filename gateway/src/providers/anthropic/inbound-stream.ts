/**
 * Chat completion chunks -> Anthropic Messages stream events, for `POST /v1/messages` clients of a
 * provider that streams chat chunks. Anthropic streams content as numbered blocks opened and closed
 * in order (`content_block_start` / `_delta` / `_stop`); the state tracks the open block and which
 * block belongs to which tool call. Only the first choice is streamed.
 *
 * Event order: message_start, then blocks, then (from `finish`) message_delta with the stop reason
 * and usage, and message_stop.
 */
import type { ResponseContext } from '../adapter.ts'
import type { ChatChunk, OpenAIUsage, Usage } from '../canonical.ts'
import { usageFromOpenAI } from '../canonical.ts'
import { syntheticToolCallId } from '../shared/tool-call-ids.ts'
import { anthropicStopReason, anthropicUsage } from './inbound-response.ts'

export interface AnthropicSseEvent {
  event: string
  data: Record<string, unknown>
}

type OpenBlock = { kind: 'text' | 'thinking'; index: number } | { kind: 'tool_use'; index: number; toolIndex: number }

export interface ChatToAnthropicStreamState {
  context: ResponseContext
  started: boolean
  nextBlockIndex: number
  open: OpenBlock | null
  /** OpenAI tool call index -> Anthropic content block index. */
  toolBlocks: Map<number, number>
  finishReason: string | null
  /** A refusal streamed as text still ends as Anthropic's `refusal`. */
  refused: boolean
  usage: OpenAIUsage | null
}

function event(type: string, data: Record<string, unknown> = {}): AnthropicSseEvent {
  return { event: type, data: { type, ...data } }
}

function start(state: ChatToAnthropicStreamState, chunk: ChatChunk | null): AnthropicSseEvent[] {
  if (state.started) return []
  state.started = true
  const message = {
    id: chunk?.id ?? state.context.responseId,
    type: 'message',
    role: 'assistant',
    model: chunk?.model || state.context.requestModel,
    content: [],
    stop_reason: null,
    stop_sequence: null,
    // The chat stream reports usage only at its end: message_delta carries the counts.
    usage: { input_tokens: 0, output_tokens: 0 },
  }
  return [event('message_start', { message })]
}

function closeOpen(state: ChatToAnthropicStreamState): AnthropicSseEvent[] {
  if (!state.open) return []
  const index = state.open.index
  state.open = null
  return [event('content_block_stop', { index })]
}

function openBlock(state: ChatToAnthropicStreamState, block: Record<string, unknown> & { type: string }, open: (index: number) => OpenBlock): AnthropicSseEvent[] {
  const events = closeOpen(state)
  const index = state.nextBlockIndex++
  state.open = open(index)
  events.push(event('content_block_start', { index, content_block: block }))
  return events
}

/** Text or thinking: continue the open block of that kind, or open a new one. */
function streamText(state: ChatToAnthropicStreamState, kind: 'text' | 'thinking', text: string): AnthropicSseEvent[] {
  const events = state.open?.kind === kind ? [] : openBlock(state, kind === 'text' ? { type: 'text', text: '' } : { type: 'thinking', thinking: '', signature: '' }, (index) => ({ kind, index }))
  const index = state.open!.index
  events.push(event('content_block_delta', { index, delta: kind === 'text' ? { type: 'text_delta', text } : { type: 'thinking_delta', thinking: text } }))
  return events
}

function streamToolCalls(state: ChatToAnthropicStreamState, chunk: ChatChunk, calls: NonNullable<ChatChunk['choices'][number]['delta']['tool_calls']>): AnthropicSseEvent[] {
  const events: AnthropicSseEvent[] = []
  for (const call of calls) {
    let index = state.toolBlocks.get(call.index)
    if (index === undefined) {
      const id = call.id ?? syntheticToolCallId(chunk.id, call.index)
      events.push(...openBlock(state, { type: 'tool_use', id, name: call.function?.name ?? '', input: {} }, (blockIndex) => ({ kind: 'tool_use', index: blockIndex, toolIndex: call.index })))
      index = state.open!.index
      state.toolBlocks.set(call.index, index)
    }
    const partial = call.function?.arguments
    if (partial) events.push(event('content_block_delta', { index, delta: { type: 'input_json_delta', partial_json: partial } }))
  }
  return events
}

export const chatStreamToAnthropic = {
  start: (context: ResponseContext): ChatToAnthropicStreamState => ({
    context,
    started: false,
    nextBlockIndex: 0,
    open: null,
    toolBlocks: new Map(),
    finishReason: null,
    refused: false,
    usage: null,
  }),

  step(state: ChatToAnthropicStreamState, chunk: ChatChunk): AnthropicSseEvent[] {
    const events = start(state, chunk)
    if (chunk.usage) state.usage = chunk.usage
    const choice = chunk.choices.find((candidate) => candidate.index === 0)
    if (!choice) return events
    const delta = choice.delta ?? {}
    if (delta.reasoning_content) events.push(...streamText(state, 'thinking', delta.reasoning_content))
    if (delta.content) events.push(...streamText(state, 'text', delta.content))
    if (delta.refusal) {
      state.refused = true
      events.push(...streamText(state, 'text', delta.refusal))
    }
    if (delta.tool_calls && delta.tool_calls.length > 0) events.push(...streamToolCalls(state, chunk, delta.tool_calls))
    if (choice.finish_reason) state.finishReason = choice.finish_reason
    return events
  },

  /** Closes the message. `usage`, when the upstream transform's `finish` gave it, wins over chunk usage. */
  finish(state: ChatToAnthropicStreamState, usage?: Usage): AnthropicSseEvent[] {
    const events = [...start(state, null), ...closeOpen(state)]
    const counts = anthropicUsage(usage ?? usageFromOpenAI(state.usage))
    events.push(event('message_delta', { delta: { stop_reason: state.refused ? 'refusal' : anthropicStopReason(state.finishReason), stop_sequence: null }, usage: counts }))
    events.push(event('message_stop'))
    return events
  },
}
