import { describe, expect, it } from 'vitest'
import { GatewayError } from '../core/errors.ts'
import { MAX_EVENT_BYTES, rewriteSseMessages } from './sse-rewrite.ts'

async function* pieces(...parts: string[]): AsyncGenerator<Uint8Array> {
  for (const part of parts) yield new TextEncoder().encode(part)
}

async function collect(source: AsyncIterable<Uint8Array>): Promise<string> {
  let out = ''
  for await (const chunk of source) out += new TextDecoder().decode(chunk)
  return out
}

const upper = (message: unknown): unknown => {
  const value = message as { id?: number; result?: string }
  return value.id === 1 ? { ...value, result: value.result?.toUpperCase() } : message
}

describe('rewriteSseMessages', () => {
  it('rewrites the data of events split across chunks, and passes everything else byte for byte', async () => {
    const text = await collect(rewriteSseMessages(pieces(': keep-alive\n\nid: 5\nevent: mess', 'age\ndata: {"id":1,"result":"ok"}\n', '\nid: 6\ndata: {"id":2,"result":"same"}\n\ndata: not json\n\n'), upper))
    expect(text).toBe(': keep-alive\n\nid: 5\nevent: message\ndata: {"id":1,"result":"OK"}\n\nid: 6\ndata: {"id":2,"result":"same"}\n\ndata: not json\n\n')
  })

  it('joins multi-line data and accepts CRLF framing', async () => {
    const text = await collect(rewriteSseMessages(pieces('data: {"id":1,\r\ndata: "result":"a"}\r\n\r\n'), upper))
    expect(text).toBe('data: {"id":1,"result":"A"}\n\n')
  })

  it('refuses an event larger than the relay holds', async () => {
    const huge = `data: ${'x'.repeat(MAX_EVENT_BYTES + 1)}`
    await expect(collect(rewriteSseMessages(pieces(huge), upper))).rejects.toBeInstanceOf(GatewayError)
  })
})
