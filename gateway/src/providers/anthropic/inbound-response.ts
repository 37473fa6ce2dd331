/**
 * A chat completion answered to a `POST /v1/messages` client: the Anthropic message object.
 * Only the first choice exists in Anthropic's format (translated requests never ask for more).
 */
import type { ChatResponse, OpenAIFinishReason, OpenAIUsage, Usage } from '../canonical.ts'
import { usageFromOpenAI } from '../canonical.ts'
import { isRecord } from '../shared/errors.ts'
import type { AnthropicMessage, AnthropicResponseBlock, AnthropicUsage } from './types.ts'

export interface InboundResponseContext {
  /** The model the client asked for, echoed where the answer names none. */
  requestModel: string
}

const stopReasonByFinish: Readonly<Record<OpenAIFinishReason, string>> = {
  stop: 'end_turn',
  length: 'max_tokens',
  tool_calls: 'tool_use',
  function_call: 'tool_use',
  content_filter: 'refusal',
}

export function anthropicStopReason(finish: string | null | undefined): string {
  return (finish && stopReasonByFinish[finish as OpenAIFinishReason]) || 'end_turn'
}

/** Gateway usage in Anthropic's terms, where input_tokens excludes prompt-cache reads and writes. */
export function anthropicUsage(usage: Usage): Required<Pick<AnthropicUsage, 'input_tokens' | 'output_tokens' | 'cache_read_input_tokens' | 'cache_creation_input_tokens'>> {
  const cacheRead = usage.cachedInputTokens ?? 0
  const cacheWrite = usage.cacheWriteInputTokens ?? 0
  return {
    input_tokens: Math.max(0, usage.inputTokens - cacheRead - cacheWrite),
    output_tokens: usage.outputTokens,
    cache_read_input_tokens: cacheRead,
    cache_creation_input_tokens: cacheWrite,
  }
}

/** Tool arguments as the object Anthropic clients expect; text that is not a JSON object stays readable under `_raw`. */
export function toolInput(argumentsText: string): Record<string, unknown> {
  if (argumentsText.trim() === '') return {}
  try {
    const parsed: unknown = JSON.parse(argumentsText)
    if (isRecord(parsed)) return parsed
  } catch {
    // falls through
  }
  return { _raw: argumentsText }
}

export function chatResponseToAnthropic(response: ChatResponse, context: InboundResponseContext, usage: Usage = usageFromOpenAI(response.usage as OpenAIUsage | undefined)): AnthropicMessage {
  const choice = response.choices[0]
  const message = choice?.message
  const content: AnthropicResponseBlock[] = []
  if (typeof message?.reasoning_content === 'string' && message.reasoning_content !== '') {
    // No provider but Anthropic signs its thinking; an empty signature says there is none.
    content.push({ type: 'thinking', thinking: message.reasoning_content, signature: '' })
  }
  const refusal = typeof message?.refusal === 'string' && message.refusal !== '' ? message.refusal : null
  const text = typeof message?.content === 'string' ? message.content : ''
  if (text !== '') content.push({ type: 'text', text })
  if (refusal !== null) content.push({ type: 'text', text: refusal })
  for (const call of message?.tool_calls ?? []) {
    content.push({ type: 'tool_use', id: call.id, name: call.function.name, input: toolInput(call.function.arguments) })
  }
  return {
    id: response.id,
    type: 'message',
    role: 'assistant',
    model: response.model || context.requestModel,
    content,
    stop_reason: refusal !== null ? 'refusal' : anthropicStopReason(choice?.finish_reason),
    stop_sequence: null,
    usage: anthropicUsage(usage),
  }
}
