/** The semantic feed's tail on real Redis (GATEHOUSE_TEST_REDIS_URL or 127.0.0.1:6379). Break tried: a plain `duplicate()` (the shared 500 ms timeout) fails it. */
import { randomBytes } from 'node:crypto'
import { afterAll, describe, expect, it } from 'vitest'
import { connectRedis } from '../limits/redis-limiter.ts'
import { RedisResponseCache } from './redis.ts'
import { RedisSemanticFeed } from './redis-semantic-feed.ts'
import { SemanticIndex } from './semantic-index.ts'

const url = process.env.GATEHOUSE_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379'
// The gateway's own connection settings: a 500 ms command timeout, no offline queue.
const redis = connectRedis({ url })
afterAll(() => redis.disconnect())

describe('RedisSemanticFeed', () => {
  it('waits out idle blocking reads longer than the shared command timeout without a failure', async () => {
    const warnings: unknown[] = []
    const prefix = `test:semantic-feed:${randomBytes(6).toString('hex')}`
    // Built before the connection is up, as a gateway does at boot.
    const feed = new RedisSemanticFeed(redis, new RedisResponseCache(redis, { prefix }), new SemanticIndex(), {
      streamKey: `${prefix}:log`,
      blockMs: 700,
      logger: { warn: (fields: unknown) => warnings.push(fields) },
    })
    // Three idle reads of 700 ms each on a connection whose shared timeout is 500 ms.
    await new Promise((resolve) => setTimeout(resolve, 2_300))
    await feed.close()
    expect(warnings).toEqual([])
  })
})
