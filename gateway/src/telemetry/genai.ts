/**
 * The OpenTelemetry GenAI semantic conventions (gen_ai.*), as Gatehouse fills them: operation and
 * provider names, the request parameters a body carries, and what an answer says about itself.
 * Functions of plain values, so the span code stays a list of "set this from that". Each fills the
 * `attributes` object it is given (a new one otherwise) and returns it: the span code gathers a
 * phase's attributes in one object and hands the SDK one call, instead of spreading a fresh object
 * per function into another.
 * https://opentelemetry.io/docs/specs/semconv/gen-ai/gen-ai-spans/
 */
import type { Attributes } from '@opentelemetry/api'
import type { FinishReason, Usage } from '../providers/canonical.ts'

/** `gen_ai.operation.name` for a route's operation (`chat`, `completions`, `passthrough:<group>`...). */
export function genAiOperationName(operation: string): string {
  switch (operation) {
    case 'chat':
    case 'messages':
    case 'realtime':
    case 'passthrough:responses':
      return 'chat'
    case 'completions':
      return 'text_completion'
    case 'embeddings':
      return 'embeddings'
    default:
      // Other passthrough groups (images, audio, files...) have no well-known value: their group name.
      return operation.startsWith('passthrough:') ? operation.slice('passthrough:'.length) : operation
  }
}

/** `gen_ai.provider.name`: the convention's well-known value for a provider kind, else the kind itself. */
const PROVIDER_NAMES: Readonly<Record<string, string>> = {
  openai: 'openai',
  anthropic: 'anthropic',
  'azure-openai': 'azure.ai.openai',
  bedrock: 'aws.bedrock',
  google: 'gcp.gemini',
  'vertex-ai': 'gcp.vertex_ai',
  cohere: 'cohere',
  'mistral-ai': 'mistral_ai',
  groq: 'groq',
  deepseek: 'deepseek',
  'x-ai': 'x_ai',
  'perplexity-ai': 'perplexity',
}

export function genAiProviderName(kind: string): string {
  return PROVIDER_NAMES[kind] ?? kind
}

/** `{gen_ai.operation.name} {gen_ai.request.model}`, or the operation alone without a model. */
export function genAiSpanName(operationName: string, model: string | null): string {
  return model === null || model === '' ? operationName : `${operationName} ${model}`
}

function number(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) ? value : undefined
}

function strings(value: unknown): string[] | undefined {
  if (typeof value === 'string') return [value]
  if (Array.isArray(value) && value.every((item) => typeof item === 'string')) return value
  return undefined
}

/**
 * Request parameters from a body in OpenAI or Anthropic shape. Only what the body says: absent
 * fields stay absent (the provider's defaults are not the gateway's to state).
 */
export function genAiRequestAttributes(body: Record<string, unknown> | null, attributes: Attributes = {}): Attributes {
  if (body === null) return attributes
  const put = (name: string, value: Attributes[string] | undefined): void => {
    if (value !== undefined) attributes[name] = value
  }
  put('gen_ai.request.max_tokens', number(body.max_completion_tokens) ?? number(body.max_tokens) ?? number(body.max_output_tokens))
  put('gen_ai.request.temperature', number(body.temperature))
  put('gen_ai.request.top_p', number(body.top_p))
  put('gen_ai.request.top_k', number(body.top_k))
  put('gen_ai.request.frequency_penalty', number(body.frequency_penalty))
  put('gen_ai.request.presence_penalty', number(body.presence_penalty))
  put('gen_ai.request.seed', number(body.seed))
  put('gen_ai.request.stop_sequences', strings(body.stop) ?? strings(body.stop_sequences))
  const choices = number(body.n)
  if (choices !== undefined && choices !== 1) attributes['gen_ai.request.choice.count'] = choices
  if (typeof body.encoding_format === 'string') attributes['gen_ai.request.encoding_formats'] = [body.encoding_format]
  if (body.stream === true) attributes['gen_ai.request.stream'] = true
  return attributes
}

/** Token counts: input, output, and the cache reads and writes when the provider reported them. */
export function genAiUsageAttributes(usage: Usage | null, attributes: Attributes = {}): Attributes {
  if (usage === null) return attributes
  attributes['gen_ai.usage.input_tokens'] = usage.inputTokens
  attributes['gen_ai.usage.output_tokens'] = usage.outputTokens
  if (usage.cachedInputTokens) attributes['gen_ai.usage.cache_read.input_tokens'] = usage.cachedInputTokens
  if (usage.cacheWriteInputTokens) attributes['gen_ai.usage.cache_creation.input_tokens'] = usage.cacheWriteInputTokens
  if (usage.reasoningTokens) attributes['gen_ai.usage.reasoning.output_tokens'] = usage.reasoningTokens
  return attributes
}

/** What a JSON answer (OpenAI or Anthropic shape) says about itself: its id, model and finish reasons. */
export function genAiResponseAttributes(body: unknown, attributes: Attributes = {}): Attributes {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return attributes
  const record = body as Record<string, unknown>
  if (typeof record.id === 'string') attributes['gen_ai.response.id'] = record.id
  if (typeof record.model === 'string') attributes['gen_ai.response.model'] = record.model
  const reasons: string[] = []
  if (Array.isArray(record.choices)) {
    for (const choice of record.choices) {
      const reason = (choice as { finish_reason?: unknown } | null)?.finish_reason
      if (typeof reason === 'string') reasons.push(reason)
    }
  } else if (typeof record.stop_reason === 'string') {
    reasons.push(record.stop_reason)
  }
  if (reasons.length > 0) attributes['gen_ai.response.finish_reasons'] = reasons
  return attributes
}

/** A streamed chunk's id and model: OpenAI chunks carry them on each, Anthropic's on `message_start`. */
export function genAiChunkAttributes(chunk: unknown): Attributes {
  if (typeof chunk !== 'object' || chunk === null) return {}
  const record = chunk as Record<string, unknown>
  const data = record.data as { message?: unknown } | undefined
  const message = record.event === 'message_start' && typeof data === 'object' && data !== null ? data.message : record
  const attributes = genAiResponseAttributes(message)
  delete attributes['gen_ai.response.finish_reasons']
  return attributes
}

export function genAiFinishReasons(reason: FinishReason | null, attributes: Attributes = {}): Attributes {
  if (reason !== null) attributes['gen_ai.response.finish_reasons'] = [reason.raw ?? reason.unified]
  return attributes
}
