/**
 * OpenAI chat request -> Bedrock Converse request (`POST /model/{modelId}/converse` or
 * `/converse-stream`).
 *
 * Mapping decisions:
 * - system and developer messages become `system` text blocks; tool messages become `toolResult`
 *   blocks in a user turn; consecutive same-role turns merge (Converse wants them alternating).
 * - A content part's `cache_control` (how OpenAI-format clients ask for prompt caching) becomes a
 *   Converse `cachePoint` block right after the part.
 * - Images must be inline: Converse takes bytes (or S3 locations), never http URLs, and an adapter
 *   does no I/O, so an http image is reported rather than fetched.
 * - `tool_choice: "none"` has no Converse word: the tools are left out, which honours it exactly,
 *   unless the conversation already holds tool blocks (Converse then requires the tool list), in
 *   which case the tools stay and the choice is reported.
 * - Claude's `thinking` and `top_k` travel in `additionalModelRequestFields`.
 */
import type { TargetContext, Translated } from '../adapter.ts'
import type { ChatMessage, ChatRequest, ContentPart, FunctionTool, Warning } from '../canonical.ts'
import { parseDataUrl } from '../shared/data-url.ts'
import { isRecord } from '../shared/errors.ts'
import { defaultValuedFields, isNumber, nonDefaultValueWarnings, stopList } from '../shared/openai-values.ts'
import { toolArgumentsObject } from '../shared/tool-arguments.ts'
import { TurnBuilder } from '../shared/turns.ts'
import { unhandledFieldWarnings, unsupportedParameter } from '../shared/warnings.ts'
import { modelPath } from './paths.ts'
import type { ConverseContentBlock, ConverseRequest, ConverseTool, ConverseToolChoice, ConverseToolResultContent } from './types.ts'

const PROVIDER = 'Bedrock Converse'

const handledFields = new Set([
  'model',
  'messages',
  'stream',
  // Converse always reports usage in the stream's metadata event.
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
  'thinking',
  ...defaultValuedFields,
])

const imageFormats: Readonly<Record<string, string>> = { 'image/png': 'png', 'image/jpeg': 'jpeg', 'image/jpg': 'jpeg', 'image/gif': 'gif', 'image/webp': 'webp' }

const documentFormats: Readonly<Record<string, string>> = {
  'application/pdf': 'pdf',
  'text/csv': 'csv',
  'text/plain': 'txt',
  'text/html': 'html',
  'text/markdown': 'md',
  'application/msword': 'doc',
  'application/vnd.openxmlformats-officedocument.wordprocessingml.document': 'docx',
  'application/vnd.ms-excel': 'xls',
  'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet': 'xlsx',
}

export function converseRequest(request: ChatRequest, target: TargetContext): Translated {
  const warnings: Warning[] = unhandledFieldWarnings(request, handledFields, PROVIDER)
  warnings.push(...nonDefaultValueWarnings(request, PROVIDER))
  const { system, messages } = convertMessages(request.messages ?? [], warnings)
  const body: ConverseRequest = { messages }
  if (system.length > 0) body.system = system

  const inference: NonNullable<ConverseRequest['inferenceConfig']> = {}
  const maxTokens = request.max_completion_tokens ?? request.max_tokens
  if (isNumber(maxTokens)) inference.maxTokens = maxTokens
  if (isNumber(request.temperature)) inference.temperature = request.temperature
  if (isNumber(request.top_p)) inference.topP = request.top_p
  const stop = stopList(request.stop)
  if (stop) inference.stopSequences = stop
  if (Object.keys(inference).length > 0) body.inferenceConfig = inference

  const toolConfig = converseToolConfig(request, messages, warnings)
  if (toolConfig) body.toolConfig = toolConfig

  const additional: Record<string, unknown> = {}
  if (isRecord(request.thinking)) additional.thinking = request.thinking
  if (isNumber(request.top_k)) additional.top_k = request.top_k
  if (Object.keys(additional).length > 0) body.additionalModelRequestFields = additional

  const operation = request.stream === true ? 'converse-stream' : 'converse'
  return { upstream: { method: 'POST', path: modelPath(target.upstreamModel, operation), headers: {}, body }, warnings }
}

function converseTool(tool: FunctionTool): ConverseTool {
  const fn = tool.function
  const spec: ConverseTool['toolSpec'] = { name: fn.name, inputSchema: { json: fn.parameters ?? { type: 'object', properties: {} } } }
  if (fn.description !== undefined) spec.description = fn.description
  return { toolSpec: spec }
}

function converseToolConfig(request: ChatRequest, messages: ConverseRequest['messages'], warnings: Warning[]): ConverseRequest['toolConfig'] | null {
  if (!Array.isArray(request.tools) || request.tools.length === 0) return null
  if (request.parallel_tool_calls === false) warnings.push(unsupportedParameter('parallel_tool_calls', 'Converse cannot forbid parallel tool calls'))
  const choice = request.tool_choice
  if (choice === 'none') {
    const historyHasTools = messages.some((message) => message.content.some((block) => 'toolUse' in block || 'toolResult' in block))
    if (!historyHasTools) return null
    warnings.push(unsupportedParameter('tool_choice', 'Converse has no "none" tool choice and needs the tools while the conversation holds tool calls'))
  }
  request.tools.forEach((tool, index) => {
    if (tool.function.strict === true) warnings.push(unsupportedParameter(`tools[${index}].function.strict`, 'Converse cannot enforce strict tool schemas'))
  })
  const config: NonNullable<ConverseRequest['toolConfig']> = { tools: request.tools.map(converseTool) }
  let toolChoice: ConverseToolChoice | null = null
  if (choice === 'auto') toolChoice = { auto: {} }
  else if (choice === 'required') toolChoice = { any: {} }
  else if (isRecord(choice) && choice.type === 'function') toolChoice = { tool: { name: choice.function.name } }
  if (toolChoice) config.toolChoice = toolChoice
  return config
}

interface ConvertedMessages {
  system: NonNullable<ConverseRequest['system']>
  messages: ConverseRequest['messages']
}

function convertMessages(input: readonly ChatMessage[], warnings: Warning[]): ConvertedMessages {
  const system: NonNullable<ConverseRequest['system']> = []
  const turns = new TurnBuilder<ConverseContentBlock>()
  input.forEach((message, index) => {
    const at = `messages[${index}]`
    if (typeof message.name === 'string') warnings.push(unsupportedParameter(`${at}.name`, 'Converse messages carry no participant names'))
    switch (message.role) {
      case 'system':
      case 'developer':
        for (const block of contentBlocks(message.content, at, warnings)) {
          if ('text' in block || 'cachePoint' in block) system.push(block)
          else warnings.push(unsupportedParameter(`${at}.content`, 'Converse system prompts take text only; a non-text part was not sent'))
        }
        return
      case 'user':
        turns.push('user', contentBlocks(message.content, at, warnings))
        return
      case 'assistant': {
        const calls = (message.tool_calls ?? []).map((call, i): ConverseContentBlock => ({
          toolUse: { toolUseId: call.id, name: call.function.name, input: toolArgumentsObject(call.function.arguments, `${at}.tool_calls[${i}]`, PROVIDER, warnings) },
        }))
        turns.push('assistant', [...contentBlocks(message.content, at, warnings), ...calls])
        return
      }
      case 'tool': {
        // Tool results hold text, images and documents; a cache point there is only a hint, so it goes.
        const content = contentBlocks(message.content, at, warnings).filter((block): block is ConverseToolResultContent => !('cachePoint' in block))
        // A tool result needs content; an empty answer is still an answer.
        turns.push('user', [{ toolResult: { toolUseId: message.tool_call_id ?? '', content: content.length > 0 ? content : [{ text: '' }] } }])
        return
      }
      default:
        warnings.push(unsupportedParameter(`${at}.role`, `Converse has no '${message.role}' role; the message was not sent`))
    }
  })
  return { system, messages: turns.turns.map((turn) => ({ role: turn.role, content: turn.blocks })) }
}

function contentBlocks(content: ChatMessage['content'], at: string, warnings: Warning[]): ConverseContentBlock[] {
  if (typeof content === 'string') return content === '' ? [] : [{ text: content }]
  if (!Array.isArray(content)) return []
  const blocks: ConverseContentBlock[] = []
  content.forEach((part, index) => {
    const block = partBlock(part, `${at}.content[${index}]`, warnings)
    if (!block) return
    blocks.push(block)
    if (isRecord((part as unknown as Record<string, unknown>).cache_control)) blocks.push({ cachePoint: { type: 'default' } })
  })
  return blocks
}

/** Converse document names allow letters, digits, single spaces, hyphens, parentheses and brackets. */
function documentName(filename: string | undefined, at: string): string {
  const stem = (filename ?? '').replace(/\.[^.]*$/, '')
  const cleaned = stem.replace(/[^A-Za-z0-9\s\-()[\]]/g, '-').replace(/\s+/g, ' ').trim()
  return cleaned === '' ? `document ${at.replace(/\D+/g, ' ').trim()}` : cleaned
}

function partBlock(part: ContentPart, at: string, warnings: Warning[]): ConverseContentBlock | null {
  switch (part.type) {
    case 'text':
      return part.text === '' ? null : { text: part.text }
    case 'image_url': {
      const inline = parseDataUrl(part.image_url?.url ?? '')
      const format = inline ? imageFormats[inline.mediaType.toLowerCase()] : undefined
      if (inline && format) return { image: { format, source: { bytes: inline.base64 } } }
      warnings.push(unsupportedParameter(`${at}.image_url`, 'Converse takes images inline only, as png, jpeg, gif or webp data URLs'))
      return null
    }
    case 'file': {
      const inline = part.file?.file_data ? parseDataUrl(part.file.file_data) : null
      const format = inline ? documentFormats[inline.mediaType.toLowerCase()] : undefined
      if (inline && format) return { document: { format, name: documentName(part.file.filename, at), source: { bytes: inline.base64 } } }
      warnings.push(unsupportedParameter(`${at}.file`, 'Converse takes files inline only, as document data URLs'))
      return null
    }
    default:
      warnings.push(unsupportedParameter(`${at}.type`, `Converse has no ${String((part as { type: unknown }).type)} input`))
      return null
  }
}
