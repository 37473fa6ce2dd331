/**
 * Semantic caching end to end: two `gatehouse gateway` processes share one Redis; each embeds the
 * last user turn through the workspace's own OpenAI provider (the simulator's embeddings are a bag
 * of hashed words, so near-duplicate wordings are similar and different questions are not) and
 * keeps its own vector index, fed from Redis. Also: per-workspace isolation, fallback to exact
 * matching for requests semantic mode cannot answer (tools), DISABLED where no cache applies.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import OpenAI from 'openai'
import { Redis } from 'ioredis'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { generateApiKey, hashApiKey } from '@gatehouse/gateway/snapshot'
import { buildSnapshot, TEST_PEPPER } from '../helpers/gateway.ts'
import { startGatehouse, type GatehouseProcess } from '../helpers/processes.ts'
import { dropPrefix, redisSkipReason, testPrefix, TEST_REDIS_URL } from '../helpers/redis.ts'
import { startOpenAISimulator } from '../simulators/openai.ts'
import type { Simulator } from '../simulators/base.ts'

const skip = await redisSkipReason()
const prefix = testPrefix('semantic')

let openai: Simulator
let directory: string
let replicas: GatehouseProcess[] = []
let urls: string[] = []
const keys = { workspaceKey: generateApiKey('workspace'), adminKey: generateApiKey('admin') }
const otherWorkspaceKey = generateApiKey('workspace')

const SEMANTIC = { mode: 'semantic', max_age: 60, similarity_threshold: 0.95, embedding: { provider: '@openai-main', model: 'text-embedding-3-small' } }
const CONFIG = JSON.stringify({ provider: '@openai-main', cache: SEMANTIC })

beforeAll(async () => {
  if (skip !== null) return
  openai = await startOpenAISimulator({ chunks: 3 })
  const snapshot = buildSnapshot([{ slug: 'openai-main', kind: 'openai', baseUrl: openai.baseUrl, workspaceId: null }], keys)
  snapshot.workspaces.push({ id: 'ws-other', slug: 'other', name: 'Other', status: 'active' })
  snapshot.apiKeys.push({ id: 'key-other', hash: hashApiKey(otherWorkspaceKey, TEST_PEPPER), type: 'workspace', subtype: 'service', workspaceId: 'ws-other', scopes: [], status: 'active' })
  directory = await mkdtemp(join(tmpdir(), 'gatehouse-semantic-'))
  const file = join(directory, 'snapshot.json')
  await writeFile(file, JSON.stringify(snapshot))
  const env = { GATEHOUSE_SNAPSHOT_FILE: file, GATEHOUSE_KEY_PEPPER: TEST_PEPPER, GATEHOUSE_PORT: '0', GATEHOUSE_REDIS_URL: TEST_REDIS_URL, GATEHOUSE_REDIS_KEY_PREFIX: prefix }
  replicas = [startGatehouse(['gateway'], env), startGatehouse(['gateway'], env)]
  urls = (await Promise.all(replicas.map((replica) => replica.waitForLog((line) => line.msg === 'gateway is serving', 60_000)))).map((line) => String(line.url))
}, 120_000)

afterAll(async () => {
  await Promise.all(replicas.map((replica) => replica.stop()))
  await openai?.close()
  if (directory) await rm(directory, { recursive: true, force: true })
  if (skip === null) {
    const redis = new Redis(TEST_REDIS_URL)
    await dropPrefix(redis, prefix)
    redis.disconnect()
  }
})

beforeEach(() => openai?.reset())

function client(replica: number, headers: Record<string, string> = {}, apiKey = keys.workspaceKey): OpenAI {
  return new OpenAI({ apiKey, baseURL: `${urls[replica]}/v1`, maxRetries: 0, defaultHeaders: { 'x-gateway-config': CONFIG, ...headers } })
}

const chatCalls = (): number => openai.requests.filter((request) => request.path.endsWith('/chat/completions')).length
const embeddingCalls = (): number => openai.requests.filter((request) => request.path.endsWith('/embeddings')).length

let topic = 0
/** A question no earlier test asked: words of its own, so it is far from every other test's. */
function question(): string {
  topic++
  return `Please explain topic${topic} ${prefix.replace(/\W/g, '')} in plain words for beginners`
}

const ask = (replica: number, content: string, extra: Partial<OpenAI.ChatCompletionCreateParamsNonStreaming> = {}, apiKey = keys.workspaceKey) =>
  client(replica, {}, apiKey)
    .chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content }], ...extra })
    .withResponse()

const statusOf = (answer: { response: Response }): string | null => answer.response.headers.get('x-gateway-cache-status')

describe.skipIf(skip !== null)('semantic cache across replicas', () => {
  it('a near-duplicate wording is a SEMANTIC HIT on the other replica; the embedding went to the workspace provider', async () => {
    const text = question()
    const first = await ask(0, text)
    expect(statusOf(first)).toBe('SEMANTIC MISS')
    // Same words, other case, order and punctuation: similarity about 1, but not the same request.
    const reworded = `${text.toUpperCase().split(' ').reverse().join(' ')}?!`
    const second = await ask(1, reworded)
    expect(statusOf(second)).toBe('SEMANTIC HIT')
    expect(second.data).toEqual(first.data)
    expect(chatCalls()).toBe(1)
    expect(embeddingCalls()).toBe(2)
    const embedding = openai.requests.find((request) => request.path.endsWith('/embeddings'))!
    expect(embedding.body).toMatchObject({ model: 'text-embedding-3-small', input: text })
  })

  it('a different question below the threshold is a SEMANTIC MISS and goes upstream', async () => {
    const text = question()
    await ask(0, text)
    // Shares most words, one changed: the simulator's similarity is near 0.9, under 0.95.
    const near = await ask(1, text.replace('beginners', 'experts'))
    expect(statusOf(near)).toBe('SEMANTIC MISS')
    expect(chatCalls()).toBe(2)
  })

  it('the exact same request is a HIT without an embedding call', async () => {
    const text = question()
    await ask(0, text)
    const again = await ask(1, text)
    expect(statusOf(again)).toBe('HIT')
    expect(embeddingCalls()).toBe(1)
    expect(chatCalls()).toBe(1)
  })

  it('the system prompt and parameters are an exact filter', async () => {
    const text = question()
    await ask(0, text)
    const otherSystem = await client(1).chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'system', content: 'Be verbose.' }, { role: 'user', content: `${text}!` }] }).withResponse()
    expect(statusOf(otherSystem)).toBe('SEMANTIC MISS')
    const otherTemperature = await ask(1, `${text}!`, { temperature: 0.2 })
    expect(statusOf(otherTemperature)).toBe('SEMANTIC MISS')
    expect(chatCalls()).toBe(3)
  })

  it('never answers one workspace from another workspace entries', async () => {
    const text = question()
    await ask(0, text)
    const other = await ask(1, `${text}.`, {}, otherWorkspaceKey)
    expect(statusOf(other)).toBe('SEMANTIC MISS')
    expect(chatCalls()).toBe(2)
  })

  it('an entry stored after a replica loaded the workspace reaches it through the Redis log', async () => {
    // Both replicas have served this workspace already (earlier tests), so neither loads it again.
    const text = question()
    await ask(0, text)
    let status: string | null = null
    // Each try words the question a little differently: a try that ran before the entry arrived
    // stored its own answer, which the same wording would then hit exactly.
    for (let attempt = 0; attempt < 50 && status !== 'SEMANTIC HIT'; attempt++) {
      status = statusOf(await ask(1, `${text}${' .'.repeat(attempt + 1)}`))
      if (status !== 'SEMANTIC HIT') await new Promise((resolve) => setTimeout(resolve, 100))
    }
    expect(status).toBe('SEMANTIC HIT')
  })

  it('requests with tools fall back to exact matching (MISS, then HIT only for the same request)', async () => {
    const text = question()
    const tools: OpenAI.ChatCompletionTool[] = [{ type: 'function', function: { name: 'lookup', parameters: { type: 'object', properties: {} } } }]
    const first = await ask(0, text, { tools })
    expect(statusOf(first)).toBe('MISS')
    expect(statusOf(await ask(1, `${text}!`, { tools }))).toBe('MISS')
    expect(statusOf(await ask(1, text, { tools }))).toBe('HIT')
    expect(embeddingCalls()).toBe(0)
  })

  it('answers DISABLED when cache headers are sent where no cache applies', async () => {
    const plain = new OpenAI({ apiKey: keys.workspaceKey, baseURL: `${urls[0]}/v1`, maxRetries: 0, defaultHeaders: { 'x-gateway-provider': '@openai-main', 'x-gateway-cache-force-refresh': 'true' } })
    const answer = await plain.chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: question() }] }).withResponse()
    expect(statusOf(answer)).toBe('DISABLED')
    const quiet = new OpenAI({ apiKey: keys.workspaceKey, baseURL: `${urls[0]}/v1`, maxRetries: 0, defaultHeaders: { 'x-gateway-provider': '@openai-main' } })
    expect(statusOf(await quiet.chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: question() }] }).withResponse())).toBeNull()
  })
})
