/**
 * The only place that writes server-sent events to clients (and `[DONE]`). Honours backpressure,
 * stops when the client goes away, and ends a stream that fails mid-way with an error event so a
 * client never mistakes a cut for a finished answer.
 */
import type { ServerResponse } from 'node:http'
import { once } from 'node:events'
import { toGatewayError, type GatewayError } from '../core/errors.ts'
import { toJsonText } from '../core/raw-json.ts'
import { SseBytes } from '../core/relayed-events.ts'

export interface StreamWriteResult {
  completed: boolean
  error: unknown
}

/**
 * Holds the response's writes until the end of the current tick, then sends them as one socket
 * write. A burst of events decoded from one upstream read then costs one syscall and one packet
 * instead of one per event (per-event writes were the largest item in the gateway's CPU profile).
 * Nothing waits for I/O: the uncork runs before the event loop polls again.
 */
function corkForTick(response: ServerResponse): void {
  if (response.writableCorked > 0) return
  response.cork()
  process.nextTick(uncorkAll, response)
}

/**
 * Node's `uncork()` on a response uncorks its socket first and only then sends the chunk it held
 * (size line, data, line end: three more writes), so each piece would leave as its own syscall
 * (strace: five writes per streamed answer). The socket stays corked meanwhile: one write.
 */
function uncorkAll(response: ServerResponse): void {
  if (response.writableCorked === 0) return
  const socket = response.socket
  socket?.cork()
  while (response.writableCorked > 0) response.uncork()
  socket?.uncork()
}

/**
 * Ends the response after the chunk the cork holds: Node's `end()` sends the chunked-encoding
 * terminator before it flushes a corked response's buffered chunks, which would cut the stream.
 * The socket stays corked until `end()` flushes it, so a stream that ends in the tick it wrote
 * its last events in (a short answer) leaves in one write, headers, events and terminator.
 */
function finish(response: ServerResponse, last?: string): void {
  const socket = response.socket
  socket?.cork()
  while (response.writableCorked > 0) response.uncork()
  if (last === undefined) response.end()
  else response.end(last)
  // `end()` flushes the socket whatever its cork count; this only balances the cork above.
  if (socket && socket.writableCorked > 0) socket.uncork()
}

export function startSse(response: ServerResponse, status: number, headers: Record<string, string>): void {
  // The headers leave together with an event written in this same tick (one packet, not two),
  // and on their own at the end of the tick otherwise.
  corkForTick(response)
  response.writeHead(status, {
    ...headers,
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache',
    connection: 'keep-alive',
    'x-accel-buffering': 'no',
  })
  response.flushHeaders()
}

export interface PipeSseOptions {
  /** Write the final `data: [DONE]` (OpenAI streams); false for formats without it (Anthropic). */
  done?: boolean
  eventName?: (chunk: unknown) => string | undefined
  /** What a chunk's `data:` line carries; the chunk itself by default. */
  data?: (chunk: unknown) => unknown
  /** The body of the final error event; the OpenAI envelope by default. */
  errorData?: (error: GatewayError) => unknown
}

/**
 * One batch as one socket write: chunks framed as text, and relayed events (`SseBytes`) as the
 * provider's bytes, never decoded or encoded again. False when the response asks to wait for drain.
 */
function writeBatch(response: ServerResponse, batch: readonly unknown[], frame: (chunk: unknown) => string): boolean {
  if (batch.length === 1 && batch[0] instanceof SseBytes) return response.write(batch[0].bytes)
  let text = ''
  let pieces: Array<string | Buffer> | null = null
  for (const chunk of batch) {
    if (!(chunk instanceof SseBytes)) {
      text += frame(chunk)
      continue
    }
    pieces ??= []
    if (text !== '') pieces.push(text)
    text = ''
    pieces.push(chunk.bytes)
  }
  if (pieces === null) return response.write(text)
  if (text !== '') pieces.push(text)
  // Held together until the end of the tick: one chunk of the chunked encoding, one packet.
  corkForTick(response)
  let more = true
  for (const piece of pieces) more = response.write(piece)
  return more
}

function waitForDrain(response: ServerResponse): Promise<unknown> {
  return Promise.race([once(response, 'drain'), once(response, 'close')])
}

/**
 * Writes each batch of chunks (those that arrived together from the provider) as one socket
 * write: one chunk of the chunked encoding and one UTF-8 conversion per batch, not per event.
 * The first batch joins the headers `startSse` holds, in one packet.
 */
export async function pipeSse(
  response: ServerResponse,
  batches: AsyncIterable<readonly unknown[]>,
  options: PipeSseOptions = {},
  onFirstBatch?: () => void,
): Promise<StreamWriteResult> {
  const frame = (chunk: unknown): string => {
    const name = options.eventName?.(chunk)
    const data = options.data ? options.data(chunk) : chunk
    return `${name === undefined ? '' : `event: ${name}\n`}data: ${toJsonText(data)}\n\n`
  }
  try {
    let first = true
    for await (const batch of batches) {
      if (response.destroyed) return { completed: false, error: null }
      if (first) {
        first = false
        onFirstBatch?.()
      }
      if (!writeBatch(response, batch, frame)) await waitForDrain(response)
    }
    if (response.destroyed) return { completed: false, error: null }
    finish(response, options.done === false ? undefined : 'data: [DONE]\n\n')
    return { completed: true, error: null }
  } catch (error) {
    if (!response.destroyed) {
      const gatewayError = toGatewayError(error)
      const body = options.errorData ? options.errorData(gatewayError) : gatewayError.toBody()
      finish(response, `${options.eventName ? 'event: error\n' : ''}data: ${JSON.stringify(body)}\n\n`)
    }
    return { completed: false, error }
  }
}

const LF = 0x0a

/** Whether the bytes so far end an event (a blank line), so an error event can follow directly. */
function endsWithBlankLine(chunk: Buffer): boolean {
  const last = chunk.length - 1
  return chunk[last] === LF && (chunk[last - 1] === LF || (chunk[last - 1] === 0x0d && chunk[last - 2] === LF))
}

/**
 * The Responses API's own error event (`type`, `code`, `message`, `param` at the top), with the
 * OpenAI envelope beside it: the OpenAI SDK raises `error` as the APIError, and a client reading
 * events by `type` sees an error event (a guardrail's `hook_results` included).
 */
export function responsesErrorData(error: GatewayError): unknown {
  const body = error.toBody()
  return { type: 'error', code: body.error.code, message: body.error.message, param: body.error.param, ...body }
}

/**
 * Relays an upstream event stream byte for byte (passthrough routes: Responses, Assistants runs),
 * event names included. A failure mid-way closes any half-written event and ends with a named
 * error event, the form those APIs use for in-band errors (`errorData`: its body, the OpenAI
 * envelope by default).
 */
export async function relaySseBytes(
  response: ServerResponse,
  bytes: AsyncIterable<Uint8Array>,
  toError: (error: unknown) => GatewayError = toGatewayError,
  errorData: (error: GatewayError) => unknown = (error) => error.toBody(),
): Promise<StreamWriteResult> {
  let endsCleanly = true
  try {
    for await (const piece of bytes) {
      if (response.destroyed) return { completed: false, error: null }
      const chunk = Buffer.from(piece.buffer, piece.byteOffset, piece.byteLength)
      if (chunk.length > 0) endsCleanly = endsWithBlankLine(chunk)
      if (!response.write(chunk)) await waitForDrain(response)
    }
    finish(response)
    return { completed: !response.destroyed, error: null }
  } catch (error) {
    if (!response.destroyed) {
      const body = errorData(toError(error))
      finish(response, `${endsCleanly ? '' : '\n\n'}event: error\ndata: ${JSON.stringify(body)}\n\n`)
    }
    return { completed: false, error }
  }
}
