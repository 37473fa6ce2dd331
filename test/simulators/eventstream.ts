/**
 * AWS event stream encoding (`application/vnd.amazon.eventstream`) for the Bedrock simulator, with
 * the same smithy codec the AWS SDKs use, so prelude and message CRCs are real.
 */
import { EventStreamCodec } from '@smithy/eventstream-codec'
import { fromUtf8, toUtf8 } from '@smithy/util-utf8'

const codec = new EventStreamCodec(toUtf8, fromUtf8)

export const eventStreamContentType = 'application/vnd.amazon.eventstream'

/** `:message-type event` with the JSON payload. */
export function eventFrame(eventType: string, payload: unknown): Uint8Array {
  return codec.encode({
    headers: {
      ':event-type': { type: 'string', value: eventType },
      ':content-type': { type: 'string', value: 'application/json' },
      ':message-type': { type: 'string', value: 'event' },
    },
    body: fromUtf8(JSON.stringify(payload)),
  })
}

/** `:message-type exception`: a modelled in-stream error such as `throttlingException`. */
export function exceptionFrame(exceptionType: string, message: string): Uint8Array {
  return codec.encode({
    headers: {
      ':exception-type': { type: 'string', value: exceptionType },
      ':content-type': { type: 'string', value: 'application/json' },
      ':message-type': { type: 'string', value: 'exception' },
    },
    body: fromUtf8(JSON.stringify({ message })),
  })
}
