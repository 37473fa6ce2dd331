import { describe, expect, it } from 'vitest'
import { RawJson } from './raw-json.ts'
import { eventChunks, SseBytes, sseEventFields } from './relayed-events.ts'

describe('relayed events', () => {
  it('splits relayed bytes into one RawJson per data event for the stages that read chunks', () => {
    const bytes = new SseBytes(Buffer.from('data: {"n":1}\n\n: keep-alive\n\ndata:{"n":\ndata: 2}\n\n'))
    const plain = { n: 0 }
    expect(eventChunks([plain, bytes])).toEqual([plain, new RawJson('{"n":1}'), new RawJson('{"n":\n2}')])
    expect(bytes.carriesData()).toBe(true)
    expect(new SseBytes(Buffer.from(': keep-alive\n\n')).carriesData()).toBe(false)
  })

  it('hands a batch without relayed bytes back as it is', () => {
    const batch = [{ n: 1 }, new RawJson('{"n":2}')]
    expect(eventChunks(batch)).toBe(batch)
  })

  it('reads an event block as SSE does: name, joined data lines, comments and other fields ignored', () => {
    expect(sseEventFields('event: ping\nid: 7\n: note\ndata: a\ndata:b')).toEqual({ event: 'ping', data: 'a\nb' })
    expect(sseEventFields(': only a comment')).toBeNull()
  })
})
