/**
 * Cost budgets charged by what passthrough answers cost (#14 with #12's metering), end to end
 * through the real routes, with the counters in Redis and in process: a transcription (an upload:
 * its model is read as it streams, so it reserves the least and is charged at the end) and an
 * image generation (its JSON body says its worst case, which is reserved) spend the budget what
 * their usage records say they cost, and once it is spent every request is refused.
 */
import { randomUUID } from 'node:crypto'
import OpenAI, { toFile } from 'openai'
import { afterAll, describe, expect, it } from 'vitest'
import { limiterFromEnv, limitsStage, snapshotPricedCosts, type LimiterSetup } from '@gatehouse/gateway'
import { startTestGateway, type TestGateway } from '../helpers/gateway.ts'
import { ShippedRecords } from '../helpers/usage-records.ts'
import { wavClip } from '../simulators/audio-clip.ts'
import { startOpenAISimulator } from '../simulators/openai.ts'

const cleanups: Array<() => Promise<unknown>> = []
afterAll(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})

const NANO = 1e9
const BUDGET_USD = 0.06

async function setUp(env: NodeJS.ProcessEnv): Promise<{ client: OpenAI; setup: LimiterSetup; gateway: TestGateway; shipped: ShippedRecords; spent: () => Promise<number> }> {
  const simulator = await startOpenAISimulator()
  cleanups.push(() => simulator.close())
  const setup = limiterFromEnv({ ...env, GATEHOUSE_LIMITS_KEY_PREFIX: `test-${randomUUID().slice(0, 8)}:` })
  cleanups.push(() => setup.limiter.close())
  const shipped = new ShippedRecords()
  // Budgets are priced as the records are: the shipped table under the gateway's snapshot (known once it started).
  const started: { gateway?: TestGateway } = {}
  const costs = snapshotPricedCosts({ get current() { return started.gateway?.holder.current ?? null } })
  const gateway = started.gateway = await startTestGateway([{ slug: 'openai', kind: 'openai', baseUrl: simulator.baseUrl }], {
    usage: shipped.shipper,
    features: { limits: limitsStage({ limiter: setup.limiter, keyPrefix: setup.keyPrefix, costs }) },
  })
  cleanups.push(() => gateway.close())
  gateway.update((snapshot) => {
    snapshot.limits = [{ id: 'media', source: 'policy', ownerId: 'media', name: 'media', kind: 'usage', type: 'cost', creditLimit: BUDGET_USD, conditions: [{ key: 'api_key', values: ['key-ws'] }] }]
  })
  const client = new OpenAI({ apiKey: gateway.workspaceKey, baseURL: gateway.baseUrl, maxRetries: 0, defaultHeaders: { 'x-gateway-provider': '@openai' } })
  const key = `${setup.keyPrefix}{org-test}:b:media:s0:-`
  return { client, setup, gateway, shipped, spent: async () => (await setup.limiter.usage([key]))[0]! }
}

describe.each([
  { store: 'Redis', env: { GATEHOUSE_REDIS_URL: 'redis://127.0.0.1:6379' } },
  { store: 'in process', env: {} },
])('a cost budget charged by audio and images ($store)', ({ env }) => {
  it('a transcription and an image generation spend what they cost; a spent budget refuses', async () => {
    const { client, shipped, spent } = await setUp(env)
    const transcribe = async (seconds: number) => client.audio.transcriptions.create({ model: 'whisper-1', file: await toFile(wavClip(seconds), 'clip.wav', { type: 'audio/wav' }) })

    // whisper-1 bills 30 s at $0.0001 a second.
    await transcribe(30)
    const [transcription] = await shipped.wait()
    expect(transcription).toMatchObject({ modelServed: 'whisper-1', audioSeconds: 30 })
    expect(transcription!.costUsd).toBeCloseTo(0.003, 12)
    expect(await spent()).toBe(Math.round(0.003 * NANO))

    // dall-e-3, standard square: $0.04, reserved before the call and charged when the answer ended.
    await shipped.clear()
    await client.images.generate({ model: 'dall-e-3', prompt: 'a gate house' })
    expect((await shipped.wait())[0]!.costUsd).toBeCloseTo(0.04, 12)
    expect(await spent()).toBe(Math.round(0.043 * NANO))

    // $0.017 left: an hd image's worst case ($0.08) does not fit, and the provider never sees it.
    await expect(client.images.generate({ model: 'dall-e-3', prompt: 'in detail', quality: 'hd' })).rejects.toMatchObject({ status: 412, code: 'budget_exhausted' })

    // An upload's cost is known only at its end: 200 s ($0.02) goes past what was left.
    await transcribe(200)
    expect(await spent()).toBe(Math.round(0.063 * NANO))

    // Spent: every request under the budget is refused, a transcription of any length too.
    await expect(transcribe(1)).rejects.toMatchObject({ status: 412, code: 'budget_exhausted' })
    await expect(client.images.generate({ model: 'dall-e-2', prompt: 'small', size: '256x256' })).rejects.toMatchObject({ status: 412 })
    expect(await spent()).toBe(Math.round(0.063 * NANO))
  })
})
