/**
 * A restarted sidecar with its control plane down: `gatehouse sidecar` is started on a cache
 * directory as a sidecar leaves it (slice, identity and shared-counter settings, each sealed with
 * the pod-local key) and a control-plane URL nobody listens on. It serves the official OpenAI SDK
 * from the cached slice at once, counts the workspace's rate limit (2 per minute) in the shared
 * Redis the cached settings name, and exports its spans (OTEL_* as the webhook writes them) to a
 * real OTLP receiver on loopback.
 */
import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Redis } from 'ioredis'
import OpenAI from 'openai'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startOtlpReceiver, type OtlpReceiver } from '../helpers/otlp-receiver.ts'
import { freePort, startGatehouse, type GatehouseProcess } from '../helpers/processes.ts'
import { dropPrefix, redisSkipReason, testPrefix, TEST_REDIS_URL } from '../helpers/redis.ts'
import { prepareSidecarCache } from '../helpers/sidecar-cache.ts'
import { startOpenAISimulator } from '../simulators/openai.ts'
import type { Simulator } from '../simulators/index.ts'

const skipReason = await redisSkipReason()
const prefix = `${testPrefix('sidecar-cached')}:`
const limit = { id: 'rpm2', source: 'policy', ownerId: 'rpm2', name: 'workspace rpm', kind: 'rate', type: 'requests', unit: 'rpm', value: 2, conditions: [{ key: 'workspace_id', values: ['ws-a'] }] }

let directory: string
let simulator: Simulator
let sidecar: GatehouseProcess
let redis: Redis
let receiver: OtlpReceiver

describe.skipIf(skipReason !== null)('a sidecar restarted with the control plane down', () => {
  let url: string

  beforeAll(async () => {
    directory = await mkdtemp(join(tmpdir(), 'gatehouse-sidecar-cached-'))
    simulator = await startOpenAISimulator({ chunks: 2, apiKeys: ['sk-cached'] })
    redis = new Redis(TEST_REDIS_URL)
    receiver = await startOtlpReceiver()
    await prepareSidecarCache(directory, {
      upstream: simulator.baseUrl,
      upstreamKey: 'sk-cached',
      limits: [limit],
      settings: { counters: { GATEHOUSE_REDIS_URL: TEST_REDIS_URL, GATEHOUSE_LIMITS_KEY_PREFIX: prefix } },
    })
    const port = await freePort()
    sidecar = startGatehouse(['sidecar'], {
      GATEHOUSE_CONTROL_PLANE_URL: `http://127.0.0.1:${await freePort()}`,
      GATEHOUSE_SIDECAR_DEPLOYMENT: 'ai-config/ai',
      GATEHOUSE_SIDECAR_TOKEN_FILE: join(directory, 'absent-token'),
      GATEHOUSE_SNAPSHOT_CACHE: directory,
      GATEHOUSE_PORT: String(port),
      GATEHOUSE_HEALTH_HOST: '127.0.0.1',
      GATEHOUSE_HEALTH_PORT: '0',
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      OTEL_BSP_SCHEDULE_DELAY: '50',
    })
    url = (await sidecar.waitForLog((line) => line.msg === 'sidecar is serving', 60_000)).url!
  }, 90_000)

  afterAll(async () => {
    await sidecar?.stop()
    if (redis) {
      await dropPrefix(redis, prefix)
      redis.disconnect()
    }
    await simulator?.close()
    await receiver?.close()
    if (directory) await rm(directory, { recursive: true, force: true })
  })

  it('serves the OpenAI SDK from the cached slice, counting in the Redis of the cached settings', async () => {
    // Served before the control plane was ever reached (it never is here).
    expect(sidecar.lines.some((line) => line.msg === 'serving the cached snapshot')).toBe(true)
    expect(sidecar.lines.some((line) => line.msg === 'rate limits and budgets are counted in the shared store' && line.fromCache === true)).toBe(true)
    const client = new OpenAI({ baseURL: `${url}/v1`, apiKey: 'gatehouse-sidecar-no-key-needed', maxRetries: 0 })
    const answer = await client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'from the cache' }] })
    expect(answer.choices[0]!.message.content).toBeTruthy()
    expect(simulator.requests.at(-1)!.headers.authorization).toBe('Bearer sk-cached')

    // The counter is in the shared Redis, under the settings' prefix.
    // Break tried: with the cached settings ignored (in-process counters) no key exists and this fails.
    const keys = await redis.keys(`${prefix}*`)
    expect(keys.length).toBeGreaterThan(0)
    await client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'second' }] })
    const refused = await client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'third' }] }).then(() => null, (error: unknown) => error)
    expect(refused).toBeInstanceOf(OpenAI.RateLimitError)
  }, 60_000)

  it('traces: the chat above arrives at the OTLP receiver as spans of service gatehouse-sidecar', async () => {
    // Break tried: without startTracing in sidecar-main.ts no span arrives and this times out.
    const spans = await receiver.waitFor((received) => received.some((span) => span.resource['service.name'] === 'gatehouse-sidecar'), 20_000)
    expect(spans.filter((span) => span.resource['service.name'] === 'gatehouse-sidecar').length).toBeGreaterThan(0)
  }, 30_000)

  it('keeps the Redis credential sealed in the cache directory', async () => {
    for (const name of await readdir(directory)) {
      expect(await readFile(join(directory, name), 'utf8')).not.toContain(TEST_REDIS_URL)
    }
  })
})
