/**
 * The official `openai` package pointed at Gatehouse completes chat (stream and non-stream), text
 * completions and embeddings against the OpenAI simulator; routing headers and keys behave as the
 * spec's key model says.
 */
import OpenAI, { APIConnectionError, APIError } from 'openai'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { startOpenAISimulator } from '../simulators/openai.ts'
import type { Simulator } from '../simulators/index.ts'
import { startTestGateway, type TestGateway } from '../helpers/gateway.ts'

let simulator: Simulator
let gateway: TestGateway
let client: OpenAI

beforeAll(async () => {
  simulator = await startOpenAISimulator({ chunks: 4, apiKeys: ['sk-upstream-secret'] })
  gateway = await startTestGateway([{ slug: 'openai-main', kind: 'openai', baseUrl: simulator.baseUrl, credentials: { apiKey: 'sk-upstream-secret' } }])
  client = new OpenAI({ apiKey: gateway.workspaceKey, baseURL: gateway.baseUrl, maxRetries: 0, defaultHeaders: { 'x-gateway-provider': '@openai-main' } })
})

afterAll(async () => {
  await gateway?.close()
  await simulator?.close()
})

beforeEach(() => simulator.reset())

describe('chat completions through Gatehouse', () => {
  it('answers a non-streaming chat with usage, using the stored provider credential', async () => {
    const { data, response } = await client.chat.completions
      .create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Say hello to the gateway' }] })
      .withResponse()
    expect(data.object).toBe('chat.completion')
    expect(data.choices[0]?.message.content).toBeTruthy()
    expect(data.usage?.total_tokens).toBeGreaterThan(0)
    expect(response.headers.get('x-gateway-trace-id')).toMatch(/^(?!0{32})[0-9a-f]{32}$/)
    expect(response.headers.get('x-gateway-provider')).toBe('openai-main')
    expect(simulator.requests).toHaveLength(1)
    expect(simulator.requests[0]?.headers.authorization).toBe('Bearer sk-upstream-secret')
    expect((simulator.requests[0]?.body as { model: string }).model).toBe('gpt-4o-mini')
  })

  it('streams chunks and the final usage chunk when include_usage is set', async () => {
    const stream = await client.chat.completions.create({
      model: 'gpt-4o-mini',
      messages: [{ role: 'user', content: 'stream please' }],
      stream: true,
      stream_options: { include_usage: true },
    })
    let text = ''
    let usageSeen = false
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? ''
      if (chunk.usage) usageSeen = true
    }
    expect(text.length).toBeGreaterThan(0)
    expect(usageSeen).toBe(true)
  })

  it('relays tool calls, streamed and not', async () => {
    const tools = [{ type: 'function' as const, function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } }]
    const messages = [{ role: 'user' as const, content: 'What is the weather in Paris?' }]
    const plain = await client.chat.completions.create({ model: 'gpt-4o-mini', messages, tools, tool_choice: 'required' })
    expect(plain.choices[0]?.finish_reason).toBe('tool_calls')
    expect(plain.choices[0]?.message.tool_calls?.[0]).toMatchObject({ type: 'function', function: { name: 'get_weather' } })

    const runner = client.chat.completions.stream({ model: 'gpt-4o-mini', messages, tools, tool_choice: 'required' })
    const final = await runner.finalChatCompletion()
    const call = final.choices[0]?.message.tool_calls?.[0]
    if (call?.type !== 'function') throw new Error('expected a function tool call')
    expect(call.function.name).toBe('get_weather')
    expect(() => JSON.parse(call.function.arguments)).not.toThrow()
  })

  it('routes by a model written @slug/model without any provider header', async () => {
    const bare = new OpenAI({ apiKey: gateway.workspaceKey, baseURL: gateway.baseUrl, maxRetries: 0 })
    const answer = await bare.chat.completions.create({ model: '@openai-main/gpt-4o', messages: [{ role: 'user', content: 'hi' }] })
    expect(answer.object).toBe('chat.completion')
    expect((simulator.requests[0]?.body as { model: string }).model).toBe('gpt-4o')
  })

  it('passes fields it does not know through untouched', async () => {
    await client.chat.completions.create({
      model: 'gpt-4o-mini',
      messages: [{ role: 'user', content: 'hi' }],
      // @ts-expect-error a field the spec does not know
      brand_new_option: { nested: [1, 2, 3] },
      store: true,
    })
    expect(simulator.requests[0]?.body).toMatchObject({ brand_new_option: { nested: [1, 2, 3] }, store: true })
  })
})

describe('text completions and embeddings', () => {
  it('completes text, non-streaming and streaming', async () => {
    const answer = await client.completions.create({ model: 'gpt-3.5-turbo-instruct', prompt: 'Once upon a time', max_tokens: 8 })
    expect(answer.object).toBe('text_completion')
    expect(answer.choices[0]?.text).toBeTruthy()
    const stream = await client.completions.create({ model: 'gpt-3.5-turbo-instruct', prompt: 'Once', stream: true })
    let text = ''
    for await (const chunk of stream) text += chunk.choices[0]?.text ?? ''
    expect(text.length).toBeGreaterThan(0)
  })

  it('embeds strings', async () => {
    const answer = await client.embeddings.create({ model: 'text-embedding-3-small', input: ['one', 'two'] })
    expect(answer.data).toHaveLength(2)
    expect(answer.data[0]?.embedding.length).toBeGreaterThan(0)
    expect(answer.usage.prompt_tokens).toBeGreaterThan(0)
  })
})

describe('keys, routing and errors', () => {
  it('refuses admin keys on the data plane with 403', async () => {
    const admin = new OpenAI({ apiKey: gateway.adminKey, baseURL: gateway.baseUrl, maxRetries: 0, defaultHeaders: { 'x-gateway-provider': '@openai-main' } })
    await expect(admin.chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] })).rejects.toMatchObject({
      status: 403,
      code: 'admin_key_on_data_plane',
    })
    expect(simulator.requests).toHaveLength(0)
  })

  it('refuses a missing, malformed or unknown key with 401 and the trace id', async () => {
    const missing = await fetch(`${gateway.baseUrl}/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' })
    expect(missing.status).toBe(401)
    expect(missing.headers.get('x-gateway-trace-id')).toBeTruthy()
    expect(((await missing.json()) as { error: unknown }).error).toMatchObject({ type: 'authentication_error', code: 'missing_api_key' })
    const forged = gateway.workspaceKey.slice(0, -1) + (gateway.workspaceKey.endsWith('A') ? 'B' : 'A')
    const bad = await fetch(`${gateway.baseUrl}/chat/completions`, { method: 'POST', headers: { 'x-gateway-api-key': forged, 'content-type': 'application/json' }, body: '{}' })
    expect(bad.status).toBe(401)
    expect(await bad.text()).not.toContain(forged)
  })

  it('accepts the key in x-gateway-api-key and the provider in x-gateway-virtual-key, and echoes a given trace id', async () => {
    const response = await fetch(`${gateway.baseUrl}/chat/completions`, {
      method: 'POST',
      headers: { 'x-gateway-api-key': gateway.workspaceKey, 'x-gateway-virtual-key': 'openai-main', 'x-gateway-trace-id': 'trace-123', 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] }),
    })
    expect(response.status).toBe(200)
    expect(response.headers.get('x-gateway-trace-id')).toBe('trace-123')
  })

  it('answers 400 naming the choices when no provider is named', async () => {
    const bare = new OpenAI({ apiKey: gateway.workspaceKey, baseURL: gateway.baseUrl, maxRetries: 0 })
    await expect(bare.chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] })).rejects.toMatchObject({
      status: 400,
      code: 'route_not_specified',
    })
  })

  it('answers 404 for a provider the workspace cannot see', async () => {
    await expect(
      client.chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] }, { headers: { 'x-gateway-provider': '@nope' } }),
    ).rejects.toMatchObject({ status: 404, code: 'provider_not_found' })
  })

  it('refuses x-gateway-metadata that is not a JSON object', async () => {
    for (const value of ['[1,2]', 'not json', '"text"']) {
      await expect(
        client.chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] }, { headers: { 'x-gateway-metadata': value } }),
      ).rejects.toMatchObject({ status: 400, param: 'x-gateway-metadata' })
    }
    expect(simulator.requests).toHaveLength(0)
    await client.chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] }, { headers: { 'x-gateway-metadata': '{"team":"search"}' } })
  })

  it('relays provider errors in the envelope with retry-after, and maps a refused credential to 502', async () => {
    simulator.script({ status: 429, retryAfterS: 7 }, { status: 401 })
    const limited = await client.chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] }).catch((error: unknown) => error)
    expect(limited).toMatchObject({ status: 429, code: 'provider_rate_limited' })
    expect((limited as { headers: Headers }).headers.get('retry-after')).toBe('7')
    const refused = await client.chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] }).catch((error: unknown) => error)
    expect(refused).toMatchObject({ status: 502, code: 'provider_auth_failed' })
    expect(JSON.stringify((refused as { error: unknown }).error)).not.toContain('sk-upstream-secret')
  })

  it('answers 503 with retry-after when the provider cannot be reached', async () => {
    simulator.script({ reset: true })
    const failure = await client.chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] }).catch((error: unknown) => error)
    expect(failure).toMatchObject({ status: 503, code: 'upstream_unavailable' })
  })

  // A TCP cut makes the SDK throw too, but not an APIError carrying the gateway's code. Break tried:
  // pipeSse destroying the response instead of writing its error event (http/sse-writer.ts) -> the
  // SDK threw `TypeError: terminated` and both tests below failed.
  it('ends a stream that fails mid-way with an error event, never a silent cut', async () => {
    simulator.script({ resetAfterChunks: 2 })
    const stream = await client.chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'long answer' }], stream: true })
    const consume = async (): Promise<void> => {
      for await (const _chunk of stream) {
        /* drain */
      }
    }
    const failure = await consume().catch((error: unknown) => error)
    expect(failure).toBeInstanceOf(APIError)
    expect(failure).not.toBeInstanceOf(APIConnectionError)
    expect(failure).toMatchObject({ code: 'upstream_unavailable', type: 'service_unavailable_error' })
  })

  it('relays an in-band provider error mid-stream as an error event, not [DONE]', async () => {
    // Paced, so the error arrives after chunks already went out (an error in the first read is
    // answered as a plain HTTP error instead: nothing had been sent yet).
    simulator.options.tokenIntervalMs = 5
    try {
      simulator.script({ errorAfterChunks: 2, status: 500 })
      const stream = await client.chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'long answer' }], stream: true })
      let received = 0
      const consume = async (): Promise<void> => {
        for await (const _chunk of stream) received++
      }
      const failure = await consume().catch((error: unknown) => error)
      expect(failure).toBeInstanceOf(APIError)
      expect(failure).not.toBeInstanceOf(APIConnectionError)
      expect(failure).toMatchObject({ code: 'provider_error', type: 'upstream_error' })
      expect(received).toBeGreaterThan(0)
    } finally {
      simulator.options.tokenIntervalMs = 0
    }
  })

  it('answers an in-band error in the first read as an HTTP error, since nothing was sent yet', async () => {
    simulator.script({ errorAfterChunks: 1, status: 500 })
    await expect(client.chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'x' }], stream: true })).rejects.toMatchObject({
      status: 502,
    })
  })

  it('aborts the upstream request when the client disconnects mid-stream', async () => {
    simulator.options.tokenIntervalMs = 50
    try {
      const controller = new AbortController()
      const stream = await client.chat.completions.create(
        { model: 'gpt-4o', messages: [{ role: 'user', content: 'a long story' }], stream: true },
        { signal: controller.signal },
      )
      const iterator = stream[Symbol.asyncIterator]()
      await iterator.next()
      controller.abort()
      await simulator.waitForClosedEarly(1, 5000)
      expect(simulator.closedEarly).toBe(1)
    } finally {
      simulator.options.tokenIntervalMs = 0
    }
  })

  it('lists models and serves health, liveness and readiness', async () => {
    const models = await client.models.list()
    expect(models.data.length).toBeGreaterThan(0)
    const health = await (await fetch(`${gateway.baseUrl}/health`)).json()
    expect(health).toMatchObject({ status: 'ok', service: 'gatehouse-gateway' })
    expect((await fetch(`${gateway.url}/livez`)).status).toBe(200)
    expect((await fetch(`${gateway.url}/readyz`)).status).toBe(200)
  })

  it('answers unknown routes and malformed JSON in the error envelope', async () => {
    const unknown = await fetch(`${gateway.url}/nope`)
    expect(unknown.status).toBe(404)
    expect(((await unknown.json()) as { error: { code: string } }).error.code).toBe('route_not_found')
    const malformed = await fetch(`${gateway.baseUrl}/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${gateway.workspaceKey}`, 'content-type': 'application/json' },
      body: '{"model":',
    })
    expect(malformed.status).toBe(400)
    expect(((await malformed.json()) as { error: { code: string } }).error.code).toBe('invalid_json')
  })
})

describe('metrics', () => {
  it('exposes request counts by route and status and the snapshot generation', async () => {
    const text = await (await fetch(`${gateway.url}/metrics`)).text()
    expect(text).toMatch(/gatehouse_http_requests_total\{route="\/v1\/chat\/completions",method="POST",status="200"\} \d+/)
    expect(text).toMatch(/gatehouse_http_requests_total\{route="\/v1\/chat\/completions",method="POST",status="400"\} \d+/)
    expect(text).toMatch(/gatehouse_snapshot_generation \d+/)
    expect(text).not.toContain('sk-upstream-secret')
  })

  it('counts a rejected snapshot and keeps serving the previous one', async () => {
    const before = gateway.holder.current?.generation
    const result = gateway.holder.apply({ ...gateway.snapshot, generation: 999, providers: [{ id: 'x', slug: 'x', name: 'x', kind: 'no-such-kind' }] })
    expect(result.ok).toBe(false)
    expect(gateway.holder.current?.generation).toBe(before)
    const text = await (await fetch(`${gateway.url}/metrics`)).text()
    expect(text).toMatch(/gatehouse_snapshot_rejections_total 1/)
  })
})
