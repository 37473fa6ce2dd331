/**
 * Response caching end to end: two gateway processes share one Redis, so an answer stored by one
 * replica is served by the other. Entries are kept per workspace and per namespace; a forced
 * refresh goes upstream; entries expire; streams are replayed event for event and parsed by the
 * official SDKs; errors and cut streams are never stored.
 */
import { writeFile, mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import Anthropic from '@anthropic-ai/sdk'
import OpenAI from 'openai'
import { Redis } from 'ioredis'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { generateApiKey, hashApiKey } from '@gatehouse/gateway/snapshot'
import { buildSnapshot, TEST_PEPPER } from '../helpers/gateway.ts'
import { startGatehouse, type GatehouseProcess } from '../helpers/processes.ts'
import { dropPrefix, redisSkipReason, testPrefix, TEST_REDIS_URL } from '../helpers/redis.ts'
import { startAnthropicSimulator } from '../simulators/anthropic.ts'
import { startOpenAISimulator } from '../simulators/openai.ts'
import type { Simulator } from '../simulators/base.ts'

const skip = await redisSkipReason()
const prefix = testPrefix('gateway')

let openai: Simulator
let anthropic: Simulator
let directory: string
let replicas: GatehouseProcess[] = []
let urls: string[] = []
const keys = { workspaceKey: generateApiKey('workspace'), adminKey: generateApiKey('admin') }
const otherWorkspaceKey = generateApiKey('workspace')

const CONFIG = JSON.stringify({ provider: '@openai-main', cache: { mode: 'simple', max_age: 60 } })
const SHORT_CONFIG = JSON.stringify({ provider: '@openai-main', cache: { mode: 'simple', max_age: 1 } })
/** Falls back from an uncached target to one that caches its answers. */
const TARGET_CONFIG = JSON.stringify({
  strategy: { mode: 'fallback' },
  targets: [
    { provider: '@openai-main', override_params: { model: 'gpt-4o-mini' } },
    { provider: '@openai-main', override_params: { model: 'gpt-4o' }, cache: { mode: 'simple', max_age: 60 } },
  ],
})

beforeAll(async () => {
  if (skip !== null) return
  openai = await startOpenAISimulator({ chunks: 4 })
  anthropic = await startAnthropicSimulator({ chunks: 4 })
  const snapshot = buildSnapshot(
    [
      { slug: 'openai-main', kind: 'openai', baseUrl: openai.baseUrl, workspaceId: null },
      { slug: 'claude', kind: 'anthropic', baseUrl: `${anthropic.url}/v1`, workspaceId: null },
    ],
    keys,
  )
  snapshot.workspaces.push({ id: 'ws-other', slug: 'other', name: 'Other', status: 'active' })
  snapshot.apiKeys.push({ id: 'key-other', hash: hashApiKey(otherWorkspaceKey, TEST_PEPPER), type: 'workspace', subtype: 'service', workspaceId: 'ws-other', scopes: [], status: 'active' })
  snapshot.configs = [{ id: 'cfg-claude', slug: 'claude-cached', workspaceId: null, config: { provider: '@claude', cache: { mode: 'simple' } } }]
  directory = await mkdtemp(join(tmpdir(), 'gatehouse-cache-'))
  const file = join(directory, 'snapshot.json')
  await writeFile(file, JSON.stringify(snapshot))
  const env = { GATEHOUSE_SNAPSHOT_FILE: file, GATEHOUSE_KEY_PEPPER: TEST_PEPPER, GATEHOUSE_PORT: '0', GATEHOUSE_REDIS_URL: TEST_REDIS_URL, GATEHOUSE_REDIS_KEY_PREFIX: prefix }
  replicas = [startGatehouse(['gateway'], env), startGatehouse(['gateway'], env)]
  urls = (await Promise.all(replicas.map((replica) => replica.waitForLog((line) => line.msg === 'gateway is serving', 60_000)))).map((line) => String(line.url))
}, 120_000)

afterAll(async () => {
  await Promise.all(replicas.map((replica) => replica.stop()))
  await openai?.close()
  await anthropic?.close()
  if (directory) await rm(directory, { recursive: true, force: true })
  if (skip === null) {
    const redis = new Redis(TEST_REDIS_URL)
    await dropPrefix(redis, prefix)
    redis.disconnect()
  }
})

beforeEach(() => {
  openai?.reset()
  anthropic?.reset()
})

function client(replica: number, headers: Record<string, string> = {}, apiKey = keys.workspaceKey): OpenAI {
  return new OpenAI({ apiKey, baseURL: `${urls[replica]}/v1`, maxRetries: 0, defaultHeaders: { 'x-gateway-config': CONFIG, ...headers } })
}

let question = 0
/** A request no earlier test stored. */
function fresh(): OpenAI.ChatCompletionCreateParamsNonStreaming {
  question++
  return { model: 'gpt-4o', messages: [{ role: 'user', content: `question ${question} ${prefix}` }] }
}

describe.skipIf(skip !== null)('response cache across replicas', () => {
  it('an answer stored by one replica is a HIT on the other, with no upstream call', async () => {
    const body = fresh()
    const first = await client(0).chat.completions.create(body).withResponse()
    expect(first.response.headers.get('x-gateway-cache-status')).toBe('MISS')
    const second = await client(1).chat.completions.create(body).withResponse()
    expect(second.response.headers.get('x-gateway-cache-status')).toBe('HIT')
    expect(second.data).toEqual(first.data)
    expect(openai.requests).toHaveLength(1)
  })

  it('ignores who asked (user) but not what was asked', async () => {
    const body = fresh()
    await client(0).chat.completions.create({ ...body, user: 'alice' })
    const again = await client(1).chat.completions.create({ ...body, user: 'bob' }).withResponse()
    expect(again.response.headers.get('x-gateway-cache-status')).toBe('HIT')
    const other = await client(1).chat.completions.create({ ...body, temperature: 0.3 }).withResponse()
    expect(other.response.headers.get('x-gateway-cache-status')).toBe('MISS')
    expect(openai.requests).toHaveLength(2)
  })

  it('never serves one workspace the entry of another, nor one namespace that of another', async () => {
    const body = fresh()
    await client(0).chat.completions.create(body)
    const otherWorkspace = await client(1, {}, otherWorkspaceKey).chat.completions.create(body).withResponse()
    expect(otherWorkspace.response.headers.get('x-gateway-cache-status')).toBe('MISS')
    const otherNamespace = await client(1, { 'x-gateway-cache-namespace': 'tenant-7' }).chat.completions.create(body).withResponse()
    expect(otherNamespace.response.headers.get('x-gateway-cache-status')).toBe('MISS')
    expect(openai.requests).toHaveLength(3)
  })

  it('a forced refresh goes upstream and stores the new answer', async () => {
    const body = fresh()
    await client(0).chat.completions.create(body)
    const refreshed = await client(1, { 'x-gateway-cache-force-refresh': 'true' }).chat.completions.create(body).withResponse()
    expect(refreshed.response.headers.get('x-gateway-cache-status')).toBe('REFRESH')
    expect(openai.requests).toHaveLength(2)
    const hit = await client(0).chat.completions.create(body).withResponse()
    expect(hit.response.headers.get('x-gateway-cache-status')).toBe('HIT')
    expect(hit.data.id).toBe(refreshed.data.id)
  })

  it('an entry expires after max_age', async () => {
    const body = fresh()
    const short = (replica: number) => client(replica, { 'x-gateway-config': SHORT_CONFIG })
    await short(0).chat.completions.create(body)
    expect((await short(1).chat.completions.create(body).withResponse()).response.headers.get('x-gateway-cache-status')).toBe('HIT')
    await new Promise((resolve) => setTimeout(resolve, 1_200))
    expect((await short(1).chat.completions.create(body).withResponse()).response.headers.get('x-gateway-cache-status')).toBe('MISS')
    expect(openai.requests).toHaveLength(2)
  })

  it('replays a stream event for event, parsed by the OpenAI SDK', async () => {
    const body = { ...fresh(), stream: true as const, stream_options: { include_usage: true } }
    const collect = async (replica: number): Promise<{ chunks: OpenAI.ChatCompletionChunk[]; status: string | null }> => {
      const { data, response } = await client(replica).chat.completions.create(body).withResponse()
      const chunks: OpenAI.ChatCompletionChunk[] = []
      for await (const chunk of data) chunks.push(chunk)
      return { chunks, status: response.headers.get('x-gateway-cache-status') }
    }
    const first = await collect(0)
    const replayed = await collect(1)
    expect(first.status).toBe('MISS')
    expect(replayed.status).toBe('HIT')
    expect(replayed.chunks).toEqual(first.chunks)
    expect(replayed.chunks.at(-1)?.usage).toBeTruthy()
    expect(openai.requests).toHaveLength(1)
  })

  it('replays an Anthropic stream through the Anthropic SDK', async () => {
    const sdk = new Anthropic({ apiKey: keys.workspaceKey, baseURL: urls[0], maxRetries: 0, defaultHeaders: { 'x-gateway-config': 'claude-cached' } })
    const params = { model: 'claude-sonnet-4-5', max_tokens: 64, messages: [{ role: 'user' as const, content: `stream me ${prefix}` }] }
    const first = await sdk.messages.stream(params).finalMessage()
    const other = new Anthropic({ apiKey: keys.workspaceKey, baseURL: urls[1], maxRetries: 0, defaultHeaders: { 'x-gateway-config': 'claude-cached' } })
    const replayed = await other.messages.stream(params).finalMessage()
    expect(replayed).toEqual(first)
    expect(anthropic.requests).toHaveLength(1)
  })

  it('never stores an error or a stream cut half-way', async () => {
    const body = fresh()
    openai.script({ status: 500 })
    await expect(client(0).chat.completions.create(body)).rejects.toMatchObject({ status: 502 })
    const after = await client(1).chat.completions.create(body).withResponse()
    expect(after.response.headers.get('x-gateway-cache-status')).toBe('MISS')

    const streamed = { ...fresh(), stream: true as const }
    // Frames sent apart, so the error comes after chunks already reached the client.
    openai.options.tokenIntervalMs = 15
    openai.script({ errorAfterChunks: 3, status: 500 })
    const received: unknown[] = []
    try {
      await expect(
        (async () => {
          for await (const chunk of await client(0).chat.completions.create(streamed)) received.push(chunk)
        })(),
      ).rejects.toThrow()
    } finally {
      openai.options.tokenIntervalMs = 0
    }
    expect(received.length).toBeGreaterThan(0)
    const retried = await client(1).chat.completions.create(streamed).withResponse()
    expect(retried.response.headers.get('x-gateway-cache-status')).toBe('MISS')
    for await (const _chunk of retried.data) void _chunk
  })

  it('a cache on a target serves that target\'s answers, on every replica; DISABLED when an uncached target answered', async () => {
    const body = fresh()
    const targeted = (replica: number) => client(replica, { 'x-gateway-config': TARGET_CONFIG })
    const plain = await targeted(0).chat.completions.create(body).withResponse()
    expect(plain.response.headers.get('x-gateway-cache-status')).toBe('DISABLED')
    expect(plain.response.headers.get('x-gateway-target-path')).toBe('config.targets[0]')

    // The first target fails: the second answers and stores; next time it answers from the cache.
    const firstFails = { status: 500, match: (request: { body: unknown }) => (request.body as { model?: string }).model === 'gpt-4o-mini' }
    openai.script(firstFails)
    const stored = await targeted(1).chat.completions.create(body).withResponse()
    expect(stored.response.headers.get('x-gateway-cache-status')).toBe('MISS')
    expect(stored.response.headers.get('x-gateway-target-path')).toBe('config.targets[1]')
    openai.script(firstFails)
    const hit = await targeted(0).chat.completions.create(body).withResponse()
    expect(hit.response.headers.get('x-gateway-cache-status')).toBe('HIT')
    expect(hit.response.headers.get('x-gateway-target-path')).toBe('config.targets[1]')
    expect(hit.data).toEqual(stored.data)
    // gpt-4o-mini three times (one answer, two failures), gpt-4o once.
    expect(openai.requests.map((request) => (request.body as { model: string }).model)).toEqual(['gpt-4o-mini', 'gpt-4o-mini', 'gpt-4o', 'gpt-4o-mini'])
  })

  it('answers DISABLED to cache headers where no cache applies', async () => {
    const uncached = new OpenAI({ apiKey: keys.workspaceKey, baseURL: `${urls[0]}/v1`, maxRetries: 0, defaultHeaders: { 'x-gateway-provider': '@openai-main', 'x-gateway-cache-namespace': 'n1' } })
    const answer = await uncached.chat.completions.create(fresh()).withResponse()
    expect(answer.response.headers.get('x-gateway-cache-status')).toBe('DISABLED')
  })
})
