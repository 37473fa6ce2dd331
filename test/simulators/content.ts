/**
 * Deterministic "model output" shared by every simulator, so tests can assert on content and
 * token counts whatever wire format carried them.
 *
 * The answer is `options.chunks` pieces: the first echoes the start of the last user message
 * (`Echo: <text>`), the rest are filler words. A piece counts as one completion token. Prompt
 * tokens are a quarter of the prompt's characters, rounded up (at least 1).
 */
import { SIMULATOR_API_KEY, type SimulatorOptions } from './base.ts'

const fillerWords = [
  ' alpha', ' bravo', ' charlie', ' delta', ' echo', ' foxtrot', ' golf', ' hotel',
  ' india', ' juliett', ' kilo', ' lima', ' mike', ' november', ' oscar', ' papa',
]

const echoLength = 64

export interface Answer {
  pieces: string[]
  text: string
  /** True when `maxTokens` cut the answer short. */
  truncated: boolean
}

/**
 * The answer to `prompt`, cut to `maxTokens` pieces when given. A fixed `options.content` is split
 * into `options.chunks` roughly equal pieces instead.
 */
export function generateAnswer(prompt: string, options: SimulatorOptions, maxTokens?: number | null, fixedText?: string): Answer {
  const count = Math.max(1, options.chunks)
  const fixed = fixedText ?? options.content
  const pieces = fixed !== undefined ? splitEvenly(fixed, count) : echoPieces(prompt, count)
  const limit = maxTokens !== undefined && maxTokens !== null && maxTokens > 0 ? maxTokens : Infinity
  const kept = pieces.length > limit ? pieces.slice(0, limit) : pieces
  return { pieces: kept, text: kept.join(''), truncated: kept.length < pieces.length }
}

function echoPieces(prompt: string, count: number): string[] {
  const snippet = prompt.replace(/\s+/g, ' ').trim().slice(0, echoLength)
  const pieces = [`Echo: ${snippet}`]
  for (let i = 1; i < count; i++) pieces.push(fillerWords[(i - 1) % fillerWords.length]!)
  return pieces
}

function splitEvenly(text: string, count: number): string[] {
  if (text.length === 0) return ['']
  const size = Math.ceil(text.length / count)
  const pieces: string[] = []
  for (let i = 0; i < text.length; i += size) pieces.push(text.slice(i, i + size))
  return pieces
}

export function estimateTokens(text: string): number {
  return Math.max(1, Math.ceil(text.length / 4))
}

/** A stop sequence found in the answer cuts it there (the stop sequence itself is not returned). */
export function applyStop(answer: Answer, stop: readonly string[]): { answer: Answer; stopSequence: string | null } {
  let cutAt = -1
  let matched: string | null = null
  for (const sequence of stop) {
    if (!sequence) continue
    const at = answer.text.indexOf(sequence)
    if (at >= 0 && (cutAt < 0 || at < cutAt)) {
      cutAt = at
      matched = sequence
    }
  }
  if (cutAt < 0) return { answer, stopSequence: null }
  const pieces: string[] = []
  let consumed = 0
  for (const piece of answer.pieces) {
    if (consumed >= cutAt) break
    pieces.push(piece.slice(0, cutAt - consumed))
    consumed += piece.length
  }
  return { answer: { pieces, text: pieces.join(''), truncated: false }, stopSequence: matched }
}

export function asStopList(stop: unknown): string[] {
  if (typeof stop === 'string') return [stop]
  if (Array.isArray(stop)) return stop.filter((item): item is string => typeof item === 'string')
  return []
}

/** Plain text of a message content in any of the shapes providers use (string, parts, blocks). */
export function textOf(content: unknown): string {
  if (typeof content === 'string') return content
  if (!Array.isArray(content)) return ''
  let text = ''
  for (const part of content) {
    if (typeof part === 'string') text += part
    else if (part && typeof part === 'object' && typeof (part as { text?: unknown }).text === 'string') {
      text += (part as { text: string }).text
    }
  }
  return text
}

/** Whether the prompt asks for the weather: the trigger for an unforced tool call. */
export function wantsTool(prompt: string): boolean {
  return /weather/i.test(prompt)
}

const placeName = '[A-Z][\\p{L}-]+(?:\\s+[A-Z][\\p{L}-]+)*'
const placesPattern = new RegExp(`\\b(?:in|for|at)\\s+(${placeName}(?:(?:\\s*,\\s*|\\s+and\\s+)${placeName})*)`, 'u')

/** The places a prompt names after in/for/at: "weather in Paris and New York" -> both. */
export function placesIn(prompt: string): string[] {
  const list = placesPattern.exec(prompt)?.[1]
  return list ? list.split(/\s*,\s*|\s+and\s+/) : []
}

/**
 * Deterministic arguments for a tool from its JSON schema: strings named like a place get `place`
 * (by default the first place the prompt names, else Paris), other strings a fixed word, enums
 * their first value.
 */
export function toolArguments(schema: unknown, prompt: string, place?: string): Record<string, unknown> {
  const properties = (schema as { properties?: Record<string, { type?: unknown; enum?: unknown[] }> } | undefined)?.properties
  if (!properties || typeof properties !== 'object') return {}
  const city = place ?? placesIn(prompt)[0] ?? 'Paris'
  const args: Record<string, unknown> = {}
  for (const [name, property] of Object.entries(properties)) {
    // Gemini's OpenAPI-style schemas spell types in upper case.
    const type = typeof property.type === 'string' ? property.type.toLowerCase() : property.type
    if (Array.isArray(property.enum) && property.enum.length > 0) args[name] = property.enum[0]
    else if (type === 'number' || type === 'integer') args[name] = 1
    else if (type === 'boolean') args[name] = true
    else if (type === 'array') args[name] = []
    else if (type === 'object') args[name] = {}
    else args[name] = /location|city|place|where/i.test(name) ? city : 'value'
  }
  return args
}

/**
 * The answer in JSON mode: the schema filled like tool arguments, or without a schema an object
 * echoing the prompt.
 */
export function jsonAnswer(prompt: string, schema: unknown): string {
  if (schema !== undefined && schema !== null) return JSON.stringify(toolArguments(schema, prompt))
  return JSON.stringify({ echo: prompt.replace(/\s+/g, ' ').trim().slice(0, echoLength) })
}

/** Split a JSON text into pieces the way providers stream tool arguments. */
export function splitArguments(json: string, pieces = 3): string[] {
  if (json.length <= 2) return [json]
  const size = Math.ceil(json.length / pieces)
  const parts: string[] = []
  for (let i = 0; i < json.length; i += size) parts.push(json.slice(i, i + size))
  return parts
}

/** FNV-1a of a string: the seed of its pseudo-random direction. */
function fnv1a(text: string): number {
  let seed = 0x811c9dc5
  for (let i = 0; i < text.length; i++) {
    seed ^= text.charCodeAt(i)
    seed = Math.imul(seed, 0x01000193) >>> 0
  }
  return seed === 0 ? 1 : seed
}

/** Adds `weight` times the pseudo-random direction of `seed` (xorshift, values in -0.5..0.5) to `vector`. */
function addDirection(vector: Float32Array, seed: number, weight: number): void {
  let state = seed
  for (let i = 0; i < vector.length; i++) {
    state ^= state << 13
    state ^= state >>> 17
    state ^= state << 5
    state >>>= 0
    vector[i] = vector[i]! + weight * (state / 0xffffffff - 0.5)
  }
}

/**
 * A deterministic unit-length vector for `text`, `dimensions` long, that means something: a bag of
 * hashed words. Each lower-cased word has its own pseudo-random direction and the text's vector is
 * their normalised sum, so texts sharing most words are close (cosine near 1), texts sharing none
 * are near orthogonal, and word order does not matter. A text with no word falls back to one
 * direction for its whole text. Semantic cache tests depend on this.
 */
export function embeddingVector(text: string, dimensions: number): Float32Array {
  const vector = new Float32Array(dimensions)
  const words = text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []
  if (words.length === 0) addDirection(vector, fnv1a(text), 1)
  for (const word of words) addDirection(vector, fnv1a(word), 1)
  let norm = 0
  for (let i = 0; i < dimensions; i++) norm += vector[i]! * vector[i]!
  const scale = norm > 0 ? 1 / Math.sqrt(norm) : 0
  for (let i = 0; i < dimensions; i++) vector[i] = vector[i]! * scale
  return vector
}

/** Little-endian float32 bytes, base64: OpenAI's `encoding_format: "base64"`. */
export function vectorToBase64(vector: Float32Array): string {
  return Buffer.from(vector.buffer, vector.byteOffset, vector.byteLength).toString('base64')
}

/** Round to 6 decimal places, as JSON float embeddings usually arrive. */
export function vectorToNumbers(vector: Float32Array): number[] {
  return Array.from(vector, (value) => Math.round(value * 1e6) / 1e6)
}

export function bearerToken(authorization: string | undefined): string | null {
  if (!authorization) return null
  const match = /^Bearer\s+(\S+)$/i.exec(authorization)
  return match ? match[1]! : null
}

export function isAccepted(credential: string | null, options: SimulatorOptions): boolean {
  if (!credential) return false
  return options.apiKeys === 'any' || (options.apiKeys ?? [SIMULATOR_API_KEY]).includes(credential)
}


/** `sk-abc...wxyz`: how providers echo a rejected key without disclosing it. */
export function maskKey(key: string): string {
  if (key.length <= 8) return '***'
  return `${key.slice(0, 3)}***${key.slice(-4)}`
}

export function sse(data: unknown, event?: string): string {
  const payload = `data: ${JSON.stringify(data)}\n\n`
  return event === undefined ? payload : `event: ${event}\n${payload}`
}
