/**
 * The response cache backends pass one contract: in process, and real Redis shared by replicas.
 */
import { Redis } from 'ioredis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { MemoryResponseCache } from '../../gateway/src/cache/memory.ts'
import { RedisResponseCache } from '../../gateway/src/cache/redis.ts'
import type { CachedAnswer, CacheLimits, ResponseCache } from '../../gateway/src/cache/response-cache.ts'
import { dropPrefix, redisSkipReason, testPrefix, TEST_REDIS_URL } from '../helpers/redis.ts'

const skip = await redisSkipReason()
const answer = (body: string): CachedAnswer => ({ kind: 'json', status: 200, body, usage: { inputTokens: 3, outputTokens: 5 } })
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms))

interface Backend {
  name: string
  skip: string | null
  make(limits?: Partial<CacheLimits>): ResponseCache
}

let redis: Redis | null = null
const prefixes: string[] = []

beforeAll(() => {
  if (skip === null) redis = new Redis(TEST_REDIS_URL)
})
afterAll(async () => {
  if (redis) {
    for (const prefix of prefixes) await dropPrefix(redis, prefix)
    redis.disconnect()
  }
})

const backends: Backend[] = [
  { name: 'memory', skip: null, make: (limits) => new MemoryResponseCache(limits) },
  {
    name: 'redis',
    skip,
    make: (limits) => {
      const prefix = testPrefix('cache')
      prefixes.push(prefix)
      return new RedisResponseCache(redis!, { prefix, ...(limits ? { limits } : {}) })
    },
  },
]

describe.each(backends)('$name response cache', (backend) => {
  it.skipIf(backend.skip !== null)('returns what was stored, per workspace only', async () => {
    const cache = backend.make()
    await cache.set('ws-a', 'k1', answer('{"a":1}'), 60_000)
    expect(await cache.get('ws-a', 'k1')).toEqual(answer('{"a":1}'))
    expect(await cache.get('ws-b', 'k1')).toBeNull()
    expect(await cache.get('ws-a', 'k2')).toBeNull()
  })

  it.skipIf(backend.skip !== null)('stores streams chunk for chunk, event names included', async () => {
    const cache = backend.make()
    const stream: CachedAnswer = { kind: 'stream', status: 200, chunks: [{ event: 'message_start', data: '{"type":"message_start"}' }, { data: '{"x":1}' }], usage: null }
    await cache.set('ws-a', 'k', stream, 60_000)
    expect(await cache.get('ws-a', 'k')).toEqual(stream)
  })

  it.skipIf(backend.skip !== null)('forgets an entry after its time', async () => {
    const cache = backend.make()
    await cache.set('ws-a', 'short', answer('1'), 40)
    await cache.set('ws-a', 'long', answer('2'), 60_000)
    await sleep(120)
    expect(await cache.get('ws-a', 'short')).toBeNull()
    expect(await cache.get('ws-a', 'long')).not.toBeNull()
  })

  it.skipIf(backend.skip !== null)('keeps a workspace under its byte cap by evicting the entries nearest expiry, never another workspace', async () => {
    const size = JSON.stringify(answer('x'.repeat(100))).length
    const cache = backend.make({ maxBytesPerWorkspace: size * 3 })
    await cache.set('ws-b', 'other', answer('x'.repeat(100)), 1_000)
    await cache.set('ws-a', 'soon', answer('x'.repeat(100)), 10_000)
    await cache.set('ws-a', 'later', answer('x'.repeat(100)), 50_000)
    await cache.set('ws-a', 'latest', answer('x'.repeat(100)), 60_000)
    await cache.set('ws-a', 'more', answer('x'.repeat(100)), 55_000)
    expect(await cache.get('ws-a', 'soon')).toBeNull()
    expect(await cache.get('ws-a', 'later')).not.toBeNull()
    expect(await cache.get('ws-a', 'latest')).not.toBeNull()
    expect(await cache.get('ws-a', 'more')).not.toBeNull()
    expect(await cache.get('ws-b', 'other')).not.toBeNull()
  })

  it.skipIf(backend.skip !== null)('does not store an entry over the entry size limit', async () => {
    const cache = backend.make({ maxEntryBytes: 50 })
    await cache.set('ws-a', 'big', answer('x'.repeat(100)), 60_000)
    expect(await cache.get('ws-a', 'big')).toBeNull()
  })

  it.skipIf(backend.skip !== null)('replacing an entry counts its size once', async () => {
    const size = JSON.stringify(answer('x'.repeat(100))).length
    const cache = backend.make({ maxBytesPerWorkspace: size * 2 })
    for (let round = 0; round < 5; round++) await cache.set('ws-a', 'same', answer('x'.repeat(100)), 60_000)
    await cache.set('ws-a', 'second', answer('x'.repeat(100)), 60_000)
    expect(await cache.get('ws-a', 'same')).not.toBeNull()
    expect(await cache.get('ws-a', 'second')).not.toBeNull()
  })
})

describe.skipIf(skip !== null)('redis response cache, semantic entries', () => {
  it('lists the live semantic entries of one workspace with their expiry, for a replica loading its index', async () => {
    const prefix = testPrefix('cache')
    prefixes.push(prefix)
    const cache = new RedisResponseCache(redis!, { prefix })
    const semantic = (partition: string): CachedAnswer => ({ ...answer('{"s":1}'), semantic: { partition, vector: 'AACAPw==' } })
    await cache.set('ws-a', 's.one', semantic('p1'), 60_000)
    await cache.set('ws-a', 's.two', semantic('p2'), 120_000)
    await cache.set('ws-a', 'plain', answer('{"p":1}'), 60_000)
    await cache.set('ws-b', 's.other', semantic('p1'), 60_000)
    const listed: Array<{ key: string; partition: string | undefined; expiresInMs: number }> = []
    const now = Date.now()
    for await (const page of cache.semanticEntries('ws-a', now)) {
      for (const entry of page) listed.push({ key: entry.key, partition: entry.answer.semantic?.partition, expiresInMs: entry.expiresAtMs - now })
    }
    expect(listed.map(({ key, partition }) => ({ key, partition }))).toEqual([
      { key: 's.one', partition: 'p1' },
      { key: 's.two', partition: 'p2' },
    ])
    expect(listed[0]!.expiresInMs).toBeGreaterThan(50_000)
    expect(listed[1]!.expiresInMs).toBeGreaterThan(110_000)
  })
})

