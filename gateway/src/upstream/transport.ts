/**
 * The only module that performs network I/O to providers. One undici Pool per provider origin,
 * with connect, first-byte (headers) and idle (body) timeouts. Bodies stream in both directions;
 * a client disconnect aborts the upstream request through `signal`.
 */
import { Readable } from 'node:stream'
import { Pool, errors as undiciErrors } from '../core/undici.ts'
import type { buildConnector, Dispatcher } from 'undici'
import type { AuthScheme, UpstreamRequest } from '../providers/adapter.ts'
import { GatewayError } from '../core/errors.ts'
import type { SecretBag } from '../core/secret.ts'
import { applyAuth, type SignableRequest } from './signers/index.ts'
import { injectTraceContext } from '../core/tracing.ts'
import './signers/builtin.ts'
import { CallbackBody } from './callback-body.ts'
import { upstreamTarget } from './upstream-url.ts'

import type { UpstreamTimeouts } from './timeouts.ts'
export { defaultTimeouts, type UpstreamTimeouts } from './timeouts.ts'

export interface UpstreamEndpoint {
  readonly baseUrl: URL
  readonly auth: AuthScheme
  readonly credentials: SecretBag
  readonly options: Readonly<Record<string, string>>
  readonly timeouts: UpstreamTimeouts
  readonly dispatcher: Dispatcher
  /** The provider may reach private networks (snapshot `network: private-allowed`); signers' token endpoints too. */
  readonly allowPrivateNetwork: boolean
}

export interface UpstreamResponse {
  status: number
  headers: Record<string, string>
  body: Dispatcher.ResponseData['body']
}

export interface SendOptions {
  signal: AbortSignal
  /** Overrides the endpoint's first-byte timeout (a config's `request_timeout`). */
  firstByteTimeoutMs?: number
  /** Buffered answers only: the most bytes collected (default `maxBufferedResponseBytes`). */
  maxResponseBytes?: number
}

const DEFAULT_MAX_BUFFERED_RESPONSE_BYTES = 32 * 1024 * 1024

/**
 * The largest JSON answer collected whole (`GATEHOUSE_MAX_UPSTREAM_RESPONSE_BYTES`, default 32 MiB):
 * an answer is held in memory to be parsed and translated, so a provider sending hundreds of MiB
 * must not take the process's memory with it. Streamed bodies (passthrough, SSE) are not held.
 */
export function maxBufferedResponseBytes(env: NodeJS.ProcessEnv = process.env): number {
  const raw = env.GATEHOUSE_MAX_UPSTREAM_RESPONSE_BYTES
  if (raw === undefined || raw === '') return DEFAULT_MAX_BUFFERED_RESPONSE_BYTES
  const value = Number(raw)
  if (!Number.isSafeInteger(value) || value < 1024) throw new Error(`GATEHOUSE_MAX_UPSTREAM_RESPONSE_BYTES must be an integer of at least 1024, got '${raw}'`)
  return value
}

const configuredMaxResponseBytes = maxBufferedResponseBytes()

function responseTooLarge(limitBytes: number): GatewayError {
  return new GatewayError('upstream_response_too_large', `The provider's answer is larger than ${limitBytes} bytes, the most Gatehouse buffers (GATEHOUSE_MAX_UPSTREAM_RESPONSE_BYTES)`)
}

/** `connect`: a connector that vets each connection (upstream/ssrf.ts); plain connects otherwise. */
export function createPool(origin: string, timeouts: UpstreamTimeouts, maxConnections = 256, connect?: buildConnector.connector): Pool {
  return new Pool(origin, {
    connections: maxConnections,
    connect: connect ?? { timeout: timeouts.connectMs },
    headersTimeout: timeouts.firstByteMs,
    bodyTimeout: timeouts.idleMs,
    keepAliveTimeout: 10_000,
  })
}

const encoder = new TextEncoder()

/** Raw bytes and streams (multipart uploads relayed as they arrive) are sent as they are; anything else is JSON. */
function isRawBody(body: unknown): body is Uint8Array | Readable {
  return body instanceof Uint8Array || body instanceof Readable
}

function encodeBody(body: unknown): Uint8Array | Readable | undefined {
  if (body === undefined) return undefined
  if (isRawBody(body)) return body
  return encoder.encode(JSON.stringify(body))
}

type RawHeaders = Record<string, string | string[] | undefined>

function flattenHeaders(headers: RawHeaders): Record<string, string> {
  const out: Record<string, string> = {}
  for (const name in headers) {
    const value = headers[name]
    if (value !== undefined) out[name] = Array.isArray(value) ? value.join(', ') : value
  }
  return out
}

/**
 * A response of the dispatcher's callbacks, its headers flattened on first read: a model answer's
 * are read only when it failed, and copying a provider's dozen or more headers on every answer
 * was a visible part of the request path (callgrind, test/bench/instructions.ts). A class, not an
 * object literal with a getter: the literal cost a closure and its own accessor per response (0.6 %
 * of the gateway's CPU profile under load). Its readers take fields; none spreads it.
 */
class LazyHeadersResponse<Body> {
  readonly status: number
  readonly body: Body
  readonly #raw: RawHeaders
  #flat: Record<string, string> | null = null

  constructor(status: number, raw: RawHeaders, body: Body) {
    this.status = status
    this.#raw = raw
    this.body = body
  }

  get headers(): Record<string, string> {
    return (this.#flat ??= flattenHeaders(this.#raw))
  }
}

interface PreparedRequest {
  dispatchOptions: Dispatcher.DispatchOptions
}

async function prepare(endpoint: UpstreamEndpoint, request: UpstreamRequest, options: SendOptions): Promise<PreparedRequest> {
  const body = encodeBody(request.body)
  const target = upstreamTarget(endpoint.baseUrl, request.path)
  // A `URL` only for a signer that reads or changes it (SigV4, a key in the query); the rest send the cached strings.
  let url: URL | null = null
  const signable: SignableRequest = {
    method: request.method,
    get url() {
      return (url ??= new URL(target.origin + target.path))
    },
    headers: { ...request.headers },
    // A streamed body cannot be hashed before it is sent: only schemes that do not sign the payload
    // (bearer, header) may be used with one, which is what OpenAI-shaped passthrough providers use.
    body: body instanceof Readable ? undefined : body,
  }
  if (body !== undefined && !isRawBody(request.body) && signable.headers['content-type'] === undefined) {
    signable.headers['content-type'] = 'application/json'
  }
  // Before signing: SigV4 signs every header it is given, these included.
  injectTraceContext(signable.headers)
  const signing = applyAuth(endpoint.auth, signable, endpoint.credentials, endpoint.options, endpoint)
  if (signing !== undefined) await signing
  // Set by the getter when a signer used it (TypeScript cannot see the closure's assignment).
  const signed = url as URL | null
  return {
    dispatchOptions: {
      origin: signed === null ? target.origin : signed.origin,
      path: signed === null ? target.path : signed.pathname + signed.search,
      method: request.method,
      headers: signable.headers,
      body: body ?? null,
      headersTimeout: options.firstByteTimeoutMs ?? endpoint.timeouts.firstByteMs,
      bodyTimeout: endpoint.timeouts.idleMs,
    },
  }
}

/** Sends a request and hands back the response with its body as a stream (SSE, binary, large). */
export async function sendUpstream(endpoint: UpstreamEndpoint, request: UpstreamRequest, options: SendOptions): Promise<UpstreamResponse> {
  const { dispatchOptions } = await prepare(endpoint, request, options)
  try {
    const response = await endpoint.dispatcher.request({ ...dispatchOptions, signal: options.signal } as Dispatcher.RequestOptions)
    return { status: response.statusCode, headers: flattenHeaders(response.headers), body: response.body }
  } catch (error) {
    throw transportError(error, options.signal)
  }
}

/** Ties a dispatched request to the exchange's signal: an abort cancels it. `release` once the request is over. */
function abortOnSignal(signal: AbortSignal): { attach(controller: Dispatcher.DispatchController): void; release(): void } {
  let controller: Dispatcher.DispatchController | null = null
  const onAbort = (): void => controller?.abort(signal.reason)
  signal.addEventListener('abort', onAbort, { once: true })
  return {
    attach(started) {
      controller = started
      if (signal.aborted) started.abort(signal.reason)
    },
    release: () => signal.removeEventListener('abort', onAbort),
  }
}

export interface StreamedUpstreamResponse {
  status: number
  headers: Record<string, string>
  body: CallbackBody
}

/**
 * Sends a request and hands back the response as soon as its headers arrive, with the body read
 * from the dispatcher's callbacks (`CallbackBody`): the streaming hot path (SSE chat answers).
 * The owner ends the body with `dump` or `destroy`; a client disconnect aborts it through `signal`.
 */
export async function sendUpstreamStreamed(endpoint: UpstreamEndpoint, request: UpstreamRequest, options: SendOptions): Promise<StreamedUpstreamResponse> {
  const { dispatchOptions } = await prepare(endpoint, request, options)
  const { signal } = options
  if (signal.aborted) throw transportError(signal.reason, signal)
  return new Promise<StreamedUpstreamResponse>((resolve, reject) => {
    const body = new CallbackBody()
    const abort = abortOnSignal(signal)
    let started = false
    endpoint.dispatcher.dispatch(dispatchOptions, {
      onRequestStart(requestController) {
        body.attach(requestController)
        abort.attach(requestController)
      },
      onResponseStart(_controller, statusCode, responseHeaders) {
        started = true
        resolve(new LazyHeadersResponse(statusCode, responseHeaders as RawHeaders, body))
      },
      onResponseData(_controller, chunk) {
        body.push(chunk)
      },
      onResponseEnd() {
        abort.release()
        body.end()
      },
      onResponseError(_controller, error) {
        abort.release()
        if (started) body.fail(error)
        else reject(transportError(error, signal))
      },
    })
  })
}

export interface BufferedResponse {
  status: number
  headers: Record<string, string>
  body: Buffer
}

/**
 * Sends a request and collects the whole (JSON) answer. Collects straight from the dispatcher's
 * callbacks rather than through a Readable: this is the non-streaming hot path, and the stream
 * machinery was a visible share of its CPU.
 */
export async function sendUpstreamBuffered(endpoint: UpstreamEndpoint, request: UpstreamRequest, options: SendOptions): Promise<BufferedResponse> {
  const { dispatchOptions } = await prepare(endpoint, request, options)
  const { signal } = options
  const limitBytes = options.maxResponseBytes ?? configuredMaxResponseBytes
  if (signal.aborted) throw transportError(signal.reason, signal)
  return new Promise<BufferedResponse>((resolve, reject) => {
    const abort = abortOnSignal(signal)
    let status = 0
    let headers: RawHeaders = {}
    const chunks: Buffer[] = []
    let received = 0
    let refused: GatewayError | null = null
    // Stops reading and frees what was collected; onResponseError then rejects with `refused`.
    const refuse = (controllerNow: Dispatcher.DispatchController): void => {
      refused = responseTooLarge(limitBytes)
      chunks.length = 0
      controllerNow.abort(refused)
    }
    endpoint.dispatcher.dispatch(dispatchOptions, {
      onRequestStart(started) {
        abort.attach(started)
      },
      onResponseStart(started, statusCode, responseHeaders) {
        status = statusCode
        headers = responseHeaders as RawHeaders
        // A declared length over the limit is refused before any of the body is read (a repeated one is NaN, as joined).
        if (Number(headers['content-length']) > limitBytes) refuse(started)
      },
      onResponseData(started, chunk) {
        if (refused) return
        received += chunk.byteLength
        if (received > limitBytes) return refuse(started)
        chunks.push(chunk)
      },
      onResponseEnd() {
        abort.release()
        resolve(new LazyHeadersResponse(status, headers, chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks)))
      },
      onResponseError(_controller, error) {
        abort.release()
        reject(refused ?? transportError(error, signal))
      },
    })
  })
}

/** Maps a failure to reach the provider onto the error catalog. Never leaks the request itself. */
export function transportError(error: unknown, signal: AbortSignal): GatewayError {
  if (error instanceof GatewayError) return error
  if (signal.aborted) return new GatewayError('request_timeout', 'The request was cancelled before the provider answered', { cause: error })
  if (error instanceof undiciErrors.HeadersTimeoutError) {
    return new GatewayError('request_timeout', 'The provider did not start answering within the request timeout', { cause: error })
  }
  if (error instanceof undiciErrors.BodyTimeoutError) {
    return new GatewayError('upstream_timeout', 'The provider stopped sending data', { cause: error })
  }
  if (error instanceof undiciErrors.ConnectTimeoutError) {
    return new GatewayError('upstream_timeout', 'Connecting to the provider timed out', { cause: error })
  }
  return new GatewayError('upstream_unavailable', 'The provider could not be reached', { cause: error, headers: { 'retry-after': '1' } })
}
