/**
 * `POST /v1/messages` with the official `@anthropic-ai/sdk` as the client: translated to chat for
 * the OpenAI simulator, passed natively to the Anthropic simulator, with Anthropic-shaped errors.
 */
import Anthropic from '@anthropic-ai/sdk'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { startAnthropicSimulator } from '../simulators/anthropic.ts'
import { startOpenAISimulator } from '../simulators/openai.ts'
import type { Simulator } from '../simulators/index.ts'
import { startTestGateway, type TestGateway } from '../helpers/gateway.ts'

let openai: Simulator
let anthropic: Simulator
let gateway: TestGateway
let viaOpenAI: Anthropic
let viaAnthropic: Anthropic

beforeAll(async () => {
  openai = await startOpenAISimulator({ chunks: 4, apiKeys: ['sk-openai-upstream'] })
  anthropic = await startAnthropicSimulator({ chunks: 4, apiKeys: ['sk-ant-upstream'] })
  gateway = await startTestGateway([
    { slug: 'openai-main', kind: 'openai', baseUrl: openai.baseUrl, credentials: { apiKey: 'sk-openai-upstream' } },
    { slug: 'anthropic-main', kind: 'anthropic', baseUrl: `${anthropic.url}/v1`, credentials: { apiKey: 'sk-ant-upstream' } },
  ])
  // The SDK appends /v1/messages itself and sends the key as x-api-key.
  viaOpenAI = new Anthropic({ apiKey: gateway.workspaceKey, baseURL: gateway.url, maxRetries: 0, defaultHeaders: { 'x-gateway-provider': '@openai-main' } })
  viaAnthropic = new Anthropic({ apiKey: gateway.workspaceKey, baseURL: gateway.url, maxRetries: 0, defaultHeaders: { 'x-gateway-provider': '@anthropic-main' } })
})

afterAll(async () => {
  await gateway?.close()
  await openai?.close()
  await anthropic?.close()
})

beforeEach(() => {
  openai.reset()
  anthropic.reset()
})

describe('translated to chat for a provider that does not speak Messages', () => {
  it('answers a Messages request from a chat completion', async () => {
    const { data, response } = await viaOpenAI.messages
      .create({ model: 'gpt-4o-mini', max_tokens: 64, system: 'Be terse.', messages: [{ role: 'user', content: 'Hello from Claude land' }] })
      .withResponse()
    expect(data).toMatchObject({ type: 'message', role: 'assistant', stop_reason: 'end_turn' })
    const text = data.content.find((block) => block.type === 'text')
    expect(text?.type === 'text' && text.text).toContain('Hello from Claude land')
    expect(data.usage.input_tokens).toBeGreaterThan(0)
    expect(data.usage.output_tokens).toBeGreaterThan(0)
    expect(response.headers.get('x-gateway-provider')).toBe('openai-main')

    expect(openai.requests).toHaveLength(1)
    const upstream = openai.requests[0]!
    expect(upstream.path).toBe('/v1/chat/completions')
    expect(upstream.headers.authorization).toBe('Bearer sk-openai-upstream')
    expect(upstream.body).toMatchObject({
      model: 'gpt-4o-mini',
      max_completion_tokens: 64,
      messages: [{ role: 'system', content: 'Be terse.' }, { role: 'user' }],
    })
  })

  it('streams Anthropic events built from chat chunks', async () => {
    const stream = viaOpenAI.messages.stream({ model: 'gpt-4o-mini', max_tokens: 64, messages: [{ role: 'user', content: 'stream to me' }] })
    const types: string[] = []
    let text = ''
    stream.on('streamEvent', (event) => types.push(event.type))
    stream.on('text', (delta) => (text += delta))
    const final = await stream.finalMessage()
    expect(types[0]).toBe('message_start')
    expect(types.at(-1)).toBe('message_stop')
    expect(types).toContain('content_block_delta')
    expect(text).toContain('stream to me')
    expect(final.usage.output_tokens).toBeGreaterThan(0)
    expect(openai.requests[0]?.body).toMatchObject({ stream: true, stream_options: { include_usage: true } })
  })

  it('translates tool use both ways', async () => {
    const answer = await viaOpenAI.messages.create({
      model: 'gpt-4o-mini',
      max_tokens: 128,
      tools: [{ name: 'get_weather', description: 'Weather for a city', input_schema: { type: 'object', properties: { city: { type: 'string' } } } }],
      tool_choice: { type: 'any' },
      messages: [{ role: 'user', content: 'What is the weather in Paris?' }],
    })
    expect(answer.stop_reason).toBe('tool_use')
    expect(answer.content.find((block) => block.type === 'tool_use')).toMatchObject({ name: 'get_weather' })
  })

  it('routes by @slug/model with only the key, and accepts the key as a bearer token too', async () => {
    const bare = new Anthropic({ authToken: gateway.workspaceKey, apiKey: null, baseURL: gateway.url, maxRetries: 0 })
    const answer = await bare.messages.create({ model: '@openai-main/gpt-4o', max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] })
    expect(answer.type).toBe('message')
    expect((openai.requests[0]?.body as { model: string }).model).toBe('gpt-4o')
  })

  it('ends a stream that fails mid-way with an Anthropic error event', async () => {
    openai.script({ resetAfterChunks: 2 })
    const stream = viaOpenAI.messages.stream({ model: 'gpt-4o-mini', max_tokens: 64, messages: [{ role: 'user', content: 'a long answer' }] })
    await expect(stream.finalMessage()).rejects.toThrow()
  })
})

describe('native for a provider that speaks Messages', () => {
  it('passes the body through with the stored key and the caller’s beta features', async () => {
    const answer = await viaAnthropic.messages.create(
      { model: 'claude-sonnet-4-5', max_tokens: 64, messages: [{ role: 'user', content: 'Native hello' }] },
      { headers: { 'anthropic-beta': 'interleaved-thinking-2025-05-14' } },
    )
    expect(answer).toMatchObject({ type: 'message', model: 'claude-sonnet-4-5' })
    expect(anthropic.requests).toHaveLength(1)
    const upstream = anthropic.requests[0]!
    expect(upstream.path).toBe('/v1/messages')
    expect(upstream.headers['x-api-key']).toBe('sk-ant-upstream')
    expect(upstream.headers['anthropic-version']).toBeTruthy()
    expect(upstream.headers['anthropic-beta']).toBe('interleaved-thinking-2025-05-14')
    expect(JSON.stringify(upstream.headers)).not.toContain(gateway.workspaceKey)
    expect(upstream.body).toEqual({ model: 'claude-sonnet-4-5', max_tokens: 64, messages: [{ role: 'user', content: 'Native hello' }] })
  })

  it('relays the native event stream unchanged', async () => {
    const stream = viaAnthropic.messages.stream({ model: '@anthropic-main/claude-sonnet-4-5', max_tokens: 64, messages: [{ role: 'user', content: 'native stream' }] })
    let text = ''
    stream.on('text', (delta) => (text += delta))
    const final = await stream.finalMessage()
    expect(text.length).toBeGreaterThan(0)
    expect(final.stop_reason).toBe('end_turn')
    expect((anthropic.requests[0]?.body as { model: string; stream: boolean })).toMatchObject({ model: 'claude-sonnet-4-5', stream: true })
  })

  it('maps a provider error onto the Anthropic error shape', async () => {
    anthropic.script({ status: 529 })
    const failure = await viaAnthropic.messages.create({ model: 'claude-sonnet-4-5', max_tokens: 8, messages: [{ role: 'user', content: 'hi' }] }).catch((error: unknown) => error)
    expect(failure).toBeInstanceOf(Anthropic.APIError)
    expect((failure as InstanceType<typeof Anthropic.APIError>).status).toBe(503)
    expect((failure as InstanceType<typeof Anthropic.APIError>).error).toMatchObject({ type: 'error', error: { type: 'api_error' } })
  })
})

describe('errors in Anthropic shape', () => {
  it('refuses a wrong key with an authentication_error', async () => {
    const stranger = new Anthropic({ apiKey: 'sk-not-a-gatehouse-key', baseURL: gateway.url, maxRetries: 0, defaultHeaders: { 'x-gateway-provider': '@openai-main' } })
    const failure = await stranger.messages.create({ model: 'gpt-4o', max_tokens: 8, messages: [{ role: 'user', content: 'hi' }] }).catch((error: unknown) => error)
    expect(failure).toBeInstanceOf(Anthropic.AuthenticationError)
    expect((failure as InstanceType<typeof Anthropic.APIError>).error).toMatchObject({ type: 'error', error: { type: 'authentication_error' } })
    expect(openai.requests).toHaveLength(0)
  })

  it('refuses an invalid body and bad JSON with an invalid_request_error', async () => {
    const failure = await viaOpenAI.messages
      // @ts-expect-error max_tokens is required
      .create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] })
      .catch((error: unknown) => error)
    expect(failure).toBeInstanceOf(Anthropic.BadRequestError)
    expect((failure as InstanceType<typeof Anthropic.APIError>).error).toMatchObject({ type: 'error', error: { type: 'invalid_request_error' } })

    const malformed = await fetch(`${gateway.baseUrl}/messages`, {
      method: 'POST',
      headers: { 'x-api-key': gateway.workspaceKey, 'content-type': 'application/json', 'x-gateway-provider': '@openai-main' },
      body: '{"model":',
    })
    expect(malformed.status).toBe(400)
    expect(await malformed.json()).toMatchObject({ type: 'error', error: { type: 'invalid_request_error' } })
    expect(openai.requests).toHaveLength(0)
  })

  it('needs a provider', async () => {
    const bare = new Anthropic({ apiKey: gateway.workspaceKey, baseURL: gateway.url, maxRetries: 0 })
    await expect(bare.messages.create({ model: 'claude-sonnet-4-5', max_tokens: 8, messages: [{ role: 'user', content: 'hi' }] })).rejects.toMatchObject({
      status: 400,
      error: { type: 'error', error: { type: 'invalid_request_error' } },
    })
  })
})
