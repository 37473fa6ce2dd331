/**
 * Audio metered end to end: the official `openai` SDK through Gatehouse to the OpenAI simulator,
 * and the usage record each request produces. Chat completions that hear and speak carry the
 * provider's audio tokens and are priced at the model's audio rates; transcriptions and
 * translations are billed by the second (whisper-1) or by token (gpt-4o-transcribe); speech by
 * the character (tts-1) or by token (gpt-4o-mini-tts). Records come from the shipper's serialised
 * batches, so they passed the contract schema.
 */
import OpenAI, { toFile } from 'openai'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import type { UsageRecord } from '@gatehouse/gateway/snapshot'
import { costOf, tablePrice } from '../../gateway/src/pricing/index.ts'
import { countText, loadTokenizer } from '../../gateway/src/usage/estimate.ts'
import { startTestGateway, type TestGateway } from '../helpers/gateway.ts'
import { ShippedRecords } from '../helpers/usage-records.ts'
import { wavClip } from '../simulators/audio-clip.ts'
import { startOpenAISimulator } from '../simulators/openai.ts'
import type { Simulator } from '../simulators/index.ts'

let simulator: Simulator
let gateway: TestGateway
let client: OpenAI
const shipped = new ShippedRecords()

beforeAll(async () => {
  await loadTokenizer()
  simulator = await startOpenAISimulator({ chunks: 4 })
  gateway = await startTestGateway([{ slug: 'openai', kind: 'openai', baseUrl: simulator.baseUrl }], { usage: shipped.shipper })
  client = new OpenAI({ apiKey: gateway.workspaceKey, baseURL: gateway.baseUrl, maxRetries: 0, defaultHeaders: { 'x-gateway-provider': '@openai' } })
})
afterAll(async () => {
  await gateway?.close()
  await simulator?.close()
})
beforeEach(async () => {
  await shipped.clear()
  simulator.reset()
})

/** The one record of this test (or of its part since `shipped.clear()`). */
async function record(): Promise<UsageRecord> {
  const records = await shipped.wait()
  expect(records).toHaveLength(1)
  return records[0]!
}

const price = (model: string) => tablePrice('openai', model)!

/** Streamed audio deltas are not in the SDK's chunk type (openai/openai-openapi#577). */
type AudioDelta = { id?: string; transcript?: string; data?: string; expires_at?: number }

describe('chat completions with audio', () => {
  const heard = { type: 'input_audio' as const, input_audio: { data: wavClip(2).toString('base64'), format: 'wav' as const } }

  it('non-streamed: message.audio reaches the client; the record has the audio tokens, priced at audio rates', async () => {
    const completion = await client.chat.completions.create({
      model: 'gpt-4o-audio-preview',
      modalities: ['text', 'audio'],
      audio: { voice: 'alloy', format: 'mp3' },
      messages: [{ role: 'user', content: [{ type: 'text', text: 'what did I say?' }, heard] }],
    })
    expect(completion.choices[0]!.message.audio).toMatchObject({ id: expect.stringMatching(/^audio_/), transcript: expect.stringMatching(/^Echo:/), data: expect.any(String) })
    const usage = completion.usage!
    const audioIn = usage.prompt_tokens_details!.audio_tokens!
    const audioOut = usage.completion_tokens_details!.audio_tokens!
    expect(audioIn).toBe(20)
    expect(audioOut).toBeGreaterThan(0)
    const got = await record()
    expect(got).toMatchObject({
      route: 'chat', statusCode: 200, estimated: false, modelServed: 'gpt-4o-audio-preview',
      inputTokens: usage.prompt_tokens, outputTokens: usage.completion_tokens, audioInputTokens: audioIn, audioOutputTokens: audioOut,
    })
    const gpt4oAudio = price('gpt-4o-audio-preview')
    const textIn = usage.prompt_tokens - audioIn
    const textOut = usage.completion_tokens - audioOut
    const expected = textIn * gpt4oAudio.input + audioIn * gpt4oAudio.audioInput! + textOut * gpt4oAudio.output + audioOut * gpt4oAudio.audioOutput!
    expect(got.costUsd).toBeCloseTo(expected, 12)
    expect(got.costUsd).toBeCloseTo(costOf({ inputTokens: usage.prompt_tokens, outputTokens: usage.completion_tokens, audioInputTokens: audioIn, audioOutputTokens: audioOut }, gpt4oAudio), 12)
    // Audio bills at 16 (input) and 8 (output) times the text rate: pricing it as text would be far off.
    expect(got.costUsd!).toBeGreaterThan(costOf({ inputTokens: usage.prompt_tokens, outputTokens: usage.completion_tokens }, gpt4oAudio) * 4)
  })

  it('streamed: delta.audio pieces reach the client; the record has the audio tokens from the usage chunk', async () => {
    const stream = await client.chat.completions.create({
      model: 'gpt-4o-mini-audio-preview',
      modalities: ['text', 'audio'],
      audio: { voice: 'alloy', format: 'pcm16' },
      messages: [{ role: 'user', content: [{ type: 'text', text: 'say it back' }, heard] }],
      stream: true,
    })
    const deltas: AudioDelta[] = []
    for await (const chunk of stream) {
      const audio = (chunk.choices[0]?.delta as { audio?: AudioDelta } | undefined)?.audio
      if (audio) deltas.push(audio)
      expect(chunk.usage ?? null).toBeNull()
    }
    expect(deltas[0]).toMatchObject({ id: expect.stringMatching(/^audio_/), transcript: expect.stringMatching(/^Echo:/) })
    expect(deltas.some((delta) => typeof delta.data === 'string' && delta.data.length > 0)).toBe(true)
    expect(deltas.at(-1)).toEqual({ expires_at: expect.any(Number) })
    const got = await record()
    // The same request with include_usage tells what the provider counted.
    await shipped.clear()
    const asked = await client.chat.completions.create({
      model: 'gpt-4o-mini-audio-preview', modalities: ['text', 'audio'], audio: { voice: 'alloy', format: 'pcm16' },
      messages: [{ role: 'user', content: [{ type: 'text', text: 'say it back' }, heard] }], stream: true, stream_options: { include_usage: true },
    })
    let usage: OpenAI.CompletionUsage | undefined
    for await (const chunk of asked) if (chunk.usage) usage = chunk.usage
    expect(got).toMatchObject({
      streamed: true, estimated: false, inputTokens: usage!.prompt_tokens, outputTokens: usage!.completion_tokens,
      audioInputTokens: usage!.prompt_tokens_details!.audio_tokens, audioOutputTokens: usage!.completion_tokens_details!.audio_tokens,
    })
    expect(got.audioOutputTokens).toBeGreaterThan(0)
    const mini = price('gpt-4o-mini-audio-preview')
    expect(got.costUsd).toBeCloseTo(costOf({ inputTokens: got.inputTokens, outputTokens: got.outputTokens, audioInputTokens: got.audioInputTokens, audioOutputTokens: got.audioOutputTokens }, mini), 12)
    expect(got.costUsd!).toBeGreaterThan(costOf({ inputTokens: got.inputTokens, outputTokens: got.outputTokens }, mini))
  })
})

describe('transcriptions and translations', () => {
  // 2.5 s of audio: whisper-1 bills 3 whole seconds; the gpt-4o transcribers hear 25 audio tokens.
  const clip = wavClip(2.5)
  const file = () => toFile(clip, 'speech.wav', { type: 'audio/wav' })
  const whisper = () => price('whisper-1').perAudioSecond!

  it('whisper-1 JSON: the seconds it reports, priced per second; the model read from the upload, before or after the file', async () => {
    const answer = await client.audio.transcriptions.create({ model: 'whisper-1', file: await file() })
    const got = await record()
    expect(answer.usage).toEqual({ type: 'duration', seconds: 3 })
    expect(got).toMatchObject({
      route: 'passthrough:audio', endpointType: 'audio', statusCode: 200, modelRequested: 'whisper-1', modelServed: 'whisper-1',
      audioSeconds: 3, inputTokens: 0, outputTokens: 0, estimated: false, pricingVersion: 'gatehouse-2026-11-29.2',
    })
    expect(got.costUsd).toBeCloseTo(3 * whisper(), 12)
    expect(got.annotations.unmetered).toBeUndefined()

    // The SDK writes the form's fields in the order given: here the model follows the audio.
    await shipped.clear()
    await client.audio.transcriptions.create({ file: await toFile(wavClip(7.2), 'long.wav', { type: 'audio/wav' }), model: 'whisper-1', response_format: 'verbose_json' })
    const verbose = await record()
    expect(simulator.requests.at(-1)!.rawBody.indexOf('name="model"')).toBeGreaterThan(7.2 * 32_000)
    expect(verbose).toMatchObject({ modelServed: 'whisper-1', audioSeconds: 8, estimated: false })
    expect(verbose.costUsd).toBeCloseTo(8 * whisper(), 12)
  })

  it('whisper-1 subtitles: the last cue end, estimated; plain text: the seconds are unknown and so is the cost', async () => {
    await client.audio.transcriptions.create({ model: 'whisper-1', file: await file(), response_format: 'vtt' })
    const vtt = await record()
    expect(vtt).toMatchObject({ audioSeconds: 2.5, estimated: true })
    expect(vtt.costUsd).toBeCloseTo(2.5 * whisper(), 12)

    await shipped.clear()
    await client.audio.transcriptions.create({ model: 'whisper-1', file: await file(), response_format: 'srt' })
    expect(await record()).toMatchObject({ audioSeconds: 2.5, estimated: true })

    await shipped.clear()
    await client.audio.transcriptions.create({ model: 'whisper-1', file: await file(), response_format: 'text' })
    const text = await record()
    expect(text).toMatchObject({ statusCode: 200, audioSeconds: null, costUsd: null, pricingVersion: 'gatehouse-2026-11-29.2' })
    expect(text.annotations.unmetered).toMatch(/audio heard/)
  })

  it('translations: verbose_json says the duration; JSON says nothing of the audio', async () => {
    await client.audio.translations.create({ model: 'whisper-1', file: await file(), response_format: 'verbose_json' })
    const verbose = await record()
    expect(verbose).toMatchObject({ modelServed: 'whisper-1', audioSeconds: 2.5, estimated: false })
    expect(verbose.costUsd).toBeCloseTo(2.5 * whisper(), 12)

    await shipped.clear()
    await client.audio.translations.create({ model: 'whisper-1', file: await file() })
    const json = await record()
    expect(json).toMatchObject({ audioSeconds: null, costUsd: null })
    expect(json.annotations.unmetered).toMatch(/no usage or duration/)
  })

  it('gpt-4o-transcribe: the tokens it reports, audio tokens at the audio rate, in JSON and streamed', async () => {
    const answer = await client.audio.transcriptions.create({ model: 'gpt-4o-transcribe', file: await file(), prompt: 'names: Ada' })
    const got = await record()
    const usage = answer.usage as OpenAI.Audio.Transcription.Tokens
    expect(got).toMatchObject({
      modelServed: 'gpt-4o-transcribe', inputTokens: usage.input_tokens, outputTokens: usage.output_tokens,
      audioInputTokens: usage.input_token_details!.audio_tokens, audioSeconds: null, estimated: false,
    })
    const rates = price('gpt-4o-transcribe')
    const expected = usage.input_token_details!.audio_tokens! * rates.audioInput! + usage.input_token_details!.text_tokens! * rates.input + usage.output_tokens * rates.output
    expect(got.costUsd).toBeCloseTo(expected, 15)

    await shipped.clear()
    const stream = await client.audio.transcriptions.create({ model: 'gpt-4o-mini-transcribe', file: await file(), stream: true })
    let done: OpenAI.Audio.TranscriptionTextDoneEvent | undefined
    for await (const event of stream) if (event.type === 'transcript.text.done') done = event
    const streamed = await record()
    expect(streamed).toMatchObject({ streamed: true, modelServed: 'gpt-4o-mini-transcribe', inputTokens: done!.usage!.input_tokens, outputTokens: done!.usage!.output_tokens, audioInputTokens: 25, estimated: false })
    expect(streamed.costUsd).toBeCloseTo(costOf({ inputTokens: streamed.inputTokens, outputTokens: streamed.outputTokens, audioInputTokens: 25 }, price('gpt-4o-mini-transcribe')), 15)
  })
})

describe('a cache hit', () => {
  const heard = { type: 'input_audio' as const, input_audio: { data: wavClip(1).toString('base64'), format: 'wav' as const } }
  const cachingConfig = JSON.stringify({ provider: '@openai', cache: { mode: 'simple', max_age: 600 } })

  // Each part bills at its own rate, so a hit that kept only input and output would misstate what
  // it saved and what it served.
  it.each([false, true])('keeps the audio, cached and reasoning split of the answer it replays (streamed: %s)', async (stream) => {
    simulator.options.cachedTokens = 3
    simulator.options.reasoningTokens = 4
    try {
      const request = {
        model: 'gpt-4o-audio-preview', modalities: ['text', 'audio'] as Array<'text' | 'audio'>, audio: { voice: 'alloy' as const, format: 'pcm16' as const },
        messages: [{ role: 'user' as const, content: [{ type: 'text' as const, text: `cache this answer (${stream})` }, heard] }],
      }
      const options = { headers: { 'x-gateway-config': cachingConfig } }
      const call = async (): Promise<string | null> => {
        if (!stream) return (await client.chat.completions.create(request, options).withResponse()).response.headers.get('x-gateway-cache-status')
        const answer = await client.chat.completions.create({ ...request, stream: true, stream_options: { include_usage: true } }, options).withResponse()
        for await (const chunk of answer.data) void chunk
        return answer.response.headers.get('x-gateway-cache-status')
      }
      expect(await call()).toBe('MISS')
      const miss = await record()
      await shipped.clear()
      expect(await call()).toBe('HIT')
      const hit = await record()
      expect(simulator.requests).toHaveLength(1)
      expect(miss).toMatchObject({ cacheStatus: 'MISS', cachedInputTokens: 3, reasoningTokens: 4, audioInputTokens: expect.any(Number), audioOutputTokens: expect.any(Number) })
      expect(miss.audioInputTokens).toBeGreaterThan(0)
      expect(miss.audioOutputTokens).toBeGreaterThan(0)
      const parts = ['inputTokens', 'outputTokens', 'cachedInputTokens', 'reasoningTokens', 'audioInputTokens', 'cachedAudioInputTokens', 'audioOutputTokens'] as const
      const split = (got: UsageRecord) => Object.fromEntries(parts.map((part) => [part, got[part]]))
      expect(split(hit)).toEqual(split(miss))
      expect(hit).toMatchObject({ cacheStatus: 'HIT', costUsd: 0 })
      expect(hit.cacheSavedCostUsd).toBeCloseTo(miss.costUsd!, 15)
    } finally {
      simulator.options.cachedTokens = 0
      simulator.options.reasoningTokens = 0
    }
  })
})

describe('speech', () => {
  const input = 'Welcome to the gatehouse, traveller. Mind the portcullis.'

  it('tts-1: priced by the characters of its input', async () => {
    const speech = await client.audio.speech.create({ model: 'tts-1-hd', voice: 'alloy', input })
    expect((await speech.arrayBuffer()).byteLength).toBeGreaterThan(0)
    const got = await record()
    expect(got).toMatchObject({ route: 'passthrough:audio', modelServed: 'tts-1-hd', inputCharacters: input.length, inputTokens: 0, estimated: false })
    expect(got.costUsd).toBeCloseTo(input.length * 30e-6, 12)
  })

  it('gpt-4o-mini-tts with stream_format sse: the tokens of its done event, output audio at $12 per 1M', async () => {
    const speech = await client.audio.speech.create({ model: 'gpt-4o-mini-tts', voice: 'alloy', input, instructions: 'Speak slowly.', stream_format: 'sse' })
    const events = (await speech.text()).split('\n\n').filter(Boolean).map((frame) => JSON.parse(frame.slice('data: '.length)) as { type: string; usage?: { input_tokens: number; output_tokens: number } })
    const usage = events.at(-1)!.usage!
    const got = await record()
    expect(got).toMatchObject({ inputTokens: usage.input_tokens, outputTokens: usage.output_tokens, audioOutputTokens: usage.output_tokens, estimated: false })
    expect(got.costUsd).toBeCloseTo(usage.input_tokens * 0.6e-6 + usage.output_tokens * 12e-6, 15)
  })

  it('gpt-4o-mini-tts as bytes: the input counted, the audio tokens unknown, so the cost too', async () => {
    await (await client.audio.speech.create({ model: 'gpt-4o-mini-tts', voice: 'alloy', input })).arrayBuffer()
    const got = await record()
    expect(got).toMatchObject({ modelServed: 'gpt-4o-mini-tts', inputTokens: countText(input), outputTokens: 0, inputCharacters: input.length, estimated: true, costUsd: null })
    expect(got.annotations.unmetered).toMatch(/output audio tokens/)
  })
})
