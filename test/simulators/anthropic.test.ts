import Anthropic from '@anthropic-ai/sdk'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import type { Simulator } from './base.ts'
import { startAnthropicSimulator } from './anthropic.ts'

let sim: Simulator
let client: Anthropic

beforeAll(async () => {
  sim = await startAnthropicSimulator({ chunks: 4, apiKeys: ['sk-ant-test', 'k'] })
  client = new Anthropic({ apiKey: 'sk-ant-test', baseURL: sim.baseUrl, maxRetries: 0 })
})

afterEach(() => {
  sim.reset()
})

afterAll(async () => {
  await sim.close()
})

const weatherTool = {
  name: 'get_weather',
  description: 'Current weather for a city',
  input_schema: { type: 'object' as const, properties: { location: { type: 'string' } }, required: ['location'] },
}

interface RawEvent {
  event: string
  data: { type: string; [key: string]: unknown }
}

async function rawStream(body: unknown): Promise<RawEvent[]> {
  const response = await fetch(`${sim.url}/v1/messages`, {
    method: 'POST',
    headers: { 'x-api-key': 'k', 'anthropic-version': '2023-06-01', 'content-type': 'application/json' },
    body: JSON.stringify(body),
  })
  expect(response.headers.get('content-type')).toContain('text/event-stream')
  const text = await response.text()
  return text
    .split('\n\n')
    .filter((block) => block.trim() !== '')
    .map((block) => {
      const [eventLine, dataLine] = block.split('\n')
      return { event: eventLine!.slice('event: '.length), data: JSON.parse(dataLine!.slice('data: '.length)) as RawEvent['data'] }
    })
}

describe('Anthropic simulator, official SDK', () => {
  it('answers a message with cache usage and records the credential', async () => {
    sim.options.cachedTokens = 7
    sim.options.cacheWriteTokens = 3
    try {
      const message = await client.messages.create({ model: 'claude-sonnet-4-5', max_tokens: 100, messages: [{ role: 'user', content: 'hello claude' }] })
      expect(message.type).toBe('message')
      expect(message.content).toEqual([{ type: 'text', text: 'Echo: hello claude alpha bravo charlie' }])
      expect(message.stop_reason).toBe('end_turn')
      expect(message.usage).toMatchObject({ output_tokens: 4, cache_read_input_tokens: 7, cache_creation_input_tokens: 3 })
      // SDK 1.x sends the key as a bearer token; older clients send x-api-key.
      expect(sim.requests[0]?.headers.authorization ?? sim.requests[0]?.headers['x-api-key']).toContain('sk-ant-test')
      expect(sim.requests[0]?.headers['anthropic-version']).toBeTypeOf('string')
    } finally {
      sim.options.cachedTokens = 0
      sim.options.cacheWriteTokens = 0
    }
  })

  it('stops at max_tokens and at a stop sequence', async () => {
    const short = await client.messages.create({ model: 'claude-sonnet-4-5', max_tokens: 2, messages: [{ role: 'user', content: 'hi' }] })
    expect(short.stop_reason).toBe('max_tokens')
    const stopped = await client.messages.create({ model: 'claude-sonnet-4-5', max_tokens: 100, stop_sequences: ['bravo'], messages: [{ role: 'user', content: 'hi' }] })
    expect(stopped.stop_reason).toBe('stop_sequence')
    expect(stopped.stop_sequence).toBe('bravo')
    expect(stopped.content).toEqual([{ type: 'text', text: 'Echo: hi alpha ' }])
  })

  it('streams text that the SDK reassembles into the same message', async () => {
    const stream = client.messages.stream({ model: 'claude-sonnet-4-5', max_tokens: 100, messages: [{ role: 'user', content: 'stream it' }] })
    const final = await stream.finalMessage()
    expect(final.content).toEqual([{ type: 'text', text: 'Echo: stream it alpha bravo charlie' }])
    expect(final.usage.output_tokens).toBe(4)
    expect(final.stop_reason).toBe('end_turn')
  })

  it('streams thinking with a signature, then tool_use with input_json_delta', async () => {
    const stream = client.messages.stream({
      model: 'claude-sonnet-4-5',
      max_tokens: 2000,
      thinking: { type: 'enabled', budget_tokens: 1024 },
      tools: [weatherTool],
      messages: [{ role: 'user', content: 'What is the weather in Oslo?' }],
    })
    const final = await stream.finalMessage()
    expect(final.stop_reason).toBe('tool_use')
    expect(final.content.map((block) => block.type)).toEqual(['thinking', 'text', 'tool_use'])
    const thinking = final.content[0]
    expect(thinking?.type === 'thinking' && thinking.signature).toMatch(/^sig_sim/)
    const toolUse = final.content[2]
    expect(toolUse?.type === 'tool_use' && toolUse.input).toEqual({ location: 'Oslo' })
  })

  it('emits the documented event sequence, with ping', async () => {
    const events = await rawStream({ model: 'claude-sonnet-4-5', max_tokens: 100, stream: true, messages: [{ role: 'user', content: 'x' }] })
    expect(events.map((event) => event.event)).toEqual([
      'message_start',
      'content_block_start',
      'content_block_delta',
      'content_block_delta',
      'content_block_delta',
      'content_block_delta',
      'ping',
      'content_block_stop',
      'message_delta',
      'message_stop',
    ])
    expect(events.every((event) => event.event === event.data.type)).toBe(true)
    expect(events.at(-2)?.data).toMatchObject({ delta: { stop_reason: 'end_turn' }, usage: { output_tokens: 4 } })
  })

  it('uses tools in parallel unless disable_parallel_tool_use is set', async () => {
    const ask = { model: 'claude-sonnet-4-5', max_tokens: 100, tools: [weatherTool], messages: [{ role: 'user' as const, content: 'weather in Oslo and Bergen' }] }
    const stream = client.messages.stream(ask)
    const final = await stream.finalMessage()
    const inputs = final.content.flatMap((block) => (block.type === 'tool_use' ? [block.input] : []))
    expect(inputs).toEqual([{ location: 'Oslo' }, { location: 'Bergen' }])
    const single = await client.messages.create({ ...ask, tool_choice: { type: 'auto', disable_parallel_tool_use: true } })
    expect(single.content.filter((block) => block.type === 'tool_use')).toHaveLength(1)
  })

  it('forced tool_choice skips the preamble text', async () => {
    const message = await client.messages.create({
      model: 'claude-sonnet-4-5',
      max_tokens: 100,
      tools: [weatherTool],
      tool_choice: { type: 'tool', name: 'get_weather' },
      messages: [{ role: 'user', content: 'anything' }],
    })
    expect(message.content.map((block) => block.type)).toEqual(['tool_use'])
  })

  it('refuses a system role in messages and unpaired tool_use / tool_result blocks', async () => {
    const create = (messages: unknown[]): Promise<unknown> =>
      client.messages.create({ model: 'claude-sonnet-4-5', max_tokens: 5, messages } as Anthropic.MessageCreateParamsNonStreaming).catch((caught: unknown) => caught)
    expect(await create([{ role: 'system', content: 'be brief' }, { role: 'user', content: 'x' }])).toBeInstanceOf(Anthropic.BadRequestError)
    const use = { type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: {} }
    const unanswered = await create([{ role: 'user', content: 'x' }, { role: 'assistant', content: [use] }, { role: 'user', content: 'y' }])
    expect((unanswered as Error).message).toContain('toolu_1')
    expect(await create([{ role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_9', content: 'sunny' }] }])).toBeInstanceOf(Anthropic.BadRequestError)
    const answered = await create([
      { role: 'user', content: 'weather in Oslo' },
      { role: 'assistant', content: [use] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'sunny' }] },
    ])
    expect(answered).toMatchObject({ type: 'message', stop_reason: 'end_turn' })
  })

  it('counts tokens', async () => {
    const counted = await client.messages.countTokens({ model: 'claude-sonnet-4-5', messages: [{ role: 'user', content: 'x'.repeat(40) }] })
    expect(counted.input_tokens).toBe(11)
  })

  it('requires an API key and anthropic-version', async () => {
    const noKey = await fetch(`${sim.url}/v1/messages`, { method: 'POST', headers: { 'anthropic-version': '2023-06-01' }, body: '{}' })
    expect(noKey.status).toBe(401)
    // The API names its request id in the error body as well as in the `request-id` header.
    const requestId = noKey.headers.get('request-id')
    expect(requestId).toMatch(/^req_/)
    expect(await noKey.json()).toEqual({ type: 'error', error: { type: 'authentication_error', message: 'x-api-key header is required' }, request_id: requestId })
    const noVersion = await fetch(`${sim.url}/v1/messages`, { method: 'POST', headers: { 'x-api-key': 'k' }, body: '{}' })
    expect(noVersion.status).toBe(400)
    const noMaxTokens = await client.messages.create({ model: 'claude-sonnet-4-5', messages: [{ role: 'user', content: 'x' }] } as unknown as Anthropic.MessageCreateParamsNonStreaming).catch((caught: unknown) => caught)
    expect(noMaxTokens).toBeInstanceOf(Anthropic.BadRequestError)
  })

  it('plays scripted 529 overloaded and 429 with retry-after', async () => {
    sim.script({ status: 529 }, { status: 429, retryAfterS: 3 })
    const overloaded = await client.messages.create({ model: 'claude-sonnet-4-5', max_tokens: 5, messages: [{ role: 'user', content: 'x' }] }).catch((caught: unknown) => caught)
    expect(overloaded).toBeInstanceOf(Anthropic.InternalServerError)
    expect((overloaded as InstanceType<typeof Anthropic.APIError>).status).toBe(529)
    expect((overloaded as InstanceType<typeof Anthropic.APIError>).error).toMatchObject({ type: 'error', error: { type: 'overloaded_error' } })
    const limited = await client.messages.create({ model: 'claude-sonnet-4-5', max_tokens: 5, messages: [{ role: 'user', content: 'x' }] }).catch((caught: unknown) => caught)
    expect(limited).toBeInstanceOf(Anthropic.RateLimitError)
    expect((limited as InstanceType<typeof Anthropic.RateLimitError>).headers?.get('retry-after')).toBe('3')
  })

  it('sends an in-stream error event', async () => {
    sim.script({ errorAfterChunks: 3, status: 529 })
    const events = await rawStream({ model: 'claude-sonnet-4-5', max_tokens: 100, stream: true, messages: [{ role: 'user', content: 'x' }] })
    expect(events.map((event) => event.event)).toEqual(['message_start', 'content_block_start', 'content_block_delta', 'error'])
    expect(events[3]?.data).toEqual({ type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } })

    sim.script({ errorAfterChunks: 2, status: 529 })
    const failure = await client.messages.stream({ model: 'claude-sonnet-4-5', max_tokens: 100, messages: [{ role: 'user', content: 'x' }] }).finalMessage().catch((caught: unknown) => caught)
    expect(failure).toBeInstanceOf(Anthropic.APIError)
  })

  it('sees a stalled stream abandoned by the client', async () => {
    sim.script({ stallAfterChunks: 2 })
    const controller = new AbortController()
    const stream = await client.messages.create({ model: 'claude-sonnet-4-5', max_tokens: 100, stream: true, messages: [{ role: 'user', content: 'x' }] }, { signal: controller.signal })
    const iterator = stream[Symbol.asyncIterator]()
    await iterator.next()
    controller.abort()
    await sim.waitForClosedEarly(1, 2000)
  })
})

describe('Anthropic simulator, newer wire details', () => {
  it('repeats the whole usage cumulatively in message_delta', async () => {
    const events = await rawStream({ model: 'claude-sonnet-4-5', max_tokens: 100, stream: true, messages: [{ role: 'user', content: 'count me' }] })
    const start = events.find((event) => event.event === 'message_start')!.data.message as { usage: Record<string, number> }
    const delta = events.find((event) => event.event === 'message_delta')!.data.usage as Record<string, number>
    expect(delta.input_tokens).toBe(start.usage.input_tokens)
    expect(delta.cache_read_input_tokens).toBe(start.usage.cache_read_input_tokens)
    expect(delta.output_tokens).toBe(4)
  })

  it.each(['refusal', 'pause_turn', 'model_context_window_exceeded'])('ends a message with a scripted stop reason %s', async (stopReason) => {
    sim.script({ stopReason }, { stopReason })
    const message = await client.messages.create({ model: 'claude-sonnet-4-5', max_tokens: 100, messages: [{ role: 'user', content: 'x' }] })
    expect(message.stop_reason).toBe(stopReason)
    const streamed = await client.messages.stream({ model: 'claude-sonnet-4-5', max_tokens: 100, messages: [{ role: 'user', content: 'x' }] }).finalMessage()
    expect(streamed.stop_reason).toBe(stopReason)
  })

  it('answers redacted_thinking when the prompt mentions it, plain and streamed', async () => {
    const ask = { model: 'claude-sonnet-4-5', max_tokens: 200, thinking: { type: 'enabled' as const, budget_tokens: 1024 }, messages: [{ role: 'user' as const, content: 'a redacted thought please' }] }
    const message = await client.messages.create(ask)
    expect(message.content[0]).toMatchObject({ type: 'redacted_thinking', data: expect.any(String) })
    expect(message.content.some((block) => block.type === 'thinking')).toBe(false)
    const streamed = await client.messages.stream(ask).finalMessage()
    expect(streamed.content[0]).toMatchObject({ type: 'redacted_thinking', data: expect.any(String) })
  })

  it('names the request id in the body of an error answer and of a scripted fault', async () => {
    sim.script({ status: 529 })
    const overloaded = await fetch(`${sim.url}/v1/messages`, {
      method: 'POST',
      headers: { 'x-api-key': 'k', 'anthropic-version': '2023-06-01', 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'claude-sonnet-4-5', max_tokens: 5, messages: [{ role: 'user', content: 'x' }] }),
    })
    expect(overloaded.status).toBe(529)
    expect(overloaded.headers.get('anthropic-ratelimit-requests-limit')).not.toBeNull()
    const body = (await overloaded.json()) as { request_id?: string; error: { type: string } }
    expect(body.error.type).toBe('overloaded_error')
    expect(body.request_id).toBe(overloaded.headers.get('request-id'))
  })
})
