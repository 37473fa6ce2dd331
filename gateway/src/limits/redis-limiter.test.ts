/** The limiter contract on the real Redis (127.0.0.1:6379, keys under a random prefix). */
import { afterAll } from 'vitest'
import { limiterContract } from './limiter.contract.ts'
import { RedisLimiter, connectRedis } from './redis-limiter.ts'

const limiters: RedisLimiter[] = []
afterAll(async () => {
  await Promise.all(limiters.map((l) => l.close()))
})

limiterContract('Redis', async () => {
  const client = connectRedis({ url: process.env.GATEHOUSE_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379' })
  await new Promise<void>((resolve, reject) => {
    client.once('ready', resolve)
    client.once('error', reject)
  })
  const limiter = new RedisLimiter(client)
  limiters.push(limiter)
  return { limiter, advance: (ms) => new Promise((resolve) => setTimeout(resolve, ms)) }
})
