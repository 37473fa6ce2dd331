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

describe('decodeSse bounds', () => {
  const limits = { maxLineChars: 1024, maxEventChars: 4096 }

  it('ends the stream when a line runs past the bound without a newline', async () => {
    async function* endless(): AsyncGenerator<Uint8Array> {
      yield new TextEncoder().encode('data: {"ok":1}\n\ndata: ')
      for (let i = 0; i < 100; i++) yield new TextEncoder().encode('x'.repeat(100))
    }
    const seen: unknown[] = []
    const error = await (async () => {
      for await (const batch of decodeSseBatches(endless(), limits)) seen.push(...batch.map((event) => event.data))
    })().catch((caught: unknown) => caught)
    expect(seen).toEqual([{ ok: 1 }])
    expect(error).toMatchObject({ name: 'MalformedResponseError', message: expect.stringContaining('1024') })
  })

  it('ends the stream when one event grows past its bound over many lines', async () => {
    const line = `data: ${'y'.repeat(1000)}\n`
    const error = await collect(decodeSse(bytes(line.repeat(5), '\n'), limits)).catch((caught: unknown) => caught)
    expect(error).toMatchObject({ name: 'MalformedResponseError', message: expect.stringContaining('4096') })
  })

  it('reads a line split over many chunks, CRLF split between chunks', async () => {
    const events = await collect(decodeSse(bytes('da', 'ta: {"a"', ':', '1}\r', '\n\r', '\n')))
    expect(events).toEqual([{ data: { a: 1 }, raw: '{"a":1}' }])
  })

  it('scans a long unfinished line in linear time', async () => {
    const piece = new TextEncoder().encode('z'.repeat(64 * 1024))
    async function* big(): AsyncGenerator<Uint8Array> {
      yield new TextEncoder().encode('data: ')
      for (let i = 0; i < 120; i++) yield piece // 7.5 MiB, under the default bound
      yield new TextEncoder().encode('\n\n')
    }
    const started = performance.now()
    const error = await collect(decodeSse(big())).catch((caught: unknown) => caught)
    // Not JSON, so the event is refused, but only after the line was read once.
    expect(error).toMatchObject({ name: 'MalformedResponseError' })
    expect(performance.now() - started).toBeLessThan(2000)
  })
})
