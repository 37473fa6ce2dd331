/**
 * Anthropic API simulator (https://api.anthropic.com): Messages (JSON and SSE stream), token
 * counting and models, with `x-api-key` + `anthropic-version` required as the real API does.
 */
import { startSimulator } from './base.ts'
import type { Exchange, ProviderDefinition, Simulator, SimulatorOptions } from './base.ts'
import { anthropicErrorAnswer, anthropicErrorBody, countTokens, messageEvents, messageJson, planMessage, sseFrame, validateMessages } from './anthropic-wire.ts'
import { bearerToken, isAccepted } from './content.ts'
import { dispatch, jsonObject } from './router.ts'
import type { Route } from './router.ts'

/** Headers the Messages API sends on every answer; the limits are plausible constants. */
const rateLimitHeaders: Record<string, string> = {
  'anthropic-ratelimit-requests-limit': '4000',
  'anthropic-ratelimit-requests-remaining': '3999',
  'anthropic-ratelimit-requests-reset': '2026-01-01T00:00:01Z',
  'anthropic-ratelimit-input-tokens-limit': '2000000',
  'anthropic-ratelimit-input-tokens-remaining': '1999000',
  'anthropic-ratelimit-output-tokens-limit': '400000',
  'anthropic-ratelimit-output-tokens-remaining': '399000',
}

function requestIdHeaders(exchange: Exchange): Record<string, string> {
  return { ...rateLimitHeaders, 'request-id': `req_sim${String(exchange.sequence).padStart(8, '0')}` }
}

/** An error answer with the request id in both the header and the body, as the API sends them. */
function fail(exchange: Exchange, status: number, message: string, headers: Record<string, string> = requestIdHeaders(exchange)): void {
  exchange.errorBody(status, anthropicErrorBody(status, message, headers['request-id']), headers)
}

function checkAuth(exchange: Exchange): boolean {
  const headers = exchange.request.headers
  const apiKey = typeof headers['x-api-key'] === 'string' ? headers['x-api-key'] : null
  // OAuth callers (the SDK's `authToken`) send a bearer token instead of an API key.
  const credential = apiKey ?? bearerToken(headers.authorization)
  if (!credential) {
    fail(exchange, 401, 'x-api-key header is required')
    return false
  }
  if (!isAccepted(credential, exchange.options)) {
    fail(exchange, 401, 'invalid x-api-key')
    return false
  }
  if (typeof headers['anthropic-version'] !== 'string') {
    fail(exchange, 400, 'anthropic-version: header is required')
    return false
  }
  return true
}

function modelAllowed(exchange: Exchange, model: string, headers: Record<string, string>): boolean {
  if (exchange.knowsModel(model)) return true
  fail(exchange, 404, `model: ${model}`, headers)
  return false
}

/**
 * Answers a Messages request whose model is already known (from the body or the path): JSON, or
 * SSE when `stream` is true. Shared with the Vertex AI simulator's `rawPredict`.
 */
export async function answerMessages(exchange: Exchange, model: string, modelInPath: boolean, headers: Record<string, string>): Promise<void> {
  const body = jsonObject(exchange.request.body)
  if (!body) return fail(exchange, 400, 'There was an issue with the request body: invalid JSON', headers)
  const rejection = validateMessages(body, { modelInPath })
  if (rejection) return fail(exchange, rejection.status, rejection.message, headers)
  if (!modelAllowed(exchange, model, headers)) return
  const plan = planMessage(body, model, exchange.options, exchange.sequence, exchange.fault?.stopReason)
  if (body.stream === true) {
    await exchange.stream({ contentType: 'text/event-stream; charset=utf-8', headers, frames: mapFrames(messageEvents(plan)) })
    return
  }
  exchange.json(200, messageJson(plan), headers)
}

function* mapFrames(events: Iterable<Parameters<typeof sseFrame>[0]>): Generator<string> {
  for (const event of events) yield sseFrame(event)
}

const knownModels = ['claude-sonnet-4-5', 'claude-opus-4-1', 'claude-sonnet-4-20250514', 'claude-3-5-haiku-latest', 'claude-3-5-haiku-20241022']

const routes: Route[] = [
  {
    method: 'POST',
    pattern: /^\/v1\/messages$/,
    handle: (exchange) => {
      const model = jsonObject(exchange.request.body)?.model
      return answerMessages(exchange, typeof model === 'string' ? model : '', false, requestIdHeaders(exchange))
    },
  },
  {
    method: 'POST',
    pattern: /^\/v1\/messages\/count_tokens$/,
    handle: (exchange) => {
      const body = jsonObject(exchange.request.body)
      if (!body || !Array.isArray(body.messages)) return fail(exchange, 400, 'messages: Field required')
      exchange.json(200, countTokens(body), requestIdHeaders(exchange))
    },
  },
  {
    method: 'GET',
    pattern: /^\/v1\/models$/,
    handle: (exchange) => {
      const ids = exchange.modelList
      const data = ids.map((id) => ({ type: 'model', id, display_name: id, created_at: '2025-02-19T00:00:00Z' }))
      exchange.json(200, { data, has_more: false, first_id: ids[0] ?? null, last_id: ids.at(-1) ?? null })
    },
  },
]

export const anthropicProvider: ProviderDefinition = {
  name: 'anthropic',
  basePath: '',
  models: knownModels,
  answerHeaders: requestIdHeaders,
  errorAnswer: anthropicErrorAnswer,
  streamErrorFrame: (status, message) => `event: error\ndata: ${JSON.stringify(anthropicErrorBody(status, message))}\n\n`,
  async handle(exchange) {
    if (!checkAuth(exchange)) return
    if (await dispatch(exchange, routes)) return
    fail(exchange, 404, `Not found: ${exchange.request.path}`)
  },
}

export function startAnthropicSimulator(options: Partial<SimulatorOptions> = {}): Promise<Simulator> {
  return startSimulator(anthropicProvider, options)
}
