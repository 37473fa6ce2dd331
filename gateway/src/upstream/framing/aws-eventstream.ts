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
import { EventStreamCodec } from '@smithy/eventstream-codec'
import { fromUtf8, toUtf8 } from '@smithy/util-utf8'
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

// `decode` keeps no state between calls, so one codec serves every stream.
const codec = new EventStreamCodec(toUtf8, fromUtf8)
const utf8 = new TextDecoder()

export async function* decodeAwsEventStream(body: AsyncIterable<Uint8Array>): AsyncGenerator<UpstreamEvent> {
  let pending: Uint8Array = new Uint8Array(0)
  for await (const chunk of body) {
    pending = pending.byteLength === 0 ? chunk : concat(pending, chunk)
    let offset = 0
    while (pending.byteLength - offset >= 4) {
      const view = new DataView(pending.buffer, pending.byteOffset + offset, 4)
      const totalBytes = view.getUint32(0, false)
      if (totalBytes < minimumMessageBytes || totalBytes > maximumMessageBytes) {
        throw new MalformedResponseError(`event stream message length ${totalBytes} is out of range`)
      }
      if (pending.byteLength - offset < totalBytes) break
      yield toEvent(decodeMessage(pending.subarray(offset, offset + totalBytes)))
      offset += totalBytes
    }
    pending = offset === 0 ? pending : pending.subarray(offset)
  }
  if (pending.byteLength > 0) throw new MalformedResponseError(`event stream ended inside a message (${pending.byteLength} bytes left)`)
}

function concat(head: Uint8Array, tail: Uint8Array): Uint8Array {
  const joined = new Uint8Array(head.byteLength + tail.byteLength)
  joined.set(head, 0)
  joined.set(tail, head.byteLength)
  return joined
}

type Decoded = ReturnType<EventStreamCodec['decode']>

function decodeMessage(bytes: Uint8Array): Decoded {
  try {
    return codec.decode(bytes)
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
