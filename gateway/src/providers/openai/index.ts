/**
 * OpenAI: the canonical wire format, so the transforms are identities plus the few rewrites the
 * gateway owns (the model name the provider knows). OpenAI-compatible providers reuse this adapter
 * through `openai-compatible.ts` with their own base URL and quirks.
 */
import type { ProviderAdapter, ProviderErrorInfo, StreamTransform, TargetContext, Translated } from '../adapter.ts'
import { MalformedResponseError, ProviderStreamError } from '../adapter.ts'
import type {
  ChatChunk,
  ChatRequest,
  ChatResponse,
  CompletionRequest,
  CompletionResponse,
  EmbeddingsRequest,
  EmbeddingsResponse,
  FinishReason,
  OpenAIUsage,
  Usage,
} from '../canonical.ts'
import { emptyUsage, finishReasonFromOpenAI, usageFromOpenAI } from '../canonical.ts'
import { errorInfo, fallbackMessage, isRecord } from '../shared/errors.ts'

export function jsonPost(path: string, body: unknown): Translated {
  return { upstream: { method: 'POST', path, headers: {}, body }, warnings: [] }
}

function withModel<T extends { model: string }>(request: T, target: TargetContext): T {
  return request.model === target.upstreamModel ? request : { ...request, model: target.upstreamModel }
}

type StreamingRequest = { model: string; stream?: boolean | null; stream_options?: { include_usage?: boolean } | null }

/**
 * A stream always asks upstream for its usage (`stream_options.include_usage`), so usage records
 * carry the provider's token counts rather than estimates; the stream transform drops the usage
 * chunk again when the client did not ask for it.
 */
function withStreamUsage<T extends StreamingRequest>(request: T): T {
  if (request.stream !== true || request.stream_options?.include_usage === true) return request
  return { ...request, stream_options: { ...request.stream_options, include_usage: true } }
}

function expectObject(body: unknown, object: string): Record<string, unknown> {
  if (!isRecord(body) || body.object !== object) throw new MalformedResponseError(`expected an object of type ${object}`)
  return body
}

interface OpenAIStreamState {
  usage: Usage
  finishReason: FinishReason
  /** The usage was asked for upstream, not by the client: drop it from the chunks. */
  stripUsage: boolean
}

const USAGE_OBJECT = '"usage":{'
const FINISH_REASON = '"finish_reason":"'
/** `FINISH_REASON` without its opening quote (see `indexOfQuoted`). */
const FINISH_REASON_WORD = FINISH_REASON.slice(1)
const QUOTE = 0x22
/** Every event that `relay.observe` (or `step`) must see holds one of these; the rest are relayed unread. */
const RELAY_MARKERS: readonly string[] = ['"error"', USAGE_OBJECT, FINISH_REASON]

/**
 * Where a quote followed by `word` first occurs in `text`: `word` is searched for and the quote
 * before it checked. A search for a needle that starts with a quote stops at every quote of the
 * JSON and cost several times as much.
 */
function indexOfQuoted(text: string, word: string): number {
  for (let at = text.indexOf(word, 1); at !== -1; at = text.indexOf(word, at + 1)) {
    if (text.charCodeAt(at - 1) === QUOTE) return at - 1
  }
  return -1
}

/**
 * The first `finish_reason` string of an event's JSON text (the first choice's, as `step` reads it):
 * null when there is none, undefined when it holds an escape and only parsing can say.
 */
function finishReasonText(raw: string): string | null | undefined {
  const at = indexOfQuoted(raw, FINISH_REASON_WORD)
  if (at === -1) return null
  const from = at + FINISH_REASON.length
  const end = raw.indexOf('"', from)
  const reason = end === -1 ? '' : raw.slice(from, end)
  return end === -1 || reason.includes('\\') ? undefined : reason
}

/**
 * Which of a quoted `"error"` and the usage object an event's JSON text holds, by one alternation:
 * `includes` of each (needles that start with a quote, which JSON has every few bytes) cost about
 * four times as much on the few events `observe` sees.
 */
const ERROR_OR_USAGE = /"error"|"usage":\{/g

function errorOrUsage(raw: string): { error: boolean; usage: boolean } {
  let error = false
  let usage = false
  ERROR_OR_USAGE.lastIndex = 0
  for (let match = ERROR_OR_USAGE.exec(raw); match !== null && !error; match = ERROR_OR_USAGE.exec(raw)) {
    if (match[0] === USAGE_OBJECT) usage = true
    else error = true
  }
  return { error, usage }
}

function parsedOrNull(raw: string): Record<string, unknown> | null {
  try {
    const value: unknown = JSON.parse(raw)
    return isRecord(value) ? value : null
  } catch {
    return null
  }
}

/**
 * Chunks pass through untouched; the state only remembers what accounting needs. Both chat and
 * text-completion chunks carry `choices[].finish_reason` and an optional trailing `usage`.
 */
export function openAIStream<Chunk extends { choices: Array<{ finish_reason: string | null }>; usage?: OpenAIUsage | null }>(): StreamTransform<OpenAIStreamState, Chunk> {
  const account = (state: OpenAIStreamState, chunk: Chunk): void => {
    const reason = chunk.choices?.[0]?.finish_reason
    if (reason) state.finishReason = finishReasonFromOpenAI(reason)
    if (chunk.usage) state.usage = usageFromOpenAI(chunk.usage)
  }
  return {
    start: (context) => ({ usage: emptyUsage(), finishReason: { unified: 'other' }, stripUsage: context.clientIncludeUsage === false }),
    step(state, event) {
      const chunk = event.data as Chunk
      if (!isRecord(chunk)) return []
      // OpenAI-compatible servers report a failure after the headers as an in-band `{"error":…}`.
      const inBandError = (chunk as { error?: unknown }).error
      if (isRecord(inBandError)) throw new ProviderStreamError(streamErrorInfo(inBandError))
      account(state, chunk)
      if (!state.stripUsage || !('usage' in chunk)) return [chunk]
      // Without include_usage the client gets no usage chunk, and no `usage` field on the others
      // (checked before copying: the usage chunk, the one that carries it, is dropped whole).
      if ((chunk.choices ?? []).length === 0) return []
      const { usage: _usage, ...rest } = chunk
      return [rest as Chunk]
    },
    relay: {
      markers: RELAY_MARKERS,
      observe(state, raw) {
        const holds = errorOrUsage(raw)
        // A quoted "error" key may be an in-band error: `step` decides, with the parsed event.
        if (holds.error) return false
        if (holds.usage) {
          // Usage the client did not ask for is dropped by `step`.
          if (state.stripUsage) return false
          const chunk = parsedOrNull(raw)
          if (chunk === null) return false
          account(state, chunk as Chunk)
          return true
        }
        // A finishing event: its reason is read off the text (a plain word), the event left unparsed.
        const reason = finishReasonText(raw)
        if (reason === undefined) {
          const chunk = parsedOrNull(raw)
          if (chunk === null) return false
          account(state, chunk as Chunk)
        } else if (reason !== null) {
          state.finishReason = finishReasonFromOpenAI(reason)
        }
        return true
      },
    },
    finish: (state) => ({ chunks: [], usage: state.usage, finishReason: state.finishReason }),
  }
}

/** An in-band stream error has no HTTP status of its own: a server-side failure unless it says otherwise. */
function streamErrorInfo(error: Record<string, unknown>): ProviderErrorInfo {
  const status = typeof error.code === 'number' ? error.code : error.type === 'invalid_request_error' ? 400 : 500
  return parseOpenAIError(status, {}, { error })
}

export function parseOpenAIError(status: number, headers: Readonly<Record<string, string>>, body: unknown): ProviderErrorInfo {
  const error = isRecord(body) && isRecord(body.error) ? body.error : null
  if (!error) return errorInfo(status, headers, { message: fallbackMessage(status, body) })
  return errorInfo(status, headers, {
    message: typeof error.message === 'string' ? error.message : fallbackMessage(status, body),
    providerCode: typeof error.code === 'string' ? error.code : typeof error.type === 'string' ? error.type : null,
    param: typeof error.param === 'string' ? error.param : null,
  })
}

export interface OpenAIShapedOptions {
  kind: string
  defaultBaseUrl: string | null
  /** Paths relative to the base URL; some compatible providers mount them elsewhere. */
  paths?: { chat?: string; completions?: string; embeddings?: string }
  supports?: { completions?: boolean; embeddings?: boolean; passthrough?: boolean }
  auth?: ProviderAdapter['auth']
}

export function openAIShapedAdapter(options: OpenAIShapedOptions): ProviderAdapter {
  const paths = { chat: '/chat/completions', completions: '/completions', embeddings: '/embeddings', ...options.paths }
  const supports = { completions: true, embeddings: true, passthrough: true, ...options.supports }
  return {
    kind: options.kind,
    defaultBaseUrl: options.defaultBaseUrl,
    auth: options.auth ?? { type: 'bearer' },
    passthrough: supports.passthrough,
    chat: {
      framing: 'sse',
      toUpstream: (request: ChatRequest, target) => jsonPost(paths.chat, withStreamUsage(withModel(request, target))),
      fromUpstream: (body) => expectObject(body, 'chat.completion') as unknown as ChatResponse,
      usage: (response) => usageFromOpenAI(response.usage),
      stream: openAIStream<ChatChunk>(),
    },
    ...(supports.completions && {
      completions: {
        framing: 'sse' as const,
        toUpstream: (request: CompletionRequest, target: TargetContext) => jsonPost(paths.completions, withStreamUsage(withModel(request, target))),
        fromUpstream: (body: unknown) => expectObject(body, 'text_completion') as unknown as CompletionResponse,
        usage: (response: CompletionResponse) => usageFromOpenAI(response.usage),
        stream: openAIStream<CompletionResponse>(),
      },
    }),
    ...(supports.embeddings && {
      embeddings: {
        toUpstream: (request: EmbeddingsRequest, target: TargetContext) => jsonPost(paths.embeddings, withModel(request, target)),
        fromUpstream: (body: unknown) => expectObject(body, 'list') as unknown as EmbeddingsResponse,
        usage: (response: EmbeddingsResponse) => ({ inputTokens: response.usage?.prompt_tokens ?? 0, outputTokens: 0 }),
      },
    }),
    parseError: parseOpenAIError,
  }
}

export const openai = openAIShapedAdapter({ kind: 'openai', defaultBaseUrl: 'https://api.openai.com/v1' })
