import { describe, expect, it } from 'vitest'
import { decodeSse, decodeSseBatches } from './sse.ts'

async function* bytes(...parts: string[]): AsyncGenerator<Uint8Array> {
  for (const part of parts) yield new TextEncoder().encode(part)
}

async function collect<T>(iterable: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = []
  for await (const item of iterable) out.push(item)
  return out
}

describe('decodeSse', () => {
  it('decodes events split across chunks and stops at [DONE]', async () => {
    const events = await collect(decodeSse(bytes('data: {"a"', ':1}\n', '\ndata: {"b":2}\r\n\r\ndata: [DONE]\n\ndata: {"c":3}\n\n')))
    expect(events).toEqual([
      { data: { a: 1 }, raw: '{"a":1}' },
      { data: { b: 2 }, raw: '{"b":2}' },
    ])
  })

  it('keeps event names, skips comments and joins multi-line data', async () => {
    const events = await collect(decodeSse(bytes(': ping\n\nevent: message_start\ndata: {"x":\ndata: 1}\n\nevent: ping\n\n')))
    expect(events).toEqual([{ event: 'message_start', data: { x: 1 }, raw: '{"x":\n1}' }])
  })

  it('splits a multi-byte character across chunks correctly', async () => {
    const encoded = new TextEncoder().encode('data: {"t":"é"}\n\n')
    async function* split(): AsyncGenerator<Uint8Array> {
      yield encoded.slice(0, 13)
      yield encoded.slice(13)
    }
    expect((await collect(decodeSse(split()))).map((event) => event.data)).toEqual([{ t: 'é' }])
  })

  it('flushes a final event that lacks the blank line', async () => {
    expect((await collect(decodeSse(bytes('data: {"end":true}')))).map((event) => event.data)).toEqual([{ end: true }])
  })

  it('rejects non-JSON data', async () => {
    await expect(collect(decodeSse(bytes('data: nope\n\n')))).rejects.toThrow(/not JSON/)
  })
})

describe('decodeSseBatches', () => {
  it('hands over the events of one read together, and nothing for a read that completes none', async () => {
    const batches = await collect(decodeSseBatches(bytes('data: {"n":1}\n\ndata: {"n":2}\n\ndata: {"n"', ':3}\n\n', ': keep-alive\n\n', 'data: [DONE]\n\n')))
    expect(batches.map((batch) => batch.map((event) => event.data))).toEqual([[{ n: 1 }, { n: 2 }], [{ n: 3 }]])
  })
})
