/**
 * What the response cache saves, end to end: a gateway with a caching config ships its records
 * over HTTP to a real control plane (PGlite, then PostgreSQL); a first request misses and costs C,
 * the identical second one hits, costs 0 and carries C as `cache_saved_cost`, for a JSON answer
 * and for a stream. The control plane's logs show it per request, and analytics (the cache
 * hit-rate graph's savings, the hit rate of the groups and the cache summary) count it.
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import OpenAI from 'openai'
import { pino } from 'pino'
import { afterAll, describe, expect, it } from 'vitest'
import { startUsageShipping } from '@gatehouse/gateway'
import { costOf, tablePrice } from '../../gateway/src/pricing/index.ts'
import { httpUsageTransport } from '../../gateway/src/usage/http-transport.ts'
import { serveControlPlane } from '../../operator/src/cli/control-plane.ts'
import { createTestDatabase } from '../../operator/src/store/testing.ts'
import { startTestGateway } from '../helpers/gateway.ts'
import { startOpenAISimulator } from '../simulators/openai.ts'

const TOKEN = 'gateway-token-for-cache-savings-tests'
const silent = pino({ level: 'silent' })
const directories: string[] = []

afterAll(async () => {
  for (const dir of directories) await rm(dir, { recursive: true, force: true })
})

const backends = [
  { name: 'pglite', database: async () => ({ env: {}, drop: async () => {} }) },
  { name: 'postgres', database: async () => { const db = await createTestDatabase(); return { env: { GATEHOUSE_DATABASE_URL: db.url }, drop: db.drop } } },
]

interface LogView {
  id: string
  cache_status: string | null
  cost: number | null
  cache_saved_cost: number | null
  stream: boolean
  usage: { input_tokens: number; output_tokens: number }
}

describe.each(backends)('cache savings through the control plane on $name', (backend) => {
  it('a miss records its cost, the hit after it costs nothing and saved that much; analytics count it', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'gatehouse-cache-savings-'))
    directories.push(dataDir)
    const database = await backend.database()
    const env = { GATEHOUSE_GATEWAY_TOKEN: TOKEN, GATEHOUSE_KEY_PEPPER: 'pepper-for-cache-savings-tests-0123456789', ...database.env }
    const controlPlane = await serveControlPlane({ dataDir, resourceFiles: [], env, logger: silent, host: '127.0.0.1', port: 0 })
    const simulator = await startOpenAISimulator({ chunks: 6 })
    const delivery = httpUsageTransport({ controlPlaneUrl: controlPlane.url, token: TOKEN, timeoutMs: 5000 })
    const shipper = startUsageShipping({ transport: delivery.transport, flushIntervalMs: 60_000 })
    const gateway = await startTestGateway([{ slug: 'openai', kind: 'openai', baseUrl: simulator.baseUrl }], { usage: shipper })
    try {
      const organizationId = (await controlPlane.store.organizations.first())!.id
      gateway.update((snapshot) => {
        snapshot.organizationId = organizationId
      })
      const adminKey = controlPlane.generatedAdminKey!
      const config = JSON.stringify({ provider: '@openai', cache: { mode: 'simple', max_age: 600 } })
      const client = new OpenAI({ apiKey: gateway.workspaceKey, baseURL: gateway.baseUrl, maxRetries: 0, defaultHeaders: { 'x-gateway-config': config } })
      const from = new Date(Date.now() - 60_000).toISOString()

      // JSON: a miss, then a hit.
      const body = { model: 'gpt-4o', messages: [{ role: 'user' as const, content: 'what does a cache save?' }] }
      const miss = await client.chat.completions.create(body).withResponse()
      const hit = await client.chat.completions.create(body).withResponse()
      expect([miss.response.headers.get('x-gateway-cache-status'), hit.response.headers.get('x-gateway-cache-status')]).toEqual(['MISS', 'HIT'])
      expect(hit.data).toEqual(miss.data)
      const jsonCost = costOf({ inputTokens: miss.data.usage!.prompt_tokens, outputTokens: miss.data.usage!.completion_tokens }, tablePrice('openai', 'gpt-4o')!)

      // A stream: its miss is stored once it ended cleanly, then replayed.
      const streamed = { model: 'gpt-4o-mini', messages: [{ role: 'user' as const, content: 'and for a stream?' }], stream: true as const, stream_options: { include_usage: true } }
      let streamUsage: OpenAI.CompletionUsage | undefined
      for await (const chunk of await client.chat.completions.create(streamed)) if (chunk.usage) streamUsage = chunk.usage
      const replay = await client.chat.completions.create(streamed).withResponse()
      expect(replay.response.headers.get('x-gateway-cache-status')).toBe('HIT')
      for await (const chunk of replay.data) void chunk
      const streamCost = costOf({ inputTokens: streamUsage!.prompt_tokens, outputTokens: streamUsage!.completion_tokens }, tablePrice('openai', 'gpt-4o-mini')!)
      expect(simulator.requests).toHaveLength(2)

      await shipper.flush()
      const to = new Date(Date.now() + 60_000).toISOString()
      const range = `time_of_generation_min=${encodeURIComponent(from)}&time_of_generation_max=${encodeURIComponent(to)}`
      const admin = async <T>(path: string): Promise<T> => {
        const response = await fetch(`${controlPlane.url}${path}`, { headers: { 'x-gateway-api-key': adminKey } })
        expect(response.status, await response.clone().text()).toBe(200)
        return (await response.json()) as T
      }

      const logs = (await admin<{ data: LogView[] }>(`/v1/logs?${range}&limit=50`)).data.reverse()
      expect(logs.map((log) => [log.cache_status, log.stream])).toEqual([['MISS', false], ['HIT', false], ['MISS', true], ['HIT', true]])
      const [jsonMiss, jsonHit, streamMiss, streamHit] = logs
      expect(jsonMiss!.cost).toBeCloseTo(jsonCost, 12)
      expect(jsonMiss!.cache_saved_cost).toBeNull()
      expect(jsonHit).toMatchObject({ cost: 0 })
      expect(jsonHit!.cache_saved_cost).toBeCloseTo(jsonCost, 12)
      expect(streamMiss!.cost).toBeCloseTo(streamCost, 12)
      expect(streamHit).toMatchObject({ cost: 0 })
      expect(streamHit!.cache_saved_cost).toBeCloseTo(streamCost, 12)
      // The hit still reports the answer's tokens: what it served, not what it spent.
      expect(jsonHit!.usage).toMatchObject({ input_tokens: jsonMiss!.usage.input_tokens, output_tokens: jsonMiss!.usage.output_tokens })

      const graph = await admin<{ summary: { total: number; rate: number }; data_points: Array<{ simple_hits: number; cumulative_simple_cache_savings: number; cumulative_semantic_cache_savings: number }> }>(
        `/v1/analytics/graphs/cache/hit-rate?${range}`,
      )
      expect(graph.summary).toEqual({ total: 2, rate: 50 })
      expect(graph.data_points.reduce((sum, point) => sum + point.simple_hits, 0)).toBe(2)
      expect(graph.data_points.at(-1)!.cumulative_simple_cache_savings).toBeCloseTo(jsonCost + streamCost, 12)
      expect(graph.data_points.at(-1)!.cumulative_semantic_cache_savings).toBe(0)

      // Spent is the misses alone; the hit rate per model is one in two.
      const groups = await admin<{ data: Array<{ model: string; cost: number; cache_hit_rate: number }> }>(`/v1/analytics/groups/model?${range}&columns=cost,cache_hit_rate`)
      const byModel = new Map(groups.data.map((group) => [group.model, group]))
      expect(byModel.get('gpt-4o')).toMatchObject({ cache_hit_rate: 0.5 })
      expect(byModel.get('gpt-4o')!.cost).toBeCloseTo(jsonCost, 12)
      expect(byModel.get('gpt-4o-mini')!.cost).toBeCloseTo(streamCost, 12)
      expect((await admin<{ summary: { hits: number; total_requests: number } }>(`/v1/analytics/summary/cache?${range}`)).summary).toMatchObject({ hits: 2, total_requests: 4 })
    } finally {
      await gateway.close()
      await shipper.close()
      await delivery.close()
      await simulator.close()
      await controlPlane.close()
      await database.drop()
    }
  }, 300_000)
})
