/**
 * OpenAI chat request -> Gemini `generateContent` body. Path-independent: the Gemini API and
 * Vertex AI send the same body to different URLs.
 */
import type { ChatMessage, ChatRequest, ContentPart, Warning } from '../canonical.ts'
import { invalidParameter } from '../../core/errors.ts'
import { textOfContent } from '../shared/content.ts'
import { mediaTypeFromUrl, parseDataUrl } from '../shared/data-url.ts'
import { isRecord } from '../shared/errors.ts'
import { unhandledFieldWarnings, unsupportedParameter } from '../shared/warnings.ts'
import { toGeminiSchema } from './schema.ts'
import type { GeminiContent, GeminiGenerationConfig, GeminiPart, GeminiRequest } from './types.ts'

const handledFields = new Set([
  'model', 'messages', 'stream', 'stream_options', 'max_tokens', 'max_completion_tokens', 'temperature', 'top_p', 'n',
  'stop', 'presence_penalty', 'frequency_penalty', 'logprobs', 'top_logprobs', 'seed', 'tools', 'tool_choice',
  'parallel_tool_calls', 'response_format', 'thinking', 'reasoning_effort',
  // Extensions other gateways accept for Gemini: top-k sampling and Gemini's own safety settings.
  'top_k', 'safety_settings',
])

/**
 * Gemini 3 wants the thought signature it attached to a function call back on that call. It is
 * handed to the client where Google's own OpenAI-compatible endpoint puts it, so a client that
 * echoes the assistant message unchanged keeps multi-turn tool use working.
 */
export interface GoogleToolCallExtra {
  extra_content?: { google?: { thought_signature?: string } }
}

/**
 * `reasoning_effort` as thinking budgets, the same levels Google's OpenAI-compatible endpoint uses.
 * A budget works on both Gemini 2.5 and Gemini 3 (which reads it for backward compatibility).
 */
const thinkingBudgetByEffort: Record<string, number> = { none: 0, minimal: 1024, low: 1024, medium: 8192, high: 24576 }

function partFromUrl(url: string, param: string): GeminiPart {
  const inline = parseDataUrl(url)
  if (inline) return { inlineData: { mimeType: inline.mediaType, data: inline.base64 } }
  if (!/^(https?|gs):\/\//.test(url)) throw invalidParameter(param, 'Expected an http(s) URL, a gs:// URI or a base64 data URL')
  const mimeType = mediaTypeFromUrl(url)
  return { fileData: mimeType ? { mimeType, fileUri: url } : { fileUri: url } }
}

function contentParts(content: ChatMessage['content'], param: string): GeminiPart[] {
  if (typeof content === 'string') return content === '' ? [] : [{ text: content }]
  if (!Array.isArray(content)) return []
  return content.map((part: ContentPart, index): GeminiPart => {
    const partParam = `${param}[${index}]`
    switch (part.type) {
      case 'text':
        return { text: part.text }
      case 'image_url':
        return partFromUrl(part.image_url.url, `${partParam}.image_url.url`)
      case 'input_audio':
        return { inlineData: { mimeType: `audio/${part.input_audio.format}`, data: part.input_audio.data } }
      case 'file':
        if (part.file.file_data) return partFromUrl(part.file.file_data, `${partParam}.file.file_data`)
        if (part.file.file_id) return { fileData: { fileUri: part.file.file_id } }
        throw invalidParameter(`${partParam}.file`, 'A file part needs file_data or file_id')
      default:
        throw invalidParameter(`${partParam}.type`, `Unsupported content part type '${(part as { type: string }).type}'`)
    }
  })
}

function parseArguments(args: string, param: string): Record<string, unknown> {
  let parsed: unknown
  try {
    parsed = args.trim() === '' ? {} : JSON.parse(args)
  } catch {
    throw invalidParameter(param, 'Tool call arguments must be a JSON object')
  }
  if (!isRecord(parsed)) throw invalidParameter(param, 'Tool call arguments must be a JSON object')
  return parsed
}

function assistantParts(message: ChatMessage, index: number): GeminiPart[] {
  const parts = contentParts(message.content, `messages[${index}].content`)
  for (const [callIndex, call] of (message.tool_calls ?? []).entries()) {
    const part: GeminiPart = {
      functionCall: { name: call.function.name, args: parseArguments(call.function.arguments, `messages[${index}].tool_calls[${callIndex}].function.arguments`) },
    }
    const signature = (call as GoogleToolCallExtra).extra_content?.google?.thought_signature
    if (signature) part.thoughtSignature = signature
    parts.push(part)
  }
  return parts
}

/** Gemini wants a JSON object as a function's response; anything else is wrapped. */
function functionResponseBody(content: ChatMessage['content']): Record<string, unknown> {
  const text = textOfContent(content)
  try {
    const parsed: unknown = JSON.parse(text)
    if (isRecord(parsed)) return parsed
    return { content: parsed }
  } catch {
    return { content: text }
  }
}

function toolName(messages: ChatMessage[], message: ChatMessage, index: number): string {
  if (message.role === 'function' && message.name) return message.name
  for (const earlier of messages.slice(0, index).reverse()) {
    const call = earlier.tool_calls?.find((candidate) => candidate.id === message.tool_call_id)
    if (call) return call.function.name
  }
  throw invalidParameter(`messages[${index}].tool_call_id`, 'No earlier assistant tool call has this id')
}

function mapMessages(messages: ChatMessage[], warnings: Warning[]): Pick<GeminiRequest, 'contents' | 'systemInstruction'> {
  const system: GeminiPart[] = []
  const contents: GeminiContent[] = []
  let warnedName = false
  const append = (role: 'user' | 'model', parts: GeminiPart[], merge: boolean): void => {
    const last = contents.at(-1)
    // Parallel tool results must arrive in one turn, as Gemini pairs them with the calls.
    if (merge && last?.role === role && last.parts.every((part) => part.functionResponse)) last.parts.push(...parts)
    else contents.push({ role, parts })
  }
  messages.forEach((message, index) => {
    if (message.name && message.role !== 'function' && !warnedName) {
      warnings.push(unsupportedParameter('messages[].name', 'Gemini has no participant names'))
      warnedName = true
    }
    switch (message.role) {
      case 'system':
      case 'developer':
        system.push(...contentParts(message.content, `messages[${index}].content`))
        return
      case 'user':
        append('user', contentParts(message.content, `messages[${index}].content`), false)
        return
      case 'assistant': {
        const parts = assistantParts(message, index)
        if (parts.length > 0) append('model', parts, false)
        return
      }
      case 'tool':
      case 'function': {
        const functionResponse = { name: toolName(messages, message, index), response: functionResponseBody(message.content) }
        append('user', [{ functionResponse }], true)
        return
      }
      default:
        throw invalidParameter(`messages[${index}].role`, `Unsupported role '${String(message.role)}'`)
    }
  })
  return system.length > 0 ? { contents, systemInstruction: { parts: system } } : { contents }
}

function mapTools(request: ChatRequest, warnings: Warning[]): Pick<GeminiRequest, 'tools' | 'toolConfig'> {
  const out: Pick<GeminiRequest, 'tools' | 'toolConfig'> = {}
  if (request.tools && request.tools.length > 0) {
    out.tools = [{
      functionDeclarations: request.tools.map((tool) => {
        const { name, description, parameters, strict } = tool.function
        if (strict) warnings.push(unsupportedParameter('tools[].function.strict', 'Gemini has no strict mode for function arguments'))
        const hasProperties = isRecord(parameters?.properties) && Object.keys(parameters.properties).length > 0
        return {
          name,
          ...(description !== undefined && { description }),
          ...(parameters && hasProperties && { parameters: toGeminiSchema(parameters) }),
        }
      }),
    }]
  }
  const choice = request.tool_choice
  if (choice === 'none') out.toolConfig = { functionCallingConfig: { mode: 'NONE' } }
  else if (choice === 'auto') out.toolConfig = { functionCallingConfig: { mode: 'AUTO' } }
  else if (choice === 'required') out.toolConfig = { functionCallingConfig: { mode: 'ANY' } }
  else if (isRecord(choice)) out.toolConfig = { functionCallingConfig: { mode: 'ANY', allowedFunctionNames: [choice.function.name] } }
  if (request.parallel_tool_calls === false) {
    warnings.push(unsupportedParameter('parallel_tool_calls', 'Gemini cannot be told to make at most one call per turn'))
  }
  return out
}

function thinkingConfig(request: ChatRequest, warnings: Warning[]): GeminiGenerationConfig['thinkingConfig'] | undefined {
  if (request.thinking) {
    if (request.thinking.type === 'disabled') return { thinkingBudget: 0 }
    return { includeThoughts: true, ...(request.thinking.budget_tokens !== undefined && { thinkingBudget: request.thinking.budget_tokens }) }
  }
  if (request.reasoning_effort !== undefined) {
    const budget = thinkingBudgetByEffort[request.reasoning_effort]
    if (budget !== undefined) return { thinkingBudget: budget }
    warnings.push(unsupportedParameter('reasoning_effort', `Unknown effort '${request.reasoning_effort}'; the model's default applies`))
  }
  return undefined
}

function generationConfig(request: ChatRequest, warnings: Warning[]): GeminiGenerationConfig {
  const config: GeminiGenerationConfig = {}
  const maxTokens = request.max_completion_tokens ?? request.max_tokens
  if (request.temperature != null) config.temperature = request.temperature
  if (request.top_p != null) config.topP = request.top_p
  if (typeof request.top_k === 'number') config.topK = request.top_k
  if (maxTokens != null) config.maxOutputTokens = maxTokens
  if (request.stop != null) config.stopSequences = typeof request.stop === 'string' ? [request.stop] : request.stop
  if (request.n != null) config.candidateCount = request.n
  if (request.seed != null) config.seed = request.seed
  if (request.presence_penalty != null) config.presencePenalty = request.presence_penalty
  if (request.frequency_penalty != null) config.frequencyPenalty = request.frequency_penalty
  if (request.logprobs) {
    config.responseLogprobs = true
    if (request.top_logprobs) config.logprobs = request.top_logprobs
  }
  const format = request.response_format
  if (format?.type === 'json_object') config.responseMimeType = 'application/json'
  if (format?.type === 'json_schema') {
    config.responseMimeType = 'application/json'
    const schema = format.json_schema?.schema
    if (isRecord(schema)) config.responseSchema = toGeminiSchema(schema)
    if (format.json_schema?.strict) warnings.push(unsupportedParameter('response_format.json_schema.strict', 'Gemini follows the schema without a strict switch'))
  }
  const thinking = thinkingConfig(request, warnings)
  if (thinking) config.thinkingConfig = thinking
  return config
}

export interface GeminiTranslation {
  body: GeminiRequest
  warnings: Warning[]
}

export function toGeminiRequest(request: ChatRequest): GeminiTranslation {
  const warnings = unhandledFieldWarnings(request, handledFields, 'Gemini')
  const body: GeminiRequest = { ...mapMessages(request.messages, warnings), ...mapTools(request, warnings) }
  if (Array.isArray(request.safety_settings)) body.safetySettings = request.safety_settings
  const config = generationConfig(request, warnings)
  if (Object.keys(config).length > 0) body.generationConfig = config
  return { body, warnings }
}
