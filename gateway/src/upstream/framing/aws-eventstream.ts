/**
 * AWS event stream decoding (`application/vnd.amazon.eventstream`, Bedrock's streaming framing),
 * done once for every provider. Each binary message is a prelude (total length, headers length,
 * prelude CRC), typed headers, a payload and a message CRC; the smithy codec checks both CRCs and
 * parses the headers. This module only reassembles messages split across network chunks (or several
 * in one chunk) and turns them into `UpstreamEvent`s.
 *
 * - `:message-type event`: `event` is the `:event-type` header, `data` the JSON payload.
 * - `:message-type exception` (modelled errors such as `throttlingException`): `event` is
 *   `exception:<:exception-type>`, `data` the JSON payload (usually `{"message": ...}`).
 * - `:message-type error` (unmodelled): `event` is `error:<:error-code>`, `data` is
 *   `{"message": <:error-message>}`.
 */
import type * as SmithyEventStream from '@smithy/eventstream-codec'
import type { EventStreamCodec } from '@smithy/eventstream-codec'
import type * as SmithyUtf8 from '@smithy/util-utf8'
import { onDemand } from '../../core/on-demand.ts'
import type { UpstreamEvent } from '../../providers/adapter.ts'
import { awsErrorPrefix, awsExceptionPrefix, MalformedResponseError } from '../../providers/adapter.ts'


/** Whether a decoded event is an in-band exception or error rather than a normal event. */
export function isAwsStreamFault(event: UpstreamEvent): boolean {
  return event.event !== undefined && (event.event.startsWith(awsExceptionPrefix) || event.event.startsWith(awsErrorPrefix))
}

// Prelude (12 bytes) plus message CRC (4 bytes): the smallest possible message.
const minimumMessageBytes = 16
// The format allows 16 MiB messages; anything longer is a corrupt length, not a big event.
const maximumMessageBytes = 16 * 1024 * 1024

// The smithy codec is loaded with the first AWS stream: gateways without Bedrock (and most sidecars) never load it.
const eventStreamModule = onDemand<typeof SmithyEventStream>('@smithy/eventstream-codec')
const utf8Module = onDemand<typeof SmithyUtf8>('@smithy/util-utf8')
let sharedCodec: EventStreamCodec | null = null

/** `decode` keeps no state between calls, so one codec serves every stream. */
function codec(): EventStreamCodec {
  const { fromUtf8, toUtf8 } = utf8Module()
  return (sharedCodec ??= new (eventStreamModule().EventStreamCodec)(toUtf8, fromUtf8))
}
const utf8 = new TextDecoder()

export async function* decodeAwsEventStream(body: AsyncIterable<Uint8Array>): AsyncGenerator<UpstreamEvent> {
  // Chunks are kept as they arrived until the message at their head is complete, then joined once:
  // a large message arriving in many small reads costs one copy, not one per read.
  let parts: Uint8Array[] = []
  let buffered = 0
  // Bytes the message at the head needs (0 until its prelude arrived).
  let wanted = 0
  for await (const chunk of body) {
    parts.push(chunk)
    buffered += chunk.byteLength
    if (buffered < Math.max(4, wanted)) continue
    const pending = parts.length === 1 ? parts[0]! : concat(parts, buffered)
    let offset = 0
    wanted = 0
    while (pending.byteLength - offset >= 4) {
      const view = new DataView(pending.buffer, pending.byteOffset + offset, 4)
      const totalBytes = view.getUint32(0, false)
      if (totalBytes < minimumMessageBytes || totalBytes > maximumMessageBytes) {
        throw new MalformedResponseError(`event stream message length ${totalBytes} is out of range`)
      }
      if (pending.byteLength - offset < totalBytes) {
        wanted = totalBytes
        break
      }
      yield toEvent(decodeMessage(pending.subarray(offset, offset + totalBytes)))
      offset += totalBytes
    }
    const rest = offset === 0 ? pending : pending.subarray(offset)
    parts = rest.byteLength === 0 ? [] : [rest]
    buffered = rest.byteLength
  }
  if (buffered > 0) throw new MalformedResponseError(`event stream ended inside a message (${buffered} bytes left)`)
}

function concat(parts: readonly Uint8Array[], totalBytes: number): Uint8Array {
  const joined = new Uint8Array(totalBytes)
  let at = 0
  for (const part of parts) {
    joined.set(part, at)
    at += part.byteLength
  }
  return joined
}

type Decoded = ReturnType<EventStreamCodec['decode']>

function decodeMessage(bytes: Uint8Array): Decoded {
  try {
    return codec().decode(bytes)
  } catch (error) {
    // CRC mismatches and bad header types: the bytes are not a valid event stream.
    throw new MalformedResponseError(`invalid event stream message: ${error instanceof Error ? error.message : String(error)}`)
  }
}

function header(message: Decoded, name: string): string | undefined {
  const value = message.headers[name]
  return value?.type === 'string' ? value.value : undefined
}

function payloadJson(message: Decoded): unknown {
  if (message.body.byteLength === 0) return {}
  const text = utf8.decode(message.body)
  try {
    return JSON.parse(text)
  } catch {
    throw new MalformedResponseError(`event stream payload is not JSON: ${text.slice(0, 120)}`)
  }
}

function toEvent(message: Decoded): UpstreamEvent {
  const messageType = header(message, ':message-type') ?? 'event'
  if (messageType === 'exception') {
    return { event: awsExceptionPrefix + (header(message, ':exception-type') ?? 'UnknownException'), data: payloadJson(message) }
  }
  if (messageType === 'error') {
    return {
      event: awsErrorPrefix + (header(message, ':error-code') ?? 'UnknownError'),
      data: { message: header(message, ':error-message') ?? '' },
    }
  }
  const eventType = header(message, ':event-type')
  const data = payloadJson(message)
  return eventType === undefined ? { data } : { event: eventType, data }
}
