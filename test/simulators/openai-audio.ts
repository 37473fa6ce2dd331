/**
 * OpenAI's audio routes with the usage each one reports, so metering can be tested end to end:
 *
 *  - `POST /v1/audio/transcriptions` (multipart): `whisper-1` answers `json` and `verbose_json`
 *    with `usage: {type: "duration", seconds}` (whole seconds, rounded up; `verbose_json` also has
 *    the exact `duration`), `text`, `srt` and `vtt` as plain text without usage, and ignores
 *    `stream`. `gpt-4o-transcribe` and `gpt-4o-mini-transcribe` answer `json` with
 *    `usage: {type: "tokens", input_tokens, input_token_details: {audio_tokens, text_tokens},
 *    output_tokens, total_tokens}` or `text`; streamed, `transcript.text.delta` events and a
 *    `transcript.text.done` event carrying that usage.
 *  - `POST /v1/audio/translations` (multipart, `whisper-1` only): `{text}`, or `verbose_json`
 *    with `duration`; neither has usage, as OpenAI's reference says.
 *  - `POST /v1/audio/speech`: the audio as bytes in the format asked; `gpt-4o-mini-tts` with
 *    `stream_format: "sse"` streams `speech.audio.delta` events and a `speech.audio.done` event
 *    with `usage: {input_tokens, output_tokens, total_tokens}` (tts-1 and tts-1-hd refuse SSE).
 *
 * The clip's duration is read from its bytes (audio-clip.ts); the transcript is the simulator's
 * deterministic answer, one output token per piece.
 */
import type { Exchange } from './base.ts'
import { audioInputTokens, audioOutputTokens, clipSeconds, spokenBytes } from './audio-clip.ts'
import { estimateTokens, generateAnswer, sse } from './content.ts'
import { field, formOf, refuse } from './openai-form.ts'
import type { Route } from './router.ts'
import { jsonObject } from './router.ts'

const WHISPER = 'whisper-1'
const isTokenTranscriber = (model: string): boolean => /^gpt-4o(-mini)?-transcribe(-|$)/.test(model)
const TEXT_FORMATS = new Set(['text', 'srt', 'vtt'])
const SPEECH_MODELS = /^(tts-1(-hd)?|gpt-4o-mini-tts)(-|$)/
const MAX_SPEECH_CHARACTERS = 4096
/** The simulated voice reads 15 characters a second. */
const SPOKEN_CHARACTERS_PER_SECOND = 15
const SPEECH_CONTENT_TYPES: Record<string, string> = {
  mp3: 'audio/mpeg', opus: 'audio/opus', aac: 'audio/aac', flac: 'audio/flac', wav: 'audio/wav', pcm: 'audio/pcm',
}

/** `00:00:02,500` (SRT) or `00:00:02.500` (WebVTT). */
function timestamp(seconds: number, separator: ',' | '.'): string {
  const ms = Math.round(seconds * 1000)
  const pad = (value: number, width = 2): string => String(value).padStart(width, '0')
  return `${pad(Math.floor(ms / 3_600_000))}:${pad(Math.floor(ms / 60_000) % 60)}:${pad(Math.floor(ms / 1000) % 60)}${separator}${pad(ms % 1000, 3)}`
}

/** One cue spanning the clip: the subtitle formats end where the audio does. */
function subtitles(format: 'srt' | 'vtt', text: string, seconds: number): string {
  if (format === 'srt') return `1\n${timestamp(0, ',')} --> ${timestamp(seconds, ',')}\n${text}\n\n`
  return `WEBVTT\n\n${timestamp(0, '.')} --> ${timestamp(seconds, '.')}\n${text}\n\n`
}

function verbose(task: 'transcribe' | 'translate', text: string, seconds: number): Record<string, unknown> {
  const segment = { id: 0, seek: 0, start: 0, end: seconds, text, tokens: [50364], temperature: 0, avg_logprob: -0.2, compression_ratio: 1.1, no_speech_prob: 0.01 }
  return { task, language: 'english', duration: seconds, text, segments: [segment] }
}

async function transcribeOrTranslate(exchange: Exchange, task: 'transcribe' | 'translate'): Promise<void> {
  const form = await formOf(exchange)
  if (!form) return refuse(exchange, 400, 'Could not parse multipart form', null)
  const model = field(form, 'model')
  if (!model) return refuse(exchange, 400, 'you must provide a model parameter', 'model')
  const file = form.get('file')
  if (!(file instanceof Blob)) return refuse(exchange, 400, "'file' is a required property", 'file')
  if (!exchange.knowsModel(model) || (model !== WHISPER && (task === 'translate' || !isTokenTranscriber(model)))) {
    return refuse(exchange, task === 'translate' && exchange.knowsModel(model) ? 400 : 404, `The model \`${model}\` does not exist or is not supported for ${task === 'translate' ? 'translations' : 'transcriptions'}.`, 'model')
  }
  const format = field(form, 'response_format') ?? 'json'
  const allowed = model === WHISPER ? ['json', 'text', 'srt', 'verbose_json', 'vtt'] : ['json', 'text']
  if (!allowed.includes(format)) return refuse(exchange, 400, `response_format '${format}' is not compatible with model '${model}'. Use one of ${allowed.join(', ')}.`, 'response_format')

  const audio = new Uint8Array(await file.arrayBuffer())
  const seconds = clipSeconds(audio, file.name.split('.').pop())
  const prompt = field(form, 'prompt') ?? ''
  const pieces = generateAnswer(`${task} ${file.name}`, exchange.options).pieces
  const text = pieces.join('')
  if (TEXT_FORMATS.has(format)) {
    const body = format === 'text' ? `${text}\n` : subtitles(format as 'srt' | 'vtt', text, seconds)
    return exchange.raw(200, 'text/plain; charset=utf-8', body)
  }
  if (model === WHISPER) {
    // Translations report no usage; transcriptions bill whole seconds.
    const usage = task === 'transcribe' ? { usage: { type: 'duration', seconds: Math.ceil(seconds) } } : {}
    return exchange.json(200, format === 'verbose_json' ? { ...verbose(task, text, seconds), ...usage } : { text, ...usage })
  }
  const audioTokens = audioInputTokens(seconds)
  const textTokens = prompt === '' ? 0 : estimateTokens(prompt)
  const usage = {
    type: 'tokens',
    input_tokens: audioTokens + textTokens,
    input_token_details: { text_tokens: textTokens, audio_tokens: audioTokens },
    output_tokens: pieces.length,
    total_tokens: audioTokens + textTokens + pieces.length,
  }
  if (field(form, 'stream') !== 'true') return exchange.json(200, { text, usage })
  function* events(): Generator<string> {
    for (const delta of pieces) yield sse({ type: 'transcript.text.delta', delta, logprobs: [] })
    yield sse({ type: 'transcript.text.done', text, logprobs: [], usage })
  }
  await exchange.stream({ contentType: 'text/event-stream; charset=utf-8', frames: events() })
}

async function speech(exchange: Exchange): Promise<void> {
  const body = jsonObject(exchange.request.body)
  if (!body) return refuse(exchange, 400, 'We could not parse the JSON body of your request.', null)
  const { model, input, voice } = body
  if (typeof model !== 'string' || model === '') return refuse(exchange, 400, 'you must provide a model parameter', 'model')
  if (!exchange.knowsModel(model) || !SPEECH_MODELS.test(model)) return refuse(exchange, 404, `The model \`${model}\` does not exist or you do not have access to it.`, 'model')
  if (typeof input !== 'string' || input === '') return refuse(exchange, 400, "Missing required parameter: 'input'.", 'input')
  if (input.length > MAX_SPEECH_CHARACTERS) return refuse(exchange, 400, `'input' is too long: at most ${MAX_SPEECH_CHARACTERS} characters.`, 'input')
  if (typeof voice !== 'string' || voice === '') return refuse(exchange, 400, "Missing required parameter: 'voice'.", 'voice')
  const format = typeof body.response_format === 'string' ? body.response_format : 'mp3'
  const contentType = SPEECH_CONTENT_TYPES[format]
  if (!contentType) return refuse(exchange, 400, `Invalid 'response_format': expected one of ${Object.keys(SPEECH_CONTENT_TYPES).join(', ')}.`, 'response_format')
  const seconds = Math.max(0.5, input.length / SPOKEN_CHARACTERS_PER_SECOND)
  const audio = spokenBytes(seconds, format)
  if (body.stream_format !== 'sse') return exchange.raw(200, contentType, audio)
  if (!model.startsWith('gpt-4o-mini-tts')) return refuse(exchange, 400, `stream_format 'sse' is not supported for model '${model}'.`, 'stream_format')
  const instructions = typeof body.instructions === 'string' ? body.instructions : ''
  const inputTokens = estimateTokens(input) + (instructions === '' ? 0 : estimateTokens(instructions))
  const outputTokens = audioOutputTokens(seconds)
  function* events(): Generator<string> {
    const pieceBytes = 16_384
    for (let at = 0; at < audio.length; at += pieceBytes) yield sse({ type: 'speech.audio.delta', audio: audio.subarray(at, at + pieceBytes).toString('base64') })
    yield sse({ type: 'speech.audio.done', usage: { input_tokens: inputTokens, output_tokens: outputTokens, total_tokens: inputTokens + outputTokens } })
  }
  await exchange.stream({ contentType: 'text/event-stream; charset=utf-8', frames: events() })
}

export const openaiAudioRoutes: Route[] = [
  { method: 'POST', pattern: /^\/v1\/audio\/speech$/, handle: speech },
  { method: 'POST', pattern: /^\/v1\/audio\/transcriptions$/, handle: (exchange) => transcribeOrTranslate(exchange, 'transcribe') },
  { method: 'POST', pattern: /^\/v1\/audio\/translations$/, handle: (exchange) => transcribeOrTranslate(exchange, 'translate') },
]
