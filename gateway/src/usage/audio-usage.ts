/**
 * Usage of OpenAI's audio routes, read from the answers Gatehouse relays untouched:
 *
 *  - transcriptions and translations: the answer's `usage` (`{type: "duration", seconds}` from
 *    whisper-1, `{type: "tokens", input_tokens, input_token_details.audio_tokens, output_tokens}`
 *    from the gpt-4o transcribers, in JSON or in the stream's `transcript.text.done` event), else a
 *    `verbose_json` answer's `duration`; a subtitle answer (`srt`, `vtt`) says how far its last cue
 *    runs, which is counted as the seconds heard (estimated: silence after the last cue is not
 *    seen); a plain-text answer says nothing of the audio;
 *  - speech: the `speech.audio.done` event's usage (gpt-4o-mini-tts with `stream_format: "sse"`),
 *    else the characters of the request's `input` (what tts-1 bills); a token-billed model's binary
 *    answer reports no tokens, so its input is counted with the tokenizer and its audio output is
 *    left unknown.
 *
 * How the model is billed (`billing`, from its price) decides what is worth counting. What cannot
 * be known is named in `unmetered`: the record's cost is then unknown rather than understated.
 */
import type { Usage } from '../providers/canonical.ts'
import { DEFAULT_OUTPUT_RESERVE_TOKENS } from '../limits/estimate.ts'
import { countText } from './estimate.ts'
import { countOf, isEventStreamType, isJsonType, lastUsageObject, type MeteredUsage, type RelayedAnswer } from './relayed-answer.ts'

export type AudioRoute = 'transcription' | 'translation' | 'speech'

/** The unit the model's price bills by: seconds of audio (whisper-1), characters (tts-1), else tokens. */
export type AudioBilling = 'seconds' | 'characters' | 'tokens'

const seconds = (value: unknown): number | null => (typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : null)

/** A transcription's `usage` in Gatehouse's terms; null when it is of no known type. */
export function transcriptionUsage(usage: Record<string, unknown>): Usage | null {
  if (usage.type === 'duration') {
    const heard = seconds(usage.seconds)
    return heard === null ? null : { inputTokens: 0, outputTokens: 0, audioSeconds: heard }
  }
  if (usage.type === 'tokens') {
    const details = usage.input_token_details as { audio_tokens?: unknown } | null | undefined
    const result: Usage = { inputTokens: countOf(usage.input_tokens), outputTokens: countOf(usage.output_tokens) }
    const audio = countOf(details?.audio_tokens)
    if (audio > 0) result.audioInputTokens = audio
    return result
  }
  return null
}

/** The first top-level-looking `"duration": N` (verbose_json puts it before the segments). */
function verboseDuration(head: string): number | null {
  const match = /"duration"\s*:\s*([0-9]+(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?)/.exec(head)
  return match ? Number(match[1]) : null
}

const CUE_END = /-->\s*(?:(\d+):)?(\d{1,2}):(\d{2})[.,](\d{3})/g

/** Where the last cue of an SRT or WebVTT answer ends, in seconds; null when the text has no cue. */
export function lastCueEndSeconds(text: string): number | null {
  let end: number | null = null
  for (const match of text.matchAll(CUE_END)) {
    const [, hours, minutes, secs, millis] = match
    end = Number(hours ?? 0) * 3600 + Number(minutes) * 60 + Number(secs) + Number(millis) / 1000
  }
  return end
}

/** Transcriptions and translations. */
function heardUsage(answer: RelayedAnswer, billing: AudioBilling): MeteredUsage {
  const reported = isJsonType(answer.contentType) || isEventStreamType(answer.contentType) ? lastUsageObject(answer.tail) : null
  const usage = reported === null ? null : transcriptionUsage(reported)
  if (usage !== null) return { usage, estimated: false, unmetered: null }
  if (isJsonType(answer.contentType)) {
    const duration = verboseDuration(answer.head)
    if (duration !== null) return { usage: { inputTokens: 0, outputTokens: 0, audioSeconds: duration }, estimated: false, unmetered: null }
    return { usage: { inputTokens: 0, outputTokens: 0 }, estimated: false, unmetered: 'the audio heard: the answer carries no usage or duration' }
  }
  const cueEnd = lastCueEndSeconds(answer.tail)
  if (billing === 'seconds') {
    if (cueEnd !== null) return { usage: { inputTokens: 0, outputTokens: 0, audioSeconds: cueEnd }, estimated: true, unmetered: null }
    return { usage: { inputTokens: 0, outputTokens: 0 }, estimated: false, unmetered: 'the audio heard: a plain-text answer carries no usage' }
  }
  // A token-billed transcriber's plain answer: its text can be counted, the audio it heard cannot.
  const outputTokens = answer.whole ? countText(answer.tail) : 0
  return { usage: { inputTokens: 0, outputTokens }, estimated: true, unmetered: 'the input audio tokens: a plain-text answer carries no usage' }
}

export interface SpeechRequest {
  readonly input: string
  readonly instructions: string
}

/** Speech (text to audio). */
function spokenUsage(answer: RelayedAnswer, billing: AudioBilling, request: SpeechRequest): MeteredUsage {
  const characters = [...request.input].length
  if (isEventStreamType(answer.contentType)) {
    const reported = lastUsageObject(answer.tail)
    if (reported !== null) {
      const output = countOf(reported.output_tokens)
      const usage: Usage = { inputTokens: countOf(reported.input_tokens), outputTokens: output, inputCharacters: characters }
      if (output > 0) usage.audioOutputTokens = output
      return { usage, estimated: false, unmetered: null }
    }
  }
  if (billing === 'characters') return { usage: { inputTokens: 0, outputTokens: 0, inputCharacters: characters }, estimated: false, unmetered: null }
  const inputTokens = countText(request.input) + countText(request.instructions)
  return {
    usage: { inputTokens, outputTokens: 0, inputCharacters: characters },
    estimated: true,
    unmetered: 'the output audio tokens: a binary speech answer reports none (stream_format "sse" does)',
  }
}

export function audioUsage(route: AudioRoute, answer: RelayedAnswer, billing: AudioBilling, request: SpeechRequest | null): MeteredUsage {
  if (route === 'speech') return spokenUsage(answer, billing, request ?? { input: '', instructions: '' })
  return heardUsage(answer, billing)
}

/**
 * The most a speech request can use, to reserve before the call: the characters of its input
 * (tts-1 bills them), its input's UTF-8 bytes as a bound of its tokens, and, for the audio a
 * token-billed voice speaks, which no request field caps, the output a text request without
 * `max_tokens` reserves.
 */
export function speechWorstCase(request: SpeechRequest): Usage {
  const inputTokens = Buffer.byteLength(request.input, 'utf8') + Buffer.byteLength(request.instructions, 'utf8')
  return { inputTokens, outputTokens: DEFAULT_OUTPUT_RESERVE_TOKENS, inputCharacters: [...request.input].length }
}
