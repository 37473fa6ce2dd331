/**
 * Azure OpenAI simulator (https://<resource>.openai.azure.com): OpenAI bodies under
 * `/openai/deployments/{deployment}/{chat/completions|completions|embeddings}?api-version=...`
 * and the v1 surface `/openai/v1/...` (model = deployment in the body, no api-version).
 *
 * Auth by `api-key` header or Entra ID bearer token. Deployments are `options.models` (default
 * below); an unknown one is 404 `DeploymentNotFound`. Answers carry Azure's content-filter
 * annotations (`prompt_filter_results`, per-choice `content_filter_results`, and the stream's
 * leading filter chunk); a prompt containing "unsafe" is refused with 400 `content_filter`.
 */
import { startSimulator } from './base.ts'
import type { ErrorAnswer, Exchange, ProviderDefinition, Simulator, SimulatorOptions } from './base.ts'
import { bearerToken, isAccepted, textOf } from './content.ts'
import { chatCompletions, lastUserText, openaiChatDialect } from './openai-chat.ts'
import type { ChatDialect } from './openai-chat.ts'
import { embeddings, openaiErrorBody, openaiErrorShape, openaiStreamError, textCompletions } from './openai-wire.ts'
import { dispatch, jsonObject } from './router.ts'
import type { Route } from './router.ts'

const defaultDeployments = ['gpt-4o', 'gpt-4o-mini', 'text-embedding-3-small', 'gpt-35-turbo-instruct']

function azureError(code: string, message: string): unknown {
  return { error: { code, message } }
}

const statusMessages: Record<number, string> = {
  401: 'Access denied due to invalid subscription key or wrong API endpoint. Make sure to provide a valid key for an active subscription and use a correct regional API endpoint for your resource.',
  404: 'Resource not found',
  429: 'Requests to the ChatCompletions_Create Operation under Azure OpenAI API version 2024-10-21 have exceeded token rate limit of your current OpenAI S0 pricing tier. Please retry after 1 second.',
  500: 'The server had an error processing your request.',
  503: 'The service is temporarily unable to process your request. Please try again later.',
}

/** Service-level failures use Azure's own `{code, message}`; validation errors are OpenAI's. */
export function azureErrorAnswer(status: number, message?: string): ErrorAnswer {
  const known = statusMessages[status]
  if (known) return { body: azureError(String(status), message ?? known) }
  return { body: openaiErrorBody(status, message) }
}

const safe = { filtered: false, severity: 'safe' }
const contentFilterResults = { hate: safe, self_harm: safe, sexual: safe, violence: safe }
const promptFilterResults = [{ prompt_index: 0, content_filter_results: contentFilterResults }]

function headers(exchange: Exchange): Record<string, string> {
  const id = `00000000-0000-4000-a000-${String(exchange.sequence).padStart(12, '0')}`
  return { 'apim-request-id': id, 'x-request-id': id, 'x-ms-region': 'East US', 'x-ratelimit-remaining-requests': '999', 'x-ratelimit-remaining-tokens': '999000' }
}

const dialect: ChatDialect = {
  ...openaiChatDialect,
  errorBody: openaiErrorShape,
  headers,
  responseFields: { system_fingerprint: 'fp_simulator' },
  choiceFields: { content_filter_results: contentFilterResults },
  completionFields: { prompt_filter_results: promptFilterResults },
  // Azure opens a stream with a chunk that only carries the prompt's filter results.
  preludeChunks: () => [{ choices: [], created: 0, id: '', model: '', object: '', prompt_filter_results: promptFilterResults }],
}

function checkAuth(exchange: Exchange): boolean {
  const { headers: requestHeaders } = exchange.request
  const credential = typeof requestHeaders['api-key'] === 'string' ? requestHeaders['api-key'] : bearerToken(requestHeaders.authorization)
  if (isAccepted(credential, exchange.options)) return true
  exchange.errorBody(401, azureError('401', statusMessages[401]!))
  return false
}

function deploymentKnown(exchange: Exchange, deployment: string): boolean {
  if (exchange.knowsModel(deployment)) return true
  exchange.errorBody(
    404,
    azureError('DeploymentNotFound', 'The API deployment for this resource does not exist. If you created the deployment within the last 5 minutes, please wait a moment and try again.'),
  )
  return false
}

/** The content management policy refuses prompts that mention "unsafe". */
function filtered(exchange: Exchange): boolean {
  const body = jsonObject(exchange.request.body)
  const prompt = Array.isArray(body?.messages) ? lastUserText(body.messages as Array<{ role?: unknown; content?: unknown }>) : textOf(body?.prompt)
  if (!/\bunsafe\b/i.test(prompt)) return false
  exchange.errorBody(400, {
    error: {
      message:
        "The response was filtered due to the prompt triggering Azure OpenAI's content management policy. Please modify your prompt and retry. To learn more about our content filtering policies please read our documentation: https://go.microsoft.com/fwlink/?linkid=2198766",
      type: null,
      param: 'prompt',
      code: 'content_filter',
      status: 400,
      innererror: {
        code: 'ResponsibleAIPolicyViolation',
        content_filter_result: { ...contentFilterResults, violence: { filtered: true, severity: 'high' } },
      },
    },
  })
  return true
}

type Operation = 'chat/completions' | 'completions' | 'embeddings'

async function operate(exchange: Exchange, deployment: string, operation: Operation): Promise<void> {
  if (!deploymentKnown(exchange, deployment)) return
  if (operation === 'embeddings') return embeddings(exchange, dialect, deployment)
  if (filtered(exchange)) return
  if (operation === 'completions') return textCompletions(exchange, dialect, deployment)
  return chatCompletions(exchange, dialect, deployment)
}

async function deploymentRoute(exchange: Exchange, [deployment, operation]: string[]): Promise<void> {
  if (!exchange.request.query['api-version']) return exchange.errorBody(404, azureError('404', 'Resource not found'))
  return operate(exchange, deployment!, operation as Operation)
}

async function v1Route(exchange: Exchange, [operation]: string[]): Promise<void> {
  const model = jsonObject(exchange.request.body)?.model
  if (typeof model !== 'string') return exchange.errorBody(400, openaiErrorBody(400, 'you must provide a model parameter', null, 'model'))
  return operate(exchange, model, operation as Operation)
}

const routes: Route[] = [
  { method: 'POST', pattern: /^\/openai\/deployments\/([^/]+)\/(chat\/completions|completions|embeddings)$/, handle: deploymentRoute },
  { method: 'POST', pattern: /^\/openai\/v1\/(chat\/completions|completions|embeddings)$/, handle: v1Route },
]

export const azureProvider: ProviderDefinition = {
  name: 'azure',
  basePath: '/openai',
  models: defaultDeployments,
  answerHeaders: headers,
  errorAnswer: azureErrorAnswer,
  streamErrorFrame: openaiStreamError,
  async handle(exchange) {
    if (!checkAuth(exchange)) return
    if (await dispatch(exchange, routes)) return
    exchange.errorBody(404, azureError('404', 'Resource not found'))
  },
}

export function startAzureSimulator(options: Partial<SimulatorOptions> = {}): Promise<Simulator> {
  return startSimulator(azureProvider, options)
}
