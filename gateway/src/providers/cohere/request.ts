/** OpenAI chat request -> Cohere v2 chat request. */
import type { TargetContext, Translated } from '../adapter.ts'
import type { ChatMessage, ChatRequest, ContentPart, Warning } from '../canonical.ts'
import { invalidParameter } from '../../core/errors.ts'
import { textOfContent } from '../shared/content.ts'
import { isRecord } from '../shared/errors.ts'
import { unhandledFieldWarnings, unsupportedParameter } from '../shared/warnings.ts'
import type { CohereChatRequest, CohereContentPart, CohereMessage } from './types.ts'

const handledFields = new Set([
  'model', 'messages', 'stream', 'stream_options', 'max_tokens', 'max_completion_tokens', 'temperature', 'top_p', 'top_k', 'n',
  'stop', 'presence_penalty', 'frequency_penalty', 'logprobs', 'top_logprobs', 'seed', 'tools', 'tool_choice',
  'parallel_tool_calls', 'response_format', 'thinking',
  // Cohere's own, passed through for clients that target Cohere.
  'safety_mode', 'documents', 'citation_options',
])

const passedThrough = ['safety_mode', 'documents', 'citation_options'] as const

function userContent(content: ChatMessage['content'], index: number): string | CohereContentPart[] {
  if (typeof content === 'string' || !Array.isArray(content)) return content ?? ''
  return content.map((part: ContentPart, partIndex): CohereContentPart => {
    if (part.type === 'text') return { type: 'text', text: part.text }
    if (part.type === 'image_url') return { type: 'image_url', image_url: { url: part.image_url.url, ...(part.image_url.detail && { detail: part.image_url.detail }) } }
    throw invalidParameter(`messages[${index}].content[${partIndex}].type`, `Cohere chat accepts text and image parts, not '${part.type}'`)
  })
}

function toCohereMessage(message: ChatMessage, index: number): CohereMessage {
  switch (message.role) {
    case 'system':
    case 'developer':
      return { role: 'system', content: textOfContent(message.content) }
    case 'user':
      return { role: 'user', content: userContent(message.content, index) }
    case 'assistant': {
      const text = textOfContent(message.content)
      const out: CohereMessage = { role: 'assistant' }
      if (text !== '') out.content = text
      if (message.tool_calls?.length) {
        out.tool_calls = message.tool_calls.map((call) => ({ id: call.id, type: 'function', function: { name: call.function.name, arguments: call.function.arguments } }))
        // The plan Cohere wrote before its calls comes back as reasoning_content; it is returned with them.
        if (message.reasoning_content) out.tool_plan = message.reasoning_content
      }
      return out
    }
    case 'tool':
      if (!message.tool_call_id) throw invalidParameter(`messages[${index}].tool_call_id`, 'A tool message needs tool_call_id')
      return { role: 'tool', tool_call_id: message.tool_call_id, content: textOfContent(message.content) }
    default:
      throw invalidParameter(`messages[${index}].role`, `Cohere chat does not accept the role '${message.role}'`)
  }
}

function toolFields(request: ChatRequest, warnings: Warning[]): Partial<CohereChatRequest> {
  const out: Partial<CohereChatRequest> = {}
  if (request.tools?.length) {
    out.tools = request.tools.map(({ function: { name, description, parameters } }) => ({
      type: 'function',
      function: { name, ...(description !== undefined && { description }), ...(parameters !== undefined && { parameters }) },
    }))
    if (request.tools.some((tool) => tool.function.strict)) out.strict_tools = true
  }
  const choice = request.tool_choice
  if (choice === 'required') out.tool_choice = 'REQUIRED'
  else if (choice === 'none') out.tool_choice = 'NONE'
  else if (isRecord(choice)) {
    out.tool_choice = 'REQUIRED'
    warnings.push(unsupportedParameter('tool_choice', `Cohere cannot force one named function; a tool call is required, not necessarily '${choice.function.name}'`))
  }
  if (request.parallel_tool_calls === false) warnings.push(unsupportedParameter('parallel_tool_calls', 'Cohere cannot be limited to one tool call per turn'))
  return out
}

function samplingFields(request: ChatRequest, warnings: Warning[]): Partial<CohereChatRequest> {
  const out: Partial<CohereChatRequest> = {}
  const maxTokens = request.max_completion_tokens ?? request.max_tokens
  if (maxTokens != null) out.max_tokens = maxTokens
  if (request.stop != null) out.stop_sequences = typeof request.stop === 'string' ? [request.stop] : request.stop
  if (request.temperature != null) out.temperature = request.temperature
  if (request.top_p != null) out.p = request.top_p
  if (typeof request.top_k === 'number') out.k = request.top_k
  if (request.seed != null) out.seed = request.seed
  if (request.presence_penalty != null) out.presence_penalty = request.presence_penalty
  if (request.frequency_penalty != null) out.frequency_penalty = request.frequency_penalty
  if (request.logprobs) out.logprobs = true
  if (request.top_logprobs) warnings.push(unsupportedParameter('top_logprobs', 'Cohere returns the chosen tokens only, without alternatives'))
  if (request.n != null && request.n !== 1) warnings.push(unsupportedParameter('n', 'Cohere returns one choice per request'))
  const format = request.response_format
  if (format?.type === 'json_object') out.response_format = { type: 'json_object' }
  if (format?.type === 'json_schema') {
    const schema = format.json_schema?.schema
    out.response_format = isRecord(schema) ? { type: 'json_object', json_schema: schema } : { type: 'json_object' }
  }
  if (request.thinking) {
    out.thinking = request.thinking.type === 'disabled'
      ? { type: 'disabled' }
      : { type: 'enabled', ...(request.thinking.budget_tokens !== undefined && { token_budget: request.thinking.budget_tokens }) }
  }
  return out
}

export function toCohereChat(request: ChatRequest, target: TargetContext): Translated {
  const warnings = unhandledFieldWarnings(request, handledFields, 'Cohere')
  const body: CohereChatRequest = {
    model: target.upstreamModel,
    messages: request.messages.map(toCohereMessage),
    ...toolFields(request, warnings),
    ...samplingFields(request, warnings),
  }
  for (const field of passedThrough) if (request[field] != null) body[field] = request[field]
  if (request.stream) body.stream = true
  return { upstream: { method: 'POST', path: '/v2/chat', headers: {}, body }, warnings }
}
