import OpenAI, { toFile } from 'openai'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import type { Simulator } from './base.ts'
import { AUDIO_INPUT_TOKENS_PER_SECOND, AUDIO_OUTPUT_TOKENS_PER_SECOND, clipSeconds, PCM16_BYTES_PER_SECOND, SPOKEN_SECONDS_PER_PIECE, wavClip } from './audio-clip.ts'
import { startOpenAISimulator } from './openai.ts'

let sim: Simulator
let client: OpenAI

beforeAll(async () => {
  sim = await startOpenAISimulator({ chunks: 4 })
  client = new OpenAI({ apiKey: 'sk-simulator', baseURL: sim.baseUrl, maxRetries: 0 })
})
afterEach(() => sim.reset())
afterAll(async () => {
  await sim.close()
})

/** Streamed audio deltas are not in the SDK's chunk type (openai/openai-openapi#577). */
type AudioDelta = { id?: string; transcript?: string; data?: string; expires_at?: number }

describe('chat completions with audio', () => {
  it('hears input_audio parts and speaks the answer: message.audio and audio tokens in the usage', async () => {
    const clip = wavClip(3)
    const completion = await client.chat.completions.create({
      model: 'gpt-4o-audio-preview',
      modalities: ['text', 'audio'],
      audio: { voice: 'alloy', format: 'wav' },
      messages: [{ role: 'user', content: [{ type: 'text', text: 'what is said here?' }, { type: 'input_audio', input_audio: { data: clip.toString('base64'), format: 'wav' } }] }],
    })
    const message = completion.choices[0]!.message
    expect(message.content).toBeNull()
    expect(message.audio).toMatchObject({ id: expect.stringMatching(/^audio_/), transcript: 'Echo: what is said here? alpha bravo charlie' })
    expect(message.audio!.expires_at).toBeGreaterThan(completion.created)
    const spokenSeconds = 4 * SPOKEN_SECONDS_PER_PIECE
    // The audio is a WAV file as long as the answer's speech.
    expect(clipSeconds(Buffer.from(message.audio!.data, 'base64'))).toBeCloseTo(spokenSeconds, 3)
    const usage = completion.usage!
    expect(usage.prompt_tokens_details?.audio_tokens).toBe(3 * AUDIO_INPUT_TOKENS_PER_SECOND)
    expect(usage.completion_tokens_details?.audio_tokens).toBe(spokenSeconds * AUDIO_OUTPUT_TOKENS_PER_SECOND)
    expect(usage.completion_tokens).toBe(4 + spokenSeconds * AUDIO_OUTPUT_TOKENS_PER_SECOND)
    expect(usage.prompt_tokens).toBe(usage.prompt_tokens_details!.audio_tokens! + Math.ceil(('what is said here?'.length + 4) / 4))
    expect(usage.total_tokens).toBe(usage.prompt_tokens + usage.completion_tokens)
  })

  it('streams delta.audio pieces (id first, transcript and PCM16 data, expiry last) and the usage chunk', async () => {
    const stream = await client.chat.completions.create({
      model: 'gpt-4o-mini-audio-preview',
      modalities: ['text', 'audio'],
      audio: { voice: 'alloy', format: 'pcm16' },
      messages: [{ role: 'user', content: 'say hi' }],
      stream: true,
      stream_options: { include_usage: true },
    })
    const deltas: AudioDelta[] = []
    let usage: OpenAI.CompletionUsage | undefined
    for await (const chunk of stream) {
      const audio = (chunk.choices[0]?.delta as { audio?: AudioDelta } | undefined)?.audio
      if (audio) deltas.push(audio)
      if (chunk.usage) usage = chunk.usage
    }
    expect(deltas[0]).toMatchObject({ id: expect.stringMatching(/^audio_/), transcript: 'Echo: say hi' })
    expect(deltas.at(-1)).toEqual({ expires_at: expect.any(Number) })
    expect(deltas.map((delta) => delta.transcript ?? '').join('')).toBe('Echo: say hi alpha bravo charlie')
    const pcm = Buffer.concat(deltas.map((delta) => Buffer.from(delta.data ?? '', 'base64')))
    expect(pcm.length).toBe(4 * SPOKEN_SECONDS_PER_PIECE * PCM16_BYTES_PER_SECOND)
    expect(usage?.completion_tokens_details?.audio_tokens).toBe(4 * SPOKEN_SECONDS_PER_PIECE * AUDIO_OUTPUT_TOKENS_PER_SECOND)
    expect(usage?.prompt_tokens_details?.audio_tokens).toBe(0)
  })

  it('refuses what OpenAI refuses: audio on a text model, no audio parameter, a streamed format other than pcm16', async () => {
    const ask = (body: Record<string, unknown>) => client.chat.completions.create({ messages: [{ role: 'user', content: 'hi' }], ...body } as never)
    await expect(ask({ model: 'gpt-4o', modalities: ['text', 'audio'], audio: { voice: 'alloy', format: 'wav' } })).rejects.toMatchObject({ status: 400, param: 'modalities' })
    await expect(ask({ model: 'gpt-4o-audio-preview', modalities: ['text', 'audio'] })).rejects.toMatchObject({ status: 400, param: 'audio' })
    await expect(ask({ model: 'gpt-4o-audio-preview', modalities: ['text', 'audio'], audio: { voice: 'alloy', format: 'mp3' }, stream: true })).rejects.toMatchObject({ status: 400, param: 'audio.format' })
  })
})

describe('transcriptions, translations and speech', () => {
  const clip = wavClip(2.5)
  const file = () => toFile(clip, 'speech.wav', { type: 'audio/wav' })

  it('whisper-1 bills whole seconds: json and verbose_json carry usage {type: duration}', async () => {
    const json = await client.audio.transcriptions.create({ model: 'whisper-1', file: await file() })
    expect(json.usage).toEqual({ type: 'duration', seconds: 3 })
    const verbose = await client.audio.transcriptions.create({ model: 'whisper-1', file: await file(), response_format: 'verbose_json' })
    expect(verbose.duration).toBeCloseTo(2.5, 6)
    expect(verbose.usage).toEqual({ type: 'duration', seconds: 3 })
  })

  it('whisper-1 text formats carry no usage; subtitles end where the audio does', async () => {
    expect(await client.audio.transcriptions.create({ model: 'whisper-1', file: await file(), response_format: 'text' })).toMatch(/^Echo: transcribe speech\.wav/)
    expect(await client.audio.transcriptions.create({ model: 'whisper-1', file: await file(), response_format: 'srt' })).toContain('00:00:00,000 --> 00:00:02,500')
    expect(await client.audio.transcriptions.create({ model: 'whisper-1', file: await file(), response_format: 'vtt' })).toMatch(/^WEBVTT\n\n00:00:00\.000 --> 00:00:02\.500/)
  })

  it('gpt-4o-transcribe reports tokens, in JSON and at the end of its event stream', async () => {
    const json = await client.audio.transcriptions.create({ model: 'gpt-4o-transcribe', file: await file(), prompt: 'names: Ada' })
    expect(json.usage).toEqual({ type: 'tokens', input_tokens: 25 + 3, input_token_details: { audio_tokens: 25, text_tokens: 3 }, output_tokens: 4, total_tokens: 32 })
    const stream = await client.audio.transcriptions.create({ model: 'gpt-4o-mini-transcribe', file: await file(), stream: true })
    const events: OpenAI.Audio.TranscriptionStreamEvent[] = []
    for await (const event of stream) events.push(event)
    expect(events.filter((event) => event.type === 'transcript.text.delta')).toHaveLength(4)
    expect(events.at(-1)).toMatchObject({ type: 'transcript.text.done', usage: { type: 'tokens', input_tokens: 25, output_tokens: 4 } })
    await expect(client.audio.transcriptions.create({ model: 'gpt-4o-transcribe', file: await file(), response_format: 'srt' })).rejects.toMatchObject({ status: 400 })
  })

  it('translations are whisper-1 only and report no usage', async () => {
    const translation = await client.audio.translations.create({ model: 'whisper-1', file: await file() })
    expect(translation).toEqual({ text: expect.stringMatching(/^Echo: translate/) })
    const verbose = (await client.audio.translations.create({ model: 'whisper-1', file: await file(), response_format: 'verbose_json' })) as OpenAI.Audio.TranslationVerbose
    expect(verbose.duration).toBeCloseTo(2.5, 6)
    await expect(client.audio.translations.create({ model: 'gpt-4o-transcribe', file: await file() })).rejects.toMatchObject({ status: 400 })
  })

  it('speech: bytes in the format asked; gpt-4o-mini-tts streams events ending with its usage', async () => {
    const input = 'Welcome to the gatehouse, traveller.'
    const wav = await client.audio.speech.create({ model: 'tts-1', voice: 'alloy', input, response_format: 'wav' })
    expect(wav.headers.get('content-type')).toBe('audio/wav')
    expect(clipSeconds(Buffer.from(await wav.arrayBuffer()))).toBeCloseTo(input.length / 15, 3)
    const events = await client.audio.speech.create({ model: 'gpt-4o-mini-tts', voice: 'alloy', input, stream_format: 'sse' })
    const text = await events.text()
    const done = text.split('\n\n').filter(Boolean).map((frame) => JSON.parse(frame.slice('data: '.length)) as { type: string; usage?: unknown }).at(-1)
    expect(done).toEqual({ type: 'speech.audio.done', usage: { input_tokens: 9, output_tokens: Math.ceil((input.length / 15) * 20), total_tokens: 9 + Math.ceil((input.length / 15) * 20) } })
    await expect(client.audio.speech.create({ model: 'tts-1', voice: 'alloy', input, stream_format: 'sse' })).rejects.toMatchObject({ status: 400 })
  })
})
