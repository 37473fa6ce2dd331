import { EventStreamCodec } from '@smithy/eventstream-codec'
import { fromUtf8, toUtf8 } from '@smithy/util-utf8'
import { describe, expect, it } from 'vitest'
import type { UpstreamEvent } from '../../providers/adapter.ts'
import { MalformedResponseError } from '../../providers/adapter.ts'
import { decodeAwsEventStream, isAwsStreamFault } from './aws-eventstream.ts'

const codec = new EventStreamCodec(toUtf8, fromUtf8)

function event(type: string, payload: unknown): Uint8Array {
  return codec.encode({
    headers: {
      ':event-type': { type: 'string', value: type },
      ':content-type': { type: 'string', value: 'application/json' },
      ':message-type': { type: 'string', value: 'event' },
    },
    body: fromUtf8(JSON.stringify(payload)),
  })
}

function exception(type: string, message: string): Uint8Array {
  return codec.encode({
    headers: {
      ':exception-type': { type: 'string', value: type },
      ':content-type': { type: 'string', value: 'application/json' },
      ':message-type': { type: 'string', value: 'exception' },
    },
    body: fromUtf8(JSON.stringify({ message })),
  })
}

const frames = [
  event('messageStart', { role: 'assistant' }),
  event('contentBlockDelta', { contentBlockIndex: 0, delta: { text: 'Hello, wörld' } }),
  event('messageStop', { stopReason: 'end_turn' }),
  event('metadata', { usage: { inputTokens: 3, outputTokens: 2, totalTokens: 5 }, metrics: { latencyMs: 12 } }),
]
const expected: UpstreamEvent[] = [
  { event: 'messageStart', data: { role: 'assistant' } },
  { event: 'contentBlockDelta', data: { contentBlockIndex: 0, delta: { text: 'Hello, wörld' } } },
  { event: 'messageStop', data: { stopReason: 'end_turn' } },
  { event: 'metadata', data: { usage: { inputTokens: 3, outputTokens: 2, totalTokens: 5 }, metrics: { latencyMs: 12 } } },
]

function joined(parts: Uint8Array[]): Uint8Array {
  return Uint8Array.from(parts.flatMap((part) => Array.from(part)))
}

async function* chunks(bytes: Uint8Array, cuts: number[]): AsyncGenerator<Uint8Array> {
  let start = 0
  for (const cut of [...cuts, bytes.byteLength]) {
    yield bytes.subarray(start, cut)
    start = cut
  }
}

async function collect(stream: AsyncIterable<UpstreamEvent>): Promise<UpstreamEvent[]> {
  const events: UpstreamEvent[] = []
  for await (const item of stream) events.push(item)
  return events
}

describe('decodeAwsEventStream', () => {
  const bytes = joined(frames)

  it('decodes several messages arriving in one chunk', async () => {
    expect(await collect(decodeAwsEventStream(chunks(bytes, [])))).toEqual(expected)
  })

  it('decodes messages split at every possible single boundary', async () => {
    for (let cut = 1; cut < bytes.byteLength; cut++) {
      expect(await collect(decodeAwsEventStream(chunks(bytes, [cut])))).toEqual(expected)
    }
  })

  it('decodes one byte at a time, inside preludes, headers and a multi-byte character', async () => {
    const everyByte = Array.from({ length: bytes.byteLength - 1 }, (_, index) => index + 1)
    expect(await collect(decodeAwsEventStream(chunks(bytes, everyByte)))).toEqual(expected)
  })

  it('tells exceptions and errors apart from events', async () => {
    const error = codec.encode({
      headers: {
        ':message-type': { type: 'string', value: 'error' },
        ':error-code': { type: 'string', value: 'InternalFailure' },
        ':error-message': { type: 'string', value: 'something broke' },
      },
      body: new Uint8Array(0),
    })
    const decoded = await collect(decodeAwsEventStream(chunks(joined([frames[0]!, exception('throttlingException', 'slow down'), error]), [5, 90])))
    expect(decoded).toEqual([
      { event: 'messageStart', data: { role: 'assistant' } },
      { event: 'exception:throttlingException', data: { message: 'slow down' } },
      { event: 'error:InternalFailure', data: { message: 'something broke' } },
    ])
    expect(decoded.map(isAwsStreamFault)).toEqual([false, true, true])
  })

  it('rejects a message whose CRC does not match', async () => {
    const corrupt = Uint8Array.from(frames[1]!)
    corrupt[corrupt.byteLength - 6] = corrupt[corrupt.byteLength - 6]! ^ 0xff
    await expect(collect(decodeAwsEventStream(chunks(corrupt, [7])))).rejects.toBeInstanceOf(MalformedResponseError)
  })

  it('rejects a stream that ends inside a message', async () => {
    const truncated = bytes.subarray(0, bytes.byteLength - 3)
    const consumed: UpstreamEvent[] = []
    const failure = await (async () => {
      for await (const item of decodeAwsEventStream(chunks(truncated, [40]))) consumed.push(item)
    })().catch((caught: unknown) => caught)
    expect(failure).toBeInstanceOf(MalformedResponseError)
    expect(consumed).toEqual(expected.slice(0, 3))
  })

  it('rejects an impossible message length and a payload that is not JSON', async () => {
    await expect(collect(decodeAwsEventStream(chunks(new Uint8Array([0, 0, 0, 3, 0, 0, 0, 0]), [])))).rejects.toBeInstanceOf(MalformedResponseError)
    const notJson = codec.encode({ headers: { ':event-type': { type: 'string', value: 'chunk' } }, body: fromUtf8('not json') })
    await expect(collect(decodeAwsEventStream(chunks(notJson, [])))).rejects.toBeInstanceOf(MalformedResponseError)
  })

  it('reassembles a large message from many small reads in linear time', async () => {
    const big = event('contentBlockDelta', { contentBlockIndex: 0, delta: { text: 'x'.repeat(4 * 1024 * 1024) } })
    async function* drip(): AsyncGenerator<Uint8Array> {
      for (let at = 0; at < big.byteLength; at += 1024) yield big.subarray(at, at + 1024)
    }
    const started = performance.now()
    const events: UpstreamEvent[] = []
    for await (const decoded of decodeAwsEventStream(drip())) events.push(decoded)
    expect(performance.now() - started).toBeLessThan(2000)
    expect(events).toHaveLength(1)
    expect((events[0]!.data as { delta: { text: string } }).delta.text).toHaveLength(4 * 1024 * 1024)
  })
})
