/**
 * The OpenAI wire format apart from chat (see `openai-chat.ts`): errors, usage, legacy completions,
 * embeddings and models. Shared by the OpenAI, Azure OpenAI and Mistral simulators.
 */
import type { ErrorAnswer, Exchange, SimulatorOptions, StreamFrame } from './base.ts'
import { applyStop, asStopList, embeddingVector, estimateTokens, generateAnswer, vectorToBase64, vectorToNumbers } from './content.ts'
import type { Answer } from './content.ts'
import { jsonObject } from './router.ts'

export const systemFingerprint = 'fp_simulator'

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

/**
 * What differs between the services that speak the OpenAI wire format: their error body and the
 * headers they add to every answer.
 */
export interface WireDialect {
  errorBody(status: number, message: string, code: string | null, param: string | null): unknown
  headers(exchange: Exchange): Record<string, string> | undefined
}

export const openaiErrorShape = (status: number, message: string, code: string | null, param: string | null): unknown =>
  openaiErrorBody(status, message, code, param)

export function invalid(exchange: Exchange, dialect: WireDialect, message: string, param: string | null, code: string | null = null): void {
  exchange.errorBody(400, dialect.errorBody(400, message, code, param), dialect.headers(exchange))
}

/** 404 `model_not_found` when the simulator has a model list and `model` is not on it. */
export function unknownModel(exchange: Exchange, dialect: WireDialect, model: string): boolean {
  if (exchange.knowsModel(model)) return false
  exchange.errorBody(404, dialect.errorBody(404, `The model \`${model}\` does not exist or you do not have access to it.`, 'model_not_found', 'model'), dialect.headers(exchange))
  return true
}

export interface OpenAIUsage {
  prompt_tokens: number
  completion_tokens: number
  total_tokens: number
  prompt_tokens_details: { cached_tokens: number; audio_tokens: number }
  completion_tokens_details: { reasoning_tokens: number; audio_tokens: number; accepted_prediction_tokens: number; rejected_prediction_tokens: number }
}

export function usageOf(promptTokens: number, answerTokens: number, options: SimulatorOptions): OpenAIUsage {
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

/** The prompts of a legacy completions request: a string, strings, tokens, or token lists. */
function promptsOf(prompt: unknown): string[] | null {
  if (typeof prompt === 'string') return [prompt]
  if (!Array.isArray(prompt) || prompt.length === 0) return null
  if (prompt.every((item) => typeof item === 'string')) return prompt as string[]
  if (prompt.every((item) => typeof item === 'number')) return [(prompt as number[]).join(' ')]
  if (prompt.every((item) => Array.isArray(item))) return (prompt as number[][]).map((tokens) => tokens.join(' '))
  return null
}

/** POST completions (legacy text completions); `pathModel` as in `chatCompletions`. */
export async function textCompletions(exchange: Exchange, dialect: WireDialect, pathModel?: string): Promise<void> {
  const responseHeaders = dialect.headers(exchange)
  const body = jsonObject(exchange.request.body)
  if (!body) return invalid(exchange, dialect, 'We could not parse the JSON body of your request.', null)
  const model = pathModel ?? body.model
  if (typeof model !== 'string' || model === '') return invalid(exchange, dialect, 'you must provide a model parameter', 'model')
  const prompts = promptsOf(body.prompt ?? '<|endoftext|>')
  if (!prompts) return invalid(exchange, dialect, "Invalid 'prompt': expected a string, an array of strings, or token arrays.", 'prompt')
  if (pathModel === undefined && unknownModel(exchange, dialect, model)) return
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
export function embeddings(exchange: Exchange, dialect: WireDialect, pathModel?: string): void {
  const responseHeaders = dialect.headers(exchange)
  const body = jsonObject(exchange.request.body)
  if (!body) return invalid(exchange, dialect, 'We could not parse the JSON body of your request.', null)
  const model = pathModel ?? body.model
  if (typeof model !== 'string' || model === '') return invalid(exchange, dialect, 'you must provide a model parameter', 'model')
  const inputs = embeddingInputs(body.input)
  if (!inputs) return invalid(exchange, dialect, "'$.input' is invalid. Please check the API reference: https://platform.openai.com/docs/api-reference.", 'input')
  if (pathModel === undefined && unknownModel(exchange, dialect, model)) return
  let dimensions = defaultDimensions(model)
  if (body.dimensions !== undefined) {
    if (!model.startsWith('text-embedding-3')) return invalid(exchange, dialect, 'This model does not support specifying dimensions.', 'dimensions')
    if (typeof body.dimensions !== 'number' || body.dimensions < 1 || body.dimensions > dimensions) {
      return invalid(exchange, dialect, `Invalid 'dimensions': expected an integer between 1 and ${dimensions}.`, 'dimensions')
    }
    dimensions = body.dimensions
  }
  const encoding = body.encoding_format ?? 'float'
  if (encoding !== 'float' && encoding !== 'base64') {
    return invalid(exchange, dialect, `Invalid 'encoding_format': expected 'float' or 'base64', got '${String(encoding)}'.`, 'encoding_format')
  }
  let promptTokens = 0
  const data = inputs.map((text, index) => {
    promptTokens += estimateTokens(text)
    const vector = embeddingVector(text, dimensions)
    return { object: 'embedding', index, embedding: encoding === 'base64' ? vectorToBase64(vector) : vectorToNumbers(vector) }
  })
  exchange.json(200, { object: 'list', data, model, usage: { prompt_tokens: promptTokens, total_tokens: promptTokens } }, responseHeaders)
}

export const defaultOpenAIModels = [
  'gpt-4o', 'gpt-4o-mini', 'gpt-4.1', 'gpt-4.1-mini', 'o3-mini', 'gpt-3.5-turbo-instruct', 'text-embedding-3-small', 'text-embedding-3-large',
  'gpt-4o-audio-preview', 'gpt-4o-mini-audio-preview', 'whisper-1', 'gpt-4o-transcribe', 'gpt-4o-mini-transcribe', 'tts-1', 'tts-1-hd', 'gpt-4o-mini-tts',
  'dall-e-2', 'dall-e-3', 'gpt-image-1', 'gpt-image-1-mini',
]

const modelCreated = 1_715_367_049

export function modelObject(id: string, ownedBy: string): unknown {
  return { id, object: 'model', created: modelCreated, owned_by: ownedBy }
}

export function listModels(exchange: Exchange, ownedBy: string): void {
  const ids = exchange.modelList
  exchange.json(200, { object: 'list', data: ids.map((id) => modelObject(id, ownedBy)) })
}

export function retrieveModel(exchange: Exchange, id: string, ownedBy: string): void {
  if (!exchange.knowsModel(id)) {
    exchange.errorBody(404, openaiErrorBody(404, `The model '${id}' does not exist`, 'model_not_found', 'model'))
    return
  }
  exchange.json(200, modelObject(id, ownedBy))
}
