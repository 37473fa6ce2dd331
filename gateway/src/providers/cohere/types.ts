/** The Cohere v2 wire format (`/v2/chat`, `/v2/embed`, `/v2/rerank`). */

export interface CohereToolCall {
  id: string
  type: 'function'
  function: { name: string; arguments: string }
}

export type CohereContentPart =
  | { type: 'text'; text: string }
  | { type: 'image_url'; image_url: { url: string; detail?: string } }
  | { type: 'thinking'; thinking: string }

export type CohereMessage =
  | { role: 'system'; content: string }
  | { role: 'user'; content: string | CohereContentPart[] }
  | { role: 'assistant'; content?: string; tool_calls?: CohereToolCall[]; tool_plan?: string }
  | { role: 'tool'; tool_call_id: string; content: string }

export interface CohereChatRequest {
  model: string
  messages: CohereMessage[]
  stream?: boolean
  tools?: Array<{ type: 'function'; function: { name: string; description?: string; parameters?: Record<string, unknown> } }>
  strict_tools?: boolean
  tool_choice?: 'REQUIRED' | 'NONE'
  max_tokens?: number
  stop_sequences?: string[]
  temperature?: number
  seed?: number
  frequency_penalty?: number
  presence_penalty?: number
  p?: number
  k?: number
  logprobs?: boolean
  response_format?: { type: 'json_object'; json_schema?: Record<string, unknown> }
  thinking?: { type: 'enabled' | 'disabled'; token_budget?: number }
  [key: string]: unknown
}

export interface CohereUsage {
  billed_units?: { input_tokens?: number; output_tokens?: number; search_units?: number }
  tokens?: { input_tokens?: number; output_tokens?: number }
}

export interface CohereChatResponse {
  id: string
  finish_reason: string
  message: {
    role: 'assistant'
    content?: Array<{ type: string; text?: string; thinking?: string }>
    tool_plan?: string
    tool_calls?: CohereToolCall[]
  }
  usage?: CohereUsage
  logprobs?: Array<{ token_ids: number[]; text?: string; logprobs?: number[] }>
}
