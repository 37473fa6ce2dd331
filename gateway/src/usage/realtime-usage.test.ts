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
    expect(tally.usage()).toEqual({ inputTokens: 16, outputTokens: 10, cachedInputTokens: 3, audioInputTokens: 0, cachedAudioInputTokens: 0, audioOutputTokens: 0 })
  })

  it('sums the audio tokens among input, cached input and output apart', () => {
    const tally = new RealtimeUsageTally()
    const usage = (audioIn: number, cachedAudio: number, audioOut: number) => ({
      input_tokens: 100, output_tokens: 50,
      input_token_details: { cached_tokens: 40, text_tokens: 100 - audioIn, audio_tokens: audioIn, cached_tokens_details: { text_tokens: 40 - cachedAudio, audio_tokens: cachedAudio } },
      output_token_details: { text_tokens: 50 - audioOut, audio_tokens: audioOut },
    })
    tally.observe(frame({ type: 'response.done', response: { usage: usage(70, 30, 45) } }))
    tally.observe(frame({ type: 'response.done', response: { usage: usage(10, 0, 5) } }))
    expect(tally.usage()).toEqual({ inputTokens: 200, outputTokens: 100, cachedInputTokens: 80, audioInputTokens: 80, cachedAudioInputTokens: 30, audioOutputTokens: 50 })
  })
})
