/**
 * The shared machinery of every provider simulator: a node:http server on loopback, request
 * recording, a FIFO of scripted faults, latency and stream pacing, and disconnect detection.
 * A provider module only supplies its routes and how its errors look on the wire.
 *
 * Simulators stand in for unreachable providers in every gateway test and in the benchmark, so the
 * request path stays cheap: no per-request allocation beyond what the answer needs, and nothing is
 * recorded when `recordLimit` is 0.
 */
import { EventEmitter } from 'node:events'
import { createServer } from 'node:http'
import type { IncomingHttpHeaders, IncomingMessage, Server, ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'

export interface RecordedRequest {
  method: string
  /** Path without the query string. */
  path: string
  query: Record<string, string>
  headers: IncomingHttpHeaders
  /** Parsed JSON when the body is JSON, else the raw bytes (multipart, binary), else undefined. */
  body: unknown
  rawBody: Buffer
}

/**
 * One scripted misbehaviour, consumed by the first request it matches (FIFO). Fields combine:
 * `{ firstByteDelayMs: 200, stallAfterChunks: 2 }` is a slow start and then a stall.
 */
export interface Fault {
  /** Only requests for which this returns true consume the fault; absent matches any request. */
  match?: (request: RecordedRequest) => boolean
  /** Answer this status instead of the normal answer; the body defaults to the provider's error shape. */
  status?: number
  body?: unknown
  /** Message for the provider-shaped default body. */
  message?: string
  headers?: Record<string, string>
  /** Sets `retry-after` (seconds). */
  retryAfterS?: number
  /** Sets `retry-after-ms`. */
  retryAfterMs?: number
  /** Destroy the socket (TCP reset) before answering anything. */
  reset?: boolean
  /** Extra delay before the response headers, on top of `latencyMs`. */
  firstByteDelayMs?: number
  /** Stop sending after this many stream frames but keep the connection open. */
  stallAfterChunks?: number
  /** Close the connection after this many stream frames (the response is cut short). */
  resetAfterChunks?: number
  /** Send the provider's in-band error event after this many stream frames, then end. `status` picks the error kind. */
  errorAfterChunks?: number
  /**
   * Answer normally but end with this stop reason in the provider's own words (Anthropic wire:
   * `refusal`, `pause_turn`, `model_context_window_exceeded`); providers without one ignore it.
   */
  stopReason?: string
}

/**
 * Every answer leaves in several writes cut at random byte offsets (seeded, so a failure repeats),
 * `delayMs` apart so each piece reaches the client in a read of its own: what a client sees from a
 * real provider behind proxies, where frames and even UTF-8 characters are split anywhere.
 */
export interface SplitWrites {
  seed: number
  /** Pause between two pieces; at least 1 so the pieces do not merge in the socket buffer. */
  delayMs?: number
  /** Most pieces one payload is cut into (default 8). */
  maxPieces?: number
}

export interface SimulatorOptions {
  /** Delay before the response headers of every answer. */
  latencyMs: number
  /** Delay between two stream frames. */
  tokenIntervalMs: number
  /** How many pieces a generated answer has (stream content chunks; also its token count). */
  chunks: number
  /** A fixed answer text instead of the default echo of the last user message. */
  content?: string
  /** Prompt tokens reported as served from the provider's prompt cache. */
  cachedTokens: number
  /** Prompt tokens reported as written to the provider's prompt cache (Anthropic, Bedrock). */
  cacheWriteTokens: number
  /** Reasoning/thinking tokens reported on top of the answer's own tokens. */
  reasoningTokens: number
  /**
   * Models the provider knows; others get the provider's not-found error. Defaults to the
   * provider's catalogue (`ProviderDefinition.models`), so a wrong model mapping fails; `'any'`
   * accepts every model (only for tests about something else that send made-up names).
   */
  models?: string[] | 'any'
  /**
   * Accepted credentials. Defaults to `[SIMULATOR_API_KEY]`, the credential test gateways store
   * unless told otherwise, so a wrong or missing credential fails; `'any'` accepts any non-empty one.
   */
  apiKeys?: string[] | 'any'
  /** Write answers in several pieces at random byte offsets (see `SplitWrites`). */
  splitWrites?: SplitWrites
  /**
   * Bedrock: secret access keys by access key id. When set, SigV4 signatures are verified (and
   * must be at most 5 minutes old), and only these access keys are known.
   */
  awsSecrets?: Record<string, string>
  /** Keep at most this many recorded requests (oldest dropped); 0 records nothing. */
  recordLimit: number
  /** Fixed port; 0 (the default) picks an ephemeral one. Always bound to 127.0.0.1. */
  port: number
}

/** The credential every simulator accepts by default, and the one `test/helpers/gateway.ts` stores. */
export const SIMULATOR_API_KEY = 'sk-simulator'

export const defaultOptions: SimulatorOptions = {
  latencyMs: 0,
  tokenIntervalMs: 0,
  chunks: 16,
  cachedTokens: 0,
  cacheWriteTokens: 0,
  reasoningTokens: 0,
  recordLimit: 1000,
  port: 0,
}

export interface ErrorAnswer {
  body: unknown
  headers?: Record<string, string>
}

/** What a provider module contributes to a simulator. */
export interface ProviderDefinition {
  name: string
  /** Appended to the server URL to form `baseUrl`, e.g. `/v1`; empty when paths are absolute. */
  basePath: string
  /** The models it knows unless `options.models` says otherwise. */
  models: readonly string[]
  /**
   * Headers the provider puts on every answer, errors included: its request id and rate-limit
   * state. Scripted faults carry them too, as a real 429 or 500 does.
   */
  answerHeaders?(exchange: Exchange): Record<string, string>
  /** The provider's error body (and headers) for a status; `requestId`: the answer's own, where the body names it. */
  errorAnswer(status: number, message?: string, requestId?: string): ErrorAnswer
  /** The provider's in-band stream error frame for a status (Anthropic `event: error`, ...). */
  streamErrorFrame(status: number, message?: string): StreamFrame
  /** Answer one request (auth, routing, generation). Faults were already applied. */
  handle(exchange: Exchange): void | Promise<void>
}

export type StreamFrame = string | Uint8Array

export interface StreamResponse {
  contentType: string
  headers?: Record<string, string>
  frames: Iterable<StreamFrame>
}

/** One request/response as a provider module sees it. */
export class Exchange {
  readonly request: RecordedRequest
  readonly options: SimulatorOptions
  readonly fault: Fault | undefined
  /** Sequence number of this request on its simulator, for deterministic ids. */
  readonly sequence: number
  readonly #res: ServerResponse
  readonly #provider: ProviderDefinition
  readonly #state: ResponseState

  constructor(
    request: RecordedRequest,
    options: SimulatorOptions,
    fault: Fault | undefined,
    sequence: number,
    res: ServerResponse,
    provider: ProviderDefinition,
    state: ResponseState,
  ) {
    this.request = request
    this.options = options
    this.fault = fault
    this.sequence = sequence
    this.#res = res
    this.#provider = provider
    this.#state = state
  }

  /** Whether the provider knows `model`: `options.models`, else the provider's catalogue. */
  knowsModel(model: string): boolean {
    const known = this.options.models
    return known === 'any' || (known ?? this.#provider.models).includes(model)
  }

  /** What the provider's model list answers. */
  get modelList(): readonly string[] {
    return Array.isArray(this.options.models) ? this.options.models : this.#provider.models
  }

  json(status: number, body: unknown, headers?: Record<string, string>): void {
    this.raw(status, 'application/json', JSON.stringify(body), headers)
  }

  /**
   * A complete answer. Under a stall or reset fault the body counts as two chunks (its halves), so
   * `stallAfterChunks: 0` hangs after the headers and `resetAfterChunks: 1` cuts the JSON in half.
   */
  raw(status: number, contentType: string, payload: string | Uint8Array, headers?: Record<string, string>): void {
    if (this.#state.closed) return
    const res = this.#res
    const bytes = typeof payload === 'string' ? Buffer.from(payload) : payload
    res.writeHead(status, { ...headers, 'content-type': contentType, 'content-length': bytes.byteLength })
    const fault = this.fault
    const cutAfter = fault?.stallAfterChunks ?? fault?.resetAfterChunks
    if (cutAfter === undefined) {
      const split = this.options.splitWrites
      if (split) {
        res.flushHeaders()
        void writeSplit(res, bytes, split, this.sequence, this.#state).then(() => {
          if (!this.#state.closed) res.end()
        })
        return
      }
      res.end(bytes)
      return
    }
    res.flushHeaders()
    const half = Math.floor(bytes.byteLength / 2)
    const halves = [bytes.subarray(0, half), bytes.subarray(half)]
    for (const part of halves.slice(0, cutAfter)) res.write(part)
    if (fault?.resetAfterChunks !== undefined) cutConnection(res, this.#state)
  }

  /** Answer the provider's error shape for `status`. */
  error(status: number, message?: string, headers?: Record<string, string>): void {
    const answer = this.#provider.errorAnswer(status, message, headers?.['request-id'])
    this.json(status, answer.body, { ...answer.headers, ...headers })
  }

  /** Same as `error` but with a body the provider module built itself. */
  errorBody(status: number, body: unknown, headers?: Record<string, string>): void {
    this.json(status, body, headers)
  }

  /**
   * Stream frames with `tokenIntervalMs` between them, honouring the stall, reset and in-band error
   * faults. Resolves when the stream ended, stalled, or the client went away.
   */
  async stream(response: StreamResponse): Promise<void> {
    const res = this.#res
    const state = this.#state
    if (state.closed) return
    res.writeHead(200, { ...response.headers, 'content-type': response.contentType, 'cache-control': 'no-cache' })
    const fault = this.fault
    const interval = this.options.tokenIntervalMs
    // How many frames go out before the fault (if any) takes over.
    const limit = fault?.stallAfterChunks ?? fault?.resetAfterChunks ?? fault?.errorAfterChunks ?? Infinity
    let sent = 0
    if (interval === 0) {
      // Unpaced frames leave in one write: per-frame writes cost more CPU than the rest of the
      // answer, and the benchmark measures the gateway, not the simulator.
      const batch: StreamFrame[] = []
      for (const frame of response.frames) {
        if (sent >= limit) break
        batch.push(frame)
        sent++
      }
      const split = this.options.splitWrites
      if (!fault && !split) {
        res.end(batch.length > 0 ? joinFrames(batch) : undefined)
        return
      }
      res.flushHeaders()
      if (batch.length > 0) {
        if (split) await writeSplit(res, joinFrames(batch), split, this.sequence, state)
        else res.write(joinFrames(batch))
      }
    } else {
      res.flushHeaders()
      for (const frame of response.frames) {
        if (state.closed || sent >= limit) break
        if (sent > 0) await pause(interval, state)
        if (state.closed) break
        if (this.options.splitWrites) await writeSplit(res, frame, this.options.splitWrites, this.sequence * 7919 + sent, state)
        else if (!res.write(frame)) await drained(res, state)
        sent++
      }
    }
    if (state.closed || fault?.stallAfterChunks !== undefined) return
    if (fault?.resetAfterChunks !== undefined) return cutConnection(res, state)
    if (fault?.errorAfterChunks !== undefined) {
      res.end(this.#provider.streamErrorFrame(fault.status ?? 500, fault.message))
      return
    }
    res.end()
  }

}

interface ResponseState {
  /** The response is over from our side: finished, or the connection is gone. */
  closed: boolean
  /** Called once when the response closes (pending pauses end early). */
  onClose: Set<() => void>
  /** We destroyed the connection ourselves (a scripted reset), so its close is not the client's. */
  closedBySimulator: boolean
}

export interface Simulator {
  readonly name: string
  /** `http://127.0.0.1:<port>` */
  readonly url: string
  /** `url` plus the provider's base path, what an SDK takes as its base URL. */
  readonly baseUrl: string
  readonly requests: RecordedRequest[]
  /** Mutable: tests may change options between requests. */
  readonly options: SimulatorOptions
  /** Emits `request` (RecordedRequest) and `closedEarly` (RecordedRequest). */
  readonly events: EventEmitter
  /** How many responses the client abandoned before the simulator finished them. */
  readonly closedEarly: number
  /** Queue faults, consumed one per matching request, in order. */
  script(...faults: Fault[]): void
  /** Faults still queued. */
  readonly pendingFaults: number
  /** Resolves once `count` responses in total were abandoned by the client. */
  waitForClosedEarly(count?: number, timeoutMs?: number): Promise<void>
  /** Forget recorded requests, queued faults and the disconnect count. */
  reset(): void
  close(): Promise<void>
}

export async function startSimulator(provider: ProviderDefinition, overrides: Partial<SimulatorOptions> = {}): Promise<Simulator> {
  const options: SimulatorOptions = { ...defaultOptions, ...overrides }
  const requests: RecordedRequest[] = []
  const faults: Fault[] = []
  const events = new EventEmitter()
  let closedEarly = 0
  let sequence = 0

  const takeFault = (request: RecordedRequest): Fault | undefined => {
    const index = faults.findIndex((fault) => !fault.match || fault.match(request))
    if (index < 0) return undefined
    return faults.splice(index, 1)[0]
  }

  const record = (request: RecordedRequest): void => {
    if (options.recordLimit <= 0) return
    requests.push(request)
    if (requests.length > options.recordLimit) requests.splice(0, requests.length - options.recordLimit)
  }

  const onRequest = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const state: ResponseState = { closed: false, closedBySimulator: false, onClose: new Set() }
    const request = await readRequest(req)
    res.on('close', () => {
      const abandoned = !res.writableFinished && !state.closedBySimulator
      state.closed = true
      for (const wake of [...state.onClose]) wake()
      if (abandoned) {
        closedEarly++
        events.emit('closedEarly', request)
      }
    })
    record(request)
    events.emit('request', request)
    const fault = takeFault(request)
    if (fault?.reset) {
      resetConnection(res, state)
      return
    }
    const delayMs = options.latencyMs + (fault?.firstByteDelayMs ?? 0)
    if (delayMs > 0) await pause(delayMs, state)
    if (state.closed) return
    const exchange = new Exchange(request, options, fault, ++sequence, res, provider, state)
    const isStreamFault = fault?.errorAfterChunks !== undefined
    if (fault?.status !== undefined && !isStreamFault) {
      const headers: Record<string, string> = { ...provider.answerHeaders?.(exchange) }
      if (fault.retryAfterS !== undefined) headers['retry-after'] = String(fault.retryAfterS)
      if (fault.retryAfterMs !== undefined) headers['retry-after-ms'] = String(fault.retryAfterMs)
      Object.assign(headers, fault.headers)
      if (fault.body !== undefined) exchange.errorBody(fault.status, fault.body, headers)
      else exchange.error(fault.status, fault.message, headers)
      return
    }
    await provider.handle(exchange)
  }

  const server: Server = createServer((req, res) => {
    onRequest(req, res).catch((error: unknown) => {
      if (res.headersSent) {
        res.destroy()
        return
      }
      res.statusCode = 500
      res.setHeader('content-type', 'text/plain')
      res.end(`simulator failure: ${error instanceof Error ? error.message : String(error)}`)
    })
  })
  // Benchmarks reuse connections; do not let the server drop idle ones between bursts.
  server.keepAliveTimeout = 65_000

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(options.port, '127.0.0.1', () => resolve())
  })
  const { port } = server.address() as AddressInfo
  const url = `http://127.0.0.1:${port}`

  return {
    name: provider.name,
    url,
    baseUrl: url + provider.basePath,
    requests,
    options,
    events,
    get closedEarly() {
      return closedEarly
    },
    script(...added: Fault[]) {
      faults.push(...added)
    },
    get pendingFaults() {
      return faults.length
    },
    waitForClosedEarly(count = 1, timeoutMs = 5000) {
      return new Promise<void>((resolve, reject) => {
        if (closedEarly >= count) return resolve()
        const timer = setTimeout(() => {
          events.off('closedEarly', check)
          reject(new Error(`${provider.name} simulator: ${closedEarly}/${count} early closes after ${timeoutMs} ms`))
        }, timeoutMs)
        const check = (): void => {
          if (closedEarly < count) return
          clearTimeout(timer)
          events.off('closedEarly', check)
          resolve()
        }
        events.on('closedEarly', check)
      })
    },
    reset() {
      requests.length = 0
      faults.length = 0
      closedEarly = 0
    },
    close() {
      return new Promise<void>((resolve) => {
        server.close(() => resolve())
        server.closeAllConnections()
      })
    },
  }
}

// Plain 'data'/'end' listeners: measurably cheaper per request than the async iterator.
function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const parts: Buffer[] = []
    req.on('data', (part: Buffer) => parts.push(part))
    req.once('end', () => resolve(parts.length === 1 ? parts[0]! : Buffer.concat(parts)))
    req.once('error', reject)
  })
}

async function readRequest(req: IncomingMessage): Promise<RecordedRequest> {
  const rawBody = await readBody(req)
  const target = req.url ?? '/'
  const queryStart = target.indexOf('?')
  const path = queryStart < 0 ? target : target.slice(0, queryStart)
  const query = queryStart < 0 ? {} : Object.fromEntries(new URLSearchParams(target.slice(queryStart + 1)))
  return { method: req.method ?? 'GET', path, query, headers: req.headers, body: parseBody(req.headers, rawBody), rawBody }
}

function parseBody(headers: IncomingHttpHeaders, rawBody: Buffer): unknown {
  if (rawBody.length === 0) return undefined
  const contentType = headers['content-type'] ?? ''
  // SDKs and the gateway send JSON; a body without a content type is tried as JSON too.
  if (contentType === '' || contentType.includes('json')) {
    try {
      return JSON.parse(rawBody.toString('utf8'))
    } catch {
      return rawBody
    }
  }
  return rawBody
}

/** Waits `ms`, or less when the response closes first, so no timer outlives its connection. */
function pause(ms: number, state: ResponseState): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms)
    state.onClose.add(done)
    function done(): void {
      clearTimeout(timer)
      state.onClose.delete(done)
      resolve()
    }
  })
}

function joinFrames(frames: StreamFrame[]): string | Buffer {
  if (frames.every((frame) => typeof frame === 'string')) return (frames as string[]).join('')
  return Buffer.concat(frames.map((frame) => (typeof frame === 'string' ? Buffer.from(frame) : frame)))
}

/** mulberry32: a tiny seeded generator, so a split that exposed a bug splits the same way again. */
function seededRandom(seed: number): () => number {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

/** The byte offsets `payload` is cut at: 1 to `maxPieces - 1` distinct cuts, anywhere. */
export function splitOffsets(length: number, split: SplitWrites, salt: number): number[] {
  if (length < 2) return []
  const random = seededRandom(split.seed * 1_000_003 + salt)
  const wanted = 1 + Math.floor(random() * Math.max(1, (split.maxPieces ?? 8) - 1))
  const cuts = new Set<number>()
  for (let i = 0; i < wanted; i++) cuts.add(1 + Math.floor(random() * (length - 1)))
  return [...cuts].sort((a, b) => a - b)
}

async function writeSplit(res: ServerResponse, payload: StreamFrame | Buffer, split: SplitWrites, salt: number, state: ResponseState): Promise<void> {
  const bytes = typeof payload === 'string' ? Buffer.from(payload) : Buffer.from(payload.buffer, payload.byteOffset, payload.byteLength)
  let start = 0
  for (const cut of [...splitOffsets(bytes.byteLength, split, salt), bytes.byteLength]) {
    if (state.closed) return
    if (start > 0) await pause(Math.max(1, split.delayMs ?? 1), state)
    if (state.closed) return
    if (!res.write(bytes.subarray(start, cut))) await drained(res, state)
    start = cut
  }
}

function drained(res: ServerResponse, state: ResponseState): Promise<void> {
  return new Promise((resolve) => {
    if (state.closed) return resolve()
    const done = (): void => {
      res.off('drain', done)
      res.off('close', done)
      resolve()
    }
    res.once('drain', done)
    res.once('close', done)
  })
}

/** A TCP reset before any byte of the answer: the client sees ECONNRESET. */
function resetConnection(res: ServerResponse, state: ResponseState): void {
  state.closedBySimulator = true
  state.closed = true
  const socket = res.socket
  if (!socket) return
  if (typeof socket.resetAndDestroy === 'function') socket.resetAndDestroy()
  else socket.destroy()
}

/**
 * Ends the connection mid-response once what was written reached the socket. A graceful close
 * (not a reset) so the client reliably receives the frames sent before the cut.
 */
function cutConnection(res: ServerResponse, state: ResponseState): void {
  state.closedBySimulator = true
  state.closed = true
  const socket = res.socket
  if (!socket) return
  socket.write('', () => socket.destroy())
}
