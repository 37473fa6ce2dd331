/**
 * The response cache in Redis, shared by every gateway replica. One workspace's keys share a hash
 * tag (`{workspace}`), so they live in one Cluster slot and the set script may touch them together.
 * Per workspace: the entries (with their TTL), an index ordered by expiry, each entry's size, and
 * the total; the set script (Redis time, one round trip) evicts expired entries and then those
 * nearest expiry while the workspace is over its byte cap.
 */
import type { Cluster, Redis } from 'ioredis'
import { DEFAULT_CACHE_LIMITS, SEMANTIC_KEY_PREFIX, decodeEntry, encodeEntry, type CacheLimits, type CachedAnswer, type ResponseCache } from './response-cache.ts'

/** Entries read per round trip when a replica loads a workspace's semantic entries. */
const LOAD_PAGE_SIZE = 256

const SET_SCRIPT = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local ttl = tonumber(ARGV[3])
local old = redis.call('HGET', KEYS[3], ARGV[1])
if old then redis.call('DECRBY', KEYS[4], old) end
local size = string.len(ARGV[2])
redis.call('SET', KEYS[1], ARGV[2], 'PX', ttl)
redis.call('ZADD', KEYS[2], now + ttl, ARGV[1])
redis.call('HSET', KEYS[3], ARGV[1], size)
local total = redis.call('INCRBY', KEYS[4], size)
for i = 2, 4 do
  if redis.call('PTTL', KEYS[i]) < ttl then redis.call('PEXPIRE', KEYS[i], ttl) end
end
local cap = tonumber(ARGV[4])
local function drop(member)
  local s = redis.call('HGET', KEYS[3], member)
  if s then
    redis.call('DECRBY', KEYS[4], s)
    redis.call('HDEL', KEYS[3], member)
  end
  redis.call('ZREM', KEYS[2], member)
  redis.call('DEL', ARGV[5] .. member)
end
if total > cap then
  for _, member in ipairs(redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', now)) do drop(member) end
  total = tonumber(redis.call('GET', KEYS[4]) or '0')
  while total > cap do
    local nearest = redis.call('ZRANGE', KEYS[2], 0, 0)
    if #nearest == 0 then break end
    drop(nearest[1])
    total = tonumber(redis.call('GET', KEYS[4]) or '0')
  end
end
return total
`

export interface RedisCacheOptions {
  /** Prefix of every key; the Redis ACL user of gateways is allowed this prefix. */
  prefix?: string
  limits?: Partial<CacheLimits>
}

export class RedisResponseCache implements ResponseCache {
  readonly #redis: Redis | Cluster
  readonly #prefix: string
  readonly #limits: CacheLimits

  constructor(redis: Redis | Cluster, options: RedisCacheOptions = {}) {
    this.#redis = redis
    this.#prefix = options.prefix ?? 'gh:cache'
    this.#limits = { ...DEFAULT_CACHE_LIMITS, ...options.limits }
    if (!('gatehouseCacheSet' in redis)) redis.defineCommand('gatehouseCacheSet', { numberOfKeys: 4, lua: SET_SCRIPT })
  }

  #space(workspaceId: string): string {
    return `${this.#prefix}:{${workspaceId}}`
  }

  /**
   * A disconnected client fails at once (the request is then served uncached) rather than waiting
   * for Redis: what no offline queue gives a single node, and a Cluster client (which keeps its
   * offline queue, see connectRedis) does not.
   */
  #connected(): void {
    if (this.#redis.status !== 'ready') throw new Error(`Redis is not connected (${this.#redis.status})`)
  }

  async get(workspaceId: string, key: string): Promise<CachedAnswer | null> {
    this.#connected()
    const text = await this.#redis.get(`${this.#space(workspaceId)}:e:${key}`)
    return text === null ? null : decodeEntry(text)
  }

  async set(workspaceId: string, key: string, answer: CachedAnswer, ttlMs: number): Promise<void> {
    this.#connected()
    const text = encodeEntry(answer)
    if (Buffer.byteLength(text) > this.#limits.maxEntryBytes) return
    const space = this.#space(workspaceId)
    const command = (this.#redis as unknown as Record<string, (...args: unknown[]) => Promise<unknown>>).gatehouseCacheSet!
    await command.call(this.#redis, `${space}:e:${key}`, `${space}:idx`, `${space}:sz`, `${space}:bytes`, key, text, Math.max(1, Math.round(ttlMs)), this.#limits.maxBytesPerWorkspace, `${space}:e:`)
  }

  /**
   * The workspace's live semantic-mode entries with their expiry (Redis time), a page at a time:
   * what a replica reads to build its index of the workspace.
   */
  async *semanticEntries(workspaceId: string, nowMs: number): AsyncGenerator<Array<{ key: string; answer: CachedAnswer; expiresAtMs: number }>> {
    const space = this.#space(workspaceId)
    for (let offset = 0; ; offset += LOAD_PAGE_SIZE) {
      const page = await this.#redis.zrangebyscore(`${space}:idx`, `(${nowMs}`, '+inf', 'WITHSCORES', 'LIMIT', offset, LOAD_PAGE_SIZE)
      if (page.length === 0) return
      const members: Array<{ key: string; expiresAtMs: number }> = []
      for (let i = 0; i < page.length; i += 2) if (page[i]!.startsWith(SEMANTIC_KEY_PREFIX)) members.push({ key: page[i]!, expiresAtMs: Number(page[i + 1]) })
      if (members.length > 0) {
        const texts = await this.#redis.mget(members.map((member) => `${space}:e:${member.key}`))
        const entries = members.flatMap((member, i) => {
          const answer = texts[i] == null ? null : decodeEntry(texts[i]!)
          return answer ? [{ ...member, answer }] : []
        })
        yield entries
      }
      if (page.length < LOAD_PAGE_SIZE * 2) return
    }
  }

  async close(): Promise<void> {
    // The connection is the caller's; it may serve other ports too.
  }
}
