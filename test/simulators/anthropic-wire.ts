/**
 * The Anthropic Messages wire format: request validation, the message answer, its stream events and
 * error bodies. Shared by the Anthropic API simulator, Vertex AI `rawPredict` and Bedrock `invoke`,
 * which carry the same bodies under different paths, auth and (for Bedrock) stream framing.
 */
import type { ErrorAnswer, SimulatorOptions } from './base.ts'
import { applyStop, asStopList, estimateTokens, generateAnswer, splitArguments, textOf, toolArguments, wantsTool } from './content.ts'

const errorTypes: Record<number, string> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  402: 'billing_error',
  403: 'permission_error',
  404: 'not_found_error',
  413: 'request_too_large',
  429: 'rate_limit_error',
  500: 'api_error',
  504: 'timeout_error',
  529: 'overloaded_error',
}

const errorMessages: Record<string, string> = {
  invalid_request_error: 'Invalid request.',
  authentication_error: 'invalid x-api-key',
  billing_error: 'Your credit balance is too low to access the Anthropic API.',
  permission_error: 'Your API key does not have permission to use the specified resource.',
  not_found_error: 'The requested resource could not be found.',
  request_too_large: 'Request exceeds the maximum allowed number of bytes.',
  rate_limit_error: 'Number of request tokens has exceeded your per-minute rate limit.',
  api_error: 'Internal server error',
  timeout_error: 'Request timed out',
  overloaded_error: 'Overloaded',
}

export function anthropicErrorBody(status: number, message?: string): { type: 'error'; error: { type: string; message: string } } {
  const type = errorTypes[status] ?? (status >= 500 ? 'api_error' : 'invalid_request_error')
  return { type: 'error', error: { type, message: message ?? errorMessages[type]! } }
}

export function anthropicErrorAnswer(status: number, message?: string): ErrorAnswer {
  return { body: anthropicErrorBody(status, message) }
}

/** A request body problem: the status and message Anthropic answers for it. */
export interface Rejection {
  status: number
  message: string
}

/**
 * Validates a Messages body. `model` comes from the body on the Anthropic API and from the path on
 * Vertex and Bedrock, which demand `anthropic_version` in the body instead of a header.
 */
export function validateMessages(body: Record<string, unknown>, where: { modelInPath: boolean }): Rejection | null {
  if (!where.modelInPath && (typeof body.model !== 'string' || body.model === '')) return { status: 400, message: 'model: Field required' }
  if (where.modelInPath && typeof body.anthropic_version !== 'string') return { status: 400, message: 'anthropic_version: Field required' }
  if (typeof body.max_tokens !== 'number') return { status: 400, message: 'max_tokens: Field required' }
  if (body.max_tokens < 1) return { status: 400, message: 'max_tokens: Input should be greater than or equal to 1' }
  if (!Array.isArray(body.messages) || body.messages.length === 0) return { status: 400, message: 'messages: at least one message is required' }
  const first = body.messages[0] as { role?: unknown } | undefined
  if (first?.role !== 'user' && first?.role !== 'assistant') return { status: 400, message: 'messages.0.role: Input should be \'user\' or \'assistant\'' }
  return null
}

type Block =
  | { type: 'thinking'; pieces: string[]; signature: string }
  | { type: 'text'; pieces: string[] }
  | { type: 'tool_use'; id: string; name: string; input: Record<string, unknown> }

export interface MessagePlan {
  id: string
  model: string
  blocks: Block[]
  stopReason: 'end_turn' | 'max_tokens' | 'tool_use' | 'stop_sequence'
  stopSequence: string | null
  usage: { input_tokens: number; cache_creation_input_tokens: number; cache_read_input_tokens: number; output_tokens: number }
}

interface MessageIn {
  role?: unknown
  content?: unknown
}

interface ToolIn {
  name?: unknown
  input_schema?: unknown
  type?: unknown
}

function lastUserText(messages: MessageIn[]): string {
  for (let i = messages.length - 1; i >= 0; i--) {
    const message = messages[i]!
    if (message.role !== 'user') continue
    // A user turn that only carries tool results is not a new question.
    const text = textOf(message.content)
    if (text !== '' || typeof message.content === 'string') return text
  }
  return ''
}

function endsWithToolResult(messages: MessageIn[]): boolean {
  const content = messages.at(-1)?.content
  return Array.isArray(content) && content.some((block) => (block as { type?: unknown })?.type === 'tool_result')
}

/** The tool Claude would call: forced by `tool_choice` (`any`/`tool`), or the prompt asks about the weather. */
function pickTool(body: Record<string, unknown>, messages: MessageIn[], prompt: string): { tool: ToolIn; forced: boolean } | null {
  const tools = Array.isArray(body.tools) ? (body.tools as ToolIn[]).filter((tool) => typeof tool?.name === 'string' && tool.input_schema !== undefined) : []
  if (tools.length === 0) return null
  const choice = (body.tool_choice ?? { type: 'auto' }) as { type?: unknown; name?: unknown }
  if (choice.type === 'none') return null
  if (choice.type === 'tool') {
    const tool = tools.find((candidate) => candidate.name === choice.name)
    return tool ? { tool, forced: true } : null
  }
  const byWeather = tools.find((candidate) => /weather/i.test(String(candidate.name))) ?? tools[0]!
  if (choice.type === 'any') return { tool: byWeather, forced: true }
  if (endsWithToolResult(messages) || !wantsTool(prompt)) return null
  return { tool: byWeather, forced: false }
}

function pad(sequence: number): string {
  return String(sequence).padStart(8, '0')
}

/** Everything the answer to a Messages request will contain, before it is rendered. */
export function planMessage(body: Record<string, unknown>, model: string, options: SimulatorOptions, sequence: number): MessagePlan {
  const messages = body.messages as MessageIn[]
  const prompt = lastUserText(messages)
  let promptCharacters = textOf(body.system).length
  for (const message of messages) promptCharacters += textOf(message.content).length + 4
  const maxTokens = body.max_tokens as number
  const blocks: Block[] = []
  let outputTokens = 0

  const thinking = body.thinking as { type?: unknown } | undefined
  if (thinking?.type === 'enabled') {
    const pieces = ['Considering', ' the', ' request:', ` ${prompt.slice(0, 32)}`]
    blocks.push({ type: 'thinking', pieces, signature: `sig_sim${pad(sequence)}` })
    outputTokens += pieces.length
  }

  let stopReason: MessagePlan['stopReason'] = 'end_turn'
  let stopSequence: string | null = null
  const picked = pickTool(body, messages, prompt)
  if (picked) {
    const name = String(picked.tool.name)
    if (!picked.forced) {
      blocks.push({ type: 'text', pieces: [`I'll call ${name}.`] })
      outputTokens += 1
    }
    const input = toolArguments(picked.tool.input_schema, prompt)
    blocks.push({ type: 'tool_use', id: `toolu_sim${pad(sequence)}`, name, input })
    outputTokens += estimateTokens(name + JSON.stringify(input))
    stopReason = 'tool_use'
  } else {
    const stopped = applyStop(generateAnswer(prompt, options, maxTokens), asStopList(body.stop_sequences))
    blocks.push({ type: 'text', pieces: stopped.answer.pieces })
    outputTokens += stopped.answer.pieces.length
    if (stopped.stopSequence !== null) {
      stopReason = 'stop_sequence'
      stopSequence = stopped.stopSequence
    } else if (stopped.answer.truncated) stopReason = 'max_tokens'
  }

  return {
    id: `msg_sim${pad(sequence)}`,
    model,
    blocks,
    stopReason,
    stopSequence,
    usage: {
      input_tokens: Math.max(1, Math.ceil(promptCharacters / 4)),
      cache_creation_input_tokens: options.cacheWriteTokens,
      cache_read_input_tokens: options.cachedTokens,
      output_tokens: outputTokens,
    },
  }
}

function blockContent(block: Block): Record<string, unknown> {
  if (block.type === 'thinking') return { type: 'thinking', thinking: block.pieces.join(''), signature: block.signature }
  if (block.type === 'text') return { type: 'text', text: block.pieces.join('') }
  return { type: 'tool_use', id: block.id, name: block.name, input: block.input }
}

/** The non-streaming answer (`type: "message"`). */
export function messageJson(plan: MessagePlan): Record<string, unknown> {
  return {
    id: plan.id,
    type: 'message',
    role: 'assistant',
    model: plan.model,
    content: plan.blocks.map(blockContent),
    stop_reason: plan.stopReason,
    stop_sequence: plan.stopSequence,
    usage: { ...plan.usage, service_tier: 'standard' },
  }
}

/** A stream event; its `type` is also its SSE event name. */
export type MessageEvent = { type: string } & Record<string, unknown>

/**
 * The documented event sequence: message_start, then per block content_block_start, deltas,
 * content_block_stop (a ping after the first block starts), message_delta, message_stop.
 */
export function* messageEvents(plan: MessagePlan): Generator<MessageEvent> {
  yield {
    type: 'message_start',
    message: {
      id: plan.id,
      type: 'message',
      role: 'assistant',
      model: plan.model,
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: { ...plan.usage, output_tokens: 1, service_tier: 'standard' },
    },
  }
  for (let index = 0; index < plan.blocks.length; index++) {
    const block = plan.blocks[index]!
    if (block.type === 'thinking') {
      yield { type: 'content_block_start', index, content_block: { type: 'thinking', thinking: '', signature: '' } }
      for (const piece of block.pieces) yield { type: 'content_block_delta', index, delta: { type: 'thinking_delta', thinking: piece } }
      yield { type: 'content_block_delta', index, delta: { type: 'signature_delta', signature: block.signature } }
    } else if (block.type === 'text') {
      yield { type: 'content_block_start', index, content_block: { type: 'text', text: '' } }
      for (const piece of block.pieces) yield { type: 'content_block_delta', index, delta: { type: 'text_delta', text: piece } }
    } else {
      yield { type: 'content_block_start', index, content_block: { type: 'tool_use', id: block.id, name: block.name, input: {} } }
      yield { type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json: '' } }
      for (const piece of splitArguments(JSON.stringify(block.input))) {
        yield { type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json: piece } }
      }
    }
    if (index === 0) yield { type: 'ping' }
    yield { type: 'content_block_stop', index }
  }
  yield {
    type: 'message_delta',
    delta: { stop_reason: plan.stopReason, stop_sequence: plan.stopSequence },
    usage: { output_tokens: plan.usage.output_tokens },
  }
  yield { type: 'message_stop' }
}

export function sseFrame(event: MessageEvent): string {
  return `event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`
}

/** `POST /v1/messages/count_tokens`: the input tokens the same prompt would bill. */
export function countTokens(body: Record<string, unknown>): { input_tokens: number } {
  let characters = textOf(body.system).length
  const messages = Array.isArray(body.messages) ? (body.messages as MessageIn[]) : []
  for (const message of messages) characters += textOf(message.content).length + 4
  return { input_tokens: Math.max(1, Math.ceil(characters / 4)) }
}
