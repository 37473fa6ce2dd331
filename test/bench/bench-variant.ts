/**
 * What the single-gateway measuring scripts (instructions.ts, gc-promotion.ts, warm-up.ts) share:
 * the feature variants a gateway can run with, the environment each needs, and the chat body they
 * send, so their figures are of the same gateway and the same request.
 */
import { randomBytes } from 'node:crypto'
import { Redis } from 'ioredis'
import type { Pool } from 'undici'
import { dropPrefix } from '../helpers/redis.ts'
import { withoutOtel } from './server-env.ts'

export const BENCH_VARIANTS = ['plain', 'metering', 'trace0', 'trace100', 'limits'] as const
export type BenchVariant = (typeof BENCH_VARIANTS)[number]

export function benchVariant(name: string): BenchVariant {
  if (!(BENCH_VARIANTS as readonly string[]).includes(name)) throw new Error(`unknown --variant ${name}`)
  return name as BenchVariant
}

export const BENCH_REDIS_URL = process.env.GATEHOUSE_BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379'

/**
 * The Redis counters of a gateway started with `--features limits` (the three limits of
 * gateway-process.ts), under a key prefix of its own, and how to remove them after the run.
 */
export function benchLimits(): { env: NodeJS.ProcessEnv; cleanUp: () => Promise<void> } {
  const prefix = `bench-${randomBytes(4).toString('hex')}:`
  return {
    env: { GATEHOUSE_REDIS_URL: BENCH_REDIS_URL, GATEHOUSE_LIMITS_KEY_PREFIX: prefix },
    async cleanUp() {
      const redis = new Redis(BENCH_REDIS_URL)
      try {
        await dropPrefix(redis, prefix)
      } finally {
        redis.disconnect()
      }
    },
  }
}

/** The gateway-process.ts `--features` value of `variant`. */
export function variantFeatures(variant: BenchVariant): string {
  return variant === 'metering' || variant === 'limits' ? variant : ''
}

/**
 * The gateway's environment for `variant`: `metering` ships usage records over HTTP to the sink,
 * `trace0`/`trace100` export OTLP http/protobuf there, sampling 0 % or 100 %; `limits` counts in
 * Redis (`limitsEnv`, from benchLimits).
 */
export function variantEnv(variant: BenchVariant, sinkUrl: string | null, limitsEnv: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const env = withoutOtel(process.env)
  if (variant === 'limits') return { ...env, ...limitsEnv }
  if (variant === 'plain' || sinkUrl === null) return env
  if (variant === 'metering') return { ...env, GATEHOUSE_USAGE_SINK_URL: sinkUrl }
  return {
    ...env,
    OTEL_EXPORTER_OTLP_ENDPOINT: sinkUrl,
    OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf',
    OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
    OTEL_TRACES_SAMPLER_ARG: variant === 'trace100' ? '1' : '0',
  }
}

/** The chat request every measured call sends (its JSON text). */
export function benchChatBody(stream = false): string {
  return JSON.stringify({
    model: 'gpt-4o-mini',
    messages: [
      { role: 'system', content: 'You are a concise assistant that answers benchmark questions.' },
      { role: 'user', content: 'Write one short sentence about measuring gateway overhead on loopback.' },
    ],
    max_tokens: 64,
    ...(stream ? { stream: true } : {}),
  })
}

/** Sends `count` chat requests, `concurrency` at a time, each read to its end; any answer but 200 fails the run. */
export async function driveChat(pool: Pool, headers: Record<string, string>, body: string, count: number, concurrency: number): Promise<void> {
  let next = 0
  const worker = async (): Promise<void> => {
    while (next < count) {
      next += 1
      const response = await pool.request({ path: '/v1/chat/completions', method: 'POST', body, headers: { 'content-type': 'application/json', ...headers } })
      const text = await response.body.text()
      if (response.statusCode !== 200) throw new Error(`gateway answered ${response.statusCode}: ${text.slice(0, 500)}`)
    }
  }
  await Promise.all(Array.from({ length: concurrency }, worker))
}
