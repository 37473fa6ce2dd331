/**
 * One usage record per request through the real routes, with the official SDKs as clients and the
 * provider simulators upstream: tokens are the provider's (or counted and marked estimated), cost
 * is the shipped table's, and fallbacks, client aborts and upstream errors are recorded as such.
 * Records are taken from the shipper's serialised batches, so they passed the contract schema.
 */
import Anthropic from '@anthropic-ai/sdk'
import OpenAI from 'openai'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import type { UsageRecord } from '@gatehouse/gateway/snapshot'
import { costOf, tablePrice } from '../../gateway/src/pricing/index.ts'
import { startTestGateway, type TestGateway } from '../helpers/gateway.ts'
import { ShippedRecords } from '../helpers/usage-records.ts'
import { startAnthropicSimulator } from '../simulators/anthropic.ts'
import { startOpenAISimulator } from '../simulators/openai.ts'
import type { Simulator } from '../simulators/index.ts'
import { loadTokenizer } from '../../gateway/src/usage/estimate.ts'

let primary: Simulator
let secondary: Simulator
let claude: Simulator
let gateway: TestGateway
const shipped = new ShippedRecords()
let client: OpenAI
let anthropic: Anthropic

beforeAll(async () => {
  await loadTokenizer()
  ;[primary, secondary, claude] = await Promise.all([startOpenAISimulator({ chunks: 4 }), startOpenAISimulator({ chunks: 4 }), startAnthropicSimulator({ chunks: 4 })])
  gateway = await startTestGateway([
    { slug: 'primary', kind: 'openai', baseUrl: primary.baseUrl },
    { slug: 'secondary', kind: 'openai', baseUrl: secondary.baseUrl },
    { slug: 'claude', kind: 'anthropic', baseUrl: `${claude.url}/v1` },
  ], { usage: shipped.shipper })
  client = new OpenAI({ apiKey: gateway.workspaceKey, baseURL: gateway.baseUrl, maxRetries: 0, defaultHeaders: { 'x-gateway-provider': '@primary' } })
  anthropic = new Anthropic({ apiKey: gateway.workspaceKey, baseURL: gateway.url, maxRetries: 0, defaultHeaders: { 'x-gateway-provider': '@claude' } })
})
afterAll(async () => {
  await gateway?.close()
  await Promise.all([primary?.close(), secondary?.close(), claude?.close()])
})
beforeEach(async () => {
  await shipped.clear()
  for (const simulator of [primary, secondary, claude]) {
    simulator.reset()
    simulator.options.tokenIntervalMs = 0
  }
})

/** The records of this test, once `count` of them arrived. */
function records(count = 1): Promise<UsageRecord[]> {
  return shipped.wait(count)
}

const price = (model: string) => tablePrice('openai', model)!

describe('one record per request, with the provider usage and its cost', () => {
  it('chat completions', async () => {
    const { data, response } = await client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hello there' }] }).withResponse()
    const [record, ...rest] = await records()
    expect(rest).toEqual([])
    expect(record).toMatchObject({
      route: 'chat', endpointType: 'chatComplete', statusCode: 200, errorCode: null, providerSlug: 'primary', providerKind: 'openai', apiKeyId: 'key-ws',
      traceId: response.headers.get('x-gateway-trace-id'), inputTokens: data.usage!.prompt_tokens, outputTokens: data.usage!.completion_tokens, estimated: false,
      attempts: 1, streamed: false, pricingVersion: 'gatehouse-2026-11-29.2',
    })
    expect(record!.costUsd).toBeCloseTo(costOf({ inputTokens: data.usage!.prompt_tokens, outputTokens: data.usage!.completion_tokens }, price(data.model)), 12)
    expect(record!.latencyMs).toBeGreaterThanOrEqual(0)
  })

  it('a stream with include_usage: the usage chunk', async () => {
    const stream = await client.chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'stream please' }], stream: true, stream_options: { include_usage: true } })
    let usage: OpenAI.CompletionUsage | null | undefined
    for await (const chunk of stream) if (chunk.usage) usage = chunk.usage
    const [record] = await records()
    expect(record).toMatchObject({ streamed: true, aborted: false, estimated: false, inputTokens: usage!.prompt_tokens, outputTokens: usage!.completion_tokens, finishReason: 'stop' })
    expect(record!.ttftMs).not.toBeNull()
    expect(record!.costUsd).toBeCloseTo(costOf({ inputTokens: usage!.prompt_tokens, outputTokens: usage!.completion_tokens }, price('gpt-4o')), 12)
  })

  it('a stream without include_usage: usage asked for upstream, kept from the client, exact on the record', async () => {
    const body = { model: 'gpt-4o', messages: [{ role: 'user' as const, content: 'count me please' }] }
    const stream = await client.chat.completions.create({ ...body, stream: true })
    let text = ''
    const chunks: OpenAI.ChatCompletionChunk[] = []
    for await (const chunk of stream) {
      chunks.push(chunk)
      text += chunk.choices[0]?.delta.content ?? ''
    }
    // The client asked for no usage: no usage chunk (relayed chunks may say `usage: null`, as OpenAI's do with include_usage).
    expect(chunks.length).toBeGreaterThan(1)
    expect(chunks.every((chunk) => chunk.choices.length > 0 && (chunk.usage ?? null) === null)).toBe(true)
    // Upstream was asked for it.
    expect((primary.requests.at(-1)!.body as { stream_options?: unknown }).stream_options).toEqual({ include_usage: true })
    const [record] = await records()
    // The same request asking for usage itself reports what the record carries.
    await shipped.clear()
    const asked = await client.chat.completions.create({ ...body, stream: true, stream_options: { include_usage: true } })
    let usage: OpenAI.CompletionUsage | null | undefined
    for await (const chunk of asked) if (chunk.usage) usage = chunk.usage
    expect(usage!.completion_tokens).toBeGreaterThan(0)
    expect(record).toMatchObject({ streamed: true, estimated: false, inputTokens: usage!.prompt_tokens, outputTokens: usage!.completion_tokens, finishReason: 'stop' })
    expect(text.length).toBeGreaterThan(0)
  })

  it('text completions and embeddings', async () => {
    const completion = await client.completions.create({ model: 'gpt-3.5-turbo-instruct', prompt: 'Say this is a test' })
    const embedding = await client.embeddings.create({ model: 'text-embedding-3-small', input: ['one', 'two'] })
    const got = await records(2)
    expect(got.map((r) => r.route).sort()).toEqual(['completions', 'embeddings'])
    expect(got.find((r) => r.route === 'completions')).toMatchObject({ endpointType: 'complete', inputTokens: completion.usage!.prompt_tokens, outputTokens: completion.usage!.completion_tokens })
    const embed = got.find((r) => r.route === 'embeddings')!
    expect(embed).toMatchObject({ endpointType: 'embed', inputTokens: embedding.usage.prompt_tokens })
    expect(embed.costUsd).toBeCloseTo(embedding.usage.prompt_tokens * 0.02e-6, 12)
  })

  it('messages with the Anthropic SDK, priced from the Anthropic table', async () => {
    const message = await anthropic.messages.create({ model: 'claude-3-5-haiku-20241022', max_tokens: 64, messages: [{ role: 'user', content: 'Hello Claude' }] })
    const [record] = await records()
    expect(record).toMatchObject({ route: 'messages', endpointType: 'messages', providerKind: 'anthropic', inputTokens: message.usage.input_tokens, outputTokens: message.usage.output_tokens })
    expect(record!.costUsd).toBeCloseTo(costOf({ inputTokens: message.usage.input_tokens, outputTokens: message.usage.output_tokens }, tablePrice('anthropic', 'claude-3-5-haiku')!), 12)
  })

  it('a passthrough group (files)', async () => {
    await client.files.list()
    const [record] = await records()
    expect(record).toMatchObject({ route: expect.stringContaining('files'), endpointType: 'files', inputTokens: 0, outputTokens: 0, costUsd: 0 })
  })
})

describe('routing, aborts and failures', () => {
  it('a fallback that tried two targets: both attempts, the target that answered', async () => {
    primary.script({ status: 503 })
    const config = { strategy: { mode: 'fallback' }, targets: [{ provider: '@primary' }, { provider: '@secondary' }] }
    const data = await client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'fall back' }] }, { headers: { 'x-gateway-config': JSON.stringify(config) } })
    const [record, ...rest] = await records()
    expect(rest).toEqual([])
    expect(record).toMatchObject({ statusCode: 200, attempts: 2, targetPath: 'config.targets[1]', providerSlug: 'secondary', inputTokens: data.usage!.prompt_tokens })
  })

  it('a client that leaves mid-stream: what was sent, marked aborted', async () => {
    primary.options.tokenIntervalMs = 100
    const controller = new AbortController()
    const stream = await client.chat.completions.create(
      { model: 'gpt-4o', messages: [{ role: 'user', content: 'a long answer please, with many words in it' }], stream: true },
      { signal: controller.signal },
    )
    let text = ''
    try {
      for await (const chunk of stream) {
        text += chunk.choices[0]?.delta.content ?? ''
        if (text.length > 0) controller.abort()
      }
    } catch {
      // The SDK reports the abort.
    }
    const [record, ...rest] = await records()
    expect(rest).toEqual([])
    expect(record).toMatchObject({ aborted: true, errorCode: 'request_cancelled', streamed: true, estimated: true, statusCode: 200 })
    expect(record!.outputTokens).toBeGreaterThan(0)
    expect(record!.outputTokens).toBeLessThan(40)
  })

  it('an upstream error: its status and code, no tokens', async () => {
    primary.script({ status: 500 })
    await expect(client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'fail' }] })).rejects.toThrow()
    const [record] = await records()
    expect(record).toMatchObject({ statusCode: 502, errorCode: 'provider_error', providerSlug: 'primary', inputTokens: 0, outputTokens: 0, costUsd: 0, attempts: 1 })
  })

  it('a request refused by validation is recorded with its 400', async () => {
    await expect(client.chat.completions.create({ model: 'gpt-4o-mini', messages: [], temperature: 9 })).rejects.toThrow()
    const [record] = await records()
    expect(record).toMatchObject({ statusCode: 400, route: 'chat', providerSlug: null })
  })

  it('metadata and the _user key land on the record; bodies are kept and redacted', async () => {
    await client.chat.completions.create(
      { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'my key is sk-proj-abcdefghijklmnopqrstuvwxyz0123' }] },
      { headers: { 'x-gateway-metadata': JSON.stringify({ _user: 'alice', team: 'search' }) } },
    )
    const [record] = await records()
    expect(record).toMatchObject({ userId: 'alice', metadata: { _user: 'alice', team: 'search' }, logLevel: 'full' })
    expect(JSON.stringify(record!.requestBody)).toContain('[REDACTED]')
    expect(JSON.stringify(record!.requestBody)).not.toContain('abcdefghijklmnop')
    expect(record!.responseBody).toMatchObject({ object: 'chat.completion' })
  })
})
