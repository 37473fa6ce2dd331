/**
 * Caching in one gateway without Redis (embedded mode: entries and the semantic index in process),
 * through the official OpenAI SDK against the simulator: semantic hits and misses with real
 * embedding calls, and a target's cache that never stores an answer an output guardrail denied.
 */
import OpenAI from 'openai'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import type { SnapshotGuardrail } from '@gatehouse/gateway/snapshot'
import { startTestGateway, WORKSPACE_ID, type TestGateway } from '../helpers/gateway.ts'
import { startOpenAISimulator } from '../simulators/openai.ts'
import { accountStage } from '../../gateway/src/pipeline/stages/account.ts'
import type { UsageDraft } from '../../gateway/src/usage/draft.ts'
import type { Simulator } from '../simulators/base.ts'

let simulator: Simulator
let gateway: TestGateway
const records: UsageDraft[] = []

const SEMANTIC = { mode: 'semantic', similarity_threshold: 0.9, embedding: { provider: '@sim', model: 'text-embedding-3-small' } }
/** Denies any answer of more than one word, after the provider answered. */
const oneWord: SnapshotGuardrail = {
  id: 'one-word', slug: 'one-word', name: 'one-word', workspaceId: null, version: 1, hooks: ['afterRequestHook'], holdBack: { mode: 'none', windowChars: 256 },
  checks: [{ id: 'default.wordCount', parameters: { maxWords: 1 }, isEnabled: true }], actions: { deny: true },
}

beforeAll(async () => {
  simulator = await startOpenAISimulator({ chunks: 3 })
  gateway = await startTestGateway([{ slug: 'sim', kind: 'openai', baseUrl: simulator.baseUrl }], { features: { account: accountStage({ sink: { offer: (draft) => records.push(draft) } }) } })
  gateway.update((snapshot) => {
    snapshot.guardrails = [oneWord]
    snapshot.configs = [
      { id: 'cfg-semantic', slug: 'semantic', workspaceId: WORKSPACE_ID, version: 1, config: { provider: '@sim', cache: SEMANTIC } },
      {
        id: 'cfg-guarded-target', slug: 'guarded-target', workspaceId: WORKSPACE_ID, version: 1,
        config: { strategy: { mode: 'fallback' }, targets: [{ provider: '@sim', cache: { mode: 'simple' }, output_guardrails: ['one-word'] }] },
      },
    ]
  })
})

afterAll(async () => {
  await gateway?.close()
  await simulator?.close()
})

beforeEach(() => {
  simulator.reset()
  records.length = 0
})

const client = (config: string) => new OpenAI({ apiKey: gateway.workspaceKey, baseURL: gateway.baseUrl, maxRetries: 0, defaultHeaders: { 'x-gateway-config': config } })
const ask = (config: string, content: string) => client(config).chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content }] }).withResponse()
const chatCalls = (): number => simulator.requests.filter((request) => request.path.endsWith('/chat/completions')).length

describe('in-process cache (embedded mode)', () => {
  it('semantic mode: a reworded question is a SEMANTIC HIT, a different one a SEMANTIC MISS', async () => {
    const first = await ask('semantic', 'How many legs does a spider have')
    expect(first.response.headers.get('x-gateway-cache-status')).toBe('SEMANTIC MISS')
    const reworded = await ask('semantic', 'how many legs does a SPIDER have?')
    expect(reworded.response.headers.get('x-gateway-cache-status')).toBe('SEMANTIC HIT')
    expect(reworded.data).toEqual(first.data)
    const other = await ask('semantic', 'How many eyes does a cat have')
    expect(other.response.headers.get('x-gateway-cache-status')).toBe('SEMANTIC MISS')
    expect(chatCalls()).toBe(2)

    // The records: the hit is free and says how similar it was; each names its embedding call.
    await expect.poll(() => records.length).toBe(3)
    const [miss, hit] = records
    expect(miss).toMatchObject({ cacheStatus: 'SEMANTIC MISS', annotations: { cacheEmbedding: { provider: 'sim', model: 'text-embedding-3-small' } } })
    expect(miss!.costUsd).toBeGreaterThan(0)
    expect(hit).toMatchObject({ cacheStatus: 'SEMANTIC HIT', costUsd: 0, annotations: { cacheSimilarity: expect.any(Number) } })
    expect((hit!.annotations as { cacheSimilarity: number }).cacheSimilarity).toBeGreaterThanOrEqual(0.9)
    expect((hit!.annotations as { cacheEmbedding: { inputTokens: number } }).cacheEmbedding.inputTokens).toBeGreaterThan(0)
  })

  it('a target cache never stores an answer its output guardrail denied', async () => {
    const denied = await ask('guarded-target', 'tell me a story').then(
      () => null,
      (error: unknown) => error as { status: number; headers: Headers },
    )
    expect(denied?.status).toBe(446)
    const again = await ask('guarded-target', 'tell me a story').then(
      () => null,
      (error: unknown) => error as { status: number; headers: Headers },
    )
    expect(again?.status).toBe(446)
    expect(again?.headers.get('x-gateway-cache-status')).toBe('MISS')
    expect(chatCalls()).toBe(2)
  })
})
