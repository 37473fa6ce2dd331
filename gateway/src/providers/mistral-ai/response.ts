/**
 * Mistral chat responses and chunks are OpenAI-shaped with two differences normalised here:
 * reasoning models (Magistral) answer with `content` as an array of `thinking` and `text` chunks,
 * and finish reasons include `model_length` and `error`.
 */
import type { StreamTransform } from '../adapter.ts'
import { MalformedResponseError } from '../adapter.ts'
import type { ChatChunk, ChatResponse, FinishReason, OpenAIUsage, Usage } from '../canonical.ts'
import { emptyUsage, usageFromOpenAI } from '../canonical.ts'
import { isRecord } from '../shared/errors.ts'
import { finishReasonFromTable, toOpenAIFinishReason, type FinishReasonTable } from '../shared/finish-reasons.ts'

export const mistralFinishReasons: FinishReasonTable = {
  stop: 'stop',
  length: 'length',
  model_length: 'length',
  tool_calls: 'tool_calls',
  error: 'error',
}

interface SplitContent {
  text: string | null
  reasoning: string
}

function textOfChunks(chunks: unknown): string {
  if (typeof chunks === 'string') return chunks
  if (!Array.isArray(chunks)) return ''
  return chunks.map((chunk) => (isRecord(chunk) && typeof chunk.text === 'string' ? chunk.text : '')).join('')
}

/** A string passes as is; an array of chunks splits into answer text and thinking text. */
export function splitMistralContent(content: unknown): SplitContent {
  if (!Array.isArray(content)) return { text: typeof content === 'string' ? content : null, reasoning: '' }
  let text = ''
  let reasoning = ''
  for (const chunk of content) {
    if (!isRecord(chunk)) continue
    if (chunk.type === 'thinking') reasoning += textOfChunks(chunk.thinking)
    else if (chunk.type === 'text' && typeof chunk.text === 'string') text += chunk.text
  }
  return { text, reasoning }
}

/** Rewrites a message or delta in place: array content becomes `content` + `reasoning_content`. */
function normaliseContent(target: Record<string, unknown>): void {
  if (!Array.isArray(target.content)) return
  const { text, reasoning } = splitMistralContent(target.content)
  target.content = text
  if (reasoning !== '') target.reasoning_content = reasoning
}

function normaliseChoices(choices: unknown, field: 'message' | 'delta'): FinishReason | null {
  if (!Array.isArray(choices)) return null
  let first: FinishReason | null = null
  choices.forEach((choice, position) => {
    if (!isRecord(choice)) return
    if (isRecord(choice[field])) normaliseContent(choice[field])
    if (typeof choice.finish_reason === 'string') {
      const reason = finishReasonFromTable(mistralFinishReasons, choice.finish_reason)
      if (position === 0) first = reason
      choice.finish_reason = toOpenAIFinishReason(reason)
    }
  })
  return first
}

function needsNormalising(choices: unknown): boolean {
  return Array.isArray(choices) && choices.some((choice) => isRecord(choice) && (choice.finish_reason != null || (isRecord(choice.delta) && Array.isArray(choice.delta.content))))
}

export function fromMistralChat(body: unknown): ChatResponse {
  if (!isRecord(body) || !Array.isArray(body.choices)) throw new MalformedResponseError('expected a Mistral chat completion')
  const response = structuredClone(body)
  normaliseChoices(response.choices, 'message')
  return response as unknown as ChatResponse
}

interface MistralStreamState {
  usage: Usage
  finishReason: FinishReason
}

export const mistralStream: StreamTransform<MistralStreamState, ChatChunk> = {
  start: () => ({ usage: emptyUsage(), finishReason: { unified: 'other' } }),
  step(state, event) {
    if (!isRecord(event.data)) return []
    // Events are the caller's: rewritten on a copy, and only when a choice needs it (most chunks pass as they are).
    const chunk = needsNormalising(event.data.choices) ? structuredClone(event.data) : event.data
    const reason = normaliseChoices(chunk.choices, 'delta')
    if (reason) state.finishReason = reason
    if (isRecord(chunk.usage)) state.usage = usageFromOpenAI(chunk.usage as unknown as OpenAIUsage)
    return [chunk as unknown as ChatChunk]
  },
  finish: (state) => ({ chunks: [], usage: state.usage, finishReason: state.finishReason }),
}
