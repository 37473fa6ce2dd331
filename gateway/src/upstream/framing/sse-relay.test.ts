import { describe, expect, it } from 'vitest'
import { relaySseReads, type RelayedRead } from './sse-relay.ts'

const MARKERS = ['"error"', '"usage":{', '"finish_reason":"']

async function* pieces(...parts: Array<string | Uint8Array>): AsyncGenerator<Uint8Array> {
  for (const part of parts) yield typeof part === 'string' ? Buffer.from(part) : part
}

async function reads(...parts: Array<string | Uint8Array>): Promise<RelayedRead[]> {
  const out: RelayedRead[] = []
  for await (const read of relaySseReads(pieces(...parts), MARKERS)) out.push(read)
  return out
}

const content = (text: string): string => `data: {"choices":[{"index":0,"delta":{"content":"${text}"},"finish_reason":null}]}\n\n`
const finish = 'data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\n'
const usage = 'data: {"choices":[],"usage":{"prompt_tokens":3,"completion_tokens":2}}\n\n'

describe('relaySseReads', () => {
  it('hands on each read as its whole events, byte for byte, with only the notable ones decoded', async () => {
    const [read, ...rest] = await reads(content('a') + content('b') + finish + usage + 'data: [DONE]\n\n')
    expect(rest).toEqual([])
    expect(read!.bytes.toString()).toBe(content('a') + content('b') + finish + usage)
    expect(read!.notable.map((event) => event.data)).toEqual([finish.slice(6, -2), usage.slice(6, -2)])
    // Offsets frame exactly the notable events.
    for (const event of read!.notable) expect(event.data).toBe(read!.bytes.toString('utf8', event.start + 6, event.end - 2))
  })

  it('holds a partial event until the read that completes it, and ends at [DONE] whatever follows', async () => {
    const whole = content('one') + content('two')
    const cut = 30
    const out = await reads(whole.slice(0, cut), whole.slice(cut) + 'data: [DONE]\n\n' + content('late'))
    expect(out.map((read) => read.bytes.toString())).toEqual([whole])
  })

  it('keeps a multi-byte character split between reads whole', async () => {
    const encoded = Buffer.from(content('é') + finish)
    const at = encoded.indexOf(0xc3) + 1
    const out = await reads(encoded.subarray(0, at), encoded.subarray(at))
    expect(Buffer.concat(out.map((read) => read.bytes)).toString()).toBe(content('é') + finish)
    expect(out.flatMap((read) => read.notable).map((event) => event.data)).toEqual([finish.slice(6, -2)])
  })

  it('turns CR LF line ends into LF, also when a CR and its LF arrive in different reads', async () => {
    const crlf = content('x').replaceAll('\n', '\r\n') + finish.replaceAll('\n', '\r\n')
    const at = crlf.indexOf('\r\n') + 1
    const out = await reads(crlf.slice(0, at), crlf.slice(at))
    expect(out.map((read) => read.bytes.toString()).join('')).toBe(content('x') + finish)
    expect(out.flatMap((read) => read.notable)).toHaveLength(1)
  })

  it('decodes named events and in-band errors, not quoted markers inside text', async () => {
    const named = 'event: ping\ndata: {"n":1}\n\n'
    const failure = 'data: {"error":{"message":"overloaded"}}\n\n'
    const quoted = content('say \\"error\\" or [DONE]')
    const [read] = await reads(named + quoted + failure)
    expect(read!.notable).toEqual([
      { start: 0, end: named.length, event: 'ping', data: '{"n":1}' },
      { start: named.length + quoted.length, end: named.length + quoted.length + failure.length, data: '{"error":{"message":"overloaded"}}' },
    ])
  })

  it('ends a body that stops inside an event with that event, and relays comments as they are', async () => {
    const out = await reads(': keep-alive\n\n' + content('a').trimEnd())
    expect(out.map((read) => read.bytes.toString())).toEqual([': keep-alive\n\n', content('a')])
  })

  it('refuses an event that grows past the limit without ending', async () => {
    async function* endless(): AsyncGenerator<Uint8Array> {
      yield Buffer.from('data: {"x":"')
      for (;;) yield Buffer.alloc(1024, 0x61)
    }
    const limits = { maxLineChars: 4096, maxEventChars: 4096 }
    await expect(async () => {
      for await (const _read of relaySseReads(endless(), MARKERS, limits)) void _read
    }).rejects.toThrow(/exceeds 4096 bytes/)
  })

  it('finds a blank line whose two LFs arrive in different reads', async () => {
    const whole = content('a') + content('b')
    const at = content('a').length - 1
    const out = await reads(whole.slice(0, at), whole.slice(at, at + 10), whole.slice(at + 10))
    expect(out.map((read) => read.bytes.toString())).toEqual([content('a'), content('b')])
  })

  it('refuses a line longer than the line limit inside an event that is still within its own', async () => {
    async function* longLine(): AsyncGenerator<Uint8Array> {
      yield Buffer.from('data: {"a":1}\ndata: ')
      for (;;) yield Buffer.alloc(1024, 0x61)
    }
    const limits = { maxLineChars: 2048, maxEventChars: 1 << 20 }
    await expect(async () => {
      for await (const _read of relaySseReads(longLine(), MARKERS, limits)) void _read
    }).rejects.toThrow(/line exceeds 2048 bytes/)
  })
})
