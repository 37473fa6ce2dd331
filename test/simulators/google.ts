/**
 * Google simulator: the Gemini API (https://generativelanguage.googleapis.com) and Vertex AI
 * (https://<location>-aiplatform.googleapis.com) on one server, told apart by path.
 *
 * Gemini API (key in `x-goog-api-key` or `?key=`):
 *   POST /v1beta/models/{model}:generateContent | :streamGenerateContent[?alt=sse] | :embedContent
 *        | :batchEmbedContents | :countTokens, GET /v1beta/models
 * Vertex AI (OAuth bearer token):
 *   POST /v1/projects/{p}/locations/{l}/publishers/google/models/{m}:generateContent
 *        | :streamGenerateContent | :predict (text embeddings) | :countTokens
 *   POST /v1/projects/{p}/locations/{l}/publishers/anthropic/models/{m}:rawPredict | :streamRawPredict
 *        (the Anthropic Messages body with `anthropic_version`)
 *
 * A prompt containing the word "unsafe" is blocked with `finishReason: SAFETY`.
 */
import { answerMessages } from './anthropic.ts'
import { startSimulator } from './base.ts'
import type { Exchange, ProviderDefinition, Simulator, SimulatorOptions } from './base.ts'
import { bearerToken, embeddingVector, estimateTokens, isAccepted, vectorToNumbers } from './content.ts'
import {
  batchEmbedContents,
  countTokens,
  embedContent,
  generateResponse,
  generateStream,
  googleError,
  googleErrorAnswer,
  googleStreamError,
  jsonArrayFrames,
  planGenerate,
  sseFrames,
} from './gemini-wire.ts'
import { dispatch, jsonObject } from './router.ts'
import type { Route } from './router.ts'

function geminiKeyAccepted(exchange: Exchange): boolean {
  const { headers, query } = exchange.request
  const key = typeof headers['x-goog-api-key'] === 'string' ? headers['x-goog-api-key'] : (query.key ?? null)
  if (!key) {
    googleError(
      exchange,
      403,
      "Method doesn't allow unregistered callers (callers without established identity). Please use API Key or other form of API consumer identity to call this API.",
    )
    return false
  }
  if (isAccepted(key, exchange.options)) return true
  googleError(exchange, 400, 'API key not valid. Please pass a valid API key.', [
    { '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: 'API_KEY_INVALID', domain: 'googleapis.com' },
  ])
  return false
}

function vertexTokenAccepted(exchange: Exchange): boolean {
  if (isAccepted(bearerToken(exchange.request.headers.authorization), exchange.options)) return true
  googleError(
    exchange,
    401,
    'Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential. See https://developers.google.com/identity/sign-in/web/devconsole-project.',
  )
  return false
}

function modelAllowed(exchange: Exchange, model: string, apiVersion: string, method: string): boolean {
  if (exchange.knowsModel(model)) return true
  googleError(exchange, 404, `models/${model} is not found for API version ${apiVersion}, or is not supported for ${method}. Call ListModels to see the list of available models and their supported methods.`)
  return false
}

async function generate(exchange: Exchange, model: string, streaming: boolean): Promise<void> {
  const plan = planGenerate(jsonObject(exchange.request.body), model, exchange.options, exchange.sequence)
  if (typeof plan === 'string') return googleError(exchange, 400, plan)
  if (!streaming) return exchange.json(200, generateResponse(plan))
  const sse = exchange.request.query.alt === 'sse'
  await exchange.stream({
    contentType: sse ? 'text/event-stream' : 'application/json; charset=UTF-8',
    frames: sse ? sseFrames(generateStream(plan)) : jsonArrayFrames(generateStream(plan)),
  })
}

/** Vertex `:predict` for text embedding models: `{instances:[{content}]}` -> `{predictions:[{embeddings}]}`. */
function predictEmbeddings(exchange: Exchange, model: string): void {
  const body = jsonObject(exchange.request.body)
  const instances = body?.instances
  if (!Array.isArray(instances) || instances.length === 0) return googleError(exchange, 400, 'Invalid JSON payload: instances is required.')
  const requested = (body!.parameters as { outputDimensionality?: unknown } | undefined)?.outputDimensionality
  const dimensions = typeof requested === 'number' && requested > 0 ? requested : model.includes('gemini-embedding') ? 3072 : 768
  let characters = 0
  const predictions = (instances as Array<{ content?: unknown }>).map((instance) => {
    const text = typeof instance?.content === 'string' ? instance.content : ''
    characters += text.length
    return { embeddings: { values: vectorToNumbers(embeddingVector(text, dimensions)), statistics: { token_count: estimateTokens(text), truncated: false } } }
  })
  exchange.json(200, { predictions, metadata: { billableCharacterCount: characters } })
}

const colon = '(?::|%3[Aa])'

async function geminiModelCall(exchange: Exchange, [apiVersion, model, method]: string[]): Promise<void> {
  if (!geminiKeyAccepted(exchange) || !modelAllowed(exchange, model!, apiVersion!, method!)) return
  switch (method) {
    case 'generateContent':
      return generate(exchange, model!, false)
    case 'streamGenerateContent':
      return generate(exchange, model!, true)
    case 'embedContent':
      return embedContent(exchange, model!)
    case 'batchEmbedContents':
      return batchEmbedContents(exchange, model!)
    case 'countTokens':
      return countTokens(exchange)
    default:
      return googleError(exchange, 404, `Method ${method} is not found.`)
  }
}

async function vertexGoogleCall(exchange: Exchange, [apiVersion, , , model, method]: string[]): Promise<void> {
  if (!vertexTokenAccepted(exchange) || !modelAllowed(exchange, model!, apiVersion!, method!)) return
  switch (method) {
    case 'generateContent':
      return generate(exchange, model!, false)
    case 'streamGenerateContent':
      return generate(exchange, model!, true)
    case 'predict':
      return predictEmbeddings(exchange, model!)
    case 'countTokens':
      return countTokens(exchange)
    default:
      return googleError(exchange, 404, `Method ${method} is not found.`)
  }
}

async function vertexAnthropicCall(exchange: Exchange, [, , , model]: string[]): Promise<void> {
  if (!vertexTokenAccepted(exchange)) return
  await answerMessages(exchange, model!, true, {})
}

const defaultModels = [
  'gemini-2.5-flash', 'gemini-2.5-pro', 'gemini-2.0-flash', 'text-embedding-004', 'text-embedding-005', 'gemini-embedding-001',
  // Claude on Vertex AI (`publishers/anthropic`), named with Vertex's `@version`.
  'claude-sonnet-4@20250514', 'claude-sonnet-4-5@20250929', 'claude-3-5-haiku@20241022',
]

function listModels(exchange: Exchange): void {
  if (!geminiKeyAccepted(exchange)) return
  const ids = exchange.modelList
  const models = ids.map((id) => ({
    name: `models/${id}`,
    displayName: id,
    supportedGenerationMethods: id.includes('embedding') ? ['embedContent', 'batchEmbedContents'] : ['generateContent', 'countTokens'],
  }))
  exchange.json(200, { models })
}

const routes: Route[] = [
  { method: 'POST', pattern: new RegExp(`^/(v1|v1beta)/models/([^/:%]+)${colon}(\\w+)$`), handle: geminiModelCall },
  { method: 'GET', pattern: /^\/(v1|v1beta)\/models$/, handle: (exchange) => listModels(exchange) },
  {
    method: 'POST',
    pattern: new RegExp(`^/(v1|v1beta1)/projects/([^/]+)/locations/([^/]+)/publishers/google/models/([^/:%]+)${colon}(\\w+)$`),
    handle: vertexGoogleCall,
  },
  {
    method: 'POST',
    pattern: new RegExp(`^/(v1|v1beta1)/projects/([^/]+)/locations/([^/]+)/publishers/anthropic/models/([^/:%]+)${colon}(rawPredict|streamRawPredict)$`),
    handle: vertexAnthropicCall,
  },
]

export const googleProvider: ProviderDefinition = {
  name: 'google',
  basePath: '',
  models: defaultModels,
  errorAnswer: googleErrorAnswer,
  streamErrorFrame: googleStreamError,
  async handle(exchange) {
    if (await dispatch(exchange, routes)) return
    googleError(exchange, 404, `The requested URL ${exchange.request.path} was not found on this server.`)
  },
}

export function startGoogleSimulator(options: Partial<SimulatorOptions> = {}): Promise<Simulator> {
  return startSimulator(googleProvider, options)
}
