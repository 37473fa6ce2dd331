/**
 * Semantic caching over the response cache: an answer is stored once, under its exact key, with
 * the embedding of the request's last user turn beside it; the vector index (per replica, in this
 * process) points from embeddings to those keys. A lookup searches the request's partition for the
 * nearest stored embedding at or above the threshold, then reads that entry; an entry the response
 * cache no longer has (expired, evicted over the byte cap) leaves the index there and then.
 *
 * With several replicas (Redis), a `SemanticFeed` keeps every replica's index in step with the
 * entries in Redis (redis-semantic-feed.ts); in process (embedded mode) there is no feed: the one
 * index sees every store.
 */
import { encodeVector, type CachedAnswer, type ResponseCache } from './response-cache.ts'
import type { SemanticIndex } from './semantic-index.ts'

export interface SemanticFeed {
  /** Tells the other replicas an entry was stored. */
  announce(workspaceId: string, partition: string, key: string, expiresAtMs: number): Promise<void>
  /** Whether this replica's index holds the workspace's stored entries, waiting at most `waitMs` for a first load. */
  ready(workspaceId: string, waitMs: number): Promise<boolean>
  close(): Promise<void>
}

export interface SemanticHit {
  readonly key: string
  readonly answer: CachedAnswer
  readonly similarity: number
}

export interface SemanticCacheOptions {
  /** How long a first lookup of a workspace on this replica waits for its entries to load (else it is a miss). */
  loadWaitMs?: number
  /** How often expired entries are swept out of the index. */
  sweepIntervalMs?: number
  now?: () => number
}

export class SemanticCache {
  readonly #entries: ResponseCache
  readonly #index: SemanticIndex
  readonly #feed: SemanticFeed | null
  readonly #loadWaitMs: number
  readonly #now: () => number
  readonly #sweeper: NodeJS.Timeout

  constructor(entries: ResponseCache, index: SemanticIndex, feed: SemanticFeed | null = null, options: SemanticCacheOptions = {}) {
    this.#entries = entries
    this.#index = index
    this.#feed = feed
    this.#loadWaitMs = options.loadWaitMs ?? 1000
    this.#now = options.now ?? Date.now
    this.#sweeper = setInterval(() => index.sweep(), options.sweepIntervalMs ?? 60_000)
    this.#sweeper.unref()
  }

  /** The stored answer whose embedding is nearest to `vector` in the partition, if at least `minSimilarity` close. */
  async lookup(workspaceId: string, partition: string, vector: Float32Array, minSimilarity: number): Promise<SemanticHit | null> {
    if (this.#feed !== null && !(await this.#feed.ready(workspaceId, this.#loadWaitMs))) return null
    const match = this.#index.search(workspaceId, partition, vector, minSimilarity)
    if (match === null) return null
    const answer = await this.#entries.get(workspaceId, match.key)
    if (answer === null) {
      this.#index.remove(workspaceId, partition, match.key)
      return null
    }
    return { key: match.key, answer, similarity: match.similarity }
  }

  /** Stores the answer under its exact key with its embedding, indexes it here and announces it to the other replicas. */
  async store(workspaceId: string, key: string, partition: string, vector: Float32Array, answer: CachedAnswer, ttlMs: number): Promise<void> {
    await this.#entries.set(workspaceId, key, { ...answer, semantic: { partition, vector: encodeVector(vector) } }, ttlMs)
    const expiresAtMs = this.#now() + ttlMs
    this.#index.add(workspaceId, partition, key, vector, expiresAtMs)
    await this.#feed?.announce(workspaceId, partition, key, expiresAtMs)
  }

  async close(): Promise<void> {
    clearInterval(this.#sweeper)
    await this.#feed?.close()
    this.#index.clear()
  }
}
