/**
 * The subset of the Anthropic Messages wire format (API version 2023-06-01) that the gateway reads
 * or writes. Field names are Anthropic's own (snake_case). Blocks the gateway does not interpret
 * (server tools, citations, documents it only forwards) keep their unknown fields.
 */

export const ANTHROPIC_VERSION = '2023-06-01'

export interface CacheControl {
  type: 'ephemeral'
  ttl?: string
}

export interface AnthropicTextBlock {
  type: 'text'
  text: string
  cache_control?: CacheControl
  [key: string]: unknown
}

export type AnthropicImageSource =
  | { type: 'base64'; media_type: string; data: string }
  | { type: 'url'; url: string }

export interface AnthropicImageBlock {
  type: 'image'
  source: AnthropicImageSource
  cache_control?: CacheControl
}

export interface AnthropicDocumentBlock {
  type: 'document'
  source: { type: 'base64'; media_type: string; data: string } | { type: 'url'; url: string }
  title?: string
  cache_control?: CacheControl
}

export interface AnthropicToolUseBlock {
  type: 'tool_use'
  id: string
  name: string
  input: unknown
}

export interface AnthropicToolResultBlock {
  type: 'tool_result'
  tool_use_id: string
  content?: string | Array<AnthropicTextBlock | AnthropicImageBlock | AnthropicDocumentBlock>
  is_error?: boolean
}

export interface AnthropicThinkingBlock {
  type: 'thinking'
  thinking: string
  signature: string
}

export interface AnthropicRedactedThinkingBlock {
  type: 'redacted_thinking'
  data: string
}

export type AnthropicRequestBlock =
  | AnthropicTextBlock
  | AnthropicImageBlock
  | AnthropicDocumentBlock
  | AnthropicToolUseBlock
  | AnthropicToolResultBlock
  | AnthropicThinkingBlock
  | AnthropicRedactedThinkingBlock

export interface AnthropicMessageParam {
  role: 'user' | 'assistant'
  content: string | AnthropicRequestBlock[]
}

export interface AnthropicTool {
  name: string
  description?: string
  input_schema: Record<string, unknown>
  strict?: boolean
  [key: string]: unknown
}

export type AnthropicToolChoice =
  | { type: 'auto'; disable_parallel_tool_use?: boolean }
  | { type: 'any'; disable_parallel_tool_use?: boolean }
  | { type: 'tool'; name: string; disable_parallel_tool_use?: boolean }
  | { type: 'none' }

/** A Messages request body without `model` and `stream`: the target decides those (Bedrock sends neither). */
export interface AnthropicMessagesBody {
  max_tokens: number
  messages: AnthropicMessageParam[]
  system?: AnthropicTextBlock[]
  temperature?: number
  top_p?: number
  top_k?: number
  stop_sequences?: string[]
  tools?: AnthropicTool[]
  tool_choice?: AnthropicToolChoice
  thinking?: Record<string, unknown>
  metadata?: { user_id: string }
  output_config?: { format?: { type: 'json_schema'; schema: Record<string, unknown> }; effort?: string }
}

export interface AnthropicUsage {
  input_tokens?: number | null
  output_tokens?: number | null
  cache_creation_input_tokens?: number | null
  cache_read_input_tokens?: number | null
  output_tokens_details?: { thinking_tokens?: number } | null
}

export type AnthropicResponseBlock =
  | AnthropicTextBlock
  | AnthropicToolUseBlock
  | AnthropicThinkingBlock
  | AnthropicRedactedThinkingBlock
  | { type: string; [key: string]: unknown }

export interface AnthropicMessage {
  id: string
  type: 'message'
  role: 'assistant'
  model: string
  content: AnthropicResponseBlock[]
  stop_reason: string | null
  stop_sequence: string | null
  usage: AnthropicUsage
  [key: string]: unknown
}
