/**
 * Prompt completions run the normal pipeline, shown on a gateway serving a snapshot: an input
 * guardrail sees the rendered messages (a word that only a variable brings in is denied with 446
 * before the provider is called), the response cache keys on the rendered request (the same
 * variables hit, other variables miss), and a request rate limit counts prompt completions like
 * any chat request (counters in the shared Redis under a prefix of this test's own). A raw
 * template runs the same stages as a text completion: the guardrail reads the rendered `prompt`,
 * and the cache keys on it.
 */
import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { limiterFromEnv, limitsStage, type LimiterSetup } from '@gatehouse/gateway'
import type { SnapshotGuardrail } from '@gatehouse/gateway/snapshot'
import { startTestGateway, WORKSPACE_ID, type TestGateway } from '../helpers/gateway.ts'
import { startOpenAISimulator } from '../simulators/openai.ts'
import type { Simulator } from '../simulators/index.ts'

let simulator: Simulator
let gateway: TestGateway
let limits: LimiterSetup

const NO_PASSWORDS: SnapshotGuardrail = {
  id: 'no-passwords', slug: 'no-passwords', name: 'no-passwords', workspaceId: null, version: 1, hooks: ['beforeRequestHook'],
  holdBack: { mode: 'none', windowChars: 256 }, actions: { deny: true },
  checks: [{ id: 'default.contains', parameters: { words: ['password'], operator: 'none' }, isEnabled: true }],
} as SnapshotGuardrail

beforeAll(async () => {
  simulator = await startOpenAISimulator({ chunks: 2 })
  limits = limiterFromEnv({ GATEHOUSE_REDIS_URL: 'redis://127.0.0.1:6379', GATEHOUSE_LIMITS_KEY_PREFIX: `test-prompts-${randomUUID().slice(0, 8)}:` })
  gateway = await startTestGateway([{ slug: 'sim', kind: 'openai', baseUrl: simulator.baseUrl }], { features: { limits: limitsStage({ limiter: limits.limiter, keyPrefix: limits.keyPrefix }) } })
  gateway.update((snapshot) => {
    snapshot.prompts = [{
      id: 'prompt-guide', slug: 'guide', name: 'Guide', workspaceId: WORKSPACE_ID, virtualKey: 'sim', defaultVersionId: 'guide-v1',
      versions: [{ id: 'guide-v1', version: 1, template: 'Tell me about {{topic}}', model: 'gpt-4o-mini', parameters: { max_tokens: 20 } }],
    }, {
      id: 'prompt-raw', slug: 'raw', name: 'Raw', workspaceId: WORKSPACE_ID, virtualKey: 'sim', defaultVersionId: 'raw-v1',
      versions: [{ id: 'raw-v1', version: 1, template: 'Q: {{topic}}\nA:', isRawTemplate: true, model: 'gpt-3.5-turbo-instruct', parameters: { max_tokens: 20 } }],
    }]
    snapshot.guardrails = [NO_PASSWORDS]
    snapshot.guardrailDefaults = [{ workspaceId: null, input: ['no-passwords'], output: [] }]
    snapshot.configs = [{ id: 'cfg-cached', slug: 'cached', workspaceId: null, config: { provider: '@sim', cache: { mode: 'simple', max_age: 600 } } }]
  })
})
afterAll(async () => {
  await gateway?.close()
  await limits?.limiter.close()
  await simulator?.close()
})
beforeEach(() => simulator.reset())

async function complete(variables: Record<string, unknown>, headers: Record<string, string> = {}, prompt = 'guide'): Promise<Response> {
  return fetch(`${gateway.baseUrl}/prompts/${prompt}/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${gateway.workspaceKey}`, 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ variables }),
  })
}

describe('prompt completions through the pipeline', () => {
  it('input guardrails read the rendered messages: 446 before any provider call', async () => {
    const denied = await complete({ topic: 'my password hunter2' })
    expect(denied.status).toBe(446)
    expect(((await denied.json()) as { error: { code: string } }).error.code).toBe('guardrail_blocked')
    expect(simulator.requests).toHaveLength(0)
    expect((await complete({ topic: 'owls' })).status).toBe(200)
    expect(simulator.requests).toHaveLength(1)
  })

  it('the cache keys on the rendered request: the same variables hit, others miss', async () => {
    const first = await complete({ topic: 'cached owls' }, { 'x-gateway-config': 'cached' })
    expect(first.status).toBe(200)
    expect(first.headers.get('x-gateway-cache-status')).toBe('MISS')
    const again = await complete({ topic: 'cached owls' }, { 'x-gateway-config': 'cached' })
    expect(again.headers.get('x-gateway-cache-status')).toBe('HIT')
    // The same answer, with this request's guardrail verdicts (a cache hit once came back as {text, hook_results}).
    const [hit, miss] = [await again.json() as Record<string, unknown>, await first.json() as Record<string, unknown>]
    const { hook_results: hitVerdicts, ...hitAnswer } = hit
    const { hook_results: missVerdicts, ...missAnswer } = miss
    expect(hitAnswer).toEqual(missAnswer)
    expect(hitAnswer.object).toBe('chat.completion')
    expect([hitVerdicts, missVerdicts]).toEqual([expect.any(Object), expect.any(Object)])
    const other = await complete({ topic: 'cached bats' }, { 'x-gateway-config': 'cached' })
    expect(other.headers.get('x-gateway-cache-status')).toBe('MISS')
    expect(simulator.requests).toHaveLength(2)
  })

  // Break tried: dispatching raw templates on the chat branch fails this (a 400 on `messages`, no text_completion).
  it('a raw template is a text completion to every stage: the guardrail reads its prompt, the cache keys on it', async () => {
    const denied = await complete({ topic: 'my password hunter2' }, {}, 'raw')
    expect(denied.status).toBe(446)
    expect(simulator.requests).toHaveLength(0)
    const first = await complete({ topic: 'cached owls' }, { 'x-gateway-config': 'cached' }, 'raw')
    expect(first.status).toBe(200)
    expect(first.headers.get('x-gateway-cache-status')).toBe('MISS')
    expect(((await first.json()) as { object: string }).object).toBe('text_completion')
    expect(simulator.requests.at(-1)).toMatchObject({ path: '/v1/completions', body: { prompt: 'Q: cached owls\nA:' } })
    expect((await complete({ topic: 'cached owls' }, { 'x-gateway-config': 'cached' }, 'raw')).headers.get('x-gateway-cache-status')).toBe('HIT')
    expect(simulator.requests).toHaveLength(1)
  })

  it('a request rate limit counts prompt completions', async () => {
    gateway.update((snapshot) => {
      snapshot.limits = [{ id: 'two-per-minute', source: 'workspace', ownerId: WORKSPACE_ID, name: 'two per minute', kind: 'rate', type: 'requests', unit: 'rpm', value: 2, workspaceId: WORKSPACE_ID }]
    })
    expect((await complete({ topic: 'a' })).status).toBe(200)
    expect((await complete({ topic: 'b' })).status).toBe(200)
    const limited = await complete({ topic: 'c' })
    expect(limited.status).toBe(429)
    expect(simulator.requests).toHaveLength(2)
  })
})
