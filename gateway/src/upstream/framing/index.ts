/** Picks the one decoder for a framing; adapters declare which one their stream uses. */
import type { Framing, UpstreamEvent } from '../../providers/adapter.ts'
import { decodeAwsEventStream } from './aws-eventstream.ts'
import { decodeSse } from './sse.ts'

const decoders: Record<Framing, (body: AsyncIterable<Uint8Array>) => AsyncGenerator<UpstreamEvent>> = {
  sse: decodeSse,
  'aws-eventstream': decodeAwsEventStream,
}

export function decodeFrames(framing: Framing, body: AsyncIterable<Uint8Array>): AsyncGenerator<UpstreamEvent> {
  return decoders[framing](body)
}
