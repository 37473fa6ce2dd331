/**
 * Chat completions with audio, as OpenAI's audio models answer them (gpt-4o-audio-preview,
 * gpt-4o-mini-audio-preview, gpt-audio): `input_audio` content parts are heard and counted in
 * `prompt_tokens_details.audio_tokens`; `modalities: ["text", "audio"]` with an `audio` parameter
 * makes the answer spoken: `message.audio` ({id, data, expires_at, transcript}) with
 * `completion_tokens_details.audio_tokens`, or, streamed (PCM16 only, as OpenAI requires),
 * `delta.audio` pieces: the id with the first transcript piece, then transcript and data pieces,
 * then the expiry. (OpenAI's reference omits the streamed audio delta; its shape here is the one
 * its API sends, see openai/openai-openapi#577.)
 */
import { audioInputTokens, audioOutputTokens, clipSeconds, SPOKEN_SECONDS_PER_PIECE, spokenBytes } from './audio-clip.ts'
import { sequenceId } from './reply.ts'

/** Models that hear and speak in chat completions (dated versions included). */
export function isAudioChatModel(model: string): boolean {
  return /^(gpt-4o(-mini)?-audio-preview|gpt-audio(-mini)?)(-|$)/.test(model)
}

const OUTPUT_FORMATS = ['wav', 'aac', 'mp3', 'flac', 'opus', 'pcm16']
const INPUT_FORMATS = ['wav', 'mp3']

export interface AudioRequest {
  /** The spoken answer's format; null: the answer is text only. */
  readonly outputFormat: string | null
  /** Audio tokens of every `input_audio` part. */
  readonly inputTokens: number
}

/** A 400 as OpenAI words it: message and param. */
export interface AudioProblem {
  readonly problem: string
  readonly param: string
}

interface MessageIn {
  content?: unknown
}

function inputAudioParts(messages: readonly MessageIn[]): Array<{ data?: unknown; format?: unknown }> {
  const parts: Array<{ data?: unknown; format?: unknown }> = []
  for (const message of messages) {
    if (!Array.isArray(message?.content)) continue
    for (const part of message.content as Array<{ type?: unknown; input_audio?: { data?: unknown; format?: unknown } }>) {
      if (part?.type === 'input_audio') parts.push(part.input_audio ?? {})
    }
  }
  return parts
}

/** What a chat request asks of audio, or the 400 OpenAI answers it with. */
export function audioRequestOf(body: Record<string, unknown>, model: string, messages: readonly MessageIn[]): AudioRequest | AudioProblem {
  const modalities = Array.isArray(body.modalities) ? body.modalities : []
  const speaks = modalities.includes('audio')
  const heard = inputAudioParts(messages)
  if ((speaks || heard.length > 0) && !isAudioChatModel(model)) {
    return { problem: `This model does not support audio. Use an audio model such as gpt-4o-audio-preview.`, param: speaks ? 'modalities' : 'messages' }
  }
  let inputTokens = 0
  for (const [index, part] of heard.entries()) {
    if (typeof part.data !== 'string' || !INPUT_FORMATS.includes(String(part.format))) {
      return { problem: `Invalid 'input_audio': expected base64 'data' and a 'format' of ${INPUT_FORMATS.join(', ')}.`, param: `messages.input_audio.${index}` }
    }
    inputTokens += audioInputTokens(clipSeconds(Buffer.from(part.data, 'base64'), part.format as string))
  }
  if (!speaks) return { outputFormat: null, inputTokens }
  const audio = body.audio as { voice?: unknown; format?: unknown } | undefined
  if (!audio || typeof audio !== 'object') return { problem: "Missing required parameter: 'audio'.", param: 'audio' }
  if (typeof audio.voice !== 'string') return { problem: "Missing required parameter: 'audio.voice'.", param: 'audio.voice' }
  if (!OUTPUT_FORMATS.includes(String(audio.format))) return { problem: `Invalid 'audio.format': expected one of ${OUTPUT_FORMATS.join(', ')}.`, param: 'audio.format' }
  if (body.stream === true && audio.format !== 'pcm16') {
    return { problem: `Audio output with stream=true supports only the 'pcm16' format, got '${String(audio.format)}'.`, param: 'audio.format' }
  }
  return { outputFormat: audio.format as string, inputTokens }
}

export function isAudioProblem(value: AudioRequest | AudioProblem): value is AudioProblem {
  return 'problem' in value
}

/** A spoken answer: its transcript pieces, each with the audio that says it. */
export interface SpokenAnswer {
  readonly id: string
  readonly expiresAt: number
  readonly format: string
  readonly pieces: ReadonlyArray<{ transcript: string; data: Buffer }>
  /** Audio tokens of the whole answer (per choice). */
  readonly tokens: number
}

export function speak(transcriptPieces: readonly string[], format: string, sequence: number, createdS: number): SpokenAnswer {
  const seconds = transcriptPieces.length * SPOKEN_SECONDS_PER_PIECE
  // A WAV answer is one file; a stream's PCM16 (and any raw format) is cut with the transcript.
  const whole = spokenBytes(seconds, format)
  const share = Math.ceil(whole.length / Math.max(1, transcriptPieces.length))
  const pieces = transcriptPieces.map((transcript, index) => ({ transcript, data: whole.subarray(index * share, (index + 1) * share) }))
  return { id: sequenceId('audio_sim', sequence), expiresAt: createdS + 3600, format, pieces, tokens: audioOutputTokens(seconds) }
}

/** `message.audio` of a non-streamed answer. */
export function messageAudio(answer: SpokenAnswer): Record<string, unknown> {
  return {
    id: answer.id,
    data: Buffer.concat(answer.pieces.map((piece) => piece.data)).toString('base64'),
    expires_at: answer.expiresAt,
    transcript: answer.pieces.map((piece) => piece.transcript).join(''),
  }
}

/** The `delta.audio` objects of a streamed answer, in the order OpenAI sends them. */
export function* audioDeltas(answer: SpokenAnswer): Generator<Record<string, unknown>> {
  for (const [index, piece] of answer.pieces.entries()) {
    yield index === 0 ? { id: answer.id, transcript: piece.transcript } : { transcript: piece.transcript }
    yield { data: piece.data.toString('base64') }
  }
  yield { expires_at: answer.expiresAt }
}

interface ChatUsage {
  prompt_tokens: number
  completion_tokens: number
  total_tokens: number
  prompt_tokens_details?: Record<string, number>
  completion_tokens_details?: Record<string, number>
}

/**
 * The usage of an audio exchange: audio tokens counted inside prompt and completion tokens, with
 * the text tokens beside them in the details, as OpenAI's audio models report.
 */
export function withAudioUsage(usage: Record<string, unknown>, audioIn: number, audioOut: number): Record<string, unknown> {
  const base = usage as unknown as ChatUsage
  const promptTokens = base.prompt_tokens + audioIn
  const completionTokens = base.completion_tokens + audioOut
  return {
    ...base,
    prompt_tokens: promptTokens,
    completion_tokens: completionTokens,
    total_tokens: promptTokens + completionTokens,
    prompt_tokens_details: { ...base.prompt_tokens_details, audio_tokens: audioIn, text_tokens: base.prompt_tokens, image_tokens: 0 },
    completion_tokens_details: { ...base.completion_tokens_details, audio_tokens: audioOut, text_tokens: base.completion_tokens },
  }
}
