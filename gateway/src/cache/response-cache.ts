/**
 * The response cache port and what it stores. Two backends pass one contract suite: in process
 * (embedded mode, tests) and Redis (shared by every replica). Entries are kept per workspace: the
 * workspace is part of every key and of the size accounting, so one tenant can neither read nor
 * evict another's entries.
 */
import { createHash } from 'node:crypto'
import type { Usage } from '../providers/canonical.ts'

/** A stored answer: a JSON body, or the chunks of a stream as originally received. */
export interface CachedAnswer {
  readonly kind: 'json' | 'stream'
  readonly status: number
  /** JSON answers: the body's text. */
  readonly body?: string
  /** Streams: each chunk's JSON text, with its SSE event name where the format has one (Anthropic). */
  readonly chunks?: ReadonlyArray<{ readonly event?: string; readonly data: string }>
  /**
   * Provider usage of the original answer, whole (cached, reasoning and audio parts included), so a
   * hit's record reports what it served exactly as the miss did; the hit itself costs nothing.
   */
  readonly usage: Usage | null
  /** USD the original answer cost (what each hit saves); absent or null when it was unpriced. */
  readonly costUsd?: number | null
  /** Semantic-mode entries: the partition and the embedding of the last user turn, kept with the answer so replicas can index it. */
  readonly semantic?: SemanticTag
}

export interface SemanticTag {
  readonly partition: string
  /** Little-endian float32 bytes, base64. */
  readonly vector: string
}

/** Keys of semantic-mode entries start with this, so a replica loading a workspace can find them. */
export const SEMANTIC_KEY_PREFIX = 's.'

export function encodeVector(vector: Float32Array): string {
  return Buffer.from(vector.buffer, vector.byteOffset, vector.byteLength).toString('base64')
}

export function decodeVector(text: string): Float32Array {
  const bytes = Buffer.from(text, 'base64')
  const vector = new Float32Array(Math.floor(bytes.byteLength / 4))
  for (let i = 0; i < vector.length; i++) vector[i] = bytes.readFloatLE(i * 4)
  return vector
}

export interface ResponseCache {
  get(workspaceId: string, key: string): Promise<CachedAnswer | null>
  /** Stores an entry for `ttlMs`; evicts the workspace's entries nearest expiry when it goes over its byte cap. */
  set(workspaceId: string, key: string, answer: CachedAnswer, ttlMs: number): Promise<void>
  close(): Promise<void>
}

export interface CacheLimits {
  /** Bytes of entries one workspace may hold; the entries nearest expiry go first. */
  maxBytesPerWorkspace: number
  /** A larger answer is not stored. */
  maxEntryBytes: number
}

export const DEFAULT_CACHE_LIMITS: CacheLimits = { maxBytesPerWorkspace: 64 * 1024 * 1024, maxEntryBytes: 4 * 1024 * 1024 }

export function encodeEntry(answer: CachedAnswer): string {
  return JSON.stringify(answer)
}

export function decodeEntry(text: string): CachedAnswer | null {
  try {
    const value = JSON.parse(text) as CachedAnswer
    return value.kind === 'json' || value.kind === 'stream' ? value : null
  } catch {
    return null
  }
}

/** Sorted keys, so two spellings of one request are one key. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`
  if (value !== null && typeof value === 'object') {
    const entries = Object.keys(value)
      .filter((key) => (value as Record<string, unknown>)[key] !== undefined)
      .sort()
      .map((key) => `${JSON.stringify(key)}:${canonical((value as Record<string, unknown>)[key])}`)
    return `{${entries.join(',')}}`
  }
  return JSON.stringify(value) ?? 'null'
}

/** Fields that never change the answer: who asked and their bookkeeping. */
const IGNORED_FIELDS = new Set(['user', 'metadata', 'store'])

export interface KeyParts {
  /** The operation (`chat`, `messages`...): the same body means different things on different routes. */
  operation: string
  /** What answers: a provider and model, or a saved or inline config. */
  route: string
  body: Record<string, unknown>
  namespace: string | null
  /** The body's `user`, when the config keys entries by it. */
  user: string | null
}

/** The key of a request: a SHA-256 of its normalised parts (the workspace is kept beside it by the backends). */
export function cacheKey(parts: KeyParts): string {
  const body: Record<string, unknown> = {}
  for (const [name, value] of Object.entries(parts.body)) if (!IGNORED_FIELDS.has(name)) body[name] = value
  return createHash('sha256')
    .update(canonical({ operation: parts.operation, route: parts.route, namespace: parts.namespace, user: parts.user, body }))
    .digest('base64url')
}
