/**
 * The Gemini `generateContent` wire format, shared by the Gemini API and Vertex AI (same bodies,
 * different paths and auth): request mapping, the response, its stream, embeddings and Google's
 * error envelope `{"error":{"code","message","status","details"?}}`.
 */
import type { ErrorAnswer, Exchange, SimulatorOptions, StreamFrame } from './base.ts'
import { asStopList, embeddingVector, vectorToNumbers } from './content.ts'
import { planReply, sequenceId } from './reply.ts'
import type { Reply, ToolMode } from './reply.ts'
import { jsonObject } from './router.ts'

const statuses: Record<number, { status: string; message: string }> = {
  400: { status: 'INVALID_ARGUMENT', message: 'Request contains an invalid argument.' },
  401: { status: 'UNAUTHENTICATED', message: 'Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential.' },
  403: { status: 'PERMISSION_DENIED', message: 'The caller does not have permission' },
  404: { status: 'NOT_FOUND', message: 'Requested entity was not found.' },
  409: { status: 'ABORTED', message: 'The operation was aborted.' },
  429: { status: 'RESOURCE_EXHAUSTED', message: 'Resource has been exhausted (e.g. check quota).' },
  499: { status: 'CANCELLED', message: 'The operation was cancelled.' },
  500: { status: 'INTERNAL', message: 'An internal error has occurred. Please retry or report in https://developers.generativeai.google/guide/troubleshooting' },
  503: { status: 'UNAVAILABLE', message: 'The model is overloaded. Please try again later.' },
  504: { status: 'DEADLINE_EXCEEDED', message: 'Deadline expired before operation could complete.' },
}

export function googleErrorBody(status: number, message?: string, details?: unknown[]): unknown {
  const known = statuses[status] ?? (status >= 500 ? statuses[500]! : statuses[400]!)
  const error: Record<string, unknown> = { code: status, message: message ?? known.message, status: known.status }
  if (details) error.details = details
  return { error }
}

/** A 429 carries a RetryInfo detail, as Google APIs do. */
export function googleErrorAnswer(status: number, message?: string): ErrorAnswer {
  const details = status === 429 ? [{ '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: '1s' }] : undefined
  return { body: googleErrorBody(status, message, details) }
}

export function googleStreamError(status: number, message?: string): StreamFrame {
  return `data: ${JSON.stringify(googleErrorBody(status, message))}\r\n\r\n`
}

export function googleError(exchange: Exchange, status: number, message: string, details?: unknown[]): void {
  exchange.errorBody(status, googleErrorBody(status, message, details))
}

interface Part {
  text?: unknown
  functionResponse?: unknown
}

interface Content {
  role?: unknown
  parts?: Part[]
}

function partsText(parts: unknown): string {
  if (!Array.isArray(parts)) return ''
  let text = ''
  for (const part of parts as Part[]) if (typeof part?.text === 'string') text += part.text
  return text
}

function toolMode(config: unknown): ToolMode {
  const { mode, allowedFunctionNames } = ((config as { functionCallingConfig?: unknown } | undefined)?.functionCallingConfig ?? {}) as {
    mode?: unknown
    allowedFunctionNames?: unknown
  }
  if (mode === 'NONE') return 'none'
  if (mode === 'ANY') {
    return Array.isArray(allowedFunctionNames) && allowedFunctionNames.length === 1 && typeof allowedFunctionNames[0] === 'string'
      ? { name: allowedFunctionNames[0] }
      : 'required'
  }
  return 'auto'
}

interface GenerationConfig {
  maxOutputTokens?: number
  stopSequences?: unknown
  candidateCount?: number
  thinkingConfig?: { includeThoughts?: boolean }
  responseMimeType?: string
  responseSchema?: unknown
  responseJsonSchema?: unknown
}

export interface GeminiPlan {
  reply: Reply
  candidateCount: number
  /** The prompt asks for something unsafe: the candidate is blocked with `finishReason: SAFETY`. */
  blocked: boolean
  usage: Record<string, unknown>
  model: string
  responseId: string
}

/** Validates and plans a generateContent body; a string is the 400 message. */
export function planGenerate(body: Record<string, unknown> | null, model: string, options: SimulatorOptions, sequence: number): GeminiPlan | string {
  if (!body) return 'Invalid JSON payload received.'
  if (!Array.isArray(body.contents) || body.contents.length === 0) return '* GenerateContentRequest.contents: contents is not specified\n'
  const contents = body.contents as Content[]
  // Gemini knows only `user` and `model`; an OpenAI `assistant` or `system` role is refused.
  if (contents.some((content) => content?.role !== undefined && content.role !== 'user' && content.role !== 'model')) return 'Please use a valid role: user, model.'
  const config = (body.generationConfig ?? {}) as GenerationConfig
  let prompt = ''
  for (let i = contents.length - 1; i >= 0 && prompt === ''; i--) {
    if (contents[i]!.role === undefined || contents[i]!.role === 'user') prompt = partsText(contents[i]!.parts)
  }
  let promptCharacters = partsText((body.systemInstruction as Content | undefined)?.parts).length
  for (const content of contents) promptCharacters += partsText(content.parts).length + 4
  const declarations = ((body.tools ?? []) as Array<{ functionDeclarations?: Array<{ name?: unknown; parameters?: unknown; parametersJsonSchema?: unknown }> }>)
    .flatMap((tool) => tool?.functionDeclarations ?? [])
    .filter((declaration) => typeof declaration?.name === 'string')
  const lastParts = contents.at(-1)?.parts ?? []
  const includeThoughts = config.thinkingConfig?.includeThoughts === true
  const reply = planReply(
    {
      prompt,
      promptCharacters,
      tools: declarations.map((declaration) => ({ name: String(declaration.name), schema: declaration.parameters ?? declaration.parametersJsonSchema })),
      toolMode: toolMode(body.toolConfig),
      afterToolResult: lastParts.some((part) => part?.functionResponse !== undefined),
      maxTokens: config.maxOutputTokens ?? null,
      stop: asStopList(config.stopSequences),
      thinking: includeThoughts,
      preambleBeforeTool: false,
      parallelToolCalls: true,
      json: config.responseMimeType === 'application/json' ? { schema: config.responseJsonSchema ?? config.responseSchema } : undefined,
    },
    options,
    { toolCallId: sequenceId('fc_sim', sequence), signature: '' },
  )
  const candidateCount = config.candidateCount ?? 1
  const thoughts = reply.thinkingTokens + options.reasoningTokens
  const candidatesTokens = (reply.outputTokens - reply.thinkingTokens) * candidateCount
  const usage: Record<string, unknown> = {
    promptTokenCount: reply.promptTokens,
    candidatesTokenCount: candidatesTokens,
    totalTokenCount: reply.promptTokens + candidatesTokens + thoughts,
    promptTokensDetails: [{ modality: 'TEXT', tokenCount: reply.promptTokens }],
  }
  // Gemini counts cached tokens inside promptTokenCount and reports the part separately.
  if (options.cachedTokens > 0) usage.cachedContentTokenCount = Math.min(options.cachedTokens, reply.promptTokens)
  if (thoughts > 0) usage.thoughtsTokenCount = thoughts
  return { reply, candidateCount, blocked: /\bunsafe\b/i.test(prompt), usage, model, responseId: sequenceId('resp_sim', sequence) }
}

const safetyRatings = [
  { category: 'HARM_CATEGORY_HATE_SPEECH', probability: 'NEGLIGIBLE' },
  { category: 'HARM_CATEGORY_DANGEROUS_CONTENT', probability: 'NEGLIGIBLE' },
  { category: 'HARM_CATEGORY_HARASSMENT', probability: 'NEGLIGIBLE' },
  { category: 'HARM_CATEGORY_SEXUALLY_EXPLICIT', probability: 'NEGLIGIBLE' },
]

const blockedRatings = safetyRatings.map((rating) =>
  rating.category === 'HARM_CATEGORY_DANGEROUS_CONTENT' ? { ...rating, probability: 'HIGH', blocked: true } : rating,
)

function finishReason(plan: GeminiPlan): string {
  if (plan.blocked) return 'SAFETY'
  return plan.reply.finish === 'length' ? 'MAX_TOKENS' : 'STOP'
}

function fullParts(reply: Reply): unknown[] {
  return reply.blocks.map((block) => {
    if (block.type === 'thinking') return { text: block.pieces.join(''), thought: true }
    if (block.type === 'text') return { text: block.pieces.join('') }
    return { functionCall: { name: block.name, args: block.input } }
  })
}

function candidates(plan: GeminiPlan, parts: unknown[] | null, finish: string | null): unknown[] {
  const list = []
  for (let index = 0; index < plan.candidateCount; index++) {
    const candidate: Record<string, unknown> = { index }
    if (parts) candidate.content = { parts, role: 'model' }
    if (finish) {
      candidate.finishReason = finish
      candidate.safetyRatings = plan.blocked ? blockedRatings : safetyRatings
    }
    list.push(candidate)
  }
  return list
}

export function generateResponse(plan: GeminiPlan): unknown {
  return {
    candidates: candidates(plan, plan.blocked ? null : fullParts(plan.reply), finishReason(plan)),
    usageMetadata: plan.usage,
    modelVersion: plan.model,
    responseId: plan.responseId,
  }
}

/** The stream's responses: one per piece (a function call arrives whole), the last with finishReason. */
export function* generateStream(plan: GeminiPlan): Generator<unknown> {
  const frame = (parts: unknown[] | null, finish: string | null): unknown => ({
    candidates: candidates(plan, parts, finish),
    usageMetadata: finish ? plan.usage : { promptTokenCount: plan.usage.promptTokenCount, totalTokenCount: plan.usage.promptTokenCount },
    modelVersion: plan.model,
    responseId: plan.responseId,
  })
  if (plan.blocked) {
    yield frame(null, 'SAFETY')
    return
  }
  const pieces: unknown[][] = []
  for (const block of plan.reply.blocks) {
    if (block.type === 'thinking') for (const piece of block.pieces) pieces.push([{ text: piece, thought: true }])
    else if (block.type === 'text') for (const piece of block.pieces) pieces.push([{ text: piece }])
    else pieces.push([{ functionCall: { name: block.name, args: block.input } }])
  }
  for (let i = 0; i < pieces.length; i++) {
    const last = i === pieces.length - 1
    yield frame(pieces[i]!, last ? finishReason(plan) : null)
  }
}

/** `alt=sse`: SSE events separated by CRLF pairs, as Google sends them. */
export function* sseFrames(responses: Iterable<unknown>): Generator<StreamFrame> {
  for (const response of responses) yield `data: ${JSON.stringify(response)}\r\n\r\n`
}

/** Without `alt=sse` the stream is one JSON array, sent element by element. */
export function* jsonArrayFrames(responses: Iterable<unknown>): Generator<StreamFrame> {
  let first = true
  for (const response of responses) {
    yield (first ? '[' : ',\r\n') + JSON.stringify(response)
    first = false
  }
  yield first ? '[]' : ']'
}

function embeddingDimensions(model: string, requested: unknown): number {
  const native = model.includes('gemini-embedding') ? 3072 : 768
  return typeof requested === 'number' && requested > 0 && requested <= native ? requested : native
}

/** `:embedContent` `{content:{parts}, outputDimensionality?}` -> `{embedding:{values}}`. */
export function embedContent(exchange: Exchange, model: string): void {
  const body = jsonObject(exchange.request.body)
  const text = partsText((body?.content as Content | undefined)?.parts)
  if (!body || text === '') return googleError(exchange, 400, '* EmbedContentRequest.content: contents is not specified\n')
  const values = vectorToNumbers(embeddingVector(text, embeddingDimensions(model, body.outputDimensionality)))
  exchange.json(200, { embedding: { values } })
}

/** `:batchEmbedContents` `{requests:[{model, content}]}` -> `{embeddings:[{values}]}`. */
export function batchEmbedContents(exchange: Exchange, model: string): void {
  const requests = jsonObject(exchange.request.body)?.requests
  if (!Array.isArray(requests) || requests.length === 0) return googleError(exchange, 400, '* BatchEmbedContentsRequest.requests: requests is not specified\n')
  const embeddings = (requests as Array<{ content?: Content; outputDimensionality?: unknown }>).map((request) => ({
    values: vectorToNumbers(embeddingVector(partsText(request?.content?.parts), embeddingDimensions(model, request?.outputDimensionality))),
  }))
  exchange.json(200, { embeddings })
}

/** `:countTokens` -> `{totalTokens}`. */
export function countTokens(exchange: Exchange): void {
  const body = jsonObject(exchange.request.body)
  const contents = (body?.contents ?? (body?.generateContentRequest as { contents?: unknown } | undefined)?.contents ?? []) as Content[]
  let characters = 0
  for (const content of contents) characters += partsText(content?.parts).length
  exchange.json(200, { totalTokens: Math.ceil(characters / 4) })
}
