/**
 * The OpenAI wire format (chat completions, legacy completions, embeddings, models, errors), shared
 * by the OpenAI, Azure OpenAI and Mistral simulators, which differ only in paths and auth.
 */
import type { ErrorAnswer, Exchange, SimulatorOptions, StreamFrame } from './base.ts'
import { applyStop, asStopList, embeddingVector, estimateTokens, generateAnswer, splitArguments, textOf, vectorToBase64, vectorToNumbers } from './content.ts'
import type { Answer } from './content.ts'
import { planReply, sequenceId } from './reply.ts'
import type { Reply, ReplyBlock, ReplyFinish, ToolMode } from './reply.ts'
import { jsonObject } from './router.ts'

const systemFingerprint = 'fp_simulator'

const errorDefaults: Record<number, { type: string; code: string | null; message: string }> = {
  400: { type: 'invalid_request_error', code: null, message: 'Invalid request.' },
  401: { type: 'invalid_request_error', code: 'invalid_api_key', message: 'Incorrect API key provided.' },
  403: { type: 'invalid_request_error', code: 'unsupported_country_region_territory', message: 'Country, region, or territory not supported.' },
  404: { type: 'invalid_request_error', code: 'model_not_found', message: 'The model does not exist or you do not have access to it.' },
  408: { type: 'server_error', code: null, message: 'Request timed out.' },
  409: { type: 'invalid_request_error', code: null, message: 'Conflict.' },
  422: { type: 'invalid_request_error', code: null, message: 'Unprocessable entity.' },
  429: {
    type: 'requests',
    code: 'rate_limit_exceeded',
    message: 'Rate limit reached for requests per min (RPM): Limit 3, Used 3, Requested 1. Please try again in 20s.',
  },
  500: { type: 'server_error', code: null, message: 'The server had an error while processing your request. Sorry about that!' },
  502: { type: 'server_error', code: null, message: 'Bad gateway.' },
  503: { type: 'server_error', code: null, message: 'The engine is currently overloaded, please try again later.' },
  504: { type: 'server_error', code: null, message: 'Gateway timeout.' },
}

export function openaiErrorBody(status: number, message?: string, code?: string | null, param: string | null = null): unknown {
  const fallback = errorDefaults[status] ?? (status >= 500 ? errorDefaults[500]! : errorDefaults[400]!)
  return { error: { message: message ?? fallback.message, type: fallback.type, param, code: code === undefined ? fallback.code : code } }
}

export function openaiErrorAnswer(status: number, message?: string): ErrorAnswer {
  return { body: openaiErrorBody(status, message) }
}

/** OpenAI sends an in-band error as a plain `data:` event and closes the stream. */
export function openaiStreamError(status: number, message?: string): StreamFrame {
  return `data: ${JSON.stringify(openaiErrorBody(status, message))}\n\n`
}

function invalid(exchange: Exchange, message: string, param: string | null, code: string | null = null): void {
  exchange.errorBody(400, openaiErrorBody(400, message, code, param))
}

/** 404 `model_not_found` when the simulator has a model list and `model` is not on it. */
export function unknownModel(exchange: Exchange, model: string): boolean {
  const known = exchange.options.models
  if (!known || known.includes(model)) return false
  exchange.errorBody(404, openaiErrorBody(404, `The model \`${model}\` does not exist or you do not have access to it.`, 'model_not_found'))
  return true
}

interface Usage {
  prompt_tokens: number
  completion_tokens: number
  total_tokens: number
  prompt_tokens_details: { cached_tokens: number; audio_tokens: number }
  completion_tokens_details: { reasoning_tokens: number; audio_tokens: number; accepted_prediction_tokens: number; rejected_prediction_tokens: number }
}

function usageOf(promptTokens: number, answerTokens: number, options: SimulatorOptions): Usage {
  const reasoning = options.reasoningTokens
  const completion = answerTokens + reasoning
  return {
    prompt_tokens: promptTokens,
    completion_tokens: completion,
    total_tokens: promptTokens + completion,
    prompt_tokens_details: { cached_tokens: Math.min(options.cachedTokens, promptTokens), audio_tokens: 0 },
    completion_tokens_details: { reasoning_tokens: reasoning, audio_tokens: 0, accepted_prediction_tokens: 0, rejected_prediction_tokens: 0 },
  }
}

interface ChatMessageIn {
  role?: unknown
  content?: unknown
}

interface ToolIn {
  type?: unknown
  function?: { name?: unknown; parameters?: unknown }
}

function toolMode(choice: unknown): ToolMode {
  if (choice === 'none') return 'none'
  if (choice === 'required') return 'required'
  const forced = (choice as { function?: { name?: unknown } } | null | undefined)?.function?.name
  return typeof forced === 'string' ? { name: forced } : 'auto'
}

function lastUserText(messages: ChatMessageIn[]): string {
  for (let i = messages.length - 1; i >= 0; i--) {
    if (messages[i]?.role === 'user') return textOf(messages[i]!.content)
  }
  return ''
}

function planChat(body: Record<string, unknown>, messages: ChatMessageIn[], options: SimulatorOptions, sequence: number): Reply {
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
    },
    options,
    { toolCallId: sequenceId('call_sim', sequence), signature: '' },
  )
}

const finishReasons: Record<ReplyFinish, string> = { stop: 'stop', stop_sequence: 'stop', length: 'length', tool_calls: 'tool_calls' }

function toolCallOf(reply: Reply): Extract<ReplyBlock, { type: 'tool_call' }> | undefined {
  return reply.blocks.find((block): block is Extract<ReplyBlock, { type: 'tool_call' }> => block.type === 'tool_call')
}

function textPieces(reply: Reply): string[] {
  return reply.blocks.flatMap((block) => (block.type === 'text' ? block.pieces : []))
}

export interface ChatIds {
  id: string
  created: number
}

export function chatIds(exchange: Exchange): ChatIds {
  return { id: `chatcmpl-sim${String(exchange.sequence).padStart(8, '0')}`, created: Math.floor(Date.now() / 1000) }
}

/** POST chat/completions: validates like OpenAI, then answers JSON or an SSE stream. */
export async function chatCompletions(exchange: Exchange, responseHeaders?: Record<string, string>): Promise<void> {
  const body = jsonObject(exchange.request.body)
  if (!body) return invalid(exchange, 'We could not parse the JSON body of your request.', null)
  if (typeof body.model !== 'string' || body.model === '') return invalid(exchange, 'you must provide a model parameter', 'model')
  if (!Array.isArray(body.messages) || body.messages.length === 0) {
    return invalid(exchange, "Invalid 'messages': empty array. Expected an array with minimum length 1, but got an empty array instead.", 'messages', 'empty_array')
  }
  if (unknownModel(exchange, body.model)) return
  const n = typeof body.n === 'number' ? body.n : 1
  if (n < 1 || n > 128) return invalid(exchange, `Invalid 'n': integer below minimum value. Expected a value >= 1, but got ${n} instead.`, 'n')
  const messages = body.messages as ChatMessageIn[]
  const ids = chatIds(exchange)
  const reply = planChat(body, messages, exchange.options, exchange.sequence)
  const usage = usageOf(reply.promptTokens, reply.outputTokens * n, exchange.options)
  const model = body.model
  if (body.stream === true) {
    const includeUsage = (body.stream_options as { include_usage?: unknown } | undefined)?.include_usage === true
    await exchange.stream({
      contentType: 'text/event-stream; charset=utf-8',
      headers: responseHeaders,
      frames: chatStreamFrames({ ids, model, reply, n, usage: includeUsage ? usage : null }),
    })
    return
  }
  const choices = []
  for (let index = 0; index < n; index++) choices.push(chatChoice(index, reply))
  exchange.json(
    200,
    { id: ids.id, object: 'chat.completion', created: ids.created, model, choices, usage, service_tier: 'default', system_fingerprint: systemFingerprint },
    responseHeaders,
  )
}

function chatChoice(index: number, reply: Reply): unknown {
  const call = toolCallOf(reply)
  const message = call
    ? {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: call.id, type: 'function', function: { name: call.name, arguments: call.arguments } }],
        refusal: null,
        annotations: [],
      }
    : { role: 'assistant', content: textPieces(reply).join(''), refusal: null, annotations: [] }
  return { index, message, logprobs: null, finish_reason: finishReasons[reply.finish] }
}

interface ChatStreamInput {
  ids: ChatIds
  model: string
  reply: Reply
  n: number
  /** Present when `stream_options.include_usage` is true: every chunk then carries `usage: null` and a last chunk the totals. */
  usage: Usage | null
}

/**
 * The chunks OpenAI streams: a role chunk per choice, content (or tool-call argument) deltas, a
 * finish chunk per choice, the usage chunk with `choices: []` when asked for, then `[DONE]`.
 */
function* chatStreamFrames(input: ChatStreamInput): Generator<StreamFrame> {
  const { ids, model, reply, n, usage } = input
  const withUsage = usage !== null
  const chunk = (choices: unknown[]): string => {
    const payload: Record<string, unknown> = {
      id: ids.id,
      object: 'chat.completion.chunk',
      created: ids.created,
      model,
      service_tier: 'default',
      system_fingerprint: systemFingerprint,
      choices,
    }
    if (withUsage) payload.usage = null
    return `data: ${JSON.stringify(payload)}\n\n`
  }
  const choice = (index: number, delta: unknown, finishReason: string | null = null): unknown => ({ index, delta, logprobs: null, finish_reason: finishReason })

  const call = toolCallOf(reply)
  if (call) {
    for (let index = 0; index < n; index++) {
      yield chunk([
        choice(index, {
          role: 'assistant',
          content: null,
          tool_calls: [{ index: 0, id: call.id, type: 'function', function: { name: call.name, arguments: '' } }],
          refusal: null,
        }),
      ])
    }
    for (const piece of splitArguments(call.arguments)) {
      for (let index = 0; index < n; index++) yield chunk([choice(index, { tool_calls: [{ index: 0, function: { arguments: piece } }] })])
    }
    for (let index = 0; index < n; index++) yield chunk([choice(index, {}, 'tool_calls')])
  } else {
    for (let index = 0; index < n; index++) yield chunk([choice(index, { role: 'assistant', content: '', refusal: null })])
    for (const piece of textPieces(reply)) {
      for (let index = 0; index < n; index++) yield chunk([choice(index, { content: piece })])
    }
    for (let index = 0; index < n; index++) yield chunk([choice(index, {}, finishReasons[reply.finish])])
  }
  if (usage) {
    yield `data: ${JSON.stringify({
      id: ids.id,
      object: 'chat.completion.chunk',
      created: ids.created,
      model,
      service_tier: 'default',
      system_fingerprint: systemFingerprint,
      choices: [],
      usage,
    })}\n\n`
  }
  yield 'data: [DONE]\n\n'
}

/** The prompts of a legacy completions request: a string, strings, tokens, or token lists. */
function promptsOf(prompt: unknown): string[] | null {
  if (typeof prompt === 'string') return [prompt]
  if (!Array.isArray(prompt) || prompt.length === 0) return null
  if (prompt.every((item) => typeof item === 'string')) return prompt as string[]
  if (prompt.every((item) => typeof item === 'number')) return [(prompt as number[]).join(' ')]
  if (prompt.every((item) => Array.isArray(item))) return (prompt as number[][]).map((tokens) => tokens.join(' '))
  return null
}

/** POST completions (legacy text completions). */
export async function textCompletions(exchange: Exchange, responseHeaders?: Record<string, string>): Promise<void> {
  const body = jsonObject(exchange.request.body)
  if (!body) return invalid(exchange, 'We could not parse the JSON body of your request.', null)
  if (typeof body.model !== 'string' || body.model === '') return invalid(exchange, 'you must provide a model parameter', 'model')
  const prompts = promptsOf(body.prompt ?? '<|endoftext|>')
  if (!prompts) return invalid(exchange, "Invalid 'prompt': expected a string, an array of strings, or token arrays.", 'prompt')
  if (unknownModel(exchange, body.model)) return
  const n = typeof body.n === 'number' ? body.n : 1
  const maxTokens = typeof body.max_tokens === 'number' ? body.max_tokens : 16
  const echo = body.echo === true
  const stop = asStopList(body.stop)
  const id = `cmpl-sim${String(exchange.sequence).padStart(8, '0')}`
  const created = Math.floor(Date.now() / 1000)
  const answers = prompts.map((prompt) => applyStop(generateAnswer(prompt, exchange.options, maxTokens), stop).answer)
  let promptTokens = 0
  for (const prompt of prompts) promptTokens += estimateTokens(prompt)
  let answerTokens = 0
  for (const answer of answers) answerTokens += answer.pieces.length * n
  const usage = usageOf(promptTokens, answerTokens, exchange.options)
  const model = body.model
  const finishOf = (answer: Answer): string => (answer.truncated ? 'length' : 'stop')

  if (body.stream === true) {
    const includeUsage = (body.stream_options as { include_usage?: unknown } | undefined)?.include_usage === true
    const frame = (choices: unknown[], extra?: Record<string, unknown>): string =>
      `data: ${JSON.stringify({ id, object: 'text_completion', created, model, choices, system_fingerprint: systemFingerprint, ...extra })}\n\n`
    const usageField = includeUsage ? { usage: null } : undefined
    function* frames(): Generator<StreamFrame> {
      for (let p = 0; p < prompts!.length; p++) {
        const answer = answers[p]!
        for (let i = 0; i < n; i++) {
          const index = p * n + i
          if (echo) yield frame([{ text: prompts![p], index, logprobs: null, finish_reason: null }], usageField)
          for (const piece of answer.pieces) yield frame([{ text: piece, index, logprobs: null, finish_reason: null }], usageField)
          yield frame([{ text: '', index, logprobs: null, finish_reason: finishOf(answer) }], usageField)
        }
      }
      if (includeUsage) yield frame([], { usage })
      yield 'data: [DONE]\n\n'
    }
    await exchange.stream({ contentType: 'text/event-stream; charset=utf-8', headers: responseHeaders, frames: frames() })
    return
  }
  const choices = []
  for (let p = 0; p < prompts.length; p++) {
    const answer = answers[p]!
    for (let i = 0; i < n; i++) {
      choices.push({ text: (echo ? prompts[p] : '') + answer.text, index: p * n + i, logprobs: null, finish_reason: finishOf(answer) })
    }
  }
  exchange.json(200, { id, object: 'text_completion', created, model, choices, usage, system_fingerprint: systemFingerprint }, responseHeaders)
}

/** Default vector sizes of the OpenAI embedding models. */
function defaultDimensions(model: string): number {
  if (model.includes('3-large')) return 3072
  if (model.includes('mistral-embed')) return 1024
  return 1536
}

/** The inputs of an embeddings request as texts (token arrays are joined), or null when invalid. */
export function embeddingInputs(input: unknown): string[] | null {
  if (typeof input === 'string') return input === '' ? null : [input]
  return promptsOf(input)
}

/** POST embeddings: deterministic unit vectors, float or base64 (little-endian float32). */
export function embeddings(exchange: Exchange, responseHeaders?: Record<string, string>): void {
  const body = jsonObject(exchange.request.body)
  if (!body) return invalid(exchange, 'We could not parse the JSON body of your request.', null)
  if (typeof body.model !== 'string' || body.model === '') return invalid(exchange, 'you must provide a model parameter', 'model')
  const inputs = embeddingInputs(body.input)
  if (!inputs) return invalid(exchange, "'$.input' is invalid. Please check the API reference: https://platform.openai.com/docs/api-reference.", 'input')
  if (unknownModel(exchange, body.model)) return
  const model = body.model
  let dimensions = defaultDimensions(model)
  if (body.dimensions !== undefined) {
    if (!model.startsWith('text-embedding-3')) return invalid(exchange, 'This model does not support specifying dimensions.', 'dimensions')
    if (typeof body.dimensions !== 'number' || body.dimensions < 1 || body.dimensions > dimensions) {
      return invalid(exchange, `Invalid 'dimensions': expected an integer between 1 and ${dimensions}.`, 'dimensions')
    }
    dimensions = body.dimensions
  }
  const encoding = body.encoding_format ?? 'float'
  if (encoding !== 'float' && encoding !== 'base64') {
    return invalid(exchange, `Invalid 'encoding_format': expected 'float' or 'base64', got '${String(encoding)}'.`, 'encoding_format')
  }
  let promptTokens = 0
  const data = inputs.map((text, index) => {
    promptTokens += estimateTokens(text)
    const vector = embeddingVector(text, dimensions)
    return { object: 'embedding', index, embedding: encoding === 'base64' ? vectorToBase64(vector) : vectorToNumbers(vector) }
  })
  exchange.json(200, { object: 'list', data, model, usage: { prompt_tokens: promptTokens, total_tokens: promptTokens } }, responseHeaders)
}

export const defaultOpenAIModels = ['gpt-4o', 'gpt-4o-mini', 'gpt-4.1', 'gpt-4.1-mini', 'o3-mini', 'gpt-3.5-turbo-instruct', 'text-embedding-3-small', 'text-embedding-3-large']

const modelCreated = 1_715_367_049

export function modelObject(id: string, ownedBy: string): unknown {
  return { id, object: 'model', created: modelCreated, owned_by: ownedBy }
}

export function listModels(exchange: Exchange, ownedBy: string): void {
  const ids = exchange.options.models ?? defaultOpenAIModels
  exchange.json(200, { object: 'list', data: ids.map((id) => modelObject(id, ownedBy)) })
}

export function retrieveModel(exchange: Exchange, id: string, ownedBy: string): void {
  const ids = exchange.options.models ?? defaultOpenAIModels
  if (!ids.includes(id)) {
    exchange.errorBody(404, openaiErrorBody(404, `The model '${id}' does not exist`, 'model_not_found', 'model'))
    return
  }
  exchange.json(200, modelObject(id, ownedBy))
}
