/**
 * OpenAI API simulator (https://api.openai.com/v1): chat completions (audio in and out
 * included), legacy completions, embeddings, models, speech, transcriptions and translations,
 * images (generations, edits, variations) in the documented wire format; any other `/v1/...` route
 * (files, batches, moderations...) answers a JSON echo of what it received, so pass-through
 * tests can assert the request arrived untouched.
 */
import { startSimulator } from './base.ts'
import type { Exchange, ProviderDefinition, Simulator, SimulatorOptions } from './base.ts'
import { bearerToken, isAccepted, maskKey } from './content.ts'
import { openaiAudioRoutes } from './openai-audio.ts'
import { openaiExtraRoutes } from './openai-extra.ts'
import { openaiImageRoutes } from './openai-images.ts'
import { chatCompletions, openaiChatDialect } from './openai-chat.ts'
import type { ChatDialect } from './openai-chat.ts'
import { defaultOpenAIModels, embeddings, listModels, openaiErrorAnswer, openaiErrorBody, openaiErrorShape, openaiStreamError, retrieveModel, textCompletions } from './openai-wire.ts'
import { dispatch } from './router.ts'
import type { Route } from './router.ts'

/** Headers OpenAI sends on every answer; the values are plausible constants. */
const staticHeaders: Record<string, string> = {
  'openai-organization': 'simulator-org',
  'openai-version': '2020-10-01',
  'x-ratelimit-limit-requests': '10000',
  'x-ratelimit-limit-tokens': '30000000',
  'x-ratelimit-remaining-requests': '9999',
  'x-ratelimit-remaining-tokens': '29999000',
  'x-ratelimit-reset-requests': '6ms',
  'x-ratelimit-reset-tokens': '2ms',
}

function responseHeaders(exchange: Exchange): Record<string, string> {
  return { ...staticHeaders, 'x-request-id': `req_sim${String(exchange.sequence).padStart(8, '0')}`, 'openai-processing-ms': '1' }
}

/** OpenAI answers 401 in its own envelope when the bearer token is missing or not accepted. */
export function checkBearer(exchange: Exchange): boolean {
  const token = bearerToken(exchange.request.headers.authorization)
  if (isAccepted(token, exchange.options)) return true
  const message = token
    ? `Incorrect API key provided: ${maskKey(token)}. You can find your API key at https://platform.openai.com/account/api-keys.`
    : "You didn't provide an API key. You need to provide your API key in an Authorization header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY), or as the password field (with blank username) if you're accessing the API from your browser and are prompted for a username and password. You can obtain an API key from https://platform.openai.com/account/api-keys."
  exchange.errorBody(401, openaiErrorBody(401, message, token ? 'invalid_api_key' : null))
  return false
}

const dialect: ChatDialect = { ...openaiChatDialect, errorBody: openaiErrorShape, headers: responseHeaders }

const routes: Route[] = [
  { method: 'POST', pattern: /^\/v1\/chat\/completions$/, handle: (exchange) => chatCompletions(exchange, dialect) },
  { method: 'POST', pattern: /^\/v1\/completions$/, handle: (exchange) => textCompletions(exchange, dialect) },
  { method: 'POST', pattern: /^\/v1\/embeddings$/, handle: (exchange) => embeddings(exchange, dialect) },
  { method: 'GET', pattern: /^\/v1\/models$/, handle: (exchange) => listModels(exchange, 'openai') },
  { method: 'GET', pattern: /^\/v1\/models\/([^/]+)$/, handle: (exchange, [id]) => retrieveModel(exchange, id!, 'openai') },
  ...openaiAudioRoutes,
  ...openaiImageRoutes,
  ...openaiExtraRoutes,
]

/** What the generic OpenAI routes answer: the request as received, for pass-through assertions. */
export function echoRequest(exchange: Exchange): void {
  const { method, path, query, headers, body } = exchange.request
  exchange.json(200, {
    object: 'simulator.echo',
    method,
    path,
    query,
    content_type: headers['content-type'] ?? null,
    body: Buffer.isBuffer(body) ? { bytes: body.length } : (body ?? null),
  })
}

export const openaiProvider: ProviderDefinition = {
  name: 'openai',
  basePath: '/v1',
  models: defaultOpenAIModels,
  answerHeaders: responseHeaders,
  errorAnswer: openaiErrorAnswer,
  streamErrorFrame: openaiStreamError,
  async handle(exchange) {
    if (!checkBearer(exchange)) return
    if (await dispatch(exchange, routes)) return
    if (exchange.request.path.startsWith('/v1/')) return echoRequest(exchange)
    exchange.errorBody(404, openaiErrorBody(404, `Invalid URL (${exchange.request.method} ${exchange.request.path})`, null))
  },
}

export function startOpenAISimulator(options: Partial<SimulatorOptions> = {}): Promise<Simulator> {
  return startSimulator(openaiProvider, options)
}
