/**
 * Budgets and token limits end to end, through the real routes with counters in Redis:
 * - the budget race: 100 concurrent streams against a token budget that fits 37 of their worst
 *   cases: 37 are served, 63 get 412 budget_exhausted, spend never above the limit;
 * - a token rate limit with streams: worst cases reserved up front, settled to actual usage after;
 * - Redis killed under load (our own redis-server on a random loopback port): budgets answer 503
 *   with Retry-After (fail-closed), request rates keep serving (fail-open), no other 5xx; Redis
 *   back, enforcement resumes.
 */
import { once } from 'node:events'
import { randomUUID } from 'node:crypto'
import { afterAll, afterEach, describe, expect, it } from 'vitest'
import { limiterFromEnv, limitsStage, type LimiterSetup, type SnapshotLimit } from '@gatehouse/gateway'
import { startTestGateway, type TestGateway } from '../helpers/gateway.ts'
import { freePort } from '../helpers/processes.ts'
import { startRedisServer as startRedis } from '../helpers/redis.ts'
import { startOpenAISimulator } from '../simulators/openai.ts'
import type { Simulator } from '../simulators/index.ts'

const cleanups: Array<() => Promise<unknown>> = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})
afterAll(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})

type LimitInput = Partial<SnapshotLimit> & Pick<SnapshotLimit, 'id' | 'kind' | 'type'>

async function setUp(limits: LimitInput[], redisUrl = 'redis://127.0.0.1:6379', simulatorOptions: Parameters<typeof startOpenAISimulator>[0] = {}, redisTimeoutMs = 2_000): Promise<{ gateway: TestGateway; simulator: Simulator; setup: LimiterSetup }> {
  const simulator = await startOpenAISimulator({ chunks: 20, tokenIntervalMs: 15, recordLimit: 0, ...simulatorOptions })
  cleanups.push(() => simulator.close())
  const setup = limiterFromEnv({ GATEHOUSE_REDIS_URL: redisUrl, GATEHOUSE_LIMITS_KEY_PREFIX: `test-${randomUUID().slice(0, 8)}:`, GATEHOUSE_REDIS_TIMEOUT_MS: String(redisTimeoutMs) })
  cleanups.push(() => setup.limiter.close())
  const gateway = await startTestGateway([{ slug: 'sim', kind: 'openai', baseUrl: simulator.baseUrl }], {
    features: { limits: limitsStage({ limiter: setup.limiter, keyPrefix: setup.keyPrefix }) },
  })
  cleanups.push(() => gateway.close())
  gateway.update((snapshot) => {
    snapshot.limits = limits.map((limit) => ({ source: 'policy', ownerId: limit.id, name: limit.id, ...limit }))
  })
  return { gateway, simulator, setup }
}

interface Outcome {
  status: number
  code: string | null
  text: string
  headers: Headers
}

async function call(gateway: TestGateway, body: Record<string, unknown>, metadata?: Record<string, unknown>): Promise<Outcome> {
  return read(await send(gateway, body, metadata))
}

function send(gateway: TestGateway, body: Record<string, unknown>, metadata?: Record<string, unknown>): Promise<Response> {
  return fetch(`${gateway.baseUrl}/chat/completions`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${gateway.workspaceKey}`, 'x-gateway-provider': '@sim', 'content-type': 'application/json',
      ...(metadata ? { 'x-gateway-metadata': JSON.stringify(metadata) } : {}),
    },
    body: JSON.stringify(body),
  })
}

async function read(response: Response): Promise<Outcome> {
  const text = await response.text()
  let code: string | null = null
  if (response.status !== 200) code = (JSON.parse(text) as { error: { code: string } }).error.code
  return { status: response.status, code, text, headers: response.headers }
}

/** Usage reported in a stream's final chunk (stream_options.include_usage). */
function streamUsage(text: string): number {
  const events = text.split('\n').filter((line) => line.startsWith('data: {')).map((line) => JSON.parse(line.slice(6)) as { usage?: { total_tokens: number } | null })
  return events.find((event) => event.usage)?.usage?.total_tokens ?? 0
}

describe('budgets and token limits on Redis, end to end', () => {
  it('budget race: of 100 concurrent streams against a budget fitting 37 worst cases, 37 are served and 63 exhausted; spend stays within', async () => {
    const body = { model: 'gpt-4o-mini', stream: true, stream_options: { include_usage: true }, max_tokens: 8_000, messages: [{ role: 'user', content: 'race' }] }
    // The stage reserves body bytes (an upper bound of prompt tokens) + max_tokens per request.
    const worst = Buffer.byteLength(JSON.stringify(body)) + body.max_tokens
    const creditLimit = Math.floor(37.5 * worst)
    // Streams crawl (1 s a token) until all 100 have their answer's headers, so all of them reserve
    // before any settles and gives budget back; then they finish at once.
    const { gateway, simulator, setup } = await setUp([{ id: 'race', kind: 'usage', type: 'tokens', creditLimit, conditions: [{ key: 'api_key', values: ['key-ws'] }] }], undefined, { tokenIntervalMs: 1_000, chunks: 5 })
    const responses = await Promise.all(Array.from({ length: 100 }, () => send(gateway, body)))
    simulator.options.tokenIntervalMs = 1
    const outcomes = await Promise.all(responses.map(read))
    const served = outcomes.filter((o) => o.status === 200)
    expect(Object.fromEntries(['200', 'budget_exhausted'].map((k) => [k, outcomes.filter((o) => (o.code ?? String(o.status)) === k).length]))).toEqual({ '200': 37, budget_exhausted: 63 })
    expect(served.every((o) => o.text.includes('data: [DONE]'))).toBe(true)
    expect(outcomes.filter((o) => o.status === 412 && o.code === 'budget_exhausted')).toHaveLength(63)
    await new Promise((resolve) => setTimeout(resolve, 200))
    const key = `${setup.keyPrefix}{org-test}:b:race:s0:-`
    const [spent] = await setup.limiter.usage([key])
    expect(spent).toBeLessThanOrEqual(creditLimit)
    // Settled to what the provider reported, not the worst cases reserved.
    expect(spent).toBe(served.reduce((sum, o) => sum + streamUsage(o.text), 0))
  }, 60_000)

  it('token rate limit with streams: reserves worst cases, settles to actual tokens, then admits again', async () => {
    const body = { model: 'gpt-4o-mini', stream: true, stream_options: { include_usage: true }, max_tokens: 500, messages: [{ role: 'user', content: 'tokens' }] }
    const worst = Buffer.byteLength(JSON.stringify(body)) + body.max_tokens
    const { gateway } = await setUp([{ id: 'tpm', kind: 'rate', type: 'tokens', unit: 'rpm', value: Math.floor(2.5 * worst), conditions: [{ key: 'api_key', values: ['key-ws'] }] }])
    const [first, second, third] = await Promise.all([call(gateway, body), call(gateway, body), call(gateway, body)])
    const statuses = [first!, second!, third!].map((o) => o.code ?? String(o.status)).sort()
    expect(statuses).toEqual(['200', '200', 'rate_limited'])
    const refused = [first!, second!, third!].find((o) => o.status === 429)!
    expect(refused.code).toBe('rate_limited')
    expect(refused.headers.get('x-ratelimit-limit-tokens')).toBe(String(Math.floor(2.5 * worst)))
    await new Promise((resolve) => setTimeout(resolve, 100))
    // The two streams settled to their actual usage (a few dozen tokens), so room is back.
    const again = await call(gateway, body)
    expect(again.status).toBe(200)
    const used = [first!, second!, third!].filter((o) => o.status === 200).reduce((sum, o) => sum + streamUsage(o.text), 0)
    expect(Number(again.headers.get('x-ratelimit-remaining-tokens'))).toBe(Math.floor(2.5 * worst) - used - worst)
  })

  it('Redis killed under load: budgets fail closed with 503 and Retry-After, request rates fail open; Redis back, enforcement resumes', async () => {
    const port = await freePort()
    let redis = await startRedis(port)
    cleanups.push(async () => {
      redis.kill('SIGKILL')
    })
    const { gateway } = await setUp([
      { id: 'rpm', kind: 'rate', type: 'requests', unit: 'rpm', value: 100_000, conditions: [{ key: 'api_key', values: ['key-ws'] }] },
      { id: 'team-budget', kind: 'usage', type: 'tokens', creditLimit: 10_000_000, conditions: [{ key: 'metadata.team', values: ['budgeted'] }] },
    ], `redis://127.0.0.1:${port}`, { chunks: 2, tokenIntervalMs: 0 }, 300)
    const body = { model: 'gpt-4o-mini', max_tokens: 10, messages: [{ role: 'user', content: 'load' }] }
    const seen: Array<{ phase: string; budgeted: boolean; status: number; code: string | null; retryAfter: string | null }> = []
    let phase = 'up'
    let running = true
    const load = (async () => {
      while (running) {
        const budgeted = seen.length % 2 === 0
        const outcome = await call(gateway, body, { team: budgeted ? 'budgeted' : 'free' })
        seen.push({ phase, budgeted, status: outcome.status, code: outcome.code, retryAfter: outcome.headers.get('retry-after') })
      }
    })()
    await new Promise((resolve) => setTimeout(resolve, 500))
    phase = 'killing'
    redis.kill('SIGKILL')
    await once(redis, 'exit')
    await new Promise((resolve) => setTimeout(resolve, 300))
    phase = 'down'
    await new Promise((resolve) => setTimeout(resolve, 1_000))
    phase = 'restarting'
    redis = await startRedis(port)
    // ioredis reconnects on its own (backoff ≤ 2 s); then budgets are enforced again.
    const deadline = Date.now() + 10_000
    while (Date.now() < deadline && !seen.some((s) => s.phase === 'restarting' && s.budgeted && s.status === 200)) await new Promise((resolve) => setTimeout(resolve, 50))
    phase = 'back'
    await new Promise((resolve) => setTimeout(resolve, 300))
    running = false
    await load
    const during = (budgeted: boolean) => seen.filter((s) => s.phase === 'down' && s.budgeted === budgeted)
    expect(seen.filter((s) => s.phase === 'up').every((s) => s.status === 200)).toBe(true)
    expect(during(true).length).toBeGreaterThan(0)
    expect(during(true).every((s) => s.status === 503 && s.code === 'dependency_unavailable' && s.retryAfter === '1')).toBe(true)
    expect(during(false).length).toBeGreaterThan(0)
    expect(during(false).every((s) => s.status === 200)).toBe(true)
    // No 5xx other than the documented 503.
    expect(seen.filter((s) => s.status >= 500 && !(s.status === 503 && s.code === 'dependency_unavailable'))).toEqual([])
    expect(seen.filter((s) => s.phase === 'back' && s.budgeted).every((s) => s.status === 200)).toBe(true)
    expect(seen.some((s) => s.phase === 'back' && s.budgeted)).toBe(true)
  }, 30_000)
})

