/**
 * The inbound `POST /v1/messages` API: Anthropic Messages format in front of any provider. A target
 * that speaks Messages itself (`nativeMessagesFor`) gets the body as is; any other gets it
 * translated to a chat request here, and the chat answer translated back
 * (`inbound-response.ts`, `inbound-stream.ts`).
 *
 * Translation decisions:
 * - `system` becomes a leading system message; `tool_result` blocks become tool messages placed
 *   before the rest of their user turn (Anthropic puts them first too).
 * - `max_tokens` becomes `max_completion_tokens` (what every adapter reads, and the only one
 *   reasoning models accept); a stream asks for usage (`include_usage`) so that the final
 *   `message_delta` can carry it.
 * - `cache_control` hints are dropped without a warning: non-Anthropic providers cache on their own,
 *   and clients such as Claude Code send them on every request.
 * - What cannot be expressed in chat form (server tools, file ids, URL documents) is a problem (a
 *   400 with the parameter's path); what can be ignored safely is a warning.
 */
import type { NativeMessagesOperation, ProviderAdapter, TargetContext } from '../adapter.ts'
import type { ChatMessage, ChatRequest, ContentPart, FunctionTool, ToolCall, ToolChoice, Warning } from '../canonical.ts'
import { isRecord } from '../shared/errors.ts'
import { unsupportedParameter } from '../shared/warnings.ts'

export { anthropicErrorEnvelope, type AnthropicErrorEnvelope } from './errors.ts'
export { chatResponseToAnthropic } from './inbound-response.ts'
export { chatStreamToAnthropic, type AnthropicSseEvent, type ChatToAnthropicStreamState } from './inbound-stream.ts'

/** The adapter's native Messages operation when this target takes Messages bodies as is; null means translate. */
export function nativeMessagesFor(adapter: ProviderAdapter, target: TargetContext): NativeMessagesOperation | null {
  return adapter.messages?.accepts(target) ? adapter.messages : null
}

export interface InboundProblem {
  /** Where in the body, in Anthropic's own notation: `messages.0.content.2.source`. */
  param: string
  message: string
}

export interface InboundTranslation {
  /** Null only when the body is not an object; otherwise usable once `problems` is empty. */
  request: ChatRequest | null
  problems: InboundProblem[]
  warnings: Warning[]
}

/** Top-level fields with no chat equivalent that can be left out without changing the answer's meaning. */
const ignorableFields = new Set(['service_tier', 'container', 'context_management', 'mcp_servers', 'inference_geo', 'speed', 'diagnostics', 'user_profile_id', 'workspace_id'])
const translatedFields = new Set([
  'model',
  'max_tokens',
  'messages',
  'system',
  'temperature',
  'top_p',
  'top_k',
  'stop_sequences',
  'stream',
  'metadata',
  'tools',
  'tool_choice',
  'thinking',
  'output_config',
])

class Collector {
  readonly problems: InboundProblem[] = []
  readonly warnings: Warning[] = []
  problem(param: string, message: string): void {
    this.problems.push({ param, message })
  }
}

function isNonNegativeNumber(value: unknown): value is number {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0
}

export function anthropicRequestToChat(body: unknown): InboundTranslation {
  const out = new Collector()
  if (!isRecord(body)) return { request: null, problems: [{ param: 'body', message: 'The request body must be a JSON object' }], warnings: [] }

  if (typeof body.model !== 'string' || body.model === '') out.problem('model', 'model: Field required (a non-empty string)')
  if (!Number.isInteger(body.max_tokens) || (body.max_tokens as number) < 1) out.problem('max_tokens', 'max_tokens: Field required (an integer of at least 1)')
  const request: ChatRequest = { model: typeof body.model === 'string' ? body.model : '', messages: [], max_completion_tokens: body.max_tokens as number }

  request.messages.push(...systemMessages(body.system, out))
  if (!Array.isArray(body.messages) || body.messages.length === 0) out.problem('messages', 'messages: Field required (a non-empty list)')
  else body.messages.forEach((message, index) => request.messages.push(...chatMessages(message, `messages.${index}`, out)))

  for (const field of ['temperature', 'top_p', 'top_k'] as const) {
    if (body[field] === undefined) continue
    if (isNonNegativeNumber(body[field])) request[field] = body[field]
    else out.problem(field, `${field}: Input should be a non-negative number`)
  }
  if (body.stop_sequences !== undefined) {
    if (Array.isArray(body.stop_sequences) && body.stop_sequences.every((stop) => typeof stop === 'string')) {
      if (body.stop_sequences.length > 0) request.stop = body.stop_sequences
    } else out.problem('stop_sequences', 'stop_sequences: Input should be a list of strings')
  }
  if (body.stream !== undefined) {
    if (typeof body.stream !== 'boolean') out.problem('stream', 'stream: Input should be a boolean')
    else if (body.stream) {
      request.stream = true
      request.stream_options = { include_usage: true }
    }
  }
  if (body.metadata !== undefined) {
    if (!isRecord(body.metadata)) out.problem('metadata', 'metadata: Input should be an object')
    else if (typeof body.metadata.user_id === 'string' && body.metadata.user_id !== '') request.user = body.metadata.user_id
  }
  translateTools(body, request, out)
  translateThinking(body.thinking, request, out)
  translateOutputConfig(body.output_config, request, out)

  for (const key of Object.keys(body)) {
    if (translatedFields.has(key) || body[key] === undefined || body[key] === null) continue
    out.warnings.push(unsupportedParameter(key, ignorableFields.has(key) ? `${key} applies to Anthropic only and was not sent` : `${key} has no equivalent for this provider and was not sent`))
  }
  return { request, problems: out.problems, warnings: out.warnings }
}

function systemMessages(system: unknown, out: Collector): ChatMessage[] {
  if (system === undefined || system === null) return []
  if (typeof system === 'string') return system === '' ? [] : [{ role: 'system', content: system }]
  if (!Array.isArray(system)) {
    out.problem('system', 'system: Input should be a string or a list of text blocks')
    return []
  }
  const parts: ContentPart[] = []
  system.forEach((block, index) => {
    if (isRecord(block) && block.type === 'text' && typeof block.text === 'string') parts.push({ type: 'text', text: block.text })
    else out.problem(`system.${index}`, 'system blocks must be text blocks')
  })
  return parts.length > 0 ? [{ role: 'system', content: parts }] : []
}

function chatMessages(message: unknown, at: string, out: Collector): ChatMessage[] {
  if (!isRecord(message) || (message.role !== 'user' && message.role !== 'assistant')) {
    out.problem(`${at}.role`, `${at}.role: Input should be 'user' or 'assistant'`)
    return []
  }
  const blocks = typeof message.content === 'string' ? [{ type: 'text', text: message.content }] : message.content
  if (!Array.isArray(blocks)) {
    out.problem(`${at}.content`, `${at}.content: Input should be a string or a list of content blocks`)
    return []
  }
  return message.role === 'user' ? userMessages(blocks, at, out) : [assistantMessage(blocks, at, out)]
}

function blockType(block: unknown): string {
  return isRecord(block) && typeof block.type === 'string' ? block.type : ''
}

function userMessages(blocks: unknown[], at: string, out: Collector): ChatMessage[] {
  const tools: ChatMessage[] = []
  const parts: ContentPart[] = []
  blocks.forEach((block, index) => {
    const where = `${at}.content.${index}`
    if (blockType(block) === 'tool_result') {
      const tool = toolMessage(block as Record<string, unknown>, where, out)
      if (tool) tools.push(tool)
      return
    }
    const part = inputPart(block, where, out)
    if (part) parts.push(part)
  })
  return parts.length > 0 ? [...tools, { role: 'user', content: parts }] : tools
}

/** A user-side block as a chat content part; null (with a problem) when chat has no way to say it. */
function inputPart(block: unknown, where: string, out: Collector): ContentPart | null {
  if (!isRecord(block)) {
    out.problem(where, 'Content blocks must be objects')
    return null
  }
  const source = isRecord(block.source) ? block.source : {}
  switch (block.type) {
    case 'text':
      if (typeof block.text === 'string') return { type: 'text', text: block.text }
      break
    case 'image':
      if (source.type === 'base64' && typeof source.media_type === 'string' && typeof source.data === 'string') {
        return { type: 'image_url', image_url: { url: `data:${source.media_type};base64,${source.data}` } }
      }
      if (source.type === 'url' && typeof source.url === 'string') return { type: 'image_url', image_url: { url: source.url } }
      out.problem(`${where}.source`, 'Only base64 and url image sources can be sent to this provider')
      return null
    case 'document':
      if (source.type === 'base64' && typeof source.media_type === 'string' && typeof source.data === 'string') {
        const filename = typeof block.title === 'string' ? { filename: block.title } : {}
        return { type: 'file', file: { file_data: `data:${source.media_type};base64,${source.data}`, ...filename } }
      }
      if (source.type === 'text' && typeof source.data === 'string') return { type: 'text', text: source.data }
      out.problem(`${where}.source`, 'Only base64 and plain-text document sources can be sent to this provider')
      return null
    default:
      out.problem(`${where}.type`, `'${String(block.type)}' blocks cannot be sent to this provider`)
      return null
  }
  out.problem(where, `A ${String(block.type)} block is missing its fields`)
  return null
}

function toolMessage(block: Record<string, unknown>, where: string, out: Collector): ChatMessage | null {
  if (typeof block.tool_use_id !== 'string') {
    out.problem(`${where}.tool_use_id`, 'tool_result blocks need a tool_use_id')
    return null
  }
  // is_error has no chat field; the result's own text is what tells the model it failed.
  const content = block.content
  if (content === undefined || typeof content === 'string') return { role: 'tool', tool_call_id: block.tool_use_id, content: content ?? '' }
  if (!Array.isArray(content)) {
    out.problem(`${where}.content`, 'tool_result content must be a string or a list of blocks')
    return null
  }
  const parts: ContentPart[] = []
  content.forEach((inner, index) => {
    if (blockType(inner) === 'text' && typeof (inner as Record<string, unknown>).text === 'string') parts.push({ type: 'text', text: String((inner as Record<string, unknown>).text) })
    else out.problem(`${where}.content.${index}`, 'Tool results sent to this provider can hold text only')
  })
  return { role: 'tool', tool_call_id: block.tool_use_id, content: parts }
}

function assistantMessage(blocks: unknown[], at: string, out: Collector): ChatMessage {
  const texts: string[] = []
  const thoughts: string[] = []
  const calls: ToolCall[] = []
  blocks.forEach((block, index) => {
    const where = `${at}.content.${index}`
    const record = isRecord(block) ? block : {}
    switch (record.type) {
      case 'text':
        if (typeof record.text === 'string') texts.push(record.text)
        return
      case 'thinking':
        if (typeof record.thinking === 'string') thoughts.push(record.thinking)
        return
      case 'redacted_thinking':
        // Encrypted for Anthropic only: no other provider can read it.
        out.warnings.push(unsupportedParameter(`${where}`, 'redacted thinking can only be read by Anthropic and was not sent'))
        return
      case 'tool_use':
        if (typeof record.id === 'string' && typeof record.name === 'string') {
          calls.push({ id: record.id, type: 'function', function: { name: record.name, arguments: JSON.stringify(record.input ?? {}) } })
          return
        }
        out.problem(where, 'tool_use blocks need an id and a name')
        return
      default:
        out.problem(`${where}.type`, `'${String(record.type)}' blocks cannot be sent to this provider`)
    }
  })
  const message: ChatMessage = { role: 'assistant', content: texts.length === 0 && calls.length > 0 ? null : texts.join('') }
  if (thoughts.length > 0) message.reasoning_content = thoughts.join('')
  if (calls.length > 0) message.tool_calls = calls
  return message
}

function translateTools(body: Record<string, unknown>, request: ChatRequest, out: Collector): void {
  if (body.tools !== undefined) {
    if (!Array.isArray(body.tools)) out.problem('tools', 'tools: Input should be a list')
    else {
      const tools: FunctionTool[] = []
      body.tools.forEach((tool, index) => {
        const at = `tools.${index}`
        if (!isRecord(tool) || typeof tool.name !== 'string') return out.problem(at, 'Tools need a name')
        // Anthropic-hosted tools (web search, code execution...) carry a versioned type and no schema.
        if (tool.type !== undefined && tool.type !== null && tool.type !== 'custom') return out.problem(`${at}.type`, `The server tool '${String(tool.type)}' is only available on Anthropic`)
        if (!isRecord(tool.input_schema)) return out.problem(`${at}.input_schema`, 'Tools need an input_schema object')
        const fn: FunctionTool['function'] = { name: tool.name, parameters: tool.input_schema }
        if (typeof tool.description === 'string') fn.description = tool.description
        if (typeof tool.strict === 'boolean') fn.strict = tool.strict
        tools.push({ type: 'function', function: fn })
      })
      if (tools.length > 0) request.tools = tools
    }
  }
  const choice = body.tool_choice
  if (choice === undefined || choice === null) return
  if (!isRecord(choice)) return out.problem('tool_choice', 'tool_choice: Input should be an object')
  const mapped: Record<string, ToolChoice> = { auto: 'auto', any: 'required', none: 'none' }
  if (choice.type === 'tool') {
    if (typeof choice.name !== 'string') return out.problem('tool_choice.name', 'tool_choice of type tool needs a name')
    request.tool_choice = { type: 'function', function: { name: choice.name } }
  } else if (typeof choice.type === 'string' && mapped[choice.type]) request.tool_choice = mapped[choice.type]
  else return out.problem('tool_choice.type', "tool_choice.type should be 'auto', 'any', 'tool' or 'none'")
  if (choice.disable_parallel_tool_use === true) request.parallel_tool_calls = false
}

function translateThinking(thinking: unknown, request: ChatRequest, out: Collector): void {
  if (thinking === undefined || thinking === null) return
  if (!isRecord(thinking) || !['enabled', 'disabled', 'adaptive'].includes(String(thinking.type))) {
    return out.problem('thinking.type', "thinking.type should be 'enabled', 'disabled' or 'adaptive'")
  }
  if (thinking.type === 'enabled' && (!Number.isInteger(thinking.budget_tokens) || (thinking.budget_tokens as number) < 1)) {
    return out.problem('thinking.budget_tokens', 'thinking.budget_tokens: an integer of at least 1 is required when thinking is enabled')
  }
  // The chat shape carries Anthropic's own thinking object; adapters that know it map it.
  request.thinking = thinking as ChatRequest['thinking']
}

function translateOutputConfig(config: unknown, request: ChatRequest, out: Collector): void {
  if (config === undefined || config === null) return
  if (!isRecord(config)) return out.problem('output_config', 'output_config: Input should be an object')
  if (config.format !== undefined && config.format !== null) {
    const format = config.format
    if (!isRecord(format) || format.type !== 'json_schema' || !isRecord(format.schema)) {
      return out.problem('output_config.format', "output_config.format should be { type: 'json_schema', schema }")
    }
    request.response_format = { type: 'json_schema', json_schema: { name: 'response', schema: format.schema, strict: true } }
  }
  if (typeof config.effort === 'string') request.reasoning_effort = config.effort
}
