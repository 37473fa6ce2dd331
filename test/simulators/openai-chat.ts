/**
 * `POST chat/completions` in the OpenAI wire format, with the variations of the services that
 * copy it (Azure OpenAI's content-filter annotations, Mistral's usage and whole tool calls)
 * expressed as a `ChatDialect` rather than as copies of this module.
 */
import type { Exchange, SimulatorOptions, StreamFrame } from './base.ts'
import { asStopList, splitArguments, textOf } from './content.ts'
import { invalid, systemFingerprint, unknownModel, usageOf } from './openai-wire.ts'
import { audioDeltas, audioRequestOf, isAudioProblem, messageAudio, speak, withAudioUsage } from './openai-audio-chat.ts'
import type { SpokenAnswer } from './openai-audio-chat.ts'
import type { WireDialect } from './openai-wire.ts'
import { planReply, sequenceId } from './reply.ts'
import type { Reply, ReplyBlock, ReplyFinish, ToolMode } from './reply.ts'
import { jsonObject } from './router.ts'

export interface ChatDialect extends WireDialect {
  completionId(sequence: number): string
  toolCallId(sequence: number): string
  /** The usage object for `outputTokens` over all choices. */
  usage(reply: Reply, outputTokens: number, options: SimulatorOptions): Record<string, unknown>
  /**
   * `include_usage`: a last chunk with `choices: []` when `stream_options.include_usage` is true
   * (OpenAI, Azure). `finish_chunk`: always, on the chunk that carries the finish reason (Mistral).
   */
  streamUsage: 'include_usage' | 'finish_chunk'
  /** OpenAI and Azure refuse `stream_options` on a request that does not stream. */
  streamOptionsNeedStream: boolean
  /** OpenAI streams a tool call's name first and its arguments in pieces; Mistral sends it whole. */
  toolArgumentsInPieces: boolean
  /** Fields added to the response and to every chunk (e.g. `system_fingerprint`). */
  responseFields: Record<string, unknown>
  /** Fields added to each answer choice (Azure `content_filter_results`). */
  choiceFields?: Record<string, unknown>
  /** Chunks sent before the first choice chunk (Azure's `prompt_filter_results` chunk). */
  preludeChunks?: (created: number) => unknown[]
  /** Fields added to the non-streaming response only (Azure `prompt_filter_results`). */
  completionFields?: Record<string, unknown>
}

interface ChatMessageIn {
  role?: unknown
  content?: unknown
  tool_calls?: unknown
  tool_call_id?: unknown
}

/**
 * OpenAI's tool-turn rules, which a translating gateway easily breaks: an assistant message with
 * `tool_calls` is followed by one `tool` message per call id, and a `tool` message answers a call.
 */
const unansweredCalls = (ids: Set<string>): string =>
  `An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: ${[...ids].join(', ')}`

function toolTurnProblem(messages: ChatMessageIn[]): { message: string; param: string } | null {
  let pending = new Set<string>()
  let callIds = new Set<string>()
  for (const [index, message] of messages.entries()) {
    if (message?.role === 'tool') {
      if (!callIds.has(String(message.tool_call_id))) {
        return { message: "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.", param: `messages.[${index}].role` }
      }
      pending.delete(String(message.tool_call_id))
      continue
    }
    if (pending.size > 0) {
      return {
        message: unansweredCalls(pending),
        param: `messages.[${index}].role`,
      }
    }
    const calls = message?.role === 'assistant' && Array.isArray(message.tool_calls) ? (message.tool_calls as Array<{ id?: unknown }>) : []
    callIds = new Set(calls.map((call) => String(call?.id)))
    pending = new Set(callIds)
  }
  if (pending.size > 0) {
    return {
      message: unansweredCalls(pending),
      param: `messages.[${messages.length - 1}].role`,
    }
  }
  return null
}

interface ToolIn {
  type?: unknown
  function?: { name?: unknown; parameters?: unknown }
}

function toolMode(choice: unknown): ToolMode {
  if (choice === 'none') return 'none'
  // `any` is Mistral's spelling of `required`.
  if (choice === 'required' || choice === 'any') return 'required'
  const forced = (choice as { function?: { name?: unknown } } | null | undefined)?.function?.name
  return typeof forced === 'string' ? { name: forced } : 'auto'
}

export function lastUserText(messages: ChatMessageIn[]): string {
  for (let i = messages.length - 1; i >= 0; i--) {
    if (messages[i]?.role === 'user') return textOf(messages[i]!.content)
  }
  return ''
}

function planChat(body: Record<string, unknown>, messages: ChatMessageIn[], options: SimulatorOptions, toolCallId: string): Reply {
  let promptCharacters = 0
  for (const message of messages) promptCharacters += textOf(message?.content).length + 4
  const tools = Array.isArray(body.tools) ? (body.tools as ToolIn[]).filter((tool) => tool?.type === 'function' && typeof tool.function?.name === 'string') : []
  const maxTokens = body.max_completion_tokens ?? body.max_tokens
  return planReply(
    {
      prompt: lastUserText(messages),
      promptCharacters,
      tools: tools.map((tool) => ({ name: String(tool.function!.name), schema: tool.function!.parameters })),
      toolMode: toolMode(body.tool_choice),
      afterToolResult: messages.at(-1)?.role === 'tool',
      maxTokens: typeof maxTokens === 'number' ? maxTokens : null,
      stop: asStopList(body.stop),
      thinking: false,
      preambleBeforeTool: false,
      parallelToolCalls: body.parallel_tool_calls !== false,
      json: jsonMode(body.response_format),
    },
    options,
    { toolCallId, signature: '' },
  )
}

/** `response_format` `json_object` or `json_schema` (whose schema is filled in). */
export function jsonMode(format: unknown): { schema?: unknown } | undefined {
  const { type, json_schema: jsonSchema } = (format ?? {}) as { type?: unknown; json_schema?: { schema?: unknown } }
  if (type === 'json_object') return {}
  if (type === 'json_schema') return { schema: jsonSchema?.schema }
  return undefined
}

const finishReasons: Record<ReplyFinish, string> = { stop: 'stop', stop_sequence: 'stop', length: 'length', tool_calls: 'tool_calls' }

type ToolCallBlock = Extract<ReplyBlock, { type: 'tool_call' }>

function toolCallsOf(reply: Reply): ToolCallBlock[] {
  return reply.blocks.filter((block): block is ToolCallBlock => block.type === 'tool_call')
}

function wholeCall(call: ToolCallBlock, index?: number): Record<string, unknown> {
  const rendered = { id: call.id, type: 'function', function: { name: call.name, arguments: call.arguments } }
  return index === undefined ? rendered : { index, ...rendered }
}

function textPieces(reply: Reply): string[] {
  return reply.blocks.flatMap((block) => (block.type === 'text' ? block.pieces : []))
}

/** OpenAI usage with `prompt_tokens_details` and `completion_tokens_details`. */
export function detailedUsage(reply: Reply, outputTokens: number, options: SimulatorOptions): Record<string, unknown> {
  return { ...usageOf(reply.promptTokens, outputTokens, options) }
}

export const openaiChatDialect: Omit<ChatDialect, 'errorBody' | 'headers'> = {
  completionId: (sequence) => sequenceId('chatcmpl-sim', sequence),
  toolCallId: (sequence) => sequenceId('call_sim', sequence),
  usage: detailedUsage,
  streamUsage: 'include_usage',
  streamOptionsNeedStream: true,
  toolArgumentsInPieces: true,
  responseFields: { service_tier: 'default', system_fingerprint: systemFingerprint },
}

/**
 * Validates like OpenAI, then answers JSON or an SSE stream. `pathModel` is the model named by the
 * path (an Azure deployment): the body then needs no `model`.
 */
export async function chatCompletions(exchange: Exchange, dialect: ChatDialect, pathModel?: string): Promise<void> {
  const body = jsonObject(exchange.request.body)
  if (!body) return invalid(exchange, dialect, 'We could not parse the JSON body of your request.', null)
  const model = pathModel ?? body.model
  if (typeof model !== 'string' || model === '') return invalid(exchange, dialect, 'you must provide a model parameter', 'model')
  if (!Array.isArray(body.messages) || body.messages.length === 0) {
    return invalid(exchange, dialect, "Invalid 'messages': empty array. Expected an array with minimum length 1, but got an empty array instead.", 'messages', 'empty_array')
  }
  if (pathModel === undefined && unknownModel(exchange, dialect, model)) return
  const n = typeof body.n === 'number' ? body.n : 1
  if (!Number.isInteger(n) || n < 1 || n > 128) return invalid(exchange, dialect, `Invalid 'n': expected an integer between 1 and 128, got ${n}.`, 'n')
  if (dialect.streamOptionsNeedStream && body.stream_options != null && body.stream !== true) {
    return invalid(exchange, dialect, "The 'stream_options' parameter is only allowed when 'stream' is enabled.", 'stream_options', 'invalid_value')
  }
  const messages = body.messages as ChatMessageIn[]
  const toolProblem = toolTurnProblem(messages)
  if (toolProblem) return invalid(exchange, dialect, toolProblem.message, toolProblem.param)
  const audio = audioRequestOf(body, model, messages)
  if (isAudioProblem(audio)) return invalid(exchange, dialect, audio.problem, audio.param)
  const reply = planChat(body, messages, exchange.options, dialect.toolCallId(exchange.sequence))
  const created = Math.floor(Date.now() / 1000)
  // A tool call is never spoken; a text answer is, when the request asked for audio.
  const spoken = audio.outputFormat !== null && toolCallsOf(reply).length === 0 ? speak(textPieces(reply), audio.outputFormat, exchange.sequence, created) : null
  const usage = dialect.usage(reply, reply.outputTokens * n, exchange.options)
  const response: ChatResponseInput = {
    id: dialect.completionId(exchange.sequence),
    created,
    model,
    reply,
    n,
    usage: audio.inputTokens > 0 || spoken !== null ? withAudioUsage(usage, audio.inputTokens, (spoken?.tokens ?? 0) * n) : usage,
    dialect,
    topLogprobs: body.logprobs === true ? (typeof body.top_logprobs === 'number' ? body.top_logprobs : 0) : null,
    spoken,
  }
  if (body.stream === true) {
    const includeUsage = (body.stream_options as { include_usage?: unknown } | undefined)?.include_usage === true
    await exchange.stream({ contentType: 'text/event-stream; charset=utf-8', headers: dialect.headers(exchange), frames: chatStreamFrames(response, includeUsage) })
    return
  }
  const choices = []
  for (let index = 0; index < n; index++) choices.push(chatChoice(index, response))
  exchange.json(
    200,
    {
      id: response.id,
      object: 'chat.completion',
      created: response.created,
      model: response.model,
      choices,
      usage: response.usage,
      ...dialect.responseFields,
      ...dialect.completionFields,
    },
    dialect.headers(exchange),
  )
}

function chatChoice(index: number, { reply, dialect, topLogprobs, spoken }: ChatResponseInput): unknown {
  const calls = toolCallsOf(reply)
  const message =
    calls.length > 0
      ? { role: 'assistant', content: null, tool_calls: calls.map((call) => wholeCall(call)), refusal: null, annotations: [] }
      : spoken !== null
        ? { role: 'assistant', content: null, refusal: null, audio: messageAudio(spoken), annotations: [] }
        : { role: 'assistant', content: textPieces(reply).join(''), refusal: null, annotations: [] }
  const logprobs = topLogprobs === null || calls.length > 0 ? null : { content: textPieces(reply).map((piece, position) => tokenLogprob(piece, position, topLogprobs)), refusal: null }
  return { index, message, logprobs, finish_reason: finishReasons[reply.finish], ...dialect.choiceFields }
}

/** A made-up but well-formed log probability for one answer piece, with `top` alternatives. */
function tokenLogprob(token: string, position: number, top: number): unknown {
  const logprob = -0.01 * ((position % 9) + 1)
  const entry = (text: string, value: number): { token: string; logprob: number; bytes: number[] } => ({ token: text, logprob: value, bytes: [...Buffer.from(text)] })
  const alternatives = []
  for (let rank = 0; rank < top; rank++) alternatives.push(rank === 0 ? entry(token, logprob) : entry(`${token.trim()}${rank}`, logprob - rank))
  return { ...entry(token, logprob), top_logprobs: alternatives }
}

interface ChatResponseInput {
  id: string
  created: number
  model: string
  reply: Reply
  n: number
  usage: Record<string, unknown>
  dialect: ChatDialect
  /** `top_logprobs` when `logprobs` is on, else null. */
  topLogprobs: number | null
  /** The answer spoken (audio output), else null. */
  spoken: SpokenAnswer | null
}

/**
 * The chunks of a streamed answer: a role chunk per choice, content (or tool-call) deltas, a
 * finish chunk per choice, usage where the dialect puts it, then `[DONE]`.
 */
function* chatStreamFrames(input: ChatResponseInput, includeUsage: boolean): Generator<StreamFrame> {
  const { id, created, model, reply, n, usage, dialect, topLogprobs, spoken } = input
  const usageChunk = dialect.streamUsage === 'include_usage' && includeUsage
  const frame = (payload: unknown): string => `data: ${JSON.stringify(payload)}\n\n`
  // Every chunk shares its envelope: serialise it once and splice each chunk's choices in.
  const envelope = JSON.stringify({ id, object: 'chat.completion.chunk', created, model, ...dialect.responseFields })
  const head = `data: ${envelope.slice(0, -1)},"choices":[`
  // With include_usage OpenAI sends `usage: null` on every chunk but the last.
  const tail = usageChunk ? '],"usage":null}\n\n' : ']}\n\n'
  const chunk = (choices: unknown[], extra?: Record<string, unknown>): string => {
    if (extra) return frame({ ...JSON.parse(envelope), choices, ...extra })
    let body = ''
    for (const item of choices) body += (body === '' ? '' : ',') + JSON.stringify(item)
    return head + body + tail
  }
  const choice = (index: number, delta: unknown, finishReason: string | null = null, withFilters = true, logprobs: unknown = null): unknown => ({
    index,
    delta,
    logprobs,
    finish_reason: finishReason,
    ...(withFilters ? dialect.choiceFields : undefined),
  })
  const eachChoice = function* (delta: unknown, finishReason: string | null = null, withFilters = true, logprobs: unknown = null): Generator<StreamFrame> {
    for (let index = 0; index < n; index++) yield chunk([choice(index, delta, finishReason, withFilters, logprobs)])
  }

  for (const prelude of dialect.preludeChunks?.(created) ?? []) yield frame(prelude)
  const calls = toolCallsOf(reply)
  if (calls.length > 0 && dialect.toolArgumentsInPieces) {
    // Each call opens with its index, id and name (the first on the role chunk), then its arguments in pieces.
    for (const [index, call] of calls.entries()) {
      const opening = { index, id: call.id, type: 'function', function: { name: call.name, arguments: '' } }
      if (index === 0) yield* eachChoice({ role: 'assistant', content: null, tool_calls: [opening], refusal: null }, null, false)
      else yield* eachChoice({ tool_calls: [opening] })
      for (const piece of splitArguments(call.arguments)) yield* eachChoice({ tool_calls: [{ index, function: { arguments: piece } }] })
    }
  } else if (calls.length > 0) {
    yield* eachChoice({ role: 'assistant', content: '' }, null, false)
    yield* eachChoice({ tool_calls: calls.map((call, index) => wholeCall(call, index)) })
  } else if (spoken !== null) {
    yield* eachChoice({ role: 'assistant', content: null, refusal: null }, null, false)
    for (const audio of audioDeltas(spoken)) yield* eachChoice({ audio })
  } else {
    yield* eachChoice({ role: 'assistant', content: '', refusal: null }, null, false)
    for (const [position, piece] of textPieces(reply).entries()) {
      const logprobs = topLogprobs === null ? null : { content: [tokenLogprob(piece, position, topLogprobs)], refusal: null }
      yield* eachChoice({ content: piece }, null, true, logprobs)
    }
  }
  const finishReason = finishReasons[reply.finish]
  if (dialect.streamUsage === 'finish_chunk') {
    for (let index = 0; index < n; index++) yield chunk([choice(index, {}, finishReason)], index === n - 1 ? { usage } : undefined)
  } else {
    yield* eachChoice({}, finishReason)
  }
  if (usageChunk) yield frame({ id, object: 'chat.completion.chunk', created, model, ...dialect.responseFields, choices: [], usage })
  yield 'data: [DONE]\n\n'
}
