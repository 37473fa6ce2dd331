/**
 * Canonical shapes. The edge is OpenAI-compatible, so the canonical request and response types ARE
 * the OpenAI wire types (snake_case, as published): the OpenAI path never reshapes. Types describe
 * the fields the gateway reads or writes; every request object keeps unknown fields (`[key: string]:
 * unknown`) because fields the gateway does not know pass through untouched.
 *
 * Gateway-internal types (Usage, FinishReason, Warning) are camelCase.
 */

export type Role = 'system' | 'developer' | 'user' | 'assistant' | 'tool' | 'function'

export interface TextPart { type: 'text'; text: string }
export interface ImagePart { type: 'image_url'; image_url: { url: string; detail?: 'auto' | 'low' | 'high' } }
export interface InputAudioPart { type: 'input_audio'; input_audio: { data: string; format: string } }
export interface FilePart { type: 'file'; file: { file_id?: string; file_data?: string; filename?: string } }
export type ContentPart = TextPart | ImagePart | InputAudioPart | FilePart

export interface ToolCall {
  id: string
  type: 'function'
  function: { name: string; arguments: string }
}

export interface ChatMessage {
  role: Role
  content?: string | ContentPart[] | null
  name?: string
  tool_calls?: ToolCall[]
  tool_call_id?: string
  /** Reasoning text some providers return (DeepSeek, Anthropic thinking mapped by adapters). */
  reasoning_content?: string
  [key: string]: unknown
}

export interface FunctionTool {
  type: 'function'
  function: { name: string; description?: string; parameters?: Record<string, unknown>; strict?: boolean }
}

export type ToolChoice = 'none' | 'auto' | 'required' | { type: 'function'; function: { name: string } }

export interface ChatRequest {
  model: string
  messages: ChatMessage[]
  stream?: boolean | null
  stream_options?: { include_usage?: boolean } | null
  max_tokens?: number | null
  max_completion_tokens?: number | null
  temperature?: number | null
  top_p?: number | null
  n?: number | null
  stop?: string | string[] | null
  presence_penalty?: number | null
  frequency_penalty?: number | null
  logit_bias?: Record<string, number> | null
  logprobs?: boolean | null
  top_logprobs?: number | null
  seed?: number | null
  tools?: FunctionTool[]
  tool_choice?: ToolChoice
  parallel_tool_calls?: boolean
  response_format?: { type: 'text' | 'json_object' | 'json_schema'; json_schema?: Record<string, unknown> }
  user?: string
  thinking?: { type: 'enabled' | 'disabled'; budget_tokens?: number } | null
  reasoning_effort?: string
  [key: string]: unknown
}

export interface TokenLogprob {
  token: string
  logprob: number
  bytes: number[] | null
  top_logprobs: Array<{ token: string; logprob: number; bytes: number[] | null }>
}

export type OpenAIFinishReason = 'stop' | 'length' | 'tool_calls' | 'content_filter' | 'function_call'

export interface ChatChoice {
  index: number
  message: ChatMessage & { role: 'assistant'; content: string | null }
  finish_reason: OpenAIFinishReason | null
  logprobs?: { content: TokenLogprob[] | null } | null
}

export interface OpenAIUsage {
  prompt_tokens: number
  completion_tokens: number
  total_tokens: number
  prompt_tokens_details?: { cached_tokens?: number; audio_tokens?: number }
  completion_tokens_details?: {
    reasoning_tokens?: number
    audio_tokens?: number
    accepted_prediction_tokens?: number
    rejected_prediction_tokens?: number
  }
}

export interface ChatResponse {
  id: string
  object: 'chat.completion'
  created: number
  model: string
  choices: ChatChoice[]
  usage?: OpenAIUsage
  system_fingerprint?: string | null
  [key: string]: unknown
}

export interface ChunkToolCallDelta {
  index: number
  id?: string
  type?: 'function'
  function?: { name?: string; arguments?: string }
}

export interface ChatChunkChoice {
  index: number
  delta: { role?: 'assistant'; content?: string | null; reasoning_content?: string; tool_calls?: ChunkToolCallDelta[]; refusal?: string | null }
  finish_reason: OpenAIFinishReason | null
  logprobs?: { content: TokenLogprob[] | null } | null
}

export interface ChatChunk {
  id: string
  object: 'chat.completion.chunk'
  created: number
  model: string
  choices: ChatChunkChoice[]
  usage?: OpenAIUsage | null
  system_fingerprint?: string | null
  [key: string]: unknown
}

export interface CompletionRequest {
  model: string
  prompt?: string | string[] | number[] | number[][]
  stream?: boolean | null
  stream_options?: { include_usage?: boolean } | null
  max_tokens?: number | null
  n?: number | null
  best_of?: number | null
  logprobs?: number | null
  [key: string]: unknown
}

export interface CompletionChoice {
  index: number
  text: string
  finish_reason: OpenAIFinishReason | null
  logprobs: { text_offset: number[]; token_logprobs: number[]; tokens: string[]; top_logprobs: Array<Record<string, number>> } | null
}

export interface CompletionResponse {
  id: string
  object: 'text_completion'
  created: number
  model: string
  choices: CompletionChoice[]
  usage?: OpenAIUsage
  system_fingerprint?: string
  [key: string]: unknown
}

export interface EmbeddingsRequest {
  model: string
  input: string | string[] | number[] | number[][]
  encoding_format?: 'float' | 'base64'
  dimensions?: number
  user?: string
  [key: string]: unknown
}

export interface EmbeddingsResponse {
  object: 'list'
  data: Array<{ object: 'embedding'; index: number; embedding: number[] | string }>
  model: string
  usage: { prompt_tokens: number; total_tokens: number }
}

/**
 * Rerank, in Cohere's shape (the de-facto standard other rerank APIs copy). Documents are strings or
 * objects (usually with a `text` field; structured records are ranked on their JSON).
 */
export interface RerankRequest {
  model: string
  query: string
  documents: Array<string | Record<string, unknown>>
  top_n?: number | null
  return_documents?: boolean | null
  max_tokens_per_doc?: number | null
  [key: string]: unknown
}

export interface RerankResult {
  /** Position of the document in the request's `documents`. */
  index: number
  relevance_score: number
  document?: { text: string }
}

export interface RerankResponse {
  object: 'list'
  id: string
  model: string
  /** Most relevant first. */
  results: RerankResult[]
  usage: { search_units?: number; prompt_tokens?: number; total_tokens?: number }
  [key: string]: unknown
}

/** OCR, in Mistral's shape: a document (PDF or image, by URL or data URL) to markdown pages. */
export interface OcrRequest {
  model: string
  document:
    | { type: 'document_url'; document_url: string; document_name?: string | null }
    | { type: 'image_url'; image_url: string | { url: string } }
    | { type: 'file'; file_id: string }
  /** Zero-based page numbers to process; all when absent. */
  pages?: number[] | null
  include_image_base64?: boolean | null
  [key: string]: unknown
}

export interface OcrImage {
  id: string
  top_left_x: number | null
  top_left_y: number | null
  bottom_right_x: number | null
  bottom_right_y: number | null
  image_base64?: string | null
  [key: string]: unknown
}

export interface OcrPage {
  index: number
  markdown: string
  images: OcrImage[]
  dimensions: { dpi: number; height: number; width: number } | null
  [key: string]: unknown
}

export interface OcrResponse {
  pages: OcrPage[]
  model: string
  usage_info: { pages_processed: number; doc_size_bytes?: number | null }
  [key: string]: unknown
}

/** Token accounting in the gateway's own terms. */
export interface Usage {
  inputTokens: number
  outputTokens: number
  cachedInputTokens?: number
  cacheWriteInputTokens?: number
  reasoningTokens?: number
  /** Audio tokens among `inputTokens` (cached ones included): they bill at the audio input rate. */
  audioInputTokens?: number
  /** Audio tokens among `cachedInputTokens` (realtime sessions re-reading their own audio). */
  cachedAudioInputTokens?: number
  /** Audio tokens among `outputTokens`: they bill at the audio output rate. */
  audioOutputTokens?: number
  /** Rerank search units, for providers that bill by them (Cohere). */
  searchUnits?: number
  /** Document pages processed, for providers that bill OCR by the page (Mistral). */
  pages?: number
  /** Seconds of audio heard, for models billed by them (whisper-1 transcriptions and translations). */
  audioSeconds?: number
  /** Characters of input, for models billed by them (tts-1 speech). */
  inputCharacters?: number
  /** Image tokens among `inputTokens` (the images a GPT Image model edits): they bill at the image input rate. */
  imageInputTokens?: number
  /** Images made, for models billed by the image (dall-e-2, dall-e-3). */
  images?: number
  /** The quality and size those images were made at: they choose the price of each. */
  imageVariant?: ImageVariant
}

/** An image's quality and size as the request named them (`standard`/`hd`, `1024x1792`). */
export interface ImageVariant {
  readonly quality: string
  readonly size: string
}

export type UnifiedFinishReason = 'stop' | 'length' | 'tool_calls' | 'content_filter' | 'error' | 'other'

export interface FinishReason {
  unified: UnifiedFinishReason
  /** The provider's own word, e.g. Anthropic `end_turn`. */
  raw?: string
}

export interface Warning {
  kind: 'unsupported_parameter' | 'other'
  parameter?: string
  detail?: string
}

export const emptyUsage = (): Usage => ({ inputTokens: 0, outputTokens: 0 })

export function usageFromOpenAI(usage: OpenAIUsage | null | undefined): Usage {
  if (!usage) return emptyUsage()
  const result: Usage = { inputTokens: usage.prompt_tokens ?? 0, outputTokens: usage.completion_tokens ?? 0 }
  const cached = usage.prompt_tokens_details?.cached_tokens
  const reasoning = usage.completion_tokens_details?.reasoning_tokens
  if (cached !== undefined) result.cachedInputTokens = cached
  if (reasoning !== undefined) result.reasoningTokens = reasoning
  // Chat completions with audio (gpt-4o-audio and the like) count audio inside prompt and completion tokens.
  const audioInput = usage.prompt_tokens_details?.audio_tokens
  const audioOutput = usage.completion_tokens_details?.audio_tokens
  if (audioInput) result.audioInputTokens = audioInput
  if (audioOutput) result.audioOutputTokens = audioOutput
  return result
}

export function usageToOpenAI(usage: Usage): OpenAIUsage {
  const result: OpenAIUsage = {
    prompt_tokens: usage.inputTokens,
    completion_tokens: usage.outputTokens,
    total_tokens: usage.inputTokens + usage.outputTokens,
  }
  if (usage.cachedInputTokens !== undefined) result.prompt_tokens_details = { cached_tokens: usage.cachedInputTokens }
  if (usage.reasoningTokens !== undefined) result.completion_tokens_details = { reasoning_tokens: usage.reasoningTokens }
  return result
}

const unifiedByOpenAI: Record<string, UnifiedFinishReason> = {
  stop: 'stop',
  length: 'length',
  tool_calls: 'tool_calls',
  function_call: 'tool_calls',
  content_filter: 'content_filter',
}

export function finishReasonFromOpenAI(raw: string | null | undefined): FinishReason {
  if (!raw) return { unified: 'other' }
  return { unified: unifiedByOpenAI[raw] ?? 'other', raw }
}
