import { beforeAll, describe, expect, it } from 'vitest'
import { audioUsage, lastCueEndSeconds } from './audio-usage.ts'
import { BodyWindow } from './body-window.ts'
import { countText, loadTokenizer } from './estimate.ts'
import { lastUsageObject } from './relayed-answer.ts'

beforeAll(() => loadTokenizer())

const windowed = (body: string, windowBytes: number, chunkBytes: number) => {
  const window = new BodyWindow(windowBytes)
  const bytes = Buffer.from(body)
  for (let at = 0; at < bytes.length; at += chunkBytes) window.push(bytes.subarray(at, at + chunkBytes))
  return window.text()
}

describe('BodyWindow', () => {
  it('keeps a body that fits whole, and only the first and last bytes of a longer one', () => {
    expect(windowed('abcdef', 4, 1)).toEqual({ head: 'abcdef', tail: 'abcdef', whole: true })
    const long = `HEAD${'x'.repeat(10_000)}TAIL`
    for (const chunkBytes of [1, 7, 64, 20_000]) {
      const text = windowed(long, 16, chunkBytes)
      expect(text).toMatchObject({ whole: false, head: `HEAD${'x'.repeat(12)}` })
      expect(text.tail).toBe(`${'x'.repeat(12)}TAIL`)
    }
  })
})

describe('reading usage from audio answers', () => {
  it('finds the last usage object, nested details included, and nothing in strings or malformed text', () => {
    const body = JSON.stringify({ text: 'he said "usage": {"type":"duration"}', usage: { type: 'tokens', input_tokens: 5, input_token_details: { audio_tokens: 4 } } })
    expect(lastUsageObject(body)).toEqual({ type: 'tokens', input_tokens: 5, input_token_details: { audio_tokens: 4 } })
    expect(lastUsageObject('{"usage": {"type": "dura')).toBeNull()
    // The word as a transcript's value, after the key.
    expect(lastUsageObject('{"usage":{"type":"duration","seconds":2},"words":[{"word":"usage"}]}')).toEqual({ type: 'duration', seconds: 2 })
    expect(lastUsageObject('{"text":"no usage here"}')).toBeNull()
  })

  it('reads where the last subtitle cue ends, in SRT and WebVTT, past an hour too', () => {
    expect(lastCueEndSeconds('1\n00:00:00,000 --> 00:00:02,500\nhi\n\n2\n00:00:02,500 --> 01:02:03,250\nthere\n')).toBeCloseTo(3723.25, 6)
    expect(lastCueEndSeconds('WEBVTT\n\n00:01.000 --> 00:04.500\nhi\n')).toBeCloseTo(4.5, 6)
    expect(lastCueEndSeconds('just words')).toBeNull()
  })

  const json = (body: unknown) => ({ contentType: 'application/json', ...windowed(JSON.stringify(body), 64 * 1024, 1024) })

  it('transcriptions: reported usage first, then a verbose duration; a long transcript read from its ends', () => {
    expect(audioUsage('transcription', json({ text: 'hi', usage: { type: 'duration', seconds: 4 } }), 'seconds', null)).toEqual({
      usage: { inputTokens: 0, outputTokens: 0, audioSeconds: 4 }, estimated: false, unmetered: null,
    })
    const verbose = { task: 'translate', language: 'english', duration: 61.25, text: 'word '.repeat(40_000), segments: [{ start: 0, end: 61.25 }] }
    expect(audioUsage('translation', { contentType: 'application/json', ...windowed(JSON.stringify(verbose), 1024, 4096) }, 'seconds', null).usage.audioSeconds).toBe(61.25)
    const long = { text: 'word '.repeat(40_000), usage: { type: 'tokens', input_tokens: 610, input_token_details: { audio_tokens: 600, text_tokens: 10 }, output_tokens: 40_000, total_tokens: 40_610 } }
    expect(audioUsage('transcription', { contentType: 'application/json', ...windowed(JSON.stringify(long), 1024, 4096) }, 'tokens', null)).toEqual({
      usage: { inputTokens: 610, outputTokens: 40_000, audioInputTokens: 600 }, estimated: false, unmetered: null,
    })
  })

  it('says what it could not know rather than pricing half of it', () => {
    const text = { contentType: 'text/plain; charset=utf-8', ...windowed('hello there\n', 1024, 4) }
    expect(audioUsage('transcription', text, 'seconds', null)).toMatchObject({ usage: { inputTokens: 0, outputTokens: 0 }, unmetered: expect.stringMatching(/audio heard/) })
    expect(audioUsage('transcription', text, 'tokens', null)).toMatchObject({ usage: { outputTokens: countText('hello there\n') }, estimated: true, unmetered: expect.stringMatching(/input audio tokens/) })
  })

  it('speech: the done event of an event stream, else characters, else counted input and unknown audio', () => {
    const request = { input: 'héllo wörld', instructions: '' }
    const events = `data: {"type":"speech.audio.delta","audio":"AAAA"}\n\ndata: {"type":"speech.audio.done","usage":{"input_tokens":3,"output_tokens":40,"total_tokens":43}}\n\n`
    expect(audioUsage('speech', { contentType: 'text/event-stream', ...windowed(events, 1024, 16) }, 'tokens', request).usage).toEqual({
      inputTokens: 3, outputTokens: 40, audioOutputTokens: 40, inputCharacters: 11,
    })
    const bytes = { contentType: 'audio/mpeg', ...windowed('\u0000\u0001binary', 1024, 4) }
    expect(audioUsage('speech', bytes, 'characters', request)).toEqual({ usage: { inputTokens: 0, outputTokens: 0, inputCharacters: 11 }, estimated: false, unmetered: null })
    expect(audioUsage('speech', bytes, 'tokens', request)).toMatchObject({ estimated: true, unmetered: expect.stringMatching(/output audio tokens/) })
  })
})
