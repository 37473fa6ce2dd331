/**
 * Amazon Bedrock Runtime simulator (https://bedrock-runtime.<region>.amazonaws.com):
 *
 * - `POST /model/{modelId}/converse` and `/converse-stream` (Converse API; the stream is AWS event
 *   stream framing: messageStart, contentBlockStart/Delta/Stop, messageStop, metadata).
 * - `POST /model/{modelId}/invoke` and `/invoke-with-response-stream` for Anthropic models (the
 *   Anthropic Messages body with `anthropic_version`; stream `chunk` events carry the Anthropic event
 *   JSON base64-encoded in `bytes`) and Titan text embeddings.
 *
 * Requests must be SigV4-signed for service `bedrock` (an `AWS4-HMAC-SHA256 Credential=...`
 * authorization and `x-amz-date`) or carry a Bedrock API key as a bearer token. With
 * `options.awsSecrets` the signature is verified (`sigv4.ts`); without, only its shape is checked
 * and `apiKeys`, when set, lists the accepted access key ids / bearer keys. Errors are
 * `{"message"}` with the exception name in `x-amzn-ErrorType`.
 */
import { startSimulator } from './base.ts'
import type { ErrorAnswer, Exchange, ProviderDefinition, Simulator, SimulatorOptions, StreamFrame } from './base.ts'
import { messageEvents, messageJson, planMessage, validateMessages } from './anthropic-wire.ts'
import type { MessagePlan } from './anthropic-wire.ts'
import { asStopList, bearerToken, embeddingVector, estimateTokens, isAccepted, splitArguments, vectorToNumbers } from './content.ts'
import { eventFrame, eventStreamContentType, exceptionFrame } from './eventstream.ts'
import { planReply, sequenceId } from './reply.ts'
import type { Reply, ReplyFinish, ToolMode } from './reply.ts'
import { dispatch, jsonObject } from './router.ts'
import { amzDateMs, expectedSignature, parseAuthorization } from './sigv4.ts'
import type { Route } from './router.ts'

const exceptions: Record<number, { name: string; message: string }> = {
  400: { name: 'ValidationException', message: 'Malformed input request, please reformat your input and try again.' },
  403: { name: 'AccessDeniedException', message: "You don't have access to the model with the specified model ID." },
  404: { name: 'ResourceNotFoundException', message: 'Could not resolve the foundation model from the provided model identifier.' },
  408: { name: 'ModelTimeoutException', message: 'Model has timed out in processing the request.' },
  424: { name: 'ModelErrorException', message: 'The model returned an error.' },
  429: { name: 'ThrottlingException', message: 'Too many requests, please wait before trying again.' },
  500: { name: 'InternalServerException', message: 'The server encountered an internal error.' },
  503: { name: 'ServiceUnavailableException', message: 'Bedrock is unable to process your request.' },
}

function exceptionFor(status: number): { name: string; message: string } {
  return exceptions[status] ?? (status >= 500 ? exceptions[500]! : exceptions[400]!)
}

export function bedrockErrorAnswer(status: number, message?: string, name?: string): ErrorAnswer {
  const exception = exceptionFor(status)
  return {
    body: { message: message ?? exception.message },
    headers: { 'x-amzn-errortype': `${name ?? exception.name}:http://internal.amazon.com/coral/com.amazon.bedrock/` },
  }
}

/** In a stream the exception's union member name is lower camel case: `throttlingException`. */
function streamException(status: number, message?: string): StreamFrame {
  const exception = status === 424 ? { name: 'ModelStreamErrorException', message: 'The model stream failed.' } : exceptionFor(status)
  return exceptionFrame(exception.name[0]!.toLowerCase() + exception.name.slice(1), message ?? exception.message)
}

function fail(exchange: Exchange, status: number, message?: string, name?: string): void {
  const answer = bedrockErrorAnswer(status, message, name)
  exchange.errorBody(status, answer.body, { ...answer.headers, ...requestIdHeader(exchange) })
}

function requestIdHeader(exchange: Exchange): Record<string, string> {
  return { 'x-amzn-requestid': `00000000-0000-4000-8000-${String(exchange.sequence).padStart(12, '0')}` }
}

const maxClockSkewMs = 5 * 60_000

function checkAuth(exchange: Exchange): boolean {
  const { request, options } = exchange
  const bearer = bearerToken(request.headers.authorization)
  if (bearer) {
    if (isAccepted(bearer, options)) return true
    fail(exchange, 403, 'Invalid API Key format: Must start with pre-defined prefix', 'AccessDeniedException')
    return false
  }
  const auth = parseAuthorization(request.headers.authorization)
  const amzDate = request.headers['x-amz-date']
  if (!auth || typeof amzDate !== 'string') {
    fail(exchange, 403, 'Missing Authentication Token', 'MissingAuthenticationTokenException')
    return false
  }
  if (auth.service !== 'bedrock') {
    fail(exchange, 403, "Credential should be scoped to correct service: 'bedrock'.", 'InvalidSignatureException')
    return false
  }
  if (!auth.signedHeaders.includes('x-amz-date') || !auth.signedHeaders.includes('host')) {
    fail(exchange, 403, "'Host' or 'x-amz-date' must be a signed header.", 'InvalidSignatureException')
    return false
  }
  const secret = options.awsSecrets?.[auth.accessKeyId]
  const known = options.awsSecrets ? secret !== undefined : !options.apiKeys || options.apiKeys.includes(auth.accessKeyId)
  if (!known) {
    fail(exchange, 403, 'The security token included in the request is invalid.', 'UnrecognizedClientException')
    return false
  }
  if (secret === undefined) return true
  const signedAt = amzDateMs(amzDate)
  if (!(Math.abs(Date.now() - signedAt) <= maxClockSkewMs)) {
    fail(exchange, 403, `Signature expired: ${amzDate} is now earlier or later than the allowed 5 minutes of skew.`, 'InvalidSignatureException')
    return false
  }
  if (expectedSignature(request, auth, secret) !== auth.signature) {
    fail(
      exchange,
      403,
      'The request signature we calculated does not match the signature you provided. Check your AWS Secret Access Key and signing method. Consult the service documentation for details.',
      'InvalidSignatureException',
    )
    return false
  }
  return true
}

/** Model ids (and inference profiles) the simulated account has access to. */
const bedrockModels = [
  'anthropic.claude-3-5-sonnet-20240620-v1:0',
  'anthropic.claude-3-5-sonnet-20241022-v2:0',
  'anthropic.claude-3-haiku-20240307-v1:0',
  'us.anthropic.claude-3-7-sonnet-20250219-v1:0',
  'amazon.titan-embed-text-v2:0',
  'cohere.embed-english-v3',
]

function modelAllowed(exchange: Exchange, modelId: string): boolean {
  if (exchange.knowsModel(modelId)) return true
  fail(exchange, 400, 'The provided model identifier is invalid.')
  return false
}

// Bedrock pads stream payloads with a `p` field so their sizes do not reveal the content.
const padding = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789'

function padded(payload: Record<string, unknown>, sequence: number): Record<string, unknown> {
  return { ...payload, p: padding.slice(0, 4 + (sequence % 40)) }
}

// ---- Converse --------------------------------------------------------------------------------

interface ConverseMessage {
  role?: unknown
  content?: unknown
}

interface ConverseBlock {
  text?: unknown
  toolResult?: unknown
}

function converseText(content: unknown): string {
  if (!Array.isArray(content)) return ''
  let text = ''
  for (const block of content as ConverseBlock[]) if (typeof block?.text === 'string') text += block.text
  return text
}

function converseToolMode(choice: unknown): ToolMode {
  const value = (choice ?? {}) as { any?: unknown; tool?: { name?: unknown } }
  if (value.any) return 'required'
  if (typeof value.tool?.name === 'string') return { name: value.tool.name }
  return 'auto'
}

const converseStopReasons: Record<ReplyFinish, string> = { stop: 'end_turn', length: 'max_tokens', tool_calls: 'tool_use', stop_sequence: 'stop_sequence' }

function validateConverse(body: Record<string, unknown> | null): string | null {
  if (!body) return 'Malformed input request, please reformat your input and try again.'
  if (!Array.isArray(body.messages) || body.messages.length === 0) return 'The model returned the following errors: messages: at least one message is required'
  const badRole = (body.messages as ConverseMessage[]).findIndex((message) => message?.role !== 'user' && message?.role !== 'assistant')
  if (badRole >= 0) {
    const role = String((body.messages[badRole] as ConverseMessage).role)
    return `1 validation error detected: Value '${role}' at 'messages.${badRole + 1}.member.role' failed to satisfy constraint: Member must satisfy enum value set: [user, assistant]`
  }
  if ((body.messages[0] as ConverseMessage).role !== 'user') {
    return 'A conversation must start with a user message. Try again with a conversation that starts with a user message.'
  }
  const maxTokens = (body.inferenceConfig as { maxTokens?: unknown } | undefined)?.maxTokens
  if (maxTokens !== undefined && (typeof maxTokens !== 'number' || maxTokens < 1)) {
    return '1 validation error detected: Value at \'inferenceConfig.maxTokens\' failed to satisfy constraint: Member must have value greater than or equal to 1'
  }
  return null
}

function planConverse(body: Record<string, unknown>, options: SimulatorOptions, sequence: number): Reply {
  const messages = body.messages as ConverseMessage[]
  let prompt = ''
  for (let i = messages.length - 1; i >= 0 && prompt === ''; i--) if (messages[i]!.role === 'user') prompt = converseText(messages[i]!.content)
  let promptCharacters = converseText(body.system).length
  for (const message of messages) promptCharacters += converseText(message.content).length + 4
  const toolConfig = (body.toolConfig ?? {}) as { tools?: Array<{ toolSpec?: { name?: unknown; inputSchema?: { json?: unknown } } }>; toolChoice?: unknown }
  const tools = (toolConfig.tools ?? []).filter((tool) => typeof tool?.toolSpec?.name === 'string')
  const last = messages.at(-1)?.content
  const inference = (body.inferenceConfig ?? {}) as { maxTokens?: number; stopSequences?: unknown }
  const additional = (body.additionalModelRequestFields ?? {}) as { thinking?: { type?: unknown } }
  return planReply(
    {
      prompt,
      promptCharacters,
      tools: tools.map((tool) => ({ name: String(tool.toolSpec!.name), schema: tool.toolSpec!.inputSchema?.json })),
      toolMode: converseToolMode(toolConfig.toolChoice),
      afterToolResult: Array.isArray(last) && (last as ConverseBlock[]).some((block) => block?.toolResult !== undefined),
      maxTokens: inference.maxTokens ?? null,
      stop: asStopList(inference.stopSequences),
      thinking: additional.thinking?.type === 'enabled',
      preambleBeforeTool: false,
      parallelToolCalls: true,
    },
    options,
    { toolCallId: sequenceId('tooluse_sim', sequence), signature: sequenceId('sig_sim', sequence) },
  )
}

function converseUsage(reply: Reply, options: SimulatorOptions): Record<string, number> {
  const usage: Record<string, number> = {
    inputTokens: reply.promptTokens,
    outputTokens: reply.outputTokens,
    totalTokens: reply.promptTokens + reply.outputTokens,
  }
  // Bedrock reports cache fields only when prompt caching took part.
  if (options.cachedTokens > 0) usage.cacheReadInputTokens = options.cachedTokens
  if (options.cacheWriteTokens > 0) usage.cacheWriteInputTokens = options.cacheWriteTokens
  return usage
}

function converseContent(reply: Reply): unknown[] {
  return reply.blocks.map((block) => {
    if (block.type === 'thinking') return { reasoningContent: { reasoningText: { text: block.pieces.join(''), signature: block.signature } } }
    if (block.type === 'text') return { text: block.pieces.join('') }
    return { toolUse: { toolUseId: block.id, name: block.name, input: block.input } }
  })
}

function* converseStreamFrames(reply: Reply, stopReason: string, usage: Record<string, number>, sequence: number): Generator<StreamFrame> {
  yield eventFrame('messageStart', padded({ role: 'assistant' }, sequence))
  for (let index = 0; index < reply.blocks.length; index++) {
    const block = reply.blocks[index]!
    const delta = (value: unknown): StreamFrame => eventFrame('contentBlockDelta', padded({ contentBlockIndex: index, delta: value }, sequence))
    if (block.type === 'thinking') {
      for (const piece of block.pieces) yield delta({ reasoningContent: { text: piece } })
      yield delta({ reasoningContent: { signature: block.signature } })
    } else if (block.type === 'text') {
      for (const piece of block.pieces) yield delta({ text: piece })
    } else {
      yield eventFrame('contentBlockStart', padded({ contentBlockIndex: index, start: { toolUse: { toolUseId: block.id, name: block.name } } }, sequence))
      for (const piece of splitArguments(block.arguments)) yield delta({ toolUse: { input: piece } })
    }
    yield eventFrame('contentBlockStop', padded({ contentBlockIndex: index }, sequence))
  }
  yield eventFrame('messageStop', padded({ stopReason }, sequence))
  yield eventFrame('metadata', padded({ usage, metrics: { latencyMs: 1 } }, sequence))
}

// What a Bedrock guardrail answers in place of the model when it intervenes.
const guardrailMessage = 'Sorry, the model cannot answer this question.'

/** A request with a `guardrailConfig` whose last user message says "unsafe" is blocked by it. */
function guardrailIntervenes(body: Record<string, unknown>): boolean {
  if (!body.guardrailConfig) return false
  const messages = body.messages as ConverseMessage[]
  const lastUser = [...messages].reverse().find((message) => message.role === 'user')
  return /\bunsafe\b/i.test(converseText(lastUser?.content))
}

async function converse(exchange: Exchange, modelId: string, streaming: boolean): Promise<void> {
  const body = jsonObject(exchange.request.body)
  const problem = validateConverse(body)
  if (problem) return fail(exchange, 400, problem)
  if (!modelAllowed(exchange, modelId)) return
  const planned = planConverse(body!, exchange.options, exchange.sequence)
  const blocked = guardrailIntervenes(body!)
  const reply: Reply = blocked ? { ...planned, blocks: [{ type: 'text', pieces: [guardrailMessage] }], finish: 'stop', outputTokens: 0, thinkingTokens: 0 } : planned
  const stopReason = blocked ? 'guardrail_intervened' : converseStopReasons[reply.finish]
  const usage = converseUsage(reply, exchange.options)
  if (streaming) {
    await exchange.stream({
      contentType: eventStreamContentType,
      headers: requestIdHeader(exchange),
      frames: converseStreamFrames(reply, stopReason, usage, exchange.sequence),
    })
    return
  }
  const answer: Record<string, unknown> = {
    output: { message: { role: 'assistant', content: converseContent(reply) } },
    stopReason,
    usage,
    metrics: { latencyMs: 1 },
  }
  if (blocked && (body!.guardrailConfig as { trace?: unknown }).trace === 'enabled') {
    answer.trace = { guardrail: { inputAssessment: { simulator: { contentPolicy: { filters: [{ type: 'VIOLENCE', confidence: 'HIGH', action: 'BLOCKED' }] } } } } }
  }
  exchange.json(200, answer, requestIdHeader(exchange))
}

// ---- InvokeModel -----------------------------------------------------------------------------

function invocationHeaders(exchange: Exchange, plan: MessagePlan): Record<string, string> {
  return {
    ...requestIdHeader(exchange),
    'x-amzn-bedrock-input-token-count': String(plan.usage.input_tokens),
    'x-amzn-bedrock-output-token-count': String(plan.usage.output_tokens),
    'x-amzn-bedrock-invocation-latency': '1',
  }
}

/** Anthropic events wrapped as `chunk` events; message_stop carries Bedrock's invocation metrics. */
function* invokeStreamFrames(plan: MessagePlan): Generator<StreamFrame> {
  for (const event of messageEvents(plan)) {
    const payload =
      event.type === 'message_stop'
        ? {
            ...event,
            'amazon-bedrock-invocationMetrics': {
              inputTokenCount: plan.usage.input_tokens,
              outputTokenCount: plan.usage.output_tokens,
              invocationLatency: 1,
              firstByteLatency: 1,
            },
          }
        : event
    yield eventFrame('chunk', { bytes: Buffer.from(JSON.stringify(payload)).toString('base64') })
  }
}

async function invokeAnthropic(exchange: Exchange, modelId: string, body: Record<string, unknown>, streaming: boolean): Promise<void> {
  const rejection = validateMessages(body, { modelInPath: true })
  if (rejection) return fail(exchange, rejection.status, rejection.message)
  const plan = planMessage(body, modelId, exchange.options, exchange.sequence, exchange.fault?.stopReason)
  if (streaming) {
    await exchange.stream({ contentType: eventStreamContentType, headers: requestIdHeader(exchange), frames: invokeStreamFrames(plan) })
    return
  }
  exchange.json(200, messageJson(plan), invocationHeaders(exchange, plan))
}

/** Titan text embeddings: `{inputText, dimensions?, normalize?}` -> `{embedding, inputTextTokenCount}`. */
function invokeTitanEmbeddings(exchange: Exchange, body: Record<string, unknown>): void {
  if (typeof body.inputText !== 'string' || body.inputText === '') return fail(exchange, 400, 'Malformed input request: #: required key [inputText] not found')
  const dimensions = body.dimensions ?? 1024
  if (dimensions !== 256 && dimensions !== 512 && dimensions !== 1024) {
    return fail(exchange, 400, `Malformed input request: #/dimensions: ${String(dimensions)} is not a valid enum value`)
  }
  const tokens = estimateTokens(body.inputText)
  exchange.json(200, { embedding: vectorToNumbers(embeddingVector(body.inputText, dimensions)), inputTextTokenCount: tokens }, {
    ...requestIdHeader(exchange),
    'x-amzn-bedrock-input-token-count': String(tokens),
  })
}

async function invoke(exchange: Exchange, modelId: string, streaming: boolean): Promise<void> {
  const body = jsonObject(exchange.request.body)
  if (!body) return fail(exchange, 400)
  if (!modelAllowed(exchange, modelId)) return
  if (modelId.includes('anthropic.')) return invokeAnthropic(exchange, modelId, body, streaming)
  if (modelId.includes('titan-embed') && !streaming) return invokeTitanEmbeddings(exchange, body)
  fail(exchange, 400, `The simulator does not serve model ${modelId} on ${streaming ? 'InvokeModelWithResponseStream' : 'InvokeModel'}.`)
}

const routes: Route[] = [
  { method: 'POST', pattern: /^\/model\/([^/]+)\/converse$/, handle: (exchange, [id]) => converse(exchange, id!, false) },
  { method: 'POST', pattern: /^\/model\/([^/]+)\/converse-stream$/, handle: (exchange, [id]) => converse(exchange, id!, true) },
  { method: 'POST', pattern: /^\/model\/([^/]+)\/invoke$/, handle: (exchange, [id]) => invoke(exchange, id!, false) },
  { method: 'POST', pattern: /^\/model\/([^/]+)\/invoke-with-response-stream$/, handle: (exchange, [id]) => invoke(exchange, id!, true) },
]

export const bedrockProvider: ProviderDefinition = {
  name: 'bedrock',
  basePath: '',
  models: bedrockModels,
  answerHeaders: requestIdHeader,
  errorAnswer: (status, message) => bedrockErrorAnswer(status, message),
  streamErrorFrame: streamException,
  async handle(exchange) {
    if (!checkAuth(exchange)) return
    if (await dispatch(exchange, routes)) return
    fail(exchange, 404, `Unknown operation ${exchange.request.method} ${exchange.request.path}`, 'UnknownOperationException')
  },
}

export function startBedrockSimulator(options: Partial<SimulatorOptions> = {}): Promise<Simulator> {
  return startSimulator(bedrockProvider, options)
}
