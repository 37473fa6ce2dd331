/**
 * The subset of the Bedrock Converse wire format (JSON over REST; blobs as base64) that the gateway
 * reads or writes. Field names are Bedrock's own (camelCase).
 */

export interface ConverseCachePoint {
  cachePoint: { type: 'default' }
}

export type ConverseToolResultContent =
  | { text: string }
  | { image: { format: string; source: { bytes: string } } }
  | { document: { format: string; name: string; source: { bytes: string } } }

export type ConverseContentBlock =
  | ConverseToolResultContent
  | { toolUse: { toolUseId: string; name: string; input: unknown } }
  | { toolResult: { toolUseId: string; content: ConverseToolResultContent[]; status?: 'success' | 'error' } }
  | { reasoningContent: { reasoningText?: { text: string; signature?: string }; redactedContent?: string } }
  | ConverseCachePoint

export interface ConverseMessage {
  role: 'user' | 'assistant'
  content: ConverseContentBlock[]
}

export interface ConverseTool {
  toolSpec: { name: string; description?: string; inputSchema: { json: Record<string, unknown> } }
}

export type ConverseToolChoice = { auto: Record<string, never> } | { any: Record<string, never> } | { tool: { name: string } }

export interface ConverseRequest {
  messages: ConverseMessage[]
  system?: Array<{ text: string } | ConverseCachePoint>
  inferenceConfig?: { maxTokens?: number; temperature?: number; topP?: number; stopSequences?: string[] }
  toolConfig?: { tools: ConverseTool[]; toolChoice?: ConverseToolChoice }
  /** Model-specific fields Converse forwards untouched (Claude's `thinking`, `top_k`). */
  additionalModelRequestFields?: Record<string, unknown>
}

export interface ConverseUsage {
  inputTokens?: number
  outputTokens?: number
  totalTokens?: number
  cacheReadInputTokens?: number
  cacheWriteInputTokens?: number
}

export interface ConverseResponse {
  output: { message: { role: 'assistant'; content: Array<Record<string, unknown>> } }
  stopReason: string
  usage?: ConverseUsage
  metrics?: { latencyMs: number }
  [key: string]: unknown
}
