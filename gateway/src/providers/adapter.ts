/**
 * The provider adapter contract. An adapter is pure: request transform, response transform, a
 * stream step with explicit state, and an error parser. No I/O, no clock, no randomness, no env, no
 * logging. Everything variable (ids, timestamps, the requested model) arrives in a context, so
 * fixture tests are deterministic. Credentials never pass through an adapter: the transport's
 * signers (`upstream/signers.ts`) apply them according to `auth`.
 */
import type {
  ChatChunk,
  ChatRequest,
  ChatResponse,
  CompletionRequest,
  CompletionResponse,
  EmbeddingsRequest,
  EmbeddingsResponse,
  FinishReason,
  OcrRequest,
  OcrResponse,
  RerankRequest,
  RerankResponse,
  Usage,
  Warning,
} from './canonical.ts'
export type { Warning } from './canonical.ts'

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE'

export interface UpstreamRequest {
  method: HttpMethod
  /** Path and query, appended to the target's base URL (which may carry a path prefix). */
  path: string
  headers: Record<string, string>
  /** A JSON value (the transport serialises it) or raw bytes; absent for GET/DELETE. */
  body?: unknown
}

export interface TargetContext {
  /** The model name the provider knows (after `@slug/` stripping and any override). */
  upstreamModel: string
  /** Provider-specific options from the snapshot: api version, deployment, region, project... */
  options: Readonly<Record<string, string>>
}

export interface ResponseContext {
  /** The model the client asked for, echoed where a provider omits it. */
  requestModel: string
  /** Id to use where the provider does not supply one. */
  responseId: string
  /** Unix seconds to use where the provider does not supply a timestamp. */
  createdAt: number
  /**
   * Whether the client asked for stream usage (`stream_options.include_usage`). Adapters that ask
   * upstream for usage anyway, for accounting, drop it from what the client gets when this is false.
   * Undefined: not a client stream (the stream's usage chunks are kept).
   */
  clientIncludeUsage?: boolean
}

/**
 * One decoded frame of an upstream stream. Framing (SSE, AWS event stream) is decoded once, in
 * `upstream/framing/`; adapters never see bytes. `data` is the parsed JSON payload; the SSE
 * terminator `[DONE]` ends the stream and never reaches an adapter.
 */
export interface UpstreamEvent {
  event?: string
  data: unknown
  /** The JSON text `data` was parsed from, when the framing had it (SSE). */
  raw?: string
}

/**
 * How the AWS event-stream framing names an in-band failure: `exception:<type>` for an exception
 * message, `error:<code>` for an error message. Adapters (Bedrock) read these names.
 */
export const awsExceptionPrefix = 'exception:'
export const awsErrorPrefix = 'error:'

export interface StreamResult<Chunk> {
  chunks: Chunk[]
  usage: Usage
  finishReason: FinishReason
}

export interface StreamTransform<State, Chunk> {
  /** Fresh state for one response. */
  start(context: ResponseContext): State
  /** Translate one upstream event. May mutate `state`, nothing else. Throws `ProviderStreamError` on an in-band error event. */
  step(state: State, event: UpstreamEvent): Chunk[]
  /** The stream ended: any trailing chunks, and the usage and finish reason accounting needs. */
  finish(state: State): StreamResult<Chunk>
  /**
   * For transforms whose chunks are the provider's own events unchanged (OpenAI-shaped streams):
   * how such a stream is relayed as the provider's bytes when no stage reads its chunks.
   */
  relay?: RawRelay<State>
}

/**
 * Relaying a stream as the provider's bytes: only events whose JSON text holds one of `markers`
 * (or that are named) are decoded and shown to `observe`; every other event reaches the client
 * unread, so a marker must appear in every event that accounting or `step` needs to see.
 */
export interface RawRelay<State> {
  readonly markers: readonly string[]
  /**
   * Accounts for one such event from its JSON text (parsing it only if it must). True: the event
   * is relayed as it is. False: it goes through `step` instead (an in-band error, usage to drop).
   */
  observe(state: State, raw: string): boolean
}

export type Framing = 'sse' | 'aws-eventstream'

export interface Translated {
  upstream: UpstreamRequest
  warnings: Warning[]
}

export interface JsonOperation<Request, Response> {
  toUpstream(request: Request, target: TargetContext): Translated
  fromUpstream(body: unknown, context: ResponseContext): Response
  usage(response: Response): Usage
}

export interface StreamingOperation<Request, Response, Chunk> extends JsonOperation<Request, Response> {
  /** `toUpstream` reads `request.stream` and picks the streaming path or flag itself. */
  framing: Framing
  // The state type is private to each adapter; the transport treats it as opaque.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  stream: StreamTransform<any, Chunk>
}

export type CompletionChunk = CompletionResponse

/**
 * A native Anthropic Messages operation. Bodies are Anthropic's own JSON objects; stream chunks are
 * Anthropic events (`{ event: <type>, data }`) to be written back as SSE unchanged, while the
 * transform keeps the usage and stop reason accounting needs.
 */
export interface NativeMessagesOperation extends StreamingOperation<Record<string, unknown>, Record<string, unknown>, UpstreamEvent> {
  /** Whether this target can take a Messages body as is (Bedrock: only Anthropic models). */
  accepts(target: TargetContext): boolean
}

/** How the transport applies a provider credential. */
export type AuthScheme =
  | { type: 'bearer' }
  | { type: 'header'; name: string }
  | { type: 'query'; name: string }
  | { type: 'aws-sigv4'; service: string }
  | { type: 'google-oauth' }
  | { type: 'azure' }
  | { type: 'none' }

export type ErrorFault = 'client' | 'upstream'

/** What the gateway learns from a provider's error answer. */
export interface ProviderErrorInfo {
  status: number
  message: string
  /** Provider's own error type or code, e.g. `overloaded_error`, `rate_limit_exceeded`. */
  providerCode: string | null
  param: string | null
  fault: ErrorFault
  retryable: boolean
  /** From `retry-after-ms` / `retry-after` headers or the body. */
  retryAfterMs: number | null
  /** The provider's id for the failed request (header or body), for the log line an operator quotes to the provider. */
  providerRequestId?: string
}

/** Thrown by a stream step when the provider sends an error in-band (e.g. Anthropic `event: error`). */
export class ProviderStreamError extends Error {
  readonly info: ProviderErrorInfo
  constructor(info: ProviderErrorInfo) {
    super(info.message)
    this.name = 'ProviderStreamError'
    this.info = info
  }
}

/** Thrown by `fromUpstream` when a body does not have the documented shape. */
export class MalformedResponseError extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'MalformedResponseError'
  }
}

export interface ProviderAdapter {
  /** Equals the registry key and, for families, the folder name. */
  readonly kind: string
  /** Used when a provider resource sets no base URL. Includes any path prefix, e.g. `https://api.openai.com/v1`. */
  readonly defaultBaseUrl: string | null
  /**
   * For providers whose address depends on target options (Bedrock's regional endpoint): the base
   * URL to use when a provider resource sets none. Wins over `defaultBaseUrl`; throws a
   * `GatewayError('invalid_config')` when a needed option is missing.
   */
  readonly baseUrlFor?: (options: Readonly<Record<string, string>>) => string
  readonly auth: AuthScheme
  readonly chat?: StreamingOperation<ChatRequest, ChatResponse, ChatChunk>
  readonly completions?: StreamingOperation<CompletionRequest, CompletionResponse, CompletionChunk>
  readonly embeddings?: JsonOperation<EmbeddingsRequest, EmbeddingsResponse>
  /** `POST /v1/rerank`: Cohere-shaped rerank (Cohere natively; others translate). */
  readonly rerank?: JsonOperation<RerankRequest, RerankResponse>
  /** `POST /v1/ocr`: Mistral-shaped document OCR. */
  readonly ocr?: JsonOperation<OcrRequest, OcrResponse>
  /**
   * OpenAI-shaped groups (files, batches, images, audio, fine-tuning, vector stores...) that the
   * provider serves at the same paths as OpenAI: forwarded with credentials, bodies untouched.
   */
  readonly passthrough: boolean
  /**
   * Anthropic Messages bodies (`POST /v1/messages`) taken natively, with no trip through the chat
   * shape: set by providers that speak the Messages format (Anthropic; Claude on Bedrock). Other
   * targets get the request translated (`anthropic/inbound.ts`).
   */
  readonly messages?: NativeMessagesOperation
  parseError(status: number, headers: Readonly<Record<string, string>>, body: unknown): ProviderErrorInfo
}
