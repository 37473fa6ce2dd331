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
import { decodeFrameBatches } from '../upstream/framing/index.ts'
import { SseRelayReader, type RelayedRead } from '../upstream/framing/sse-relay.ts'
import { sendUpstreamBuffered, sendUpstreamStreamed, transportError } from '../upstream/transport.ts'
import { errorFromProvider } from '../upstream/provider-errors.ts'
import { jsonOrText, RawJson, rememberRawJson } from '../core/raw-json.ts'
import { SseBytes } from '../core/relayed-events.ts'
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

export interface StreamAttemptOptions extends AttemptOptions {
  /**
   * Reshapes each batch before it is handed out (an empty result hands out nothing): a route's
   * per-batch rewrite done here rather than by another iterator around `chunks`, which cost an
   * async call per batch on every stream.
   */
  mapBatch?: (batch: readonly unknown[]) => readonly unknown[]
}

const MAX_ERROR_BODY_BYTES = 64 * 1024

/** An error answer, bounded: JSON when it parses, else its text. */
export async function readErrorBody(response: { body: AsyncIterable<Uint8Array> }): Promise<unknown> {
  let text = ''
  for await (const chunk of response.body) {
    text += Buffer.from(chunk).toString('utf8')
    if (text.length > MAX_ERROR_BODY_BYTES) break
  }
  return jsonOrText(text)
}

/**
 * What adapters fill in where a provider gave nothing. The id is made on first read only: an
 * OpenAI-shaped answer carries its own, and a UUID per attempt was a visible cost of the plain path.
 */
class FallbackResponseContext implements ResponseContext {
  readonly requestModel: string
  readonly createdAt = Math.floor(Date.now() / 1000)
  readonly clientIncludeUsage?: boolean
  #responseId: string | null = null

  constructor(requestModel: string, clientIncludeUsage: boolean | undefined) {
    this.requestModel = requestModel
    if (clientIncludeUsage !== undefined) this.clientIncludeUsage = clientIncludeUsage
  }

  get responseId(): string {
    return (this.#responseId ??= `gh-${randomUUID()}`)
  }
}

function responseContext(model: string, request?: unknown): ResponseContext {
  if (request === undefined) return new FallbackResponseContext(model, undefined)
  const streamOptions = (request as { stream_options?: { include_usage?: unknown } | null }).stream_options
  return new FallbackResponseContext(model, streamOptions?.include_usage === true)
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
  options: StreamAttemptOptions,
): Promise<StreamOutcome<Chunk>> {
  return openStream(operation, target, request, options, false) as Promise<StreamOutcome<Chunk>>
}

/** What a relayed stream's batches hold: the adapter's chunks, provider JSON (`RawJson`), whole events as bytes (`SseBytes`). */
export type RelayedChunk<Chunk> = Chunk | RawJson | SseBytes

/**
 * A stream attempt whose chunks nobody reads: where the adapter can account for a stream from its
 * text (OpenAI-shaped streams, `StreamTransform.relay`), each read from the provider is relayed as
 * its bytes (`SseBytes`, whole events), and only the events holding the adapter's markers (a
 * finish reason, usage, an error) are decoded. Otherwise the same as `attemptStream`.
 */
export function attemptRelayedStream<Request extends { model: string }, Response, Chunk>(
  operation: StreamingOperation<Request, Response, Chunk>,
  target: RouteTarget,
  request: Request,
  options: StreamAttemptOptions,
): Promise<StreamOutcome<RelayedChunk<Chunk>>> {
  return openStream(operation, target, request, options, true)
}

function parsedEvent(event: { event?: string; data: string }): UpstreamEvent {
  try {
    return { ...(event.event === undefined ? {} : { event: event.event }), data: JSON.parse(event.data), raw: event.data }
  } catch {
    throw new MalformedResponseError(`stream event is not JSON: ${event.data.slice(0, 120)}`)
  }
}

/** The next translated batch of a stream; null once it ended. */
type Pull<T> = () => Promise<T[] | null>

function pullFrom<Read, T>(source: AsyncIterable<Read>, translate: (read: Read) => T[]): Pull<T> {
  const iterator = source[Symbol.asyncIterator]()
  return async () => {
    const next = await iterator.next()
    return next.done ? null : translate(next.value)
  }
}

const DONE: IteratorReturnResult<undefined> = Object.freeze({ done: true, value: undefined })

/** Whether a stream has begun: a chunk exists (some events, like Anthropic's ping, produce none; relayed comments are no event). */
function begun(chunks: readonly unknown[]): boolean {
  return chunks.some((chunk) => !(chunk instanceof SseBytes) || chunk.carriesData())
}

async function openStream<Request extends { model: string }, Response, Chunk>(
  operation: StreamingOperation<Request, Response, Chunk>,
  target: RouteTarget,
  request: Request,
  options: StreamAttemptOptions,
  relay: boolean,
): Promise<StreamOutcome<RelayedChunk<Chunk>>> {
  const { upstream, warnings } = operation.toUpstream(request, { upstreamModel: target.upstreamModel, options: target.provider.record.options })
  const response = await sendUpstreamStreamed(target.provider.endpoint, upstream, options)
  if (response.status >= 400) return failFromStatus(target, response)

  const transform = operation.stream
  const state = transform.start(responseContext(target.upstreamModel, request))
  const rawRelay = relay && operation.framing === 'sse' ? transform.relay : undefined
  // Only the body is kept (not the response's headers) while the stream lasts.
  const upstreamBody = response.body
  // Stopping at [DONE] must not destroy the body (see the dump in `close` below).
  const body = upstreamBody.iterator({ destroyOnReturn: false })
  let result: StreamResult<Chunk> | null = null

  const translateErrors = (error: unknown): unknown => {
    if (error instanceof ProviderStreamError) return errorFromProvider(error.info, target.provider.record.slug, target.provider.endpoint.credentials)
    if (error instanceof MalformedResponseError) return malformed(target, error)
    if (error instanceof GatewayError) return error
    return transportError(error, options.signal)
  }

  const stepped = (event: UpstreamEvent, out: Array<RelayedChunk<Chunk>>): void => {
    for (const chunk of transform.step(state, event)) {
      if (event.raw !== undefined && (chunk as unknown) === event.data) rememberRawJson(chunk, event.raw)
      out.push(chunk)
    }
  }

  const translate = (events: UpstreamEvent[]): Array<RelayedChunk<Chunk>> => {
    const out: Array<RelayedChunk<Chunk>> = []
    for (const event of events) stepped(event, out)
    return out
  }

  // One read's bytes stay whole, cut only around the notable events that do not pass unchanged.
  const translateRead = (read: RelayedRead): Array<RelayedChunk<Chunk>> => {
    if (read.notable.length === 0) return [new SseBytes(read.bytes)]
    const out: Array<RelayedChunk<Chunk>> = []
    let from = 0
    for (const event of read.notable) {
      const unchanged = rawRelay!.observe(state, event.data)
      // An unnamed event that passes stays among the bytes; a named one is relayed without its name, as every chunk is.
      if (unchanged && event.event === undefined) continue
      if (event.start > from) out.push(new SseBytes(read.bytes.subarray(from, event.start)))
      from = event.end
      if (unchanged) out.push(new RawJson(event.data))
      else stepped(parsedEvent(event), out)
    }
    if (from < read.bytes.length) out.push(new SseBytes(from === 0 ? read.bytes : read.bytes.subarray(from)))
    return out
  }

  let pull: Pull<RelayedChunk<Chunk>>
  if (rawRelay) {
    const reader = new SseRelayReader(body, rawRelay.markers)
    pull = async () => {
      const read = await reader.read()
      return read === null ? null : translateRead(read)
    }
  } else {
    pull = pullFrom(decodeFrameBatches(operation.framing, body), translate)
  }

  // Pull until the stream has begun, so that a failure before then can still be retried.
  const head: Array<RelayedChunk<Chunk>> = []
  let ended = false
  try {
    while (!begun(head)) {
      const next = await pull()
      if (next === null) {
        ended = true
        break
      }
      head.push(...next)
    }
  } catch (error) {
    upstreamBody.destroy()
    throw translateErrors(error)
  }

  // The head, the rest as it arrives, then what `finish` adds; written by hand (pipeline/batches.ts says why).
  let phase: 'head' | 'body' | 'finish' | 'tail' | 'over' = 'head'
  const mapBatch = options.mapBatch
  const close = (): void => {
    if (phase === 'over') return
    phase = 'over'
    if (result !== null) {
      // A finished stream ([DONE] seen): read off what little may follow so the connection
      // goes back to the pool; destroying it would cost an AbortError and the connection.
      upstreamBody.dump({ limit: 64 * 1024 }).catch(() => undefined)
    } else if (!upstreamBody.destroyed) {
      // Ending early (client gone, error) must release the upstream connection now.
      upstreamBody.destroy()
    }
  }
  const chunks: AsyncIterableIterator<Array<RelayedChunk<Chunk>>> = {
    async next() {
      try {
        for (;;) {
          let batch: Array<RelayedChunk<Chunk>>
          if (phase === 'head') {
            phase = ended ? 'finish' : 'body'
            batch = head
          } else if (phase === 'body') {
            const next = await pull()
            if (next === null) {
              phase = 'finish'
              continue
            }
            batch = next
          } else if (phase === 'finish') {
            result = transform.finish(state)
            phase = 'tail'
            batch = result.chunks
          } else {
            close()
            return DONE
          }
          const out = mapBatch === undefined || batch.length === 0 ? batch : (mapBatch(batch) as Array<RelayedChunk<Chunk>>)
          if (out.length > 0) return { done: false, value: out }
        }
      } catch (error) {
        close()
        throw translateErrors(error)
      }
    },
    async return() {
      close()
      return DONE
    },
    [Symbol.asyncIterator]() {
      return chunks
    },
  }

  return { kind: 'stream', chunks, result: () => result, warnings }
}
