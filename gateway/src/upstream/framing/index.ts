/** Picks the one decoder for a framing; adapters declare which one their stream uses. */
import type { Framing, UpstreamEvent } from '../../providers/adapter.ts'
import { decodeAwsEventStream } from './aws-eventstream.ts'
import { decodeSse, decodeSseBatches } from './sse.ts'

type Decoder<T> = (body: AsyncIterable<Uint8Array>) => AsyncGenerator<T>

async function* singles(events: AsyncIterable<UpstreamEvent>): AsyncGenerator<UpstreamEvent[]> {
  for await (const event of events) yield [event]
}

const decoders: Record<Framing, Decoder<UpstreamEvent>> = {
  sse: decodeSse,
  'aws-eventstream': decodeAwsEventStream,
}

const batchDecoders: Record<Framing, Decoder<UpstreamEvent[]>> = {
  sse: decodeSseBatches,
  // Bedrock sends one event per frame at model speed; batching would buy nothing there.
  'aws-eventstream': (body) => singles(decodeAwsEventStream(body)),
}

export function decodeFrames(framing: Framing, body: AsyncIterable<Uint8Array>): AsyncGenerator<UpstreamEvent> {
  return decoders[framing](body)
}

/** Events in batches, as they arrived together (the streaming hot path). */
export function decodeFrameBatches(framing: Framing, body: AsyncIterable<Uint8Array>): AsyncGenerator<UpstreamEvent[]> {
  return batchDecoders[framing](body)
}
