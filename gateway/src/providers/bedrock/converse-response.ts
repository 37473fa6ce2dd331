/**
 * Bedrock Converse response -> OpenAI chat.completion. `text` blocks join into `content`, `toolUse`
 * blocks become `tool_calls`, `reasoningContent` becomes `reasoning_content`. Converse gives no
 * response id or model, so both come from the context.
 *
 * Usage: Converse's `inputTokens` excludes prompt-cache reads and writes (as Anthropic's does), so
 * prompt_tokens = input + cache read + cache write, and `cached_tokens` = cache read.
 */
import type { ResponseContext } from '../adapter.ts'
import { MalformedResponseError } from '../adapter.ts'
import type { ChatResponse, FinishReason, ToolCall, Usage } from '../canonical.ts'
import { chatUsageWithCacheWrites } from '../anthropic/response.ts'
import { isRecord } from '../shared/errors.ts'
import { finishReasonFromTable, toOpenAIFinishReason, type FinishReasonTable } from '../shared/finish-reasons.ts'
import type { ConverseResponse, ConverseUsage } from './types.ts'

const finishReasons: FinishReasonTable = {
  end_turn: 'stop',
  stop_sequence: 'stop',
  max_tokens: 'length',
  model_context_window_exceeded: 'length',
  tool_use: 'tool_calls',
  guardrail_intervened: 'content_filter',
  content_filtered: 'content_filter',
  malformed_model_output: 'error',
  malformed_tool_use: 'error',
}

export function converseFinishReason(raw: string | null | undefined): FinishReason {
  return finishReasonFromTable(finishReasons, raw)
}

function count(value: unknown): number {
  return typeof value === 'number' && Number.isFinite(value) ? value : 0
}

export function usageFromConverse(usage: ConverseUsage | null | undefined): Usage {
  const cacheRead = count(usage?.cacheReadInputTokens)
  const cacheWrite = count(usage?.cacheWriteInputTokens)
  const result: Usage = { inputTokens: count(usage?.inputTokens) + cacheRead + cacheWrite, outputTokens: count(usage?.outputTokens) }
  if (usage?.cacheReadInputTokens !== undefined) result.cachedInputTokens = cacheRead
  if (usage?.cacheWriteInputTokens !== undefined) result.cacheWriteInputTokens = cacheWrite
  return result
}

function expectConverseResponse(body: unknown): ConverseResponse {
  if (!isRecord(body) || !isRecord(body.output) || !isRecord(body.output.message) || !Array.isArray(body.output.message.content)) {
    throw new MalformedResponseError('expected a Converse response with output.message.content')
  }
  return body as unknown as ConverseResponse
}

export function toolCallFromToolUse(toolUse: Record<string, unknown>): ToolCall {
  return { id: String(toolUse.toolUseId), type: 'function', function: { name: String(toolUse.name), arguments: JSON.stringify(toolUse.input ?? {}) } }
}

export function converseToChat(body: unknown, context: ResponseContext): ChatResponse {
  const response = expectConverseResponse(body)
  const texts: string[] = []
  const thoughts: string[] = []
  const toolCalls: ToolCall[] = []
  for (const block of response.output.message.content) {
    if (typeof block.text === 'string') texts.push(block.text)
    else if (isRecord(block.toolUse)) toolCalls.push(toolCallFromToolUse(block.toolUse))
    else if (isRecord(block.reasoningContent) && isRecord(block.reasoningContent.reasoningText)) {
      const text = block.reasoningContent.reasoningText.text
      if (typeof text === 'string') thoughts.push(text)
    }
    // redactedContent, citations and guard content carry no text an OpenAI client can read.
  }
  return {
    id: context.responseId,
    object: 'chat.completion',
    created: context.createdAt,
    model: context.requestModel,
    choices: [
      {
        index: 0,
        message: {
          role: 'assistant',
          content: texts.length === 0 && toolCalls.length > 0 ? null : texts.join(''),
          ...(thoughts.length > 0 && { reasoning_content: thoughts.join('') }),
          ...(toolCalls.length > 0 && { tool_calls: toolCalls }),
        },
        finish_reason: toOpenAIFinishReason(converseFinishReason(response.stopReason)),
        logprobs: null,
      },
    ],
    usage: chatUsageWithCacheWrites(usageFromConverse(response.usage)),
  }
}
