import { describe, expect, it } from 'vitest'
import { RealtimeUsageTally } from './realtime-usage.ts'

const frame = (event: unknown): Buffer => Buffer.from(JSON.stringify(event))

describe('RealtimeUsageTally', () => {
  it('sums response.done usage and ignores every other frame, including text that merely mentions it', () => {
    const tally = new RealtimeUsageTally()
    expect(tally.usage()).toBeNull()
    tally.observe(frame({ type: 'response.output_audio_transcript.delta', delta: 'the event is called response.done', response: { usage: { input_tokens: 99 } } }))
    tally.observe(Buffer.from('{"type":"response.done", not json'))
    tally.observe(frame({ type: 'response.done', response: { status: 'cancelled', usage: null } }))
    expect(tally.usage()).toBeNull()
    tally.observe(frame({ type: 'response.done', response: { usage: { input_tokens: 10, output_tokens: 4, input_token_details: { cached_tokens: 3 } } } }))
    // A fragmented frame (ws hands over a Buffer list) and an ArrayBuffer are read alike.
    const split = frame({ event_id: 'e', type: 'response.done', response: { usage: { input_tokens: 5, output_tokens: 6 } } })
    tally.observe([split.subarray(0, 7), split.subarray(7)])
    const whole = frame({ type: 'response.done', response: { usage: { input_tokens: 1, output_tokens: -2, input_token_details: { cached_tokens: 'x' } } } })
    tally.observe(new Uint8Array(whole).buffer)
    expect(tally.usage()).toEqual({ inputTokens: 16, outputTokens: 10, cachedInputTokens: 3 })
  })
})
