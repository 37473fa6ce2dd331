/**
 * Keeps this replica's semantic index in step with the semantic entries in Redis.
 *
 * - Every store is announced on one Redis stream (`<prefix>:semantic-log`: workspace, partition, key,
 *   expiry),
 *   trimmed to about `maxLength` events.
 * - Each replica tails the stream from the moment it started (a blocking XREAD on a connection of
 *   its own) and, for the workspaces it has loaded, reads the announced entry and indexes its vector.
 * - A workspace is loaded on its first semantic lookup on this replica: its live semantic entries
 *   (with their vectors) are read from Redis a page at a time. The tail started before any load, so
 *   an entry stored during a load is seen by one path or the other (adding twice replaces).
 *
 * What can be stale: an entry stored on another replica is found here once the tail read it (a
 * round trip, normally milliseconds); a replica that falls more than `maxLength` events behind, or
 * loses Redis for a while, misses those entries (they are misses, never wrong answers) until the
 * workspace is loaded again on a restart. Evictions are not announced: an evicted entry leaves the
 * index at its next match, when the read finds nothing.
 */
import { setImmediate as yieldToEventLoop } from 'node:timers/promises'
import type { FastifyBaseLogger } from 'fastify'
import type { Cluster, Redis } from 'ioredis'
import type { RedisResponseCache } from './redis.ts'
import { decodeVector, type CachedAnswer } from './response-cache.ts'
import type { SemanticFeed } from './semantic-cache.ts'
import type { SemanticIndex } from './semantic-index.ts'

export interface RedisSemanticFeedOptions {
  /** The stream's key (`<GATEHOUSE_REDIS_KEY_PREFIX>:cache:semantic-log`). */
  streamKey: string
  /** Events kept in the stream (approximate trim). */
  maxLength?: number
  /** How long one blocking read waits for new events. */
  blockMs?: number
  logger?: Pick<FastifyBaseLogger, 'warn'>
}

const READ_COUNT = 512
/** Entries indexed between two yields to the event loop while a workspace loads. */
const INSERTS_PER_YIELD = 16
const RETRY_AFTER_FAILURE_MS = 1000
/** The tail connection's command timeout beyond its blocking wait (the shared one's, 500 ms, is shorter than the wait). */
const TAIL_TIMEOUT_MARGIN_MS = 1000

/** A duplicate of `redis` for blocking reads of up to `blockMs`, with a command timeout that outlasts them. */
function tailConnection(redis: Redis | Cluster, blockMs: number): Redis | Cluster {
  const commandTimeout = blockMs + TAIL_TIMEOUT_MARGIN_MS
  if ('isCluster' in redis && redis.isCluster) {
    const cluster = redis as Cluster
    return cluster.duplicate(undefined, { redisOptions: { ...cluster.options.redisOptions, commandTimeout } })
  }
  return (redis as Redis).duplicate({ commandTimeout })
}

/** Resolves once `client` is connected, or after `timeoutMs` (the caller's read then fails and retries). */
function readyOrAfter(client: Redis | Cluster, timeoutMs: number): Promise<void> {
  if (client.status === 'ready') return Promise.resolve()
  return new Promise((resolve) => {
    const done = (): void => {
      clearTimeout(timer)
      client.off('ready', done)
      resolve()
    }
    const timer = setTimeout(done, timeoutMs)
    client.once('ready', done)
  })
}

export class RedisSemanticFeed implements SemanticFeed {
  readonly #redis: Redis | Cluster
  readonly #tail: Redis | Cluster
  readonly #entries: RedisResponseCache
  readonly #index: SemanticIndex
  readonly #streamKey: string
  readonly #maxLength: number
  readonly #blockMs: number
  readonly #logger: Pick<FastifyBaseLogger, 'warn'> | undefined
  readonly #loaded = new Set<string>()
  readonly #loading = new Map<string, Promise<void>>()
  #running = true
  readonly #tailing: Promise<void>

  constructor(redis: Redis | Cluster, entries: RedisResponseCache, index: SemanticIndex, options: RedisSemanticFeedOptions) {
    this.#redis = redis
    this.#blockMs = options.blockMs ?? 1000
    // A blocking read holds its connection; the shared one serves every other command meanwhile.
    this.#tail = tailConnection(redis, this.#blockMs)
    this.#entries = entries
    this.#index = index
    this.#streamKey = options.streamKey
    this.#maxLength = options.maxLength ?? 100_000
    this.#logger = options.logger
    this.#tailing = this.#tailLoop()
  }

  async announce(workspaceId: string, partition: string, key: string, expiresAtMs: number): Promise<void> {
    await this.#redis.xadd(this.#streamKey, 'MAXLEN', '~', this.#maxLength, '*', 'w', workspaceId, 'p', partition, 'k', key, 'e', String(expiresAtMs))
  }

  async ready(workspaceId: string, waitMs: number): Promise<boolean> {
    if (this.#loaded.has(workspaceId)) return true
    let loading = this.#loading.get(workspaceId)
    if (!loading) {
      loading = this.#load(workspaceId)
      this.#loading.set(workspaceId, loading)
    }
    let timer: NodeJS.Timeout | undefined
    const waited = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, waitMs)
    })
    await Promise.race([loading, waited])
    clearTimeout(timer)
    return this.#loaded.has(workspaceId)
  }

  async #load(workspaceId: string): Promise<void> {
    try {
      for await (const page of this.#entries.semanticEntries(workspaceId, Date.now())) {
        for (const [position, entry] of page.entries()) {
          this.#indexEntry(workspaceId, entry.key, entry.answer, entry.expiresAtMs)
          // Adding to a graph is synchronous (about a millisecond at 1536 dimensions): let requests run in between.
          if (position % INSERTS_PER_YIELD === INSERTS_PER_YIELD - 1) await yieldToEventLoop()
        }
      }
      this.#loaded.add(workspaceId)
    } catch (error) {
      this.#logger?.warn({ err: error }, 'semantic cache: loading a workspace from Redis failed; lookups miss until it loads')
    } finally {
      this.#loading.delete(workspaceId)
    }
  }

  #indexEntry(workspaceId: string, key: string, answer: CachedAnswer, expiresAtMs: number): void {
    if (answer.semantic) this.#index.add(workspaceId, answer.semantic.partition, key, decodeVector(answer.semantic.vector), expiresAtMs)
  }

  /** Whether this replica indexes the workspace (loaded, or loading: its events must not be lost). */
  #follows(workspaceId: string): boolean {
    return this.#loaded.has(workspaceId) || this.#loading.has(workspaceId)
  }

  async #tailLoop(): Promise<void> {
    let lastId: string | null = null
    while (this.#running) {
      try {
        // Without an offline queue, a read sent before the connection is up fails at once.
        await readyOrAfter(this.#tail, this.#blockMs)
        if (lastId === null) {
          const newest = await this.#tail.xrevrange(this.#streamKey, '+', '-', 'COUNT', 1)
          lastId = newest[0]?.[0] ?? '0-0'
        }
        const read: Array<[string, Array<[string, string[]]>]> | null = await this.#tail.xread('COUNT', READ_COUNT, 'BLOCK', this.#blockMs, 'STREAMS', this.#streamKey, lastId)
        for (const [, events] of read ?? []) {
          for (const [id, fields] of events) {
            lastId = id
            await this.#apply(fields)
          }
        }
      } catch (error) {
        if (!this.#running) return
        this.#logger?.warn({ err: error }, 'semantic cache: reading the store log from Redis failed; retrying')
        await new Promise((resolve) => setTimeout(resolve, RETRY_AFTER_FAILURE_MS))
      }
    }
  }

  async #apply(fields: string[]): Promise<void> {
    const event: Record<string, string> = {}
    for (let i = 0; i + 1 < fields.length; i += 2) event[fields[i]!] = fields[i + 1]!
    const { w: workspaceId, p: partition, k: key, e: expiresAt } = event
    if (workspaceId === undefined || partition === undefined || key === undefined || !this.#follows(workspaceId)) return
    // This replica's own stores (and entries a load already read) are indexed already.
    if (this.#index.contains(workspaceId, partition, key)) return
    const answer = await this.#entries.get(workspaceId, key)
    if (answer) this.#indexEntry(workspaceId, key, answer, Number(expiresAt))
  }

  async close(): Promise<void> {
    this.#running = false
    this.#tail.disconnect()
    await this.#tailing
  }
}
