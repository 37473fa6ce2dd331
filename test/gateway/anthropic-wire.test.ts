/**
 * The newer parts of Anthropic's wire through the gateway, with the official SDKs as clients and
 * simulators that write every answer in pieces cut at random byte offsets: the stop reasons
 * `refusal`, `pause_turn` and `model_context_window_exceeded` (mapped to OpenAI finish reasons,
 * relayed as they are on /v1/messages), `redacted_thinking` blocks, the provider's request id on
 * a failure's log line, and client aborts reaching the provider on /v1/messages and on Bedrock's
 * AWS event streams.
 */
import { Writable } from 'node:stream'
import Anthropic from '@anthropic-ai/sdk'
import OpenAI from 'openai'
import { pino } from 'pino'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { startAnthropicSimulator, startBedrockSimulator, type Simulator } from '../simulators/index.ts'
import { startTestGateway, type TestGateway } from '../helpers/gateway.ts'

const ANTHROPIC_KEY = 'sk-ant-upstream-wire'
const BEDROCK_MODEL = 'anthropic.claude-3-5-sonnet-20240620-v1:0'
const logs: Array<Record<string, unknown>> = []
let claude: Simulator
let bedrock: Simulator
let gateway: TestGateway

function capture(): Writable {
  return new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString('utf8').split('\n')) if (line.startsWith('{')) logs.push(JSON.parse(line) as Record<string, unknown>)
      done()
    },
  })
}

beforeAll(async () => {
  claude = await startAnthropicSimulator({ chunks: 6, apiKeys: [ANTHROPIC_KEY], splitWrites: { seed: 20 } })
  bedrock = await startBedrockSimulator({ chunks: 6, awsSecrets: { AKIAWIRE: 'wire-secret' }, splitWrites: { seed: 21 } })
  gateway = await startTestGateway(
    [
      { slug: 'claude', kind: 'anthropic', baseUrl: `${claude.url}/v1`, credentials: { apiKey: ANTHROPIC_KEY } },
      { slug: 'bedrock', kind: 'bedrock', baseUrl: bedrock.url, credentials: { accessKeyId: 'AKIAWIRE', secretAccessKey: 'wire-secret' }, options: { region: 'us-east-1' } },
    ],
    { logger: pino({ level: 'info' }, capture()) },
  )
})

afterEach(() => {
  for (const simulator of [claude, bedrock]) {
    simulator.reset()
    simulator.options.tokenIntervalMs = 0
  }
})

afterAll(async () => {
  await gateway?.close()
  await claude?.close()
  await bedrock?.close()
})

function openai(provider: string): OpenAI {
  return new OpenAI({ apiKey: gateway.workspaceKey, baseURL: gateway.baseUrl, maxRetries: 0, defaultHeaders: { 'x-gateway-provider': `@${provider}` } })
}

function anthropic(provider: string): Anthropic {
  return new Anthropic({ apiKey: gateway.workspaceKey, baseURL: gateway.url, maxRetries: 0, defaultHeaders: { 'x-gateway-provider': `@${provider}` } })
}

const question = [{ role: 'user' as const, content: 'Tell me something' }]

describe('newer stop reasons', () => {
  // Break tried: `refusal: 'stop'` in providers/anthropic/response.ts's table -> the refusal rows
  // answered finish_reason "stop" and failed, plain and streamed.
  it.each([
    ['refusal', 'content_filter'],
    ['model_context_window_exceeded', 'length'],
    ['pause_turn', 'stop'],
  ])('maps %s to the OpenAI finish reason %s, plain and streamed', async (stopReason, finishReason) => {
    claude.script({ stopReason }, { stopReason })
    const plain = await openai('claude').chat.completions.create({ model: 'claude-sonnet-4-5', messages: question })
    expect(plain.choices[0]?.finish_reason).toBe(finishReason)
    const streamed = await openai('claude').chat.completions.stream({ model: 'claude-sonnet-4-5', messages: question }).finalChatCompletion()
    expect(streamed.choices[0]?.finish_reason).toBe(finishReason)
    expect(streamed.choices[0]?.message.content).toBe(plain.choices[0]?.message.content)
  })

  it('relays them unchanged on /v1/messages', async () => {
    claude.script({ stopReason: 'refusal' }, { stopReason: 'model_context_window_exceeded' })
    const plain = await anthropic('claude').messages.create({ model: 'claude-sonnet-4-5', max_tokens: 100, messages: question })
    expect(plain.stop_reason).toBe('refusal')
    const streamed = await anthropic('claude').messages.stream({ model: 'claude-sonnet-4-5', max_tokens: 100, messages: question }).finalMessage()
    expect(streamed.stop_reason).toBe('model_context_window_exceeded')
  })
})

describe('redacted_thinking', () => {
  const ask = { model: 'claude-sonnet-4-5', max_tokens: 200, thinking: { type: 'enabled' as const, budget_tokens: 1024 }, messages: [{ role: 'user' as const, content: 'a redacted thought, then the answer' }] }

  it('reaches an Anthropic SDK client whole on /v1/messages, plain and streamed', async () => {
    const plain = await anthropic('claude').messages.create(ask)
    expect(plain.content[0]).toMatchObject({ type: 'redacted_thinking', data: expect.any(String) })
    expect(plain.content[1]).toMatchObject({ type: 'text' })
    const streamed = await anthropic('claude').messages.stream(ask).finalMessage()
    expect(streamed.content[0]).toMatchObject({ type: 'redacted_thinking', data: expect.any(String) })
  })

  it('is left out of an OpenAI answer without disturbing the text after it', async () => {
    // Anthropic's `thinking` passes through the OpenAI shape (providers/anthropic/request.ts).
    const body = { model: ask.model, messages: ask.messages, thinking: ask.thinking } as OpenAI.ChatCompletionCreateParamsNonStreaming
    const plain = await openai('claude').chat.completions.create(body)
    expect(claude.requests.at(-1)?.body).toMatchObject({ thinking: { type: 'enabled' } })
    const streamed = await openai('claude').chat.completions.stream({ ...body, stream: true } as OpenAI.ChatCompletionCreateParamsStreaming).finalChatCompletion()
    expect(plain.choices[0]?.message.content).toMatch(/^Echo: a redacted thought/)
    expect(streamed.choices[0]?.message.content).toBe(plain.choices[0]?.message.content)
    expect((plain.choices[0]?.message as { reasoning_content?: unknown }).reasoning_content).toBeUndefined()
  })
})

describe("the provider's request id", () => {
  // Break tried: plausibleRequestId accepting nothing (providers/shared/errors.ts) ->
  // providerRequestId was null on the line and this failed.
  it('is on the log line of a provider failure, with no credential', async () => {
    claude.script({ status: 500 })
    const failed = await openai('claude').chat.completions.create({ model: 'claude-sonnet-4-5', messages: question }).catch((error: unknown) => error)
    expect(failed).toBeInstanceOf(OpenAI.APIError)
    expect((failed as InstanceType<typeof OpenAI.APIError>).status).toBe(502)
    const line = logs.find((entry) => entry.provider === 'claude' && entry.providerStatus === 500)
    expect(line?.providerRequestId).toMatch(/^req_sim\d{8}$/)
    expect(JSON.stringify(logs)).not.toContain(ANTHROPIC_KEY)
  })
})

describe('client aborts reach the provider', () => {
  // Two mechanisms stop the upstream read: the exchange's abort signal (http/pipeline-route.ts)
  // and the stream's `finally` destroying the body (pipeline/dispatch.ts); either alone suffices.
  // Break tried: both removed -> no simulator saw an early close and all three failed; one alone
  // removed -> all three still passed, as they should.
  it('on /v1/messages, when an Anthropic SDK client aborts mid-stream', async () => {
    claude.options.tokenIntervalMs = 50
    const controller = new AbortController()
    const stream = await anthropic('claude').messages.create({ model: 'claude-sonnet-4-5', max_tokens: 100, messages: question, stream: true }, { signal: controller.signal })
    const iterator = stream[Symbol.asyncIterator]()
    await iterator.next()
    controller.abort()
    await claude.waitForClosedEarly(1, 10_000)
    expect(claude.closedEarly).toBe(1)
  })

  it('on a Bedrock Converse event stream, when an OpenAI SDK client aborts mid-stream', async () => {
    bedrock.options.tokenIntervalMs = 50
    const controller = new AbortController()
    const stream = await openai('bedrock').chat.completions.create({ model: BEDROCK_MODEL, messages: question, stream: true }, { signal: controller.signal })
    const iterator = stream[Symbol.asyncIterator]()
    await iterator.next()
    controller.abort()
    await bedrock.waitForClosedEarly(1, 10_000)
    expect(bedrock.requests.at(-1)?.path).toMatch(/\/converse-stream$/)
  })

  it('on a Bedrock InvokeModel event stream, when an Anthropic SDK client aborts mid-stream', async () => {
    bedrock.options.tokenIntervalMs = 50
    const controller = new AbortController()
    const stream = await anthropic('bedrock').messages.create({ model: BEDROCK_MODEL, max_tokens: 100, messages: question, stream: true }, { signal: controller.signal })
    const iterator = stream[Symbol.asyncIterator]()
    await iterator.next()
    controller.abort()
    await bedrock.waitForClosedEarly(1, 10_000)
    expect(bedrock.requests.at(-1)?.path).toMatch(/\/invoke-with-response-stream$/)
  })
})
