/**
 * Cohere v2 simulator (https://api.cohere.com): `POST /v2/chat` (JSON, or SSE with typed `event:`
 * + `data:` pairs: message-start, content-*, tool-plan-delta, tool-call-*, message-end with usage),
 * `POST /v2/embed` (embeddings by type) and `POST /v2/rerank`. Bearer auth; errors are
 * `{"id","message"}`.
 */
import { startSimulator } from './base.ts'
import type { ErrorAnswer, Exchange, ProviderDefinition, Simulator, SimulatorOptions, StreamFrame } from './base.ts'
import { asStopList, bearerToken, embeddingVector, estimateTokens, isAccepted, splitArguments, sse, textOf, vectorToBase64 } from './content.ts'
import { planReply, sequenceId } from './reply.ts'
import type { Reply, ReplyFinish, ToolMode } from './reply.ts'
import { dispatch, jsonObject } from './router.ts'
import type { Route } from './router.ts'

const errorMessages: Record<number, string> = {
  400: 'invalid request: the request body is malformed',
  401: 'invalid api token',
  402: 'Please add or update your payment method at https://dashboard.cohere.com/billing?tab=payment to continue',
  404: 'not found',
  422: 'unprocessable entity',
  429: "You are past the per minute request limit for this API key, please wait and try again later.",
  499: 'request cancelled by the user',
  500: 'internal server error, this has been reported to our developers',
  503: 'service unavailable, please try again later',
}

function errorBody(status: number, message?: string): { id: string; message: string } {
  return { id: 'sim-error', message: message ?? errorMessages[status] ?? (status >= 500 ? errorMessages[500]! : errorMessages[400]!) }
}

export function cohereErrorAnswer(status: number, message?: string): ErrorAnswer {
  return { body: errorBody(status, message) }
}

function fail(exchange: Exchange, status: number, message: string): void {
  exchange.errorBody(status, errorBody(status, message))
}

/** Cohere has no in-band error event: a failed generation ends with finish_reason ERROR. */
function streamError(_status: number, message?: string): StreamFrame {
  return sse({ type: 'message-end', delta: { finish_reason: 'ERROR', error: message ?? 'internal server error' } }, 'message-end')
}

function modelAllowed(exchange: Exchange, model: string): boolean {
  if (exchange.knowsModel(model)) return true
  fail(exchange, 404, `model '${model}' not found, make sure the correct model ID was used and that you have access to the model.`)
  return false
}

// ---- chat ------------------------------------------------------------------------------------

interface MessageIn {
  role?: unknown
  content?: unknown
}

const finishReasons: Record<ReplyFinish, string> = { stop: 'COMPLETE', length: 'MAX_TOKENS', stop_sequence: 'STOP_SEQUENCE', tool_calls: 'TOOL_CALL' }

// Cohere bills the prompt as sent but counts the prompt template it wraps around it in `tokens`.
const templateTokens = 64

function toolMode(choice: unknown): ToolMode {
  if (choice === 'NONE') return 'none'
  if (choice === 'REQUIRED') return 'required'
  return 'auto'
}

/** Cohere's `response_format`: `{type: "json_object", json_schema?}`. */
function cohereJsonMode(format: unknown): { schema?: unknown } | undefined {
  const { type, json_schema: schema } = (format ?? {}) as { type?: unknown; json_schema?: unknown }
  return type === 'json_object' ? { schema } : undefined
}

function planChat(body: Record<string, unknown>, options: SimulatorOptions, sequence: number): Reply {
  const messages = body.messages as MessageIn[]
  let prompt = ''
  for (let i = messages.length - 1; i >= 0 && prompt === ''; i--) if (messages[i]!.role === 'user') prompt = textOf(messages[i]!.content)
  let promptCharacters = 0
  for (const message of messages) promptCharacters += textOf(message.content).length + 4
  const tools = Array.isArray(body.tools) ? (body.tools as Array<{ function?: { name?: unknown; parameters?: unknown } }>) : []
  return planReply(
    {
      prompt,
      promptCharacters,
      tools: tools.filter((tool) => typeof tool?.function?.name === 'string').map((tool) => ({ name: String(tool.function!.name), schema: tool.function!.parameters })),
      toolMode: toolMode(body.tool_choice),
      afterToolResult: messages.at(-1)?.role === 'tool',
      maxTokens: typeof body.max_tokens === 'number' ? body.max_tokens : null,
      stop: asStopList(body.stop_sequences),
      thinking: (body.thinking as { type?: unknown } | undefined)?.type === 'enabled',
      preambleBeforeTool: false,
      parallelToolCalls: true,
      json: cohereJsonMode(body.response_format),
    },
    options,
    { toolCallId: sequenceId('tool_sim', sequence), signature: '' },
  )
}

function usageOf(reply: Reply): unknown {
  return {
    billed_units: { input_tokens: reply.promptTokens, output_tokens: reply.outputTokens },
    tokens: { input_tokens: reply.promptTokens + templateTokens, output_tokens: reply.outputTokens },
  }
}

function toolPlan(reply: Reply): string {
  const call = reply.blocks.find((block) => block.type === 'tool_call')
  return call ? `I will use the ${call.name} tool to answer.` : ''
}

function chatMessage(reply: Reply): Record<string, unknown> {
  const message: Record<string, unknown> = { role: 'assistant' }
  const content: unknown[] = []
  const toolCalls: unknown[] = []
  for (const block of reply.blocks) {
    if (block.type === 'thinking') content.push({ type: 'thinking', thinking: block.pieces.join('') })
    else if (block.type === 'text') content.push({ type: 'text', text: block.pieces.join('') })
    else toolCalls.push({ id: block.id, type: 'function', function: { name: block.name, arguments: block.arguments } })
  }
  if (toolCalls.length > 0) {
    message.tool_plan = toolPlan(reply)
    message.tool_calls = toolCalls
  }
  if (content.length > 0) message.content = content
  return message
}

function* chatStream(id: string, reply: Reply): Generator<StreamFrame> {
  const event = (type: string, payload: Record<string, unknown>): StreamFrame => sse({ type, ...payload }, type)
  yield event('message-start', { id, delta: { message: { role: 'assistant', content: [], tool_plan: '', tool_calls: [], citations: [] } } })
  let contentIndex = 0
  let toolIndex = 0
  for (const block of reply.blocks) {
    if (block.type === 'tool_call') {
      if (toolIndex === 0) yield event('tool-plan-delta', { delta: { message: { tool_plan: toolPlan(reply) } } })
      const index = toolIndex++
      yield event('tool-call-start', {
        index,
        delta: { message: { tool_calls: { id: block.id, type: 'function', function: { name: block.name, arguments: '' } } } },
      })
      for (const piece of splitArguments(block.arguments)) {
        yield event('tool-call-delta', { index, delta: { message: { tool_calls: { function: { arguments: piece } } } } })
      }
      yield event('tool-call-end', { index })
      continue
    }
    const index = contentIndex++
    const key = block.type === 'thinking' ? 'thinking' : 'text'
    yield event('content-start', { index, delta: { message: { content: { type: key, [key]: '' } } } })
    for (const piece of block.pieces) yield event('content-delta', { index, delta: { message: { content: { [key]: piece } } } })
    yield event('content-end', { index })
  }
  yield event('message-end', { delta: { finish_reason: finishReasons[reply.finish], usage: usageOf(reply) } })
}

async function chat(exchange: Exchange): Promise<void> {
  const body = jsonObject(exchange.request.body)
  if (!body) return fail(exchange, 400, 'invalid request: failed to parse the request body as JSON')
  if (typeof body.model !== 'string' || body.model === '') return fail(exchange, 400, 'invalid request: model must be specified')
  if (!Array.isArray(body.messages) || body.messages.length === 0) return fail(exchange, 400, 'invalid request: messages must not be empty')
  if (!modelAllowed(exchange, body.model)) return
  const reply = planChat(body, exchange.options, exchange.sequence)
  const id = `00000000-0000-4000-9000-${String(exchange.sequence).padStart(12, '0')}`
  if (body.stream === true) {
    await exchange.stream({ contentType: 'text/event-stream', frames: chatStream(id, reply) })
    return
  }
  exchange.json(200, { id, message: chatMessage(reply), finish_reason: finishReasons[reply.finish], usage: usageOf(reply) })
}

// ---- embed -----------------------------------------------------------------------------------

function nativeDimensions(model: string): number {
  if (model.includes('light')) return 384
  if (model.includes('v4')) return 1536
  return 1024
}

/** Eight dimensions per byte, one bit each (set when positive): Cohere's `binary`/`ubinary`. */
function packBits(vector: Float32Array, signed: boolean): number[] {
  const bytes: number[] = []
  for (let i = 0; i < vector.length; i += 8) {
    let byte = 0
    for (let bit = 0; bit < 8; bit++) if ((vector[i + bit] ?? 0) > 0) byte |= 0x80 >> bit
    bytes.push(signed ? byte - 128 : byte)
  }
  return bytes
}

const embeddingEncoders: Record<string, (vector: Float32Array) => unknown> = {
  float: (vector) => Array.from(vector, (value) => Math.round(value * 1e6) / 1e6),
  int8: (vector) => Array.from(vector, (value) => Math.max(-128, Math.min(127, Math.round(value * 127 * 8)))),
  uint8: (vector) => Array.from(vector, (value) => Math.max(0, Math.min(255, Math.round(value * 127 * 8 + 128)))),
  binary: (vector) => packBits(vector, true),
  ubinary: (vector) => packBits(vector, false),
  base64: (vector) => vectorToBase64(vector),
}

function embed(exchange: Exchange): void {
  const body = jsonObject(exchange.request.body)
  if (!body || typeof body.model !== 'string') return fail(exchange, 400, 'invalid request: model must be specified')
  const texts = body.texts
  if (!Array.isArray(texts) || texts.length === 0 || !texts.every((text) => typeof text === 'string')) {
    return fail(exchange, 400, 'invalid request: texts must be a non-empty list of strings')
  }
  if (texts.length > 96) return fail(exchange, 400, 'invalid request: texts must contain at most 96 items')
  if (typeof body.input_type !== 'string') return fail(exchange, 400, 'invalid request: input_type is required for embed models v3 and higher.')
  if (!modelAllowed(exchange, body.model)) return
  const types = Array.isArray(body.embedding_types) && body.embedding_types.length > 0 ? (body.embedding_types as string[]) : ['float']
  const unknown = types.find((type) => !(type in embeddingEncoders))
  if (unknown) return fail(exchange, 400, `invalid request: embedding_types contains an invalid type '${unknown}'`)
  const dimensions = typeof body.output_dimension === 'number' ? body.output_dimension : nativeDimensions(body.model)
  const vectors = (texts as string[]).map((text) => embeddingVector(text, dimensions))
  const embeddings: Record<string, unknown[]> = {}
  for (const type of types) embeddings[type] = vectors.map(embeddingEncoders[type]!)
  let inputTokens = 0
  for (const text of texts as string[]) inputTokens += estimateTokens(text)
  exchange.json(200, {
    id: `00000000-0000-4000-9000-${String(exchange.sequence).padStart(12, '0')}`,
    embeddings,
    texts,
    meta: { api_version: { version: '2' }, billed_units: { input_tokens: inputTokens } },
    response_type: 'embeddings_by_type',
  })
}

// ---- rerank ----------------------------------------------------------------------------------

function words(text: string): Set<string> {
  return new Set(text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [])
}

/** Share of the query's words found in the document: deterministic and plausibly ordered. */
function relevance(query: Set<string>, document: string): number {
  if (query.size === 0) return 0
  const found = words(document)
  let shared = 0
  for (const word of query) if (found.has(word)) shared++
  return Math.round((shared / query.size) * 0.98 * 1e6) / 1e6 + 0.01
}

function rerank(exchange: Exchange): void {
  const body = jsonObject(exchange.request.body)
  if (!body || typeof body.model !== 'string') return fail(exchange, 400, 'invalid request: model must be specified')
  if (typeof body.query !== 'string' || body.query === '') return fail(exchange, 400, 'invalid request: query must not be empty')
  const documents = body.documents
  if (!Array.isArray(documents) || documents.length === 0 || !documents.every((document) => typeof document === 'string')) {
    return fail(exchange, 400, 'invalid request: documents must be a non-empty list of strings')
  }
  if (!modelAllowed(exchange, body.model)) return
  const query = words(body.query)
  const scored = (documents as string[]).map((document, index) => ({ index, relevance_score: relevance(query, document) }))
  scored.sort((a, b) => b.relevance_score - a.relevance_score || a.index - b.index)
  const topN = typeof body.top_n === 'number' ? body.top_n : scored.length
  exchange.json(200, {
    id: `00000000-0000-4000-9000-${String(exchange.sequence).padStart(12, '0')}`,
    results: scored.slice(0, topN),
    meta: { api_version: { version: '2' }, billed_units: { search_units: 1 } },
  })
}

const routes: Route[] = [
  { method: 'POST', pattern: /^\/v2\/chat$/, handle: chat },
  { method: 'POST', pattern: /^\/v2\/embed$/, handle: embed },
  { method: 'POST', pattern: /^\/v2\/rerank$/, handle: rerank },
]

export const cohereProvider: ProviderDefinition = {
  name: 'cohere',
  basePath: '',
  models: ['command-a-03-2025', 'command-r-plus', 'command-r', 'embed-v4.0', 'embed-english-v3.0', 'rerank-v3.5'],
  errorAnswer: cohereErrorAnswer,
  streamErrorFrame: streamError,
  async handle(exchange) {
    if (!isAccepted(bearerToken(exchange.request.headers.authorization), exchange.options)) return fail(exchange, 401, 'invalid api token')
    if (await dispatch(exchange, routes)) return
    fail(exchange, 404, `404 page not found: ${exchange.request.path}`)
  },
}

export function startCohereSimulator(options: Partial<SimulatorOptions> = {}): Promise<Simulator> {
  return startSimulator(cohereProvider, options)
}
