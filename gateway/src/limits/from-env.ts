/**
 * The limiter a gateway process uses, from its environment (read once at boot):
 *
 *   GATEHOUSE_REDIS_URL             redis://[user:password@]host:port[/db] (or rediss://): one node
 *   GATEHOUSE_REDIS_SENTINELS       host:port,host:port  with GATEHOUSE_REDIS_SENTINEL_NAME (the master's name)
 *   GATEHOUSE_REDIS_CLUSTER_NODES   host:port,host:port  (Redis Cluster seed nodes)
 *   GATEHOUSE_REDIS_USERNAME / GATEHOUSE_REDIS_PASSWORD   for Sentinel and Cluster (the ACL user the chart creates)
 *   GATEHOUSE_LIMITS_KEY_PREFIX     prefix of every counter key (default `gh:`; the ACL user's key pattern)
 *   GATEHOUSE_REDIS_TIMEOUT_MS      per-command timeout (default 500): past it the limit's failure mode decides
 *   GATEHOUSE_LIMITS_RESERVATION_TTL_MS  how long a reservation outlives a silent holder, e.g. a gateway
 *                                   that died mid-stream (default 120000); a live stream keeps renewing it
 *
 * With none of them, counters live in process: exact for one process (embedded mode), per replica
 * when several gateways run — which is why `shared` says so and the boot log should.
 */
import type { Cluster, Redis } from 'ioredis'
import type { Limiter } from './limiter.ts'
import { MemoryLimiter } from './memory-limiter.ts'
import { redisKeyPrefixesFromEnv } from './redis-acl.ts'
import { RedisLimiter, connectRedis, type RedisLimiterOptions } from './redis-limiter.ts'

export interface LimiterSetup {
  readonly limiter: Limiter
  readonly keyPrefix: string
  /** Counters shared by every replica (Redis), or this process's own. */
  readonly shared: boolean
  /** Where the counters live, for the boot log (no credentials). */
  readonly description: string
  /** The Redis connection the counters use (null in process); other shared state (the response cache) uses it too. */
  readonly redis: Redis | Cluster | null
  /** GATEHOUSE_LIMITS_RESERVATION_TTL_MS, when set. */
  readonly reservationTtlMs?: number
}

function hostPorts(value: string, variable: string): Array<{ host: string; port: number }> {
  return value.split(',').map((entry) => entry.trim()).filter(Boolean).map((entry) => {
    const colon = entry.lastIndexOf(':')
    const port = Number(entry.slice(colon + 1))
    if (colon <= 0 || !Number.isInteger(port) || port <= 0 || port > 65_535) throw new Error(`${variable}: '${entry}' is not host:port`)
    return { host: entry.slice(0, colon), port }
  })
}

export function redisOptionsFromEnv(env: NodeJS.ProcessEnv): RedisLimiterOptions | null {
  const timeout = env.GATEHOUSE_REDIS_TIMEOUT_MS === undefined ? undefined : Number(env.GATEHOUSE_REDIS_TIMEOUT_MS)
  if (timeout !== undefined && (!Number.isFinite(timeout) || timeout <= 0)) throw new Error('GATEHOUSE_REDIS_TIMEOUT_MS must be a positive number of milliseconds')
  const credentials = { username: env.GATEHOUSE_REDIS_USERNAME, password: env.GATEHOUSE_REDIS_PASSWORD, commandTimeoutMs: timeout }
  if (env.GATEHOUSE_REDIS_CLUSTER_NODES) return { ...credentials, clusterNodes: hostPorts(env.GATEHOUSE_REDIS_CLUSTER_NODES, 'GATEHOUSE_REDIS_CLUSTER_NODES') }
  if (env.GATEHOUSE_REDIS_SENTINELS) {
    if (!env.GATEHOUSE_REDIS_SENTINEL_NAME) throw new Error('GATEHOUSE_REDIS_SENTINELS needs GATEHOUSE_REDIS_SENTINEL_NAME')
    return { ...credentials, sentinels: hostPorts(env.GATEHOUSE_REDIS_SENTINELS, 'GATEHOUSE_REDIS_SENTINELS'), sentinelName: env.GATEHOUSE_REDIS_SENTINEL_NAME }
  }
  if (env.GATEHOUSE_REDIS_URL) return { ...credentials, url: env.GATEHOUSE_REDIS_URL }
  return null
}

function reservationTtlFromEnv(env: NodeJS.ProcessEnv): { reservationTtlMs?: number } {
  const raw = env.GATEHOUSE_LIMITS_RESERVATION_TTL_MS
  if (raw === undefined || raw === '') return {}
  const value = Number(raw)
  if (!Number.isInteger(value) || value < 1_000) throw new Error('GATEHOUSE_LIMITS_RESERVATION_TTL_MS must be a whole number of milliseconds, at least 1000')
  return { reservationTtlMs: value }
}

export function limiterFromEnv(env: NodeJS.ProcessEnv): LimiterSetup {
  const keyPrefix = redisKeyPrefixesFromEnv(env).limitsKeyPrefix
  const ttl = reservationTtlFromEnv(env)
  const options = redisOptionsFromEnv(env)
  if (options === null) return { limiter: new MemoryLimiter(), keyPrefix, shared: false, description: 'in process', redis: null, ...ttl }
  const description = options.clusterNodes ? `Redis Cluster (${options.clusterNodes.length} seed nodes)` : options.sentinels ? `Redis Sentinel (${options.sentinelName})` : 'Redis'
  const redis = connectRedis(options)
  return { limiter: new RedisLimiter(redis), keyPrefix, shared: true, description, redis, ...ttl }
}
