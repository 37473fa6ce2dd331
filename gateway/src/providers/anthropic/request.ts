/**
 * OpenAI chat request -> Anthropic Messages body. The body carries neither `model` nor `stream`:
 * the direct API adds them, Bedrock's invoke path puts the model in the URL and streams by path.
 *
 * Mapping decisions:
 * - system and developer messages become the top-level `system` blocks, in order.
 * - tool messages become `tool_result` blocks in a user turn; consecutive same-role turns merge,
 *   because Anthropic wants user and assistant turns to alternate.
 * - `max_tokens` is required by Anthropic. Absent both `max_completion_tokens` and `max_tokens`, the
 *   body asks for `defaultMaxTokens` (target option) or DEFAULT_MAX_TOKENS; with extended thinking
 *   the default is added on top of the thinking budget, since max_tokens must exceed it.
 * - Anything Anthropic cannot honour is reported as a Warning, never dropped silently.
 */
import type { TargetContext } from '../adapter.ts'
import type { ChatMessage, ChatRequest, ContentPart, FunctionTool, ToolCall, ToolChoice, Warning } from '../canonical.ts'
import { parseDataUrl } from '../shared/data-url.ts'
import { isRecord } from '../shared/errors.ts'
import { defaultValuedFields, isNumber, nonDefaultValueWarnings, stopList } from '../shared/openai-values.ts'
import { toolArgumentsObject } from '../shared/tool-arguments.ts'
import { TurnBuilder } from '../shared/turns.ts'
import { unhandledFieldWarnings, unsupportedParameter } from '../shared/warnings.ts'
import type {
  AnthropicMessageParam,
  AnthropicMessagesBody,
  AnthropicRequestBlock,
  AnthropicTextBlock,
  AnthropicTool,
  AnthropicToolChoice,
  AnthropicToolResultBlock,
  CacheControl,
} from './types.ts'

/** Every current Claude model can produce at least this many output tokens. */
export const DEFAULT_MAX_TOKENS = 4096

const PROVIDER = 'Anthropic'

/** Top-level fields this module reads (to map them or to reject their values). */
const handledFields = new Set([
  'model',
  'messages',
  'stream',
  // Anthropic always reports usage in the stream, so include_usage needs nothing upstream.
  'stream_options',
  'max_tokens',
  'max_completion_tokens',
  'temperature',
  'top_p',
  'top_k',
  'stop',
  'tools',
  'tool_choice',
  'parallel_tool_calls',
  'user',
  'thinking',
  'response_format',
  ...defaultValuedFields,
])

export interface AnthropicBodyResult {
  body: AnthropicMessagesBody
  warnings: Warning[]
}

export function chatToAnthropicBody(request: ChatRequest, target: TargetContext): AnthropicBodyResult {
  const warnings: Warning[] = unhandledFieldWarnings(request, handledFields, PROVIDER)
  warnings.push(...nonDefaultValueWarnings(request, PROVIDER))

  const { system, messages } = convertMessages(request.messages ?? [], warnings)
  const body: AnthropicMessagesBody = { max_tokens: maxTokens(request, target), messages }
  if (system.length > 0) body.system = system
  if (isNumber(request.temperature)) body.temperature = request.temperature
  if (isNumber(request.top_p)) body.top_p = request.top_p
  if (isNumber(request.top_k)) body.top_k = request.top_k
  const stop = stopList(request.stop)
  if (stop) body.stop_sequences = stop
  const tools = request.tools && request.tools.length > 0 ? request.tools : null
  if (tools) body.tools = tools.map(toAnthropicTool)
  // parallel_tool_calls alone means nothing without tools (OpenAI ignores it too).
  const toolChoice = toAnthropicToolChoice(request.tool_choice, tools ? request.parallel_tool_calls : undefined)
  if (toolChoice) body.tool_choice = toolChoice
  if (isRecord(request.thinking)) body.thinking = request.thinking
  if (typeof request.user === 'string' && request.user !== '') body.metadata = { user_id: request.user }
  applyResponseFormat(request, body, warnings)
  return { body, warnings }
}

export function maxTokens(request: ChatRequest, target: TargetContext): number {
  const asked = request.max_completion_tokens ?? request.max_tokens
  if (isNumber(asked)) return asked
  const configured = Number(target.options.defaultMaxTokens)
  const fallback = Number.isInteger(configured) && configured > 0 ? configured : DEFAULT_MAX_TOKENS
  const budget = isRecord(request.thinking) && request.thinking.type === 'enabled' ? request.thinking.budget_tokens : undefined
  return isNumber(budget) && budget > 0 ? budget + fallback : fallback
}

function toAnthropicTool(tool: FunctionTool): AnthropicTool {
  const fn = tool.function
  const result: AnthropicTool = { name: fn.name, input_schema: fn.parameters ?? { type: 'object', properties: {} } }
  if (fn.description !== undefined) result.description = fn.description
  if (fn.strict !== undefined && fn.strict !== null) result.strict = fn.strict
  return result
}

export function toAnthropicToolChoice(choice: ToolChoice | undefined, parallel: boolean | undefined): AnthropicToolChoice | null {
  // Anthropic carries "no parallel calls" on the choice itself; "none" forbids calls altogether.
  const disableParallel = parallel === false ? { disable_parallel_tool_use: true } : {}
  if (choice === 'none') return { type: 'none' }
  if (choice === 'required') return { type: 'any', ...disableParallel }
  if (isRecord(choice) && choice.type === 'function') return { type: 'tool', name: choice.function.name, ...disableParallel }
  if (choice === 'auto' || parallel === false) return { type: 'auto', ...disableParallel }
  return null
}

function applyResponseFormat(request: ChatRequest, body: AnthropicMessagesBody, warnings: Warning[]): void {
  const format = request.response_format
  if (!isRecord(format) || format.type === 'text') return
  const schema = isRecord(format.json_schema) ? format.json_schema.schema : undefined
  if (format.type === 'json_schema' && isRecord(schema)) {
    // Anthropic structured outputs: the answer's text is JSON valid against the schema.
    body.output_config = { format: { type: 'json_schema', schema } }
    return
  }
  warnings.push(unsupportedParameter('response_format', `Anthropic has no ${String(format.type)} mode without a JSON schema`))
}

interface ConvertedMessages {
  system: AnthropicTextBlock[]
  messages: AnthropicMessageParam[]
}

export function convertMessages(input: readonly ChatMessage[], warnings: Warning[]): ConvertedMessages {
  const system: AnthropicTextBlock[] = []
  const turns = new TurnBuilder<AnthropicRequestBlock>()

  // An assistant message's `reasoning_content` (echoed back by clients) is not sent: Anthropic only
  // accepts thinking it signed, and OpenAI-shaped history carries no signature.
  input.forEach((message, index) => {
    const at = `messages[${index}]`
    if (typeof message.name === 'string') warnings.push(unsupportedParameter(`${at}.name`, 'Anthropic messages carry no participant names'))
    switch (message.role) {
      case 'system':
      case 'developer':
        system.push(...textBlocks(message.content, at, warnings))
        return
      case 'user':
        turns.push('user', contentBlocks(message.content, at, warnings))
        return
      case 'assistant':
        turns.push('assistant', [...contentBlocks(message.content, at, warnings), ...(message.tool_calls ?? []).map((call, i) => toolUseBlock(call, `${at}.tool_calls[${i}]`, warnings))])
        return
      case 'tool':
        turns.push('user', [toolResultBlock(message, at, warnings)])
        return
      default:
        warnings.push(unsupportedParameter(`${at}.role`, `Anthropic has no '${message.role}' role; the message was not sent`))
    }
  })
  return { system, messages: turns.turns.map((turn) => ({ role: turn.role, content: turn.blocks })) }
}

/** A content part's `cache_control`, which OpenAI-format clients set to use Anthropic prompt caching. */
function cacheControlOf(part: unknown): { cache_control?: CacheControl } {
  return isRecord(part) && isRecord(part.cache_control) ? { cache_control: part.cache_control as unknown as CacheControl } : {}
}

function textBlocks(content: ChatMessage['content'], at: string, warnings: Warning[]): AnthropicTextBlock[] {
  return contentBlocks(content, at, warnings).filter((block): block is AnthropicTextBlock => {
    if (block.type === 'text') return true
    warnings.push(unsupportedParameter(`${at}.content`, `Anthropic system prompts take text only; a ${block.type} part was not sent`))
    return false
  })
}

function contentBlocks(content: ChatMessage['content'], at: string, warnings: Warning[]): AnthropicRequestBlock[] {
  if (typeof content === 'string') return content === '' ? [] : [{ type: 'text', text: content }]
  if (!Array.isArray(content)) return []
  const blocks: AnthropicRequestBlock[] = []
  content.forEach((part, index) => {
    const block = partBlock(part, `${at}.content[${index}]`, warnings)
    if (block) blocks.push(block)
  })
  return blocks
}

function partBlock(part: ContentPart, at: string, warnings: Warning[]): AnthropicRequestBlock | null {
  switch (part.type) {
    case 'text':
      // Anthropic rejects empty text blocks; an empty part carries nothing.
      return part.text === '' ? null : { type: 'text', text: part.text, ...cacheControlOf(part) }
    case 'image_url': {
      const url = part.image_url?.url ?? ''
      const inline = parseDataUrl(url)
      if (inline) return { type: 'image', source: { type: 'base64', media_type: inline.mediaType, data: inline.base64 }, ...cacheControlOf(part) }
      if (/^https?:\/\//i.test(url)) return { type: 'image', source: { type: 'url', url }, ...cacheControlOf(part) }
      warnings.push(unsupportedParameter(`${at}.image_url`, 'Anthropic takes images as base64 data URLs or http(s) URLs'))
      return null
    }
    case 'file': {
      const inline = part.file?.file_data ? parseDataUrl(part.file.file_data) : null
      if (inline?.mediaType === 'application/pdf') {
        const title = part.file.filename ? { title: part.file.filename } : {}
        return { type: 'document', source: { type: 'base64', media_type: inline.mediaType, data: inline.base64 }, ...title, ...cacheControlOf(part) }
      }
      warnings.push(unsupportedParameter(`${at}.file`, 'Anthropic takes files as inline PDF data only'))
      return null
    }
    default:
      warnings.push(unsupportedParameter(`${at}.type`, `Anthropic has no ${String((part as { type: unknown }).type)} input`))
      return null
  }
}

function toolUseBlock(call: ToolCall, at: string, warnings: Warning[]): AnthropicRequestBlock {
  return { type: 'tool_use', id: call.id, name: call.function.name, input: toolArgumentsObject(call.function.arguments, at, PROVIDER, warnings) }
}

function toolResultBlock(message: ChatMessage, at: string, warnings: Warning[]): AnthropicRequestBlock {
  // contentBlocks yields text, image and document blocks: all valid inside a tool result.
  const content = contentBlocks(message.content, at, warnings) as AnthropicToolResultBlock['content'] & unknown[]
  const block: AnthropicToolResultBlock = { type: 'tool_result', tool_use_id: message.tool_call_id ?? '' }
  if (content.length > 0) block.content = content
  return block
}
