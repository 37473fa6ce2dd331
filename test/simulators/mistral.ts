/**
 * Mistral simulator (https://api.mistral.ai/v1): OpenAI-like chat completions with Mistral's
 * differences (plain usage reported on the final stream chunk whatever `stream_options` say, tool
 * calls streamed whole, `tool_choice: "any"`, flat error bodies), embeddings (`mistral-embed`,
 * 1024 dimensions), models, and `POST /v1/ocr` (a document or image in, pages of markdown out).
 */
import { startSimulator } from './base.ts'
import type { ErrorAnswer, Exchange, ProviderDefinition, Simulator, SimulatorOptions } from './base.ts'
import { bearerToken, isAccepted } from './content.ts'
import { chatCompletions, openaiChatDialect } from './openai-chat.ts'
import type { ChatDialect } from './openai-chat.ts'
import { embeddings, listModels, openaiStreamError } from './openai-wire.ts'
import type { WireDialect } from './openai-wire.ts'
import { dispatch, jsonObject } from './router.ts'
import type { Route } from './router.ts'

const defaultTypes: Record<number, string> = {
  400: 'invalid_request_error',
  404: 'invalid_request_error',
  422: 'invalid_request_message_error',
  500: 'internal_server_error',
  503: 'service_unavailable',
}

function errorBody(status: number, message: string, code: string | null = null, param: string | null = null): unknown {
  // Authentication and rate-limit failures come from the edge, with a bare message.
  if (status === 401) return { message: 'Unauthorized', request_id: 'sim-request' }
  if (status === 429) return { message: 'Requests rate limit exceeded' }
  return { object: 'error', message, type: defaultTypes[status] ?? (status >= 500 ? 'internal_server_error' : 'invalid_request_error'), param, code }
}

export function mistralErrorAnswer(status: number, message?: string): ErrorAnswer {
  return { body: errorBody(status, message ?? (status >= 500 ? 'Internal server error' : 'Invalid request')) }
}

function hex(sequence: number): string {
  return sequence.toString(16).padStart(32, '0')
}

const wire: WireDialect = {
  errorBody: (status, message, code, param) => errorBody(status, message, code, param),
  headers: (exchange) => ({ 'mistral-correlation-id': hex(exchange.sequence), 'x-ratelimitbysize-remaining-minute': '499000' }),
}

const dialect: ChatDialect = {
  ...openaiChatDialect,
  ...wire,
  completionId: hex,
  // Mistral tool call ids are nine alphanumerics.
  toolCallId: (sequence) => `sim${String(sequence).padStart(6, '0')}`.slice(-9),
  usage: (reply, outputTokens) => ({ prompt_tokens: reply.promptTokens, completion_tokens: outputTokens, total_tokens: reply.promptTokens + outputTokens }),
  streamUsage: 'finish_chunk',
  streamOptionsNeedStream: false,
  toolArgumentsInPieces: false,
  responseFields: {},
}

/** Bytes of a `data:` URL, or null for a remote URL (the simulator never fetches one). */
function dataUrlBytes(url: string): { mediaType: string; bytes: Buffer } | null {
  const match = /^data:([^;,]+)?(;base64)?,(.*)$/s.exec(url)
  if (!match) return null
  const bytes = match[2] ? Buffer.from(match[3]!, 'base64') : Buffer.from(decodeURIComponent(match[3]!))
  return { mediaType: match[1] ?? 'text/plain', bytes }
}

/** Pages of a PDF: its `/Type /Page` objects (not `/Pages`), at least one. */
function pdfPageCount(bytes: Buffer): number {
  const matches = bytes.toString('latin1').match(/\/Type\s*\/Page(?![s\w])/g)
  return Math.max(1, matches?.length ?? 0)
}

/**
 * `POST /v1/ocr`: `document` is `{type: "document_url", document_url}` or `{type: "image_url",
 * image_url}`. Data URLs are measured (PDF page count, byte size); remote URLs count as one page.
 */
function ocr(exchange: Exchange): void {
  const body = jsonObject(exchange.request.body)
  const document = body?.document as { type?: unknown; document_url?: unknown; image_url?: unknown; document_name?: unknown } | undefined
  if (!body || typeof body.model !== 'string') return exchange.errorBody(422, errorBody(422, 'model: Field required', null, 'model'))
  const url = document?.type === 'document_url' ? document.document_url : document?.type === 'image_url' ? document.image_url : undefined
  const location = typeof url === 'string' ? url : (url as { url?: unknown } | undefined)?.url
  if (typeof location !== 'string' || location === '') {
    return exchange.errorBody(422, errorBody(422, 'document: expected a document_url or image_url chunk', null, 'document'))
  }
  const inline = dataUrlBytes(location)
  const isPdf = inline ? inline.mediaType === 'application/pdf' : /\.pdf($|\?)/i.test(location)
  const pageCount = inline && isPdf ? pdfPageCount(inline.bytes) : 1
  const wanted = Array.isArray(body.pages) ? (body.pages as unknown[]).filter((page): page is number => typeof page === 'number' && page >= 0 && page < pageCount) : null
  const indexes = wanted ?? Array.from({ length: pageCount }, (_, index) => index)
  const name = typeof document?.document_name === 'string' ? document.document_name : isPdf ? 'document' : 'image'
  const pages = indexes.map((index) => ({
    index,
    markdown: `# ${name}, page ${index + 1}\n\nSimulated OCR text of page ${index + 1}.`,
    images: [],
    dimensions: { dpi: 200, height: 2200, width: 1700 },
  }))
  exchange.json(
    200,
    {
      pages,
      model: 'mistral-ocr-2505-completion',
      document_annotation: null,
      usage_info: { pages_processed: pages.length, doc_size_bytes: inline ? inline.bytes.length : null },
    },
    wire.headers(exchange),
  )
}

const defaultModels = ['mistral-large-latest', 'mistral-small-latest', 'codestral-latest', 'mistral-embed', 'mistral-ocr-latest']

const routes: Route[] = [
  { method: 'POST', pattern: /^\/v1\/chat\/completions$/, handle: (exchange) => chatCompletions(exchange, dialect) },
  { method: 'POST', pattern: /^\/v1\/embeddings$/, handle: (exchange) => embeddings(exchange, wire) },
  { method: 'POST', pattern: /^\/v1\/ocr$/, handle: ocr },
  { method: 'GET', pattern: /^\/v1\/models$/, handle: (exchange) => listModels(exchange, 'mistralai') },
]

export const mistralProvider: ProviderDefinition = {
  name: 'mistral',
  basePath: '/v1',
  models: defaultModels,
  answerHeaders: (exchange) => wire.headers(exchange) ?? {},
  errorAnswer: mistralErrorAnswer,
  streamErrorFrame: openaiStreamError,
  async handle(exchange) {
    if (!isAccepted(bearerToken(exchange.request.headers.authorization), exchange.options)) {
      return exchange.errorBody(401, errorBody(401, 'Unauthorized'))
    }
    if (await dispatch(exchange, routes)) return
    exchange.errorBody(404, errorBody(404, `Not found: ${exchange.request.path}`))
  },
}

export function startMistralSimulator(options: Partial<SimulatorOptions> = {}): Promise<Simulator> {
  return startSimulator(mistralProvider, options)
}
