/**
 * What the Redis server spends on a run of the `limits` variant (instructions.ts, gc-promotion.ts):
 * the limiter's cost is partly Redis's, which runs on the same machine under `make bench`. Read
 * from INFO before and after the measured requests: the server's CPU (main thread, user + system,
 * network and Lua included) and the script calls. Redis is shared with whatever else runs, so the
 * figure is only clean on a server nobody else uses meanwhile.
 */
import { Redis } from 'ioredis'

export interface RedisCpu {
  cpuUs: number
  scriptCalls: number
}

function field(info: string, name: string): number {
  const match = new RegExp(`^${name}:(.*)$`, 'm').exec(info)
  return match ? Number(match[1]) : 0
}

export async function readRedisCpu(url: string): Promise<RedisCpu> {
  const redis = new Redis(url)
  try {
    const cpu = await redis.info('cpu')
    const stats = await redis.info('commandstats')
    const evalsha = /^cmdstat_evalsha:calls=(\d+)/m.exec(stats)
    return {
      cpuUs: Math.round((field(cpu, 'used_cpu_user_main_thread') + field(cpu, 'used_cpu_sys_main_thread')) * 1e6),
      scriptCalls: evalsha ? Number(evalsha[1]) : 0,
    }
  } finally {
    redis.disconnect()
  }
}

/** Redis's CPU µs and script calls per request between two readings. */
export function redisPerRequest(before: RedisCpu, after: RedisCpu, requests: number): { redisCpuUsPerRequest: number; redisScriptCallsPerRequest: number } {
  return {
    redisCpuUsPerRequest: Math.round(((after.cpuUs - before.cpuUs) / requests) * 10) / 10,
    redisScriptCallsPerRequest: Math.round(((after.scriptCalls - before.scriptCalls) / requests) * 1000) / 1000,
  }
}
