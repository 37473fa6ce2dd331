/**
 * Anthropic message -> OpenAI chat.completion. Text blocks join into `content`, `tool_use` blocks
 * become `tool_calls`, `thinking` blocks become `reasoning_content`.
 *
 * Usage follows OpenAI's accounting: Anthropic's `input_tokens` excludes prompt-cache reads and
 * writes, OpenAI's `prompt_tokens` includes them, so prompt_tokens = input + cache read + cache
 * creation, and `cached_tokens` = cache read.
 */
import type { ResponseContext } from '../adapter.ts'
import { MalformedResponseError } from '../adapter.ts'
import type { ChatResponse, FinishReason, OpenAIUsage, ToolCall, Usage } from '../canonical.ts'
import { usageFromOpenAI, usageToOpenAI } from '../canonical.ts'
import { isRecord } from '../shared/errors.ts'
import { finishReasonFromTable, toOpenAIFinishReason, type FinishReasonTable } from '../shared/finish-reasons.ts'
import type { AnthropicMessage, AnthropicUsage } from './types.ts'

const finishReasons: FinishReasonTable = {
  end_turn: 'stop',
  stop_sequence: 'stop',
  // A server tool loop paused; the client continues it by sending the turn back, as after a stop.
  pause_turn: 'stop',
  max_tokens: 'length',
  model_context_window_exceeded: 'length',
  tool_use: 'tool_calls',
  refusal: 'content_filter',
}

export function anthropicFinishReason(raw: string | null | undefined): FinishReason {
  return finishReasonFromTable(finishReasons, raw)
}

function count(value: number | null | undefined): number {
  return typeof value === 'number' && Number.isFinite(value) ? value : 0
}

export function usageFromAnthropic(usage: AnthropicUsage | null | undefined): Usage {
  const cacheRead = count(usage?.cache_read_input_tokens)
  const cacheWrite = count(usage?.cache_creation_input_tokens)
  const result: Usage = { inputTokens: count(usage?.input_tokens) + cacheRead + cacheWrite, outputTokens: count(usage?.output_tokens) }
  if (usage?.cache_read_input_tokens != null) result.cachedInputTokens = cacheRead
  if (usage?.cache_creation_input_tokens != null) result.cacheWriteInputTokens = cacheWrite
  const thinking = usage?.output_tokens_details?.thinking_tokens
  if (typeof thinking === 'number') result.reasoningTokens = thinking
  return result
}

/**
 * OpenAI usage for a provider that bills prompt-cache writes apart (Anthropic, Bedrock). OpenAI has
 * no field for them, so they ride as `cache_creation_input_tokens` (the name Anthropic and other
 * gateways use) and `usageFromChatResponse` reads them back for accounting.
 */
export function chatUsageWithCacheWrites(usage: Usage): OpenAIUsage {
  const result: OpenAIUsage & { cache_creation_input_tokens?: number } = usageToOpenAI(usage)
  if (usage.cacheWriteInputTokens !== undefined) result.cache_creation_input_tokens = usage.cacheWriteInputTokens
  return result
}

export function usageFromChatResponse(response: ChatResponse): Usage {
  const usage = usageFromOpenAI(response.usage)
  const writes = (response.usage as { cache_creation_input_tokens?: unknown } | undefined)?.cache_creation_input_tokens
  if (typeof writes === 'number') usage.cacheWriteInputTokens = writes
  return usage
}

export function expectAnthropicMessage(body: unknown): AnthropicMessage {
  if (!isRecord(body) || body.type !== 'message' || !Array.isArray(body.content)) {
    throw new MalformedResponseError('expected an Anthropic message object')
  }
  return body as unknown as AnthropicMessage
}

export function toolCallFromBlock(block: { id: string; name: string; input: unknown }): ToolCall {
  return { id: block.id, type: 'function', function: { name: block.name, arguments: JSON.stringify(block.input ?? {}) } }
}

export function anthropicToChat(body: unknown, context: ResponseContext): ChatResponse {
  const message = expectAnthropicMessage(body)
  const texts: string[] = []
  const thoughts: string[] = []
  const toolCalls: ToolCall[] = []
  for (const block of message.content) {
    if (block.type === 'text' && typeof block.text === 'string') texts.push(block.text)
    else if (block.type === 'thinking' && typeof block.thinking === 'string') thoughts.push(block.thinking)
    else if (block.type === 'tool_use') toolCalls.push(toolCallFromBlock(block as { id: string; name: string; input: unknown }))
    // redacted_thinking and server-tool blocks have no OpenAI equivalent and carry no readable text.
  }
  const finish = anthropicFinishReason(message.stop_reason)
  const content = texts.length === 0 && toolCalls.length > 0 ? null : texts.join('')
  const response: ChatResponse = {
    id: typeof message.id === 'string' ? message.id : context.responseId,
    object: 'chat.completion',
    created: context.createdAt,
    model: typeof message.model === 'string' ? message.model : context.requestModel,
    choices: [
      {
        index: 0,
        message: {
          role: 'assistant',
          content,
          ...(thoughts.length > 0 && { reasoning_content: thoughts.join('') }),
          ...(toolCalls.length > 0 && { tool_calls: toolCalls }),
        },
        finish_reason: toOpenAIFinishReason(finish),
        logprobs: null,
      },
    ],
    usage: chatUsageWithCacheWrites(usageFromAnthropic(message.usage)),
  }
  return response
}

