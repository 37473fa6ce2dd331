import OpenAI from 'openai'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import type { Simulator } from './base.ts'
import { startOpenAISimulator } from './openai.ts'

let sim: Simulator
let client: OpenAI

beforeAll(async () => {
  sim = await startOpenAISimulator({ chunks: 4, apiKeys: ['sk-test-primary', 'sk-test', 'sk-x'] })
  client = new OpenAI({ apiKey: 'sk-test-primary', baseURL: sim.baseUrl, maxRetries: 0 })
})

afterEach(() => {
  sim.reset()
  sim.options.tokenIntervalMs = 0
})

afterAll(async () => {
  await sim.close()
})

const weatherTool = {
  type: 'function' as const,
  function: {
    name: 'get_weather',
    description: 'Current weather for a city',
    parameters: { type: 'object', properties: { location: { type: 'string' }, unit: { type: 'string', enum: ['celsius', 'fahrenheit'] } }, required: ['location'] },
  },
}

describe('OpenAI simulator, official SDK', () => {
  it('answers a chat completion with usage details and records the request', async () => {
    const completion = await client.chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hello there' }] })
    expect(completion.object).toBe('chat.completion')
    expect(completion.model).toBe('gpt-4o')
    expect(completion.choices[0]?.message.content).toBe('Echo: hello there alpha bravo charlie')
    expect(completion.choices[0]?.finish_reason).toBe('stop')
    expect(completion.usage?.completion_tokens).toBe(4)
    expect(completion.usage?.prompt_tokens_details?.cached_tokens).toBe(0)
    expect(completion.usage?.completion_tokens_details?.reasoning_tokens).toBe(0)
    expect(sim.requests).toHaveLength(1)
    expect(sim.requests[0]?.headers.authorization).toBe('Bearer sk-test-primary')
    expect(sim.requests[0]?.body).toMatchObject({ model: 'gpt-4o' })
  })

  it('reports cached and reasoning tokens, n choices and max_tokens truncation', async () => {
    sim.options.cachedTokens = 2
    sim.options.reasoningTokens = 5
    try {
      const completion = await client.chat.completions.create({ model: 'o3-mini', n: 2, max_completion_tokens: 2, messages: [{ role: 'user', content: 'hi' }] })
      expect(completion.choices.map((choice) => choice.index)).toEqual([0, 1])
      expect(completion.choices[1]?.finish_reason).toBe('length')
      expect(completion.usage?.completion_tokens).toBe(2 * 2 + 5)
      expect(completion.usage?.prompt_tokens_details?.cached_tokens).toBe(2)
      expect(completion.usage?.completion_tokens_details?.reasoning_tokens).toBe(5)
    } finally {
      sim.options.cachedTokens = 0
      sim.options.reasoningTokens = 0
    }
  })

  it('streams chunks and a final usage chunk only when include_usage is set', async () => {
    const stream = await client.chat.completions.create({
      model: 'gpt-4o',
      stream: true,
      stream_options: { include_usage: true },
      messages: [{ role: 'user', content: 'stream me' }],
    })
    let text = ''
    const finishReasons: (string | null)[] = []
    let usageChunk: OpenAI.Chat.Completions.ChatCompletionChunk | undefined
    for await (const chunk of stream) {
      expect(chunk.object).toBe('chat.completion.chunk')
      if (chunk.choices.length === 0) usageChunk = chunk
      for (const choice of chunk.choices) {
        text += choice.delta.content ?? ''
        if (choice.finish_reason) finishReasons.push(choice.finish_reason)
      }
    }
    expect(text).toBe('Echo: stream me alpha bravo charlie')
    expect(finishReasons).toEqual(['stop'])
    expect(usageChunk?.usage?.total_tokens).toBeGreaterThan(4)

    const plain = await client.chat.completions.create({ model: 'gpt-4o', stream: true, messages: [{ role: 'user', content: 'x' }] })
    const chunks = []
    for await (const chunk of plain) chunks.push(chunk)
    expect(chunks.some((chunk) => chunk.choices.length === 0)).toBe(false)
    expect(chunks.every((chunk) => chunk.usage === undefined)).toBe(true)
  })

  it('calls a tool when asked about the weather, streamed the way OpenAI streams tool calls', async () => {
    const completion = await client.chat.completions.create({
      model: 'gpt-4o',
      tools: [weatherTool],
      messages: [{ role: 'user', content: 'What is the weather in Berlin?' }],
    })
    const call = completion.choices[0]?.message.tool_calls?.[0]
    expect(completion.choices[0]?.finish_reason).toBe('tool_calls')
    expect(call?.type === 'function' && call.function.name).toBe('get_weather')
    expect(call?.type === 'function' && JSON.parse(call.function.arguments)).toEqual({ location: 'Berlin', unit: 'celsius' })

    const runner = client.chat.completions.stream({
      model: 'gpt-4o',
      tools: [weatherTool],
      tool_choice: { type: 'function', function: { name: 'get_weather' } },
      messages: [{ role: 'user', content: 'anything' }],
    })
    const final = await runner.finalChatCompletion()
    const streamed = final.choices[0]?.message.tool_calls?.[0]
    expect(final.choices[0]?.finish_reason).toBe('tool_calls')
    expect(streamed?.type === 'function' && JSON.parse(streamed.function.arguments)).toEqual({ location: 'Paris', unit: 'celsius' })
  })

  it('calls a tool once per place in parallel, streamed with one index per call, unless parallel_tool_calls is false', async () => {
    const ask = { model: 'gpt-4o', tools: [weatherTool], messages: [{ role: 'user' as const, content: 'Weather in Paris, Rome and New York?' }] }
    const completion = await client.chat.completions.create(ask)
    const locations = (completion.choices[0]?.message.tool_calls ?? []).map((call) => call.type === 'function' && JSON.parse(call.function.arguments).location)
    expect(locations).toEqual(['Paris', 'Rome', 'New York'])
    const ids = (completion.choices[0]?.message.tool_calls ?? []).map((call) => call.id)
    expect(new Set(ids).size).toBe(3)

    const streamed = await client.chat.completions.stream(ask).finalChatCompletion()
    expect(streamed.choices[0]?.message.tool_calls?.map((call) => call.type === 'function' && JSON.parse(call.function.arguments).location)).toEqual(['Paris', 'Rome', 'New York'])

    const single = await client.chat.completions.create({ ...ask, parallel_tool_calls: false })
    expect(single.choices[0]?.message.tool_calls).toHaveLength(1)
  })

  it('answers in text after a tool result and when tool_choice is none', async () => {
    const completion = await client.chat.completions.create({
      model: 'gpt-4o',
      tools: [weatherTool],
      tool_choice: 'none',
      messages: [{ role: 'user', content: 'weather in Rome?' }],
    })
    expect(completion.choices[0]?.message.tool_calls).toBeUndefined()
    expect(completion.choices[0]?.message.content).toContain('Echo: weather in Rome?')
  })

  it('answers JSON in JSON mode, filling a json_schema', async () => {
    const object = await client.chat.completions.create({ model: 'gpt-4o', response_format: { type: 'json_object' }, messages: [{ role: 'user', content: 'as json' }] })
    expect(JSON.parse(object.choices[0]!.message.content!)).toEqual({ echo: 'as json' })
    const schema = { type: 'object', properties: { city: { type: 'string' }, population: { type: 'integer' } }, required: ['city', 'population'] }
    const filled = await client.chat.completions.create({
      model: 'gpt-4o',
      response_format: { type: 'json_schema', json_schema: { name: 'place', schema, strict: true } },
      messages: [{ role: 'user', content: 'tell me about life in Lyon' }],
    })
    expect(JSON.parse(filled.choices[0]!.message.content!)).toEqual({ city: 'Lyon', population: 1 })
  })

  it('returns log probabilities when asked, streamed and not', async () => {
    const completion = await client.chat.completions.create({ model: 'gpt-4o', logprobs: true, top_logprobs: 2, messages: [{ role: 'user', content: 'x' }] })
    const content = completion.choices[0]?.logprobs?.content ?? []
    expect(content.map((entry) => entry.token).join('')).toBe(completion.choices[0]?.message.content)
    expect(content[0]?.top_logprobs).toHaveLength(2)
    expect(content[0]?.logprob).toBeLessThan(0)
    const stream = await client.chat.completions.create({ model: 'gpt-4o', logprobs: true, stream: true, messages: [{ role: 'user', content: 'x' }] })
    const tokens: string[] = []
    for await (const chunk of stream) for (const entry of chunk.choices[0]?.logprobs?.content ?? []) tokens.push(entry.token)
    expect(tokens).toHaveLength(4)
  })

  it('embeds as floats (SDK default base64 decoded) with dimensions', async () => {
    const viaSdk = await client.embeddings.create({ model: 'text-embedding-3-small', input: ['a', 'b'], dimensions: 8 })
    expect(sim.requests[0]?.body).toMatchObject({ encoding_format: 'base64' })
    expect(viaSdk.data).toHaveLength(2)
    const vector = viaSdk.data[0]!.embedding
    expect(vector).toHaveLength(8)
    const norm = Math.sqrt(vector.reduce((sum, value) => sum + value * value, 0))
    expect(norm).toBeCloseTo(1, 4)

    const asFloats = await client.embeddings.create({ model: 'text-embedding-3-small', input: 'a', dimensions: 8, encoding_format: 'float' })
    asFloats.data[0]!.embedding.forEach((value, index) => expect(value).toBeCloseTo(vector[index]!, 5))
    expect(asFloats.usage.prompt_tokens).toBe(1)
  })

  it('serves text completions, streamed and not', async () => {
    const completion = await client.completions.create({ model: 'gpt-3.5-turbo-instruct', prompt: 'Say this', max_tokens: 3 })
    expect(completion.object).toBe('text_completion')
    expect(completion.choices[0]?.text).toBe('Echo: Say this alpha bravo')
    expect(completion.choices[0]?.finish_reason).toBe('length')
    const stream = await client.completions.create({ model: 'gpt-3.5-turbo-instruct', prompt: 'Say this', stream: true })
    let text = ''
    for await (const chunk of stream) text += chunk.choices[0]?.text ?? ''
    expect(text).toBe('Echo: Say this alpha bravo charlie')
  })

  it("refuses stream_options on a request that does not stream, as OpenAI does", async () => {
    const error = await client.chat.completions
      .create({ model: 'gpt-4o', stream_options: { include_usage: true }, messages: [{ role: 'user', content: 'x' }] })
      .catch((caught: unknown) => caught)
    expect(error).toBeInstanceOf(OpenAI.BadRequestError)
    expect((error as InstanceType<typeof OpenAI.BadRequestError>).param).toBe('stream_options')
  })

  it('enforces the tool-turn rules: every tool call answered, no tool message without a call', async () => {
    const call = { id: 'call_1', type: 'function' as const, function: { name: 'get_weather', arguments: '{}' } }
    const unanswered = await client.chat.completions
      .create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'x' }, { role: 'assistant', tool_calls: [call] }, { role: 'user', content: 'y' }] })
      .catch((caught: unknown) => caught)
    expect((unanswered as Error).message).toContain('call_1')
    const orphan = await client.chat.completions
      .create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'x' }, { role: 'tool', tool_call_id: 'call_9', content: 'sunny' }] })
      .catch((caught: unknown) => caught)
    expect(orphan).toBeInstanceOf(OpenAI.BadRequestError)
    const answered = await client.chat.completions.create({
      model: 'gpt-4o',
      tools: [weatherTool],
      messages: [{ role: 'user', content: 'weather in Oslo' }, { role: 'assistant', tool_calls: [call] }, { role: 'tool', tool_call_id: 'call_1', content: 'sunny' }],
    })
    expect(answered.choices[0]?.finish_reason).toBe('stop')
  })

  it('lists models', async () => {
    const page = await client.models.list()
    expect(page.data.map((model) => model.id)).toContain('gpt-4o')
  })

  it('rejects a missing key with a 401 in OpenAI shape', async () => {
    const response = await fetch(`${sim.baseUrl}/chat/completions`, { method: 'POST', body: '{}', headers: { 'content-type': 'application/json' } })
    expect(response.status).toBe(401)
    const body = (await response.json()) as { error: { type: string; code: unknown; param: unknown; message: string } }
    expect(body.error).toMatchObject({ type: 'invalid_request_error', param: null, code: null })
  })

  it('plays a scripted 429 with retry-after and the SDK retries after it', async () => {
    sim.script({ status: 429, retryAfterMs: 10 })
    const error = await client.chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'x' }] }).catch((caught: unknown) => caught)
    expect(error).toBeInstanceOf(OpenAI.RateLimitError)
    expect((error as InstanceType<typeof OpenAI.RateLimitError>).code).toBe('rate_limit_exceeded')
    expect((error as InstanceType<typeof OpenAI.RateLimitError>).headers.get('retry-after-ms')).toBe('10')

    sim.script({ status: 429, retryAfterS: 0 })
    const retrying = new OpenAI({ apiKey: 'sk-test', baseURL: sim.baseUrl, maxRetries: 1 })
    const completion = await retrying.chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'again' }] })
    expect(completion.choices[0]?.message.content).toContain('again')
    expect(sim.requests).toHaveLength(3)
  })

  it('resets the connection before answering', async () => {
    sim.script({ reset: true })
    const error = await client.chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'x' }] }).catch((caught: unknown) => caught)
    expect(error).toBeInstanceOf(OpenAI.APIConnectionError)
    expect(sim.closedEarly).toBe(0)
  })

  it('cuts a stream after some chunks', async () => {
    sim.script({ resetAfterChunks: 2 })
    const stream = await client.chat.completions.create({ model: 'gpt-4o', stream: true, messages: [{ role: 'user', content: 'x' }] })
    const received: string[] = []
    const error = await (async () => {
      for await (const chunk of stream) received.push(chunk.choices[0]?.delta.content ?? '')
    })().catch((caught: unknown) => caught)
    expect(error).toBeInstanceOf(Error)
    expect(received).toHaveLength(2)
  })

  it('sees a client abandon a stalled stream', async () => {
    sim.script({ stallAfterChunks: 1 })
    const controller = new AbortController()
    const stream = await client.chat.completions.create({ model: 'gpt-4o', stream: true, messages: [{ role: 'user', content: 'x' }] }, { signal: controller.signal })
    const iterator = stream[Symbol.asyncIterator]()
    await iterator.next()
    controller.abort()
    await sim.waitForClosedEarly(1, 2000)
    expect(sim.closedEarly).toBe(1)
  })

  it('sends an in-band stream error', async () => {
    sim.script({ errorAfterChunks: 1, status: 500, message: 'boom' })
    const stream = await client.chat.completions.create({ model: 'gpt-4o', stream: true, messages: [{ role: 'user', content: 'x' }] })
    const error = await (async () => {
      for await (const _chunk of stream) void _chunk
    })().catch((caught: unknown) => caught)
    expect(error).toBeInstanceOf(OpenAI.APIError)
    expect((error as Error).message).toContain('boom')
  })

  it('delays the first byte and paces tokens', async () => {
    sim.script({ firstByteDelayMs: 60 })
    sim.options.tokenIntervalMs = 10
    const started = performance.now()
    const stream = await client.chat.completions.create({ model: 'gpt-4o', stream: true, messages: [{ role: 'user', content: 'x' }] })
    for await (const _chunk of stream) void _chunk
    // 60 ms before headers, then 6 frames after the first, 10 ms apart.
    expect(performance.now() - started).toBeGreaterThanOrEqual(60 + 50)
  })

  it('matches faults by predicate and echoes other OpenAI routes', async () => {
    sim.script({ status: 500, match: (request) => request.path === '/v1/moderations' })
    const echo = await fetch(`${sim.baseUrl}/files?purpose=batch`, { headers: { authorization: 'Bearer sk-x' } })
    expect(await echo.json()).toMatchObject({ object: 'simulator.echo', method: 'GET', path: '/v1/files', query: { purpose: 'batch' } })
    expect(sim.pendingFaults).toBe(1)
    const moderation = await fetch(`${sim.baseUrl}/moderations`, { method: 'POST', headers: { authorization: 'Bearer sk-x' }, body: '{}' })
    expect(moderation.status).toBe(500)
    expect(((await moderation.json()) as { error: { type: string } }).error.type).toBe('server_error')
  })
})

describe('OpenAI simulator, Responses API', () => {
  it('answers a response and streams its named events in order', async () => {
    const response = await client.responses.create({ model: 'gpt-4o', input: 'hi responses' })
    expect(response.output_text).toBe('Echo: hi responses alpha bravo charlie')
    const stream = await client.responses.create({ model: 'gpt-4o', input: 'hi', stream: true })
    const types: string[] = []
    for await (const event of stream) types.push(event.type)
    expect(types).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.content_part.added',
      'response.output_text.delta',
      'response.output_text.delta',
      'response.output_text.delta',
      'response.output_text.delta',
      'response.output_text.done',
      'response.content_part.done',
      'response.output_item.done',
      'response.completed',
    ])
  })
})
