/**
 * The control plane's read of the gateways' budget counters in Redis (GATEHOUSE_REDIS_URL on the
 * control plane), for `usage_limits.current_usage`. One pipelined HMGET per budget: what was spent
 * plus what in-flight requests hold reserved (a dead gateway's reservations count until the next
 * request on that budget prunes them, at most the reservation TTL). It only reads; the gateway's
 * script owns every write. Fails fast (no offline queue, short timeout): usage then shows null.
 */
import { Redis } from 'ioredis'
import type { LimitCounters } from './context.ts'

export function redisLimitCounters(url: string, keyPrefix: string): LimitCounters & { close(): void } {
  const client = new Redis(url, { enableOfflineQueue: false, maxRetriesPerRequest: 0, commandTimeout: 500, retryStrategy: (times) => Math.min(times * 200, 5_000) })
  client.on('error', () => {})
  return {
    keyPrefix,
    async usage(keys) {
      if (keys.length === 0) return []
      const pipeline = client.pipeline()
      for (const key of keys) pipeline.hmget(`${key}:b`, 'spent', 'reserved')
      const replies = (await pipeline.exec()) ?? []
      return replies.map(([error, value]) => {
        if (error) throw error
        const [spent, reserved] = value as Array<string | null>
        return Number(spent ?? 0) + Number(reserved ?? 0)
      })
    },
    close: () => client.disconnect(),
  }
}
