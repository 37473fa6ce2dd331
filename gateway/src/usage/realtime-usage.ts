/**
 * Usage of a realtime session: the provider's own numbers, summed over the session. OpenAI
 * Realtime reports usage on each `response.done` server event (`response.usage`: input and output
 * tokens, cached input in `input_token_details.cached_tokens`, the audio among them in
 * `input_token_details.audio_tokens`, `input_token_details.cached_tokens_details.audio_tokens` and
 * `output_token_details.audio_tokens`: audio bills at its own rate); Azure's realtime API sends the
 * same events. Only frames from the provider are offered here, so a client cannot report usage.
 *
 * Frames are relayed untouched and most are audio deltas; a frame is parsed only when its bytes
 * contain `response.done` (a native byte search, no text decoding), which base64 audio never does.
 */
import type { Usage } from '../providers/canonical.ts'

const MARKER = Buffer.from('response.done')

interface ResponseDoneUsage {
  input_tokens?: unknown
  output_tokens?: unknown
  input_token_details?: { cached_tokens?: unknown; audio_tokens?: unknown; cached_tokens_details?: { audio_tokens?: unknown } | null } | null
  output_token_details?: { audio_tokens?: unknown } | null
}

const count = (value: unknown): number => (typeof value === 'number' && Number.isFinite(value) && value > 0 ? Math.floor(value) : 0)

function frameBytes(data: Buffer | ArrayBuffer | Buffer[]): Buffer {
  if (Buffer.isBuffer(data)) return data
  return Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data)
}

export class RealtimeUsageTally {
  #responses = 0
  #input = 0
  #output = 0
  #cached = 0
  #audioInput = 0
  #cachedAudioInput = 0
  #audioOutput = 0

  /** Looks at one text frame from the provider; anything but a `response.done` with usage is ignored. */
  observe(data: Buffer | ArrayBuffer | Buffer[]): void {
    const bytes = frameBytes(data)
    if (bytes.indexOf(MARKER) === -1) return
    let event: { type?: unknown; response?: { usage?: ResponseDoneUsage | null } | null }
    try {
      event = JSON.parse(bytes.toString('utf8')) as typeof event
    } catch {
      return
    }
    if (event?.type !== 'response.done') return
    const usage = event.response?.usage
    if (!usage) return
    this.#responses++
    this.#input += count(usage.input_tokens)
    this.#output += count(usage.output_tokens)
    this.#cached += count(usage.input_token_details?.cached_tokens)
    this.#audioInput += count(usage.input_token_details?.audio_tokens)
    this.#cachedAudioInput += count(usage.input_token_details?.cached_tokens_details?.audio_tokens)
    this.#audioOutput += count(usage.output_token_details?.audio_tokens)
  }

  /** The session's usage so far; null when the provider reported none. */
  usage(): Usage | null {
    if (this.#responses === 0) return null
    return {
      inputTokens: this.#input,
      outputTokens: this.#output,
      cachedInputTokens: this.#cached,
      audioInputTokens: this.#audioInput,
      cachedAudioInputTokens: this.#cachedAudioInput,
      audioOutputTokens: this.#audioOutput,
    }
  }
}
