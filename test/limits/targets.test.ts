/**
 * Limits that depend on where a request goes, on real Redis:
 * - a provider's limit holds for requests a config routes to that provider (not only for requests
 *   naming it directly): a single-target config is refused with 429 past the provider's rate, a
 *   fallback config moves on to the next target; a provider token budget under a config is settled
 *   to the tokens the stream reported;
 * - a gateway process killed mid-stream: its reservations hold the budget until they expire
 *   (GATEHOUSE_LIMITS_RESERVATION_TTL_MS), then another gateway serves again and the spend is what
 *   was settled.
 */
import { randomUUID } from 'node:crypto'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Redis } from 'ioredis'
import { afterEach, describe, expect, it } from 'vitest'
import { limiterFromEnv, limitsStage, type SnapshotLimit } from '@gatehouse/gateway'
import { generateApiKey } from '@gatehouse/gateway/snapshot'
import { buildSnapshot, startTestGateway, TEST_PEPPER, type TestGateway } from '../helpers/gateway.ts'
import { pollUntil, startGatehouse } from '../helpers/processes.ts'
import { dropPrefix, redisSkipReason, TEST_REDIS_URL } from '../helpers/redis.ts'
import { startOpenAISimulator } from '../simulators/openai.ts'

const skipReason = await redisSkipReason()
const cleanups: Array<() => Promise<unknown>> = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})

function testPrefix(): string {
  const prefix = `test-targets-${randomUUID().slice(0, 8)}:`
  cleanups.push(async () => {
    const redis = new Redis(TEST_REDIS_URL)
    await dropPrefix(redis, prefix)
    await redis.quit()
  })
  return prefix
}

type LimitInput = Partial<SnapshotLimit> & Pick<SnapshotLimit, 'id' | 'kind' | 'type'>
const providerLimit = (limit: LimitInput): LimitInput => ({ source: 'provider', ownerId: 'prov-0', name: 'primary', conditions: [{ key: 'provider', values: ['prov-0'] }], ...limit })

async function twoProviders(limits: LimitInput[]): Promise<{ gateway: TestGateway; counterPrefix: string; usage(key: string): Promise<number> }> {
  const [primary, secondary] = await Promise.all([startOpenAISimulator({ chunks: 3, recordLimit: 0 }), startOpenAISimulator({ chunks: 3, recordLimit: 0 })])
  cleanups.push(() => primary.close(), () => secondary.close())
  const setup = limiterFromEnv({ GATEHOUSE_REDIS_URL: TEST_REDIS_URL, GATEHOUSE_LIMITS_KEY_PREFIX: testPrefix() })
  cleanups.push(() => setup.limiter.close())
  const gateway = await startTestGateway([{ slug: 'primary', kind: 'openai', baseUrl: primary.baseUrl }, { slug: 'secondary', kind: 'openai', baseUrl: secondary.baseUrl }], {
    features: { limits: limitsStage({ limiter: setup.limiter, keyPrefix: setup.keyPrefix }) },
  })
  cleanups.push(() => gateway.close())
  gateway.update((snapshot) => {
    snapshot.limits = limits.map((limit) => ({ source: 'policy', ownerId: limit.id, name: limit.id, ...limit }))
  })
  return { gateway, counterPrefix: setup.keyPrefix, usage: async (key) => (await setup.limiter.usage([key]))[0]! }
}

async function chat(gateway: TestGateway, config: unknown, body: Record<string, unknown> = { model: 'gpt-4o-mini', max_tokens: 16, messages: [{ role: 'user', content: 'hello' }] }) {
  const response = await fetch(`${gateway.baseUrl}/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${gateway.workspaceKey}`, 'content-type': 'application/json', 'x-gateway-config': JSON.stringify(config) },
    body: JSON.stringify(body),
  })
  const text = await response.text()
  return { status: response.status, headers: response.headers, text, code: response.status === 200 ? null : (JSON.parse(text) as { error: { code: string } }).error.code }
}

describe.skipIf(skipReason !== null)('limits of the provider a config routes to (Redis)', () => {
  it('a provider rate limit refuses config-routed requests past it; a fallback config moves to the next target', async () => {
    const { gateway } = await twoProviders([providerLimit({ id: 'provider:prov-0:rate:requests:rpm', kind: 'rate', type: 'requests', unit: 'rpm', value: 2 })])
    const single = { strategy: { mode: 'fallback' }, targets: [{ provider: '@primary' }] }
    const outcomes = [await chat(gateway, single), await chat(gateway, single), await chat(gateway, single)]
    expect(outcomes.map((o) => o.code ?? o.status)).toEqual([200, 200, 'rate_limited'])
    expect(outcomes[2]!.status).toBe(429)
    expect(outcomes[2]!.text).toContain("the provider 'primary' limit")
    expect(outcomes[1]!.headers.get('x-ratelimit-remaining-requests')).toBe('0')

    const fallback = { strategy: { mode: 'fallback' }, targets: [{ provider: '@primary' }, { provider: '@secondary' }] }
    const moved = await chat(gateway, fallback)
    expect(moved.status).toBe(200)
    expect(moved.headers.get('x-gateway-provider')).toBe('secondary')
    expect(moved.headers.get('x-gateway-target-path')).toBe('config.targets[1]')
  })

  it('a provider token budget under a config is reserved at the target and settled to the stream\'s usage', async () => {
    const { gateway, counterPrefix, usage } = await twoProviders([providerLimit({ id: 'provider:prov-0:usage:tokens', kind: 'usage', type: 'tokens', creditLimit: 100_000 })])
    const body = { model: 'gpt-4o-mini', stream: true, stream_options: { include_usage: true }, max_tokens: 64, messages: [{ role: 'user', content: 'count me' }] }
    const answer = await chat(gateway, { strategy: { mode: 'fallback' }, targets: [{ provider: '@primary' }] }, body)
    expect(answer.status).toBe(200)
    const reported = answer.text.split('\n').filter((line) => line.startsWith('data: {')).map((line) => JSON.parse(line.slice(6)) as { usage?: { total_tokens: number } | null })
      .find((event) => event.usage)?.usage?.total_tokens
    expect(reported).toBeGreaterThan(0)
    const key = `${counterPrefix}{org-test}:b:provider:prov-0:usage:tokens:s0:-`
    await pollUntil(async () => (await usage(key)) === reported, 5_000, 20)
    // The secondary is not the budget's provider: a request routed there leaves the counter alone.
    expect((await chat(gateway, { strategy: { mode: 'fallback' }, targets: [{ provider: '@secondary' }] }, body)).status).toBe(200)
    expect(await usage(key)).toBe(reported)
  })
})

describe.skipIf(skipReason !== null)('a gateway killed mid-stream (Redis)', () => {
  it('its reservations expire, another gateway serves again, and the spend is what was settled', async () => {
    const directory = await mkdtemp(join(tmpdir(), 'gatehouse-kill-'))
    cleanups.push(() => rm(directory, { recursive: true, force: true }))
    const simulator = await startOpenAISimulator({ chunks: 30, tokenIntervalMs: 200, recordLimit: 0 })
    cleanups.push(() => simulator.close())
    const workspaceKey = generateApiKey('workspace')
    const body = { model: 'gpt-4o-mini', stream: true, stream_options: { include_usage: true }, max_tokens: 1_000, messages: [{ role: 'user', content: 'long answer' }] }
    const worst = Buffer.byteLength(JSON.stringify(body)) + body.max_tokens
    const snapshot = buildSnapshot([{ slug: 'sim', kind: 'openai', baseUrl: simulator.baseUrl }], { workspaceKey, adminKey: generateApiKey('admin') })
    // Room for two worst cases, not three.
    snapshot.limits = [{ id: 'kill-budget', source: 'policy', ownerId: 'kill-budget', name: 'kill budget', kind: 'usage', type: 'tokens', creditLimit: Math.floor(2.5 * worst), conditions: [{ key: 'api_key', values: ['key-ws'] }] }]
    const file = join(directory, 'snapshot.json')
    await writeFile(file, JSON.stringify(snapshot))
    const prefix = testPrefix()
    const env = { GATEHOUSE_KEY_PEPPER: TEST_PEPPER, GATEHOUSE_SNAPSHOT_FILE: file, GATEHOUSE_PORT: '0', GATEHOUSE_REDIS_URL: TEST_REDIS_URL, GATEHOUSE_LIMITS_KEY_PREFIX: prefix, GATEHOUSE_LIMITS_RESERVATION_TTL_MS: '3000' }
    const doomed = startGatehouse(['gateway'], env)
    const survivor = startGatehouse(['gateway'], env)
    cleanups.push(() => doomed.kill(), () => survivor.stop())
    const serving = async (p: typeof doomed): Promise<string> => (await p.waitForLog((entry) => entry.msg === 'gateway is serving')).url!
    const [doomedUrl, survivorUrl] = [await serving(doomed), await serving(survivor)]
    const send = (url: string, signal?: AbortSignal) => fetch(`${url}/v1/chat/completions`, {
      method: 'POST', signal,
      headers: { authorization: `Bearer ${workspaceKey}`, 'x-gateway-provider': '@sim', 'content-type': 'application/json' },
      body: JSON.stringify(body),
    })

    const aborter = new AbortController()
    const streams = await Promise.all([send(doomedUrl, aborter.signal), send(doomedUrl, aborter.signal)])
    expect(streams.map((s) => s.status)).toEqual([200, 200])
    // Both streams hold their reservations: the budget has no room for a third.
    const refused = await send(survivorUrl)
    expect(refused.status).toBe(412)
    await refused.text()
    await doomed.kill()
    aborter.abort()

    const counterKey = `${prefix}{org-test}:b:kill-budget:s0:-`
    const reportedUsage = (text: string): number => (text.split('\n').filter((line) => line.startsWith('data: {')).map((line) => JSON.parse(line.slice(6)) as { usage?: { total_tokens: number } | null })
      .find((event) => event.usage)?.usage?.total_tokens) ?? 0
    // Nothing settled for the killed streams; once their reservations expire the survivor serves again.
    let settled = 0
    await pollUntil(async () => {
      const response = await send(survivorUrl)
      const text = await response.text()
      if (response.status !== 200) return false
      settled += reportedUsage(text)
      return true
    }, 15_000, 250)
    expect(settled).toBeGreaterThan(0)
    const counters = limiterFromEnv({ GATEHOUSE_REDIS_URL: TEST_REDIS_URL, GATEHOUSE_LIMITS_KEY_PREFIX: prefix })
    cleanups.push(() => counters.limiter.close())
    // The spend is exactly what the survivor settled: no reservation of the dead gateway is left.
    await pollUntil(async () => (await counters.limiter.usage([counterKey]))[0] === settled, 5_000, 50)
    expect((await counters.limiter.usage([counterKey]))[0]).toBe(settled)
  }, 60_000)
})
