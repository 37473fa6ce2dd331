/**
 * The Anthropic Messages wire format: request validation, the message answer, its stream events and
 * error bodies. Shared by the Anthropic API simulator, Vertex AI `rawPredict` and Bedrock `invoke`,
 * which carry the same bodies under different paths, auth and (for Bedrock) stream framing.
 */
import type { ErrorAnswer, SimulatorOptions } from './base.ts'
import { asStopList, splitArguments, textOf } from './content.ts'
import { planReply, sequenceId } from './reply.ts'
import type { Reply, ReplyBlock, ReplyFinish, ToolMode } from './reply.ts'

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

/** The error body; the Anthropic API adds the answer's `request-id` as `request_id` (Vertex and Bedrock do not). */
export function anthropicErrorBody(status: number, message?: string, requestId?: string): { type: 'error'; error: { type: string; message: string }; request_id?: string } {
  const type = errorTypes[status] ?? (status >= 500 ? 'api_error' : 'invalid_request_error')
  const body = { type: 'error' as const, error: { type, message: message ?? errorMessages[type]! } }
  return requestId === undefined ? body : { ...body, request_id: requestId }
}

export function anthropicErrorAnswer(status: number, message?: string, requestId?: string): ErrorAnswer {
  return { body: anthropicErrorBody(status, message, requestId) }
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
  const message = conversationProblem(body.messages as MessageIn[])
  return message ? { status: 400, message } : null
}

interface ContentBlockIn {
  type?: unknown
  id?: unknown
  tool_use_id?: unknown
}

function blocksOf(message: MessageIn | undefined, type: string): ContentBlockIn[] {
  return Array.isArray(message?.content) ? (message.content as ContentBlockIn[]).filter((block) => block?.type === type) : []
}

/**
 * The conversation rules a translating gateway most easily breaks: only user/assistant roles (the
 * system prompt is a top-level field), and every `tool_use` answered by a `tool_result` with its id
 * in the very next message, and no `tool_result` without its `tool_use`.
 */
function conversationProblem(messages: MessageIn[]): string | null {
  for (const [index, message] of messages.entries()) {
    if (message?.role === 'system') {
      return `messages.${index}.role: Unexpected role "system". The Messages API accepts a top-level \`system\` parameter, not "system" as an input message role.`
    }
    if (message?.role !== 'user' && message?.role !== 'assistant') return `messages.${index}.role: Input should be 'user' or 'assistant'`
    const previousUses = new Set(blocksOf(messages[index - 1], 'tool_use').map((block) => block.id))
    const orphan = blocksOf(message, 'tool_result').find((block) => !previousUses.has(block.tool_use_id))
    if (orphan) {
      return `messages.${index}.content: unexpected \`tool_use_id\` found in \`tool_result\` blocks: ${String(orphan.tool_use_id)}. Each \`tool_result\` block must have a corresponding \`tool_use\` block in the previous message.`
    }
    const uses = blocksOf(message, 'tool_use')
    if (uses.length === 0 || index === messages.length - 1) continue
    const answered = new Set(blocksOf(messages[index + 1], 'tool_result').map((block) => block.tool_use_id))
    const unanswered = uses.filter((block) => !answered.has(block.id)).map((block) => String(block.id))
    if (unanswered.length > 0) {
      return `messages.${index + 1}: \`tool_use\` ids were found without \`tool_result\` blocks immediately after: ${unanswered.join(', ')}. Each \`tool_use\` block must have a corresponding \`tool_result\` block in the next message.`
    }
  }
  return null
}

export interface MessagePlan {
  id: string
  model: string
  reply: Reply
  /** The documented reasons; a scripted fault may end a message with any of the newer ones. */
  stopReason: 'end_turn' | 'max_tokens' | 'tool_use' | 'stop_sequence' | 'refusal' | 'pause_turn' | 'model_context_window_exceeded'
  /**
   * The thinking block comes back encrypted (`redacted_thinking`, as when safety systems flag the
   * reasoning): asked for with thinking on and a prompt that mentions "redacted".
   */
  redactedThinking: boolean
  usage: { input_tokens: number; cache_creation_input_tokens: number; cache_read_input_tokens: number; output_tokens: number }
}

interface MessageIn {
  role?: unknown
  content?: unknown
}

interface ToolIn {
  name?: unknown
  input_schema?: unknown
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

function toolMode(choice: unknown): ToolMode {
  const { type, name } = (choice ?? { type: 'auto' }) as { type?: unknown; name?: unknown }
  if (type === 'none') return 'none'
  if (type === 'any') return 'required'
  if (type === 'tool' && typeof name === 'string') return { name }
  return 'auto'
}

const stopReasons: Record<ReplyFinish, MessagePlan['stopReason']> = {
  stop: 'end_turn',
  length: 'max_tokens',
  tool_calls: 'tool_use',
  stop_sequence: 'stop_sequence',
}

/** Everything the answer to a Messages request will contain, before it is rendered. `stopReason`: a scripted one. */
export function planMessage(body: Record<string, unknown>, model: string, options: SimulatorOptions, sequence: number, stopReason?: string): MessagePlan {
  const messages = body.messages as MessageIn[]
  let promptCharacters = textOf(body.system).length
  for (const message of messages) promptCharacters += textOf(message.content).length + 4
  const tools = Array.isArray(body.tools) ? (body.tools as ToolIn[]) : []
  const reply = planReply(
    {
      prompt: lastUserText(messages),
      promptCharacters,
      tools: tools.filter((tool) => typeof tool?.name === 'string').map((tool) => ({ name: String(tool.name), schema: tool.input_schema })),
      toolMode: toolMode(body.tool_choice),
      afterToolResult: endsWithToolResult(messages),
      maxTokens: body.max_tokens as number,
      stop: asStopList(body.stop_sequences),
      thinking: (body.thinking as { type?: unknown } | undefined)?.type === 'enabled',
      preambleBeforeTool: true,
      parallelToolCalls: (body.tool_choice as { disable_parallel_tool_use?: unknown } | undefined)?.disable_parallel_tool_use !== true,
    },
    options,
    { toolCallId: sequenceId('toolu_sim', sequence), signature: sequenceId('sig_sim', sequence) },
  )
  return {
    id: sequenceId('msg_sim', sequence),
    model,
    reply,
    stopReason: (stopReason as MessagePlan['stopReason'] | undefined) ?? stopReasons[reply.finish],
    redactedThinking: /\bredacted\b/i.test(lastUserText(messages)),
    usage: {
      input_tokens: reply.promptTokens,
      cache_creation_input_tokens: options.cacheWriteTokens,
      cache_read_input_tokens: options.cachedTokens,
      output_tokens: reply.outputTokens,
    },
  }
}

/** An opaque stand-in for the encrypted reasoning, stable per signature. */
function redactedData(signature: string): string {
  return Buffer.from(`redacted:${signature}`).toString('base64')
}

function blockContent(block: ReplyBlock, plan: MessagePlan): Record<string, unknown> {
  if (block.type === 'thinking' && plan.redactedThinking) return { type: 'redacted_thinking', data: redactedData(block.signature) }
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
    content: plan.reply.blocks.map((block) => blockContent(block, plan)),
    stop_reason: plan.stopReason,
    stop_sequence: plan.reply.stopSequence,
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
  const blocks = plan.reply.blocks
  for (let index = 0; index < blocks.length; index++) {
    const block = blocks[index]!
    if (block.type === 'thinking' && plan.redactedThinking) {
      // A redacted block arrives whole in its start event; no deltas follow.
      yield { type: 'content_block_start', index, content_block: blockContent(block, plan) }
    } else if (block.type === 'thinking') {
      yield { type: 'content_block_start', index, content_block: { type: 'thinking', thinking: '', signature: '' } }
      for (const piece of block.pieces) yield { type: 'content_block_delta', index, delta: { type: 'thinking_delta', thinking: piece } }
      yield { type: 'content_block_delta', index, delta: { type: 'signature_delta', signature: block.signature } }
    } else if (block.type === 'text') {
      yield { type: 'content_block_start', index, content_block: { type: 'text', text: '' } }
      for (const piece of block.pieces) yield { type: 'content_block_delta', index, delta: { type: 'text_delta', text: piece } }
    } else {
      yield { type: 'content_block_start', index, content_block: { type: 'tool_use', id: block.id, name: block.name, input: {} } }
      yield { type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json: '' } }
      for (const piece of splitArguments(block.arguments)) {
        yield { type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json: piece } }
      }
    }
    if (index === 0) yield { type: 'ping' }
    yield { type: 'content_block_stop', index }
  }
  // The usage here is cumulative and complete (input and cache counts included, as the API now
  // sends them): a client adding it to message_start's counts would count the prompt twice.
  yield {
    type: 'message_delta',
    delta: { stop_reason: plan.stopReason, stop_sequence: plan.reply.stopSequence },
    usage: { ...plan.usage },
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
