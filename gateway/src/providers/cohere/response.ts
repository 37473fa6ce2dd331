/** Cohere v2 chat response -> OpenAI chat completion, plus the tables the stream shares. */
import type { ResponseContext } from '../adapter.ts'
import { MalformedResponseError } from '../adapter.ts'
import type { ChatChoice, ChatResponse, TokenLogprob, Usage } from '../canonical.ts'
import { usageToOpenAI } from '../canonical.ts'
import { isRecord } from '../shared/errors.ts'
import { finishReasonFromTable, toOpenAIFinishReason, type FinishReasonTable } from '../shared/finish-reasons.ts'
import type { CohereChatResponse, CohereUsage } from './types.ts'

export const cohereFinishReasons: FinishReasonTable = {
  COMPLETE: 'stop',
  STOP_SEQUENCE: 'stop',
  MAX_TOKENS: 'length',
  TOOL_CALL: 'tool_calls',
  ERROR: 'error',
  TIMEOUT: 'error',
}

/** Billed units are what Cohere charges for; raw token counts stand in when they are absent. */
export function usageFromCohere(usage: CohereUsage | undefined): Usage {
  return {
    inputTokens: usage?.billed_units?.input_tokens ?? usage?.tokens?.input_tokens ?? 0,
    outputTokens: usage?.billed_units?.output_tokens ?? usage?.tokens?.output_tokens ?? 0,
  }
}

const encoder = new TextEncoder()

/** Cohere reports one entry per text piece, each spanning one or more tokens: their log probabilities add up. */
function logprobsFromCohere(logprobs: CohereChatResponse['logprobs']): TokenLogprob[] | null {
  if (!logprobs) return null
  return logprobs.map((entry) => ({
    token: entry.text ?? '',
    logprob: (entry.logprobs ?? []).reduce((sum, value) => sum + value, 0),
    bytes: [...encoder.encode(entry.text ?? '')],
    top_logprobs: [],
  }))
}

export function fromCohereChat(body: unknown, context: ResponseContext): ChatResponse {
  if (!isRecord(body) || !isRecord(body.message) || typeof body.finish_reason !== 'string') throw new MalformedResponseError('expected a Cohere v2 chat response')
  const response = body as unknown as CohereChatResponse
  const parts = response.message.content ?? []
  const text = parts.filter((part) => part.type === 'text').map((part) => part.text ?? '').join('')
  const reasoning = [
    ...parts.filter((part) => part.type === 'thinking').map((part) => part.thinking ?? ''),
    response.message.tool_plan ?? '',
  ].join('')
  const toolCalls = response.message.tool_calls ?? []
  const message: ChatChoice['message'] = { role: 'assistant', content: text === '' && toolCalls.length > 0 ? null : text }
  if (reasoning !== '') message.reasoning_content = reasoning
  if (toolCalls.length > 0) message.tool_calls = toolCalls.map((call) => ({ id: call.id, type: 'function', function: { name: call.function.name, arguments: call.function.arguments } }))
  const choice: ChatChoice = { index: 0, message, finish_reason: toOpenAIFinishReason(finishReasonFromTable(cohereFinishReasons, response.finish_reason)) }
  const logprobs = logprobsFromCohere(response.logprobs)
  if (logprobs) choice.logprobs = { content: logprobs }
  return {
    id: response.id ?? context.responseId,
    object: 'chat.completion',
    created: context.createdAt,
    model: context.requestModel,
    choices: [choice],
    usage: usageToOpenAI(usageFromCohere(response.usage)),
  }
}
