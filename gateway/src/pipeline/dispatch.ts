/**
 * One attempt at one target: translate, send, and either parse the JSON answer or open the stream.
 * A stream attempt resolves only after the first upstream event arrived, so anything that fails
 * before the client got a byte can still be retried or sent to a fallback target.
 */
import { randomUUID } from 'node:crypto'
import type { JsonOperation, ResponseContext, StreamingOperation, StreamResult, UpstreamEvent, Warning } from '../providers/adapter.ts'
import { MalformedResponseError, ProviderStreamError } from '../providers/adapter.ts'
import type { Usage } from '../providers/canonical.ts'
import { GatewayError } from '../core/errors.ts'
import { decodeFrameBatches, decodeUnparsedSseBatches } from '../upstream/framing/index.ts'
import { sendUpstreamBuffered, sendUpstreamStreamed, transportError } from '../upstream/transport.ts'
import { errorFromProvider } from '../upstream/provider-errors.ts'
import { RawJson, rememberRawJson } from '../core/raw-json.ts'
import type { RouteTarget } from '../routing/target.ts'

export interface JsonOutcome<Response> {
  kind: 'json'
  response: Response
  usage: Usage
  warnings: Warning[]
}

export interface StreamOutcome<Chunk> {
  kind: 'stream'
  /**
   * The first chunks (already received) followed by the rest of the stream, in batches as they
   * arrived together from the provider: one write to the client per batch.
   */
  chunks: AsyncIterable<Chunk[]>
  /** Usage and finish reason, known once `chunks` is exhausted. */
  result(): StreamResult<Chunk> | null
  warnings: Warning[]
}

export type Outcome<Response, Chunk> = JsonOutcome<Response> | StreamOutcome<Chunk>

export interface AttemptOptions {
  signal: AbortSignal
  firstByteTimeoutMs?: number
}

const MAX_ERROR_BODY_BYTES = 64 * 1024

function jsonOrText(text: string): unknown {
  try {
    return JSON.parse(text)
  } catch {
    return text
  }
}

/** An error answer, bounded: JSON when it parses, else its text. */
export async function readErrorBody(response: { body: AsyncIterable<Uint8Array> }): Promise<unknown> {
  let text = ''
  for await (const chunk of response.body) {
    text += Buffer.from(chunk).toString('utf8')
    if (text.length > MAX_ERROR_BODY_BYTES) break
  }
  return jsonOrText(text)
}

function responseContext(model: string, request?: unknown): ResponseContext {
  const context: ResponseContext = { requestModel: model, responseId: `gh-${randomUUID()}`, createdAt: Math.floor(Date.now() / 1000) }
  if (request === undefined) return context
  const streamOptions = (request as { stream_options?: { include_usage?: unknown } | null }).stream_options
  return { ...context, clientIncludeUsage: streamOptions?.include_usage === true }
}

function providerFailure(target: RouteTarget, status: number, headers: Record<string, string>, body: unknown): GatewayError {
  return errorFromProvider(target.provider.adapter.parseError(status, headers, body), target.provider.record.slug, target.provider.endpoint.credentials)
}

async function failFromStatus(target: RouteTarget, response: { status: number; headers: Record<string, string>; body: AsyncIterable<Uint8Array> }): Promise<never> {
  throw providerFailure(target, response.status, response.headers, await readErrorBody(response))
}

function malformed(target: RouteTarget, error: unknown): GatewayError {
  return new GatewayError('upstream_malformed_response', `Provider '@${target.provider.record.slug}' sent a response Gatehouse could not read`, { cause: error })
}

export async function attemptJson<Request extends { model: string }, Response>(
  operation: JsonOperation<Request, Response>,
  target: RouteTarget,
  request: Request,
  options: AttemptOptions,
): Promise<JsonOutcome<Response>> {
  const { upstream, warnings } = operation.toUpstream(request, { upstreamModel: target.upstreamModel, options: target.provider.record.options })
  const response = await sendUpstreamBuffered(target.provider.endpoint, upstream, options)
  if (response.status >= 400) {
    throw providerFailure(target, response.status, response.headers, jsonOrText(response.body.toString('utf8', 0, MAX_ERROR_BODY_BYTES)))
  }
  let body: unknown
  const text = response.body.toString('utf8')
  try {
    body = JSON.parse(text)
  } catch (error) {
    throw malformed(target, error)
  }
  try {
    const parsed = operation.fromUpstream(body, responseContext(target.upstreamModel))
    if ((parsed as unknown) === body) rememberRawJson(parsed, text)
    return { kind: 'json', response: parsed, usage: operation.usage(parsed), warnings }
  } catch (error) {
    throw malformed(target, error)
  }
}

export function attemptStream<Request extends { model: string }, Response, Chunk>(
  operation: StreamingOperation<Request, Response, Chunk>,
  target: RouteTarget,
  request: Request,
  options: AttemptOptions,
): Promise<StreamOutcome<Chunk>> {
  return openStream(operation, target, request, options, false) as Promise<StreamOutcome<Chunk>>
}

/**
 * A stream attempt whose chunks nobody reads: where the adapter can account for events from their
 * text (OpenAI-shaped streams), events are relayed as the provider's JSON (`RawJson`), parsed only
 * when they carry a finish reason, usage or an error. Otherwise the same as `attemptStream`.
 */
export function attemptRelayedStream<Request extends { model: string }, Response, Chunk>(
  operation: StreamingOperation<Request, Response, Chunk>,
  target: RouteTarget,
  request: Request,
  options: AttemptOptions,
): Promise<StreamOutcome<Chunk | RawJson>> {
  return openStream(operation, target, request, options, true)
}

function parsedEvent(event: UpstreamEvent): UpstreamEvent {
  try {
    return { ...event, data: JSON.parse(event.raw!) }
  } catch {
    throw new MalformedResponseError(`stream event is not JSON: ${event.raw!.slice(0, 120)}`)
  }
}

async function openStream<Request extends { model: string }, Response, Chunk>(
  operation: StreamingOperation<Request, Response, Chunk>,
  target: RouteTarget,
  request: Request,
  options: AttemptOptions,
  relay: boolean,
): Promise<StreamOutcome<Chunk | RawJson>> {
  const { upstream, warnings } = operation.toUpstream(request, { upstreamModel: target.upstreamModel, options: target.provider.record.options })
  const response = await sendUpstreamStreamed(target.provider.endpoint, upstream, options)
  if (response.status >= 400) return failFromStatus(target, response)

  const transform = operation.stream
  const state = transform.start(responseContext(target.upstreamModel, request))
  const observeRaw = relay && operation.framing === 'sse' ? transform.observeRaw : undefined
  // Leaving the loop at [DONE] must not destroy the body (see the dump in `finally` below).
  const body = response.body.iterator({ destroyOnReturn: false })
  const batches = (observeRaw ? decodeUnparsedSseBatches(body) : decodeFrameBatches(operation.framing, body))[Symbol.asyncIterator]()
  let result: StreamResult<Chunk> | null = null

  const translateErrors = (error: unknown): unknown => {
    if (error instanceof ProviderStreamError) return errorFromProvider(error.info, target.provider.record.slug, target.provider.endpoint.credentials)
    if (error instanceof MalformedResponseError) return malformed(target, error)
    if (error instanceof GatewayError) return error
    return transportError(error, options.signal)
  }

  const translate = (events: UpstreamEvent[]): Array<Chunk | RawJson> => {
    const out: Array<Chunk | RawJson> = []
    for (const received of events) {
      let event = received
      if (observeRaw) {
        if (observeRaw(state, event.raw!)) {
          out.push(new RawJson(event.raw!))
          continue
        }
        event = parsedEvent(event)
      }
      for (const chunk of transform.step(state, event)) {
        if (event.raw !== undefined && (chunk as unknown) === event.data) rememberRawJson(chunk, event.raw)
        out.push(chunk)
      }
    }
    return out
  }

  // Pull until the first chunk exists (some events, like Anthropic's ping, produce none).
  let head: Array<Chunk | RawJson> = []
  let ended = false
  try {
    while (head.length === 0) {
      const next = await batches.next()
      if (next.done) {
        ended = true
        break
      }
      head = translate(next.value)
    }
  } catch (error) {
    response.body.destroy()
    throw translateErrors(error)
  }

  async function* chunks(): AsyncGenerator<Array<Chunk | RawJson>> {
    try {
      if (head.length > 0) yield head
      if (!ended) {
        for (let next = await batches.next(); !next.done; next = await batches.next()) {
          const translated = translate(next.value)
          if (translated.length > 0) yield translated
        }
      }
      result = transform.finish(state)
      if (result.chunks.length > 0) yield result.chunks
    } catch (error) {
      throw translateErrors(error)
    } finally {
      if (result !== null) {
        // A finished stream ([DONE] seen): read off what little may follow so the connection
        // goes back to the pool; destroying it would cost an AbortError and the connection.
        response.body.dump({ limit: 64 * 1024 }).catch(() => undefined)
      } else if (!response.body.destroyed) {
        // Ending early (client gone, error) must release the upstream connection now.
        response.body.destroy()
      }
    }
  }

  return { kind: 'stream', chunks: chunks(), result: () => result, warnings }
}
