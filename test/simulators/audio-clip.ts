/**
 * Audio as the simulated OpenAI models hear and speak it: how long a clip lasts, how many audio
 * tokens that is, and deterministic bytes of a given length in a given format. The rates are the
 * ones OpenAI documents for its realtime and audio models (a user audio token per 100 ms, an
 * assistant audio token per 50 ms); the simulated voice speaks a quarter of a second per answer
 * piece. Durations are exact for WAV and raw PCM, and taken at 128 kb/s for compressed formats
 * (the simulator cannot decode MP3 and does not need to).
 */
import { pseudoBytes } from './openai-extra.ts'

export const AUDIO_INPUT_TOKENS_PER_SECOND = 10
export const AUDIO_OUTPUT_TOKENS_PER_SECOND = 20
export const SPOKEN_SECONDS_PER_PIECE = 0.25

/** Bytes per second of 16-bit mono PCM at OpenAI's output rate (24 kHz): `pcm16` chat audio, `pcm` speech. */
export const PCM16_BYTES_PER_SECOND = 48_000
/** Compressed formats, for durations and for the size of what the simulated voice sends. */
const COMPRESSED_BYTES_PER_SECOND = 16_000

/** The `fmt ` byte rate and `data` size of a RIFF/WAVE clip, or null when `bytes` is not one. */
function wavShape(bytes: Uint8Array): { byteRate: number; dataBytes: number } | null {
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  if (buffer.length < 12 || buffer.toString('latin1', 0, 4) !== 'RIFF' || buffer.toString('latin1', 8, 12) !== 'WAVE') return null
  let byteRate = 0
  for (let at = 12; at + 8 <= buffer.length; ) {
    const id = buffer.toString('latin1', at, at + 4)
    const size = buffer.readUInt32LE(at + 4)
    if (id === 'fmt ' && at + 16 <= buffer.length) byteRate = buffer.readUInt32LE(at + 16)
    if (id === 'data') return byteRate > 0 ? { byteRate, dataBytes: Math.min(size, buffer.length - at - 8) } : null
    at += 8 + size + (size % 2)
  }
  return null
}

/** Seconds of audio in a clip: exact for WAV (and raw PCM16 when `format` says so), 128 kb/s otherwise. */
export function clipSeconds(bytes: Uint8Array, format?: string): number {
  const wav = wavShape(bytes)
  if (wav) return wav.dataBytes / wav.byteRate
  if (format === 'pcm16' || format === 'pcm') return bytes.byteLength / PCM16_BYTES_PER_SECOND
  return bytes.byteLength / COMPRESSED_BYTES_PER_SECOND
}

/** A silent 16-bit mono WAV clip of `seconds` at `sampleRate`: test input whose duration is known exactly. */
export function wavClip(seconds: number, sampleRate = 16_000): Buffer {
  const dataBytes = Math.round(seconds * sampleRate) * 2
  const header = Buffer.alloc(44)
  header.write('RIFF', 0, 'latin1')
  header.writeUInt32LE(36 + dataBytes, 4)
  header.write('WAVEfmt ', 8, 'latin1')
  header.writeUInt32LE(16, 16)
  header.writeUInt16LE(1, 20)
  header.writeUInt16LE(1, 22)
  header.writeUInt32LE(sampleRate, 24)
  header.writeUInt32LE(sampleRate * 2, 28)
  header.writeUInt16LE(2, 32)
  header.writeUInt16LE(16, 34)
  header.write('data', 36, 'latin1')
  header.writeUInt32LE(dataBytes, 40)
  return Buffer.concat([header, Buffer.alloc(dataBytes)])
}

/** What the simulated voice sends for `seconds` of speech in `format`: a real WAV header for `wav`, raw PCM16 for `pcm16`/`pcm`. */
export function spokenBytes(seconds: number, format: string): Buffer {
  if (format === 'wav') return wavClip(seconds, PCM16_BYTES_PER_SECOND / 2)
  const rate = format === 'pcm16' || format === 'pcm' ? PCM16_BYTES_PER_SECOND : COMPRESSED_BYTES_PER_SECOND
  return pseudoBytes(Math.max(1, Math.round(seconds * rate)))
}

export const audioInputTokens = (seconds: number): number => Math.ceil(seconds * AUDIO_INPUT_TOKENS_PER_SECOND)
export const audioOutputTokens = (seconds: number): number => Math.ceil(seconds * AUDIO_OUTPUT_TOKENS_PER_SECOND)
