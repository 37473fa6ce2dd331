/**
 * The Anthropic and Bedrock adapters against the provider simulators, over real HTTP through the
 * gateway's transport, framing decoders and SigV4 signer: what the unit fixtures claim about the
 * wire, checked end to end.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { ProviderAdapter, StreamingOperation, TargetContext, UpstreamEvent } from '../../gateway/src/providers/adapter.ts'
import { ProviderStreamError } from '../../gateway/src/providers/adapter.ts'
import { anthropic } from '../../gateway/src/providers/anthropic/index.ts'
import { anthropicRequestToChat, nativeMessagesFor } from '../../gateway/src/providers/anthropic/inbound.ts'
import { bedrock } from '../../gateway/src/providers/bedrock/index.ts'
import type { ChatRequest } from '../../gateway/src/providers/canonical.ts'
import { secretBag } from '../../gateway/src/core/secret.ts'
import { decodeFrames } from '../../gateway/src/upstream/framing/index.ts'
import '../../gateway/src/upstream/signers/aws-sigv4.ts'
import { createPool, defaultTimeouts, sendUpstream, type UpstreamEndpoint } from '../../gateway/src/upstream/transport.ts'
import type { Simulator } from '../simulators/base.ts'
import { startAnthropicSimulator } from '../simulators/anthropic.ts'
import { startBedrockSimulator } from '../simulators/bedrock.ts'

const context = { requestModel: 'requested', responseId: 'gh-test', createdAt: 1_750_000_000 }
const weather: ChatRequest = {
  model: 'alias',
  messages: [{ role: 'user', content: 'What is the weather in Paris?' }],
  tools: [{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } }],
}

let anthropicSim: Simulator
let bedrockSim: Simulator
const pools: Array<ReturnType<typeof createPool>> = []

beforeAll(async () => {
  anthropicSim = await startAnthropicSimulator({ chunks: 3, apiKeys: ['sk-ant-test'] })
  // The simulator verifies each SigV4 signature itself (test/simulators/sigv4.ts), independently of
  // the gateway's signer.
  bedrockSim = await startBedrockSimulator({ chunks: 3, awsSecrets: { AKIDGATEHOUSE: 'secret' } })
})

afterAll(async () => {
  await Promise.all(pools.map((pool) => pool.close()))
  await Promise.all([anthropicSim.close(), bedrockSim.close()])
})

function endpoint(adapter: ProviderAdapter, baseUrl: string, credentials: Record<string, string>, options: Record<string, string>): UpstreamEndpoint {
  const url = new URL(baseUrl)
  const pool = createPool(url.origin, defaultTimeouts, 4)
  pools.push(pool)
  return { baseUrl: url, auth: adapter.auth, credentials: secretBag(credentials), options, timeouts: defaultTimeouts, dispatcher: pool, allowPrivateNetwork: true }
}

const anthropicEndpoint = () => endpoint(anthropic, `${anthropicSim.url}/v1`, { apiKey: 'sk-ant-test' }, {})
// The simulator stands in for the regional host that `baseUrlFor` derives.
const bedrockEndpoint = (options: Record<string, string>) => endpoint(bedrock, bedrockSim.url, { accessKeyId: 'AKIDGATEHOUSE', secretAccessKey: 'secret' }, options)

async function callJson<Req, Res, Chunk>(operation: StreamingOperation<Req, Res, Chunk>, at: UpstreamEndpoint, request: Req, target: TargetContext) {
  const { upstream } = operation.toUpstream(request, target)
  const response = await sendUpstream(at, upstream, { signal: AbortSignal.timeout(10_000) })
  const body = await response.body.json()
  return { status: response.status, headers: response.headers, body }
}

async function callStream<Req, Res, Chunk>(operation: StreamingOperation<Req, Res, Chunk>, at: UpstreamEndpoint, request: Req, target: TargetContext) {
  const { upstream } = operation.toUpstream(request, target)
  const response = await sendUpstream(at, upstream, { signal: AbortSignal.timeout(10_000) })
  expect(response.status).toBe(200)
  const state = operation.stream.start(context)
  const chunks: Chunk[] = []
  let error: unknown = null
  try {
    for await (const event of decodeFrames(operation.framing, response.body)) chunks.push(...operation.stream.step(state, event as UpstreamEvent))
  } catch (caught) {
    error = caught
  }
  return { chunks, error, result: error ? null : operation.stream.finish(state) }
}

describe('anthropic adapter on the wire', () => {
  const target: TargetContext = { upstreamModel: 'claude-sonnet-4-5', options: {} }

  it('answers a tool call (JSON) with the x-api-key header and anthropic-version', async () => {
    const { status, body } = await callJson(anthropic.chat!, anthropicEndpoint(), weather, target)
    expect(status).toBe(200)
    const response = anthropic.chat!.fromUpstream(body, context)
    expect(response.choices[0]!.finish_reason).toBe('tool_calls')
    expect(response.choices[0]!.message.tool_calls![0]!.function.name).toBe('get_weather')
    const recorded = anthropicSim.requests.at(-1)!
    expect(recorded.headers['x-api-key']).toBe('sk-ant-test')
    expect(recorded.headers['anthropic-version']).toBe('2023-06-01')
  })

  it('streams thinking and text with usage from finish()', async () => {
    const request: ChatRequest = { model: 'a', messages: [{ role: 'user', content: 'Say hello' }], stream: true, thinking: { type: 'enabled', budget_tokens: 1024 } }
    const { chunks, error, result } = await callStream(anthropic.chat!, anthropicEndpoint(), request, target)
    expect(error).toBeNull()
    const text = chunks.map((chunk) => chunk.choices[0]?.delta.content ?? '').join('')
    const reasoning = chunks.map((chunk) => chunk.choices[0]?.delta.reasoning_content ?? '').join('')
    expect(text.length).toBeGreaterThan(0)
    expect(reasoning.length).toBeGreaterThan(0)
    expect(result!.finishReason.unified).toBe('stop')
    expect(result!.usage.inputTokens).toBeGreaterThan(0)
    expect(result!.usage.outputTokens).toBeGreaterThan(0)
  })

  it('throws ProviderStreamError on an in-band overloaded error and parses HTTP errors', async () => {
    anthropicSim.script({ errorAfterChunks: 2, status: 529 })
    const streamed = await callStream(anthropic.chat!, anthropicEndpoint(), { ...weather, stream: true }, target)
    expect(streamed.error).toBeInstanceOf(ProviderStreamError)
    expect((streamed.error as ProviderStreamError).info).toMatchObject({ providerCode: 'overloaded_error', retryable: true })

    anthropicSim.script({ status: 429, retryAfterS: 3 })
    const { status, headers, body } = await callJson(anthropic.chat!, anthropicEndpoint(), weather, target)
    expect(anthropic.parseError(status, headers, body)).toMatchObject({ status: 429, providerCode: 'rate_limit_error', retryable: true, retryAfterMs: 3000 })
  })
})

describe('bedrock adapter on the wire', () => {
  const converse: TargetContext = { upstreamModel: 'anthropic.claude-3-5-sonnet-20240620-v1:0', options: { region: 'us-east-1' } }
  const invoke: TargetContext = { ...converse, options: { region: 'us-east-1', mode: 'invoke' } }

  it('answers Converse (JSON), signed with SigV4 for bedrock', async () => {
    const { status, body } = await callJson(bedrock.chat!, bedrockEndpoint(converse.options), { model: 'a', messages: [{ role: 'user', content: 'hello' }] }, converse)
    expect(status).toBe(200)
    const response = bedrock.chat!.fromUpstream(body, context)
    expect(response.choices[0]!.message.content).toContain('hello')
    const recorded = bedrockSim.requests.at(-1)!
    expect(recorded.path).toBe('/model/anthropic.claude-3-5-sonnet-20240620-v1%3A0/converse')
    expect(recorded.headers.authorization).toMatch(/^AWS4-HMAC-SHA256 Credential=AKIDGATEHOUSE\/\d{8}\/us-east-1\/bedrock\/aws4_request, SignedHeaders=content-type;host;x-amz-date, Signature=/)
  })

  it('streams Converse tool calls through the event-stream decoder', async () => {
    const { chunks, error, result } = await callStream(bedrock.chat!, bedrockEndpoint(converse.options), { ...weather, stream: true }, converse)
    expect(error).toBeNull()
    const calls = chunks.flatMap((chunk) => chunk.choices[0]?.delta.tool_calls ?? [])
    expect(calls[0]).toMatchObject({ index: 0, type: 'function', function: { name: 'get_weather' } })
    expect(JSON.parse(calls.map((call) => call.function?.arguments ?? '').join(''))).toBeTypeOf('object')
    expect(result!.finishReason).toEqual({ unified: 'tool_calls', raw: 'tool_use' })
    expect(result!.usage.inputTokens).toBeGreaterThan(0)
  })

  it('streams Claude through invoke-with-response-stream with the anthropic transforms', async () => {
    const { chunks, error, result } = await callStream(bedrock.chat!, bedrockEndpoint(invoke.options), { model: 'a', messages: [{ role: 'user', content: 'hello' }], stream: true }, invoke)
    expect(error).toBeNull()
    expect(bedrockSim.requests.at(-1)!.path).toBe('/model/anthropic.claude-3-5-sonnet-20240620-v1%3A0/invoke-with-response-stream')
    expect(chunks.map((chunk) => chunk.choices[0]?.delta.content ?? '').join('')).toContain('hello')
    expect(result!.finishReason.unified).toBe('stop')
    expect(result!.usage.outputTokens).toBeGreaterThan(0)
  })

  it('throws on an in-band throttling exception and parses an HTTP validation error', async () => {
    bedrockSim.script({ errorAfterChunks: 2, status: 429 })
    const streamed = await callStream(bedrock.chat!, bedrockEndpoint(converse.options), { model: 'a', messages: [{ role: 'user', content: 'hello' }], stream: true }, converse)
    expect((streamed.error as ProviderStreamError).info).toMatchObject({ status: 429, providerCode: 'ThrottlingException', retryable: true })

    bedrockSim.script({ status: 400 })
    const { status, headers, body } = await callJson(bedrock.chat!, bedrockEndpoint(converse.options), { model: 'a', messages: [{ role: 'user', content: 'hello' }] }, converse)
    expect(bedrock.parseError(status, headers, body)).toMatchObject({ status: 400, providerCode: 'ValidationException', fault: 'client', retryable: false })
  })

  it('relays a /v1/messages body natively to Claude on Bedrock', async () => {
    const body = { model: 'claude', max_tokens: 50, messages: [{ role: 'user', content: 'hello native' }], stream: true }
    expect(anthropicRequestToChat(body).problems).toEqual([])
    const native = nativeMessagesFor(bedrock, converse)!
    const { chunks, error, result } = await callStream(native, bedrockEndpoint(converse.options), body, converse)
    expect(error).toBeNull()
    expect(chunks[0]!.event).toBe('message_start')
    expect(chunks.at(-1)!.event).toBe('message_stop')
    expect(result!.usage.outputTokens).toBeGreaterThan(0)
  })
})
