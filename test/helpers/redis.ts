/**
 * Real Redis for tests: GATEHOUSE_TEST_REDIS_URL, else the local server. Each caller gets its own
 * key prefix, so suites running at once never see each other's keys. Unreachable Redis skips the
 * suite with a message, and fails it under CI=true.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { Redis } from 'ioredis'

export const TEST_REDIS_URL = process.env.GATEHOUSE_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379'

export async function redisReachable(url = TEST_REDIS_URL): Promise<boolean> {
  const probe = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, enableOfflineQueue: false, connectTimeout: 1000, retryStrategy: () => null })
  try {
    await probe.connect()
    await probe.ping()
    return true
  } catch {
    return false
  } finally {
    probe.disconnect()
  }
}

/** Null when the suite may run; the reason to skip otherwise (a thrown error under CI=true). */
export async function redisSkipReason(url = TEST_REDIS_URL): Promise<string | null> {
  if (await redisReachable(url)) return null
  if (process.env.CI === 'true') throw new Error(`Redis at ${url} is unreachable and CI=true requires it`)
  const reason = `Redis at ${url} is unreachable; skipping the Redis suite`
  console.warn(`[redis tests] ${reason}`)
  return reason
}

export function testPrefix(name: string): string {
  return `test:${name}:${randomBytes(6).toString('hex')}`
}

/** Deletes every key under a prefix (SCAN, never FLUSH: other suites share the server). */
export async function dropPrefix(redis: Redis, prefix: string): Promise<void> {
  let cursor = '0'
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 500)
    cursor = next
    if (keys.length > 0) await redis.del(...keys)
  } while (cursor !== '0')
}

/**
 * A redis-server of a test's own on 127.0.0.1:`port` (no persistence), for tests that kill it or
 * start it with settings of their own (`extraArgs`, e.g. an ACL file); resolves once it accepts
 * connections. With `sentinelConfig` (a writable file: a sentinel rewrites it), a sentinel.
 */
export async function startRedisServer(port: number, extraArgs: readonly string[] = [], options: { sentinelConfig?: string } = {}): Promise<ChildProcess> {
  const args = options.sentinelConfig === undefined
    ? ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', ...extraArgs]
    : [options.sentinelConfig, '--sentinel', '--port', String(port), '--bind', '127.0.0.1', ...extraArgs]
  const ready = options.sentinelConfig === undefined ? 'Ready to accept connections' : 'Sentinel ID is'
  const child = spawn('redis-server', args, { stdio: ['ignore', 'pipe', 'ignore'] })
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('redis-server did not start')), 5_000)
    child.once('exit', (code) => {
      clearTimeout(timer)
      reject(new Error(`redis-server exited with ${code} before accepting connections`))
    })
    child.stdout!.on('data', (chunk: Buffer) => {
      if (chunk.toString().includes(ready)) {
        clearTimeout(timer)
        resolve()
      }
    })
  })
  return child
}
