import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import type { UpstreamEvent } from '../../gateway/src/providers/adapter.ts'
import { decodeSse } from '../../gateway/src/upstream/framing/sse.ts'
import type { Simulator } from './base.ts'
import { startCohereSimulator } from './cohere.ts'

let sim: Simulator

beforeAll(async () => {
  sim = await startCohereSimulator({ chunks: 3, apiKeys: ['co-key'] })
})

afterEach(() => {
  sim.reset()
})

afterAll(async () => {
  await sim.close()
})

function post(path: string, body: unknown, headers: Record<string, string> = { authorization: 'Bearer co-key' }): Promise<Response> {
  return fetch(sim.url + path, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) })
}

async function events(response: Response): Promise<UpstreamEvent[]> {
  const collected: UpstreamEvent[] = []
  for await (const event of decodeSse(response.body!)) collected.push(event)
  return collected
}

const weatherTool = { type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: { location: { type: 'string' } } } } }

describe('Cohere v2 simulator', () => {
  it('chats with billed and raw token usage', async () => {
    const response = await post('/v2/chat', { model: 'command-a-03-2025', messages: [{ role: 'user', content: 'hello cohere' }] })
    expect(await response.json()).toMatchObject({
      finish_reason: 'COMPLETE',
      message: { role: 'assistant', content: [{ type: 'text', text: 'Echo: hello cohere alpha bravo' }] },
      usage: { billed_units: { input_tokens: 4, output_tokens: 3 }, tokens: { input_tokens: 68, output_tokens: 3 } },
    })
    expect(sim.requests[0]?.headers.authorization).toBe('Bearer co-key')
  })

  it('streams typed events ending with message-end and usage', async () => {
    const decoded = await events(await post('/v2/chat', { model: 'command-r-plus', stream: true, messages: [{ role: 'user', content: 'x' }] }))
    expect(decoded.map((event) => event.event)).toEqual(['message-start', 'content-start', 'content-delta', 'content-delta', 'content-delta', 'content-end', 'message-end'])
    expect(decoded.every((event) => (event.data as { type: string }).type === event.event)).toBe(true)
    expect(decoded.at(-1)?.data).toMatchObject({ delta: { finish_reason: 'COMPLETE', usage: { billed_units: { output_tokens: 3 } } } })
  })

  it('calls tools with a plan, streamed as tool-call events', async () => {
    const body = { model: 'command-r-plus', tools: [weatherTool], messages: [{ role: 'user', content: 'weather in Madrid' }] }
    const answer = (await (await post('/v2/chat', body)).json()) as { finish_reason: string; message: { tool_plan: string; tool_calls: Array<{ function: { arguments: string } }> } }
    expect(answer.finish_reason).toBe('TOOL_CALL')
    expect(answer.message.tool_plan).toContain('get_weather')
    expect(JSON.parse(answer.message.tool_calls[0]!.function.arguments)).toEqual({ location: 'Madrid' })

    const decoded = await events(await post('/v2/chat', { ...body, stream: true }))
    expect(decoded.map((event) => event.event)).toEqual(['message-start', 'tool-plan-delta', 'tool-call-start', 'tool-call-delta', 'tool-call-delta', 'tool-call-delta', 'tool-call-end', 'message-end'])
    const args = decoded
      .filter((event) => event.event === 'tool-call-delta')
      .map((event) => (event.data as { delta: { message: { tool_calls: { function: { arguments: string } } } } }).delta.message.tool_calls.function.arguments)
      .join('')
    expect(JSON.parse(args)).toEqual({ location: 'Madrid' })
  })

  it('embeds by type', async () => {
    const response = await post('/v2/embed', { model: 'embed-v4.0', texts: ['a', 'b'], input_type: 'search_document', embedding_types: ['float', 'int8', 'ubinary', 'base64'], output_dimension: 256 })
    const body = (await response.json()) as { embeddings: Record<string, unknown[]>; meta: { billed_units: { input_tokens: number } }; response_type: string }
    expect(body.response_type).toBe('embeddings_by_type')
    expect((body.embeddings.float![0] as number[]).length).toBe(256)
    expect((body.embeddings.int8![0] as number[]).every((value) => Number.isInteger(value) && value >= -128 && value <= 127)).toBe(true)
    expect((body.embeddings.ubinary![0] as number[]).length).toBe(32)
    expect(Buffer.from(body.embeddings.base64![0] as string, 'base64').length).toBe(256 * 4)
    expect(body.meta.billed_units.input_tokens).toBe(2)
    const missingType = await post('/v2/embed', { model: 'embed-v4.0', texts: ['a'] })
    expect(missingType.status).toBe(400)
  })

  it('reranks by word overlap, top_n', async () => {
    const response = await post('/v2/rerank', { model: 'rerank-v3.5', query: 'capital of France', documents: ['Berlin is in Germany', 'Paris is the capital of France', 'capital letters'], top_n: 2 })
    const body = (await response.json()) as { results: Array<{ index: number; relevance_score: number }> }
    expect(body.results.map((result) => result.index)).toEqual([1, 2])
    expect(body.results[0]!.relevance_score).toBeGreaterThan(body.results[1]!.relevance_score)
  })

  it('answers Cohere-shaped errors and ends a failed stream with finish_reason ERROR', async () => {
    const unauthenticated = await post('/v2/chat', { model: 'command-r-plus', messages: [] }, {})
    expect(unauthenticated.status).toBe(401)
    expect(await unauthenticated.json()).toMatchObject({ message: 'invalid api token' })
    sim.script({ status: 429 }, { errorAfterChunks: 2 })
    const limited = await post('/v2/chat', { model: 'command-r-plus', messages: [{ role: 'user', content: 'x' }] })
    expect(limited.status).toBe(429)
    const decoded = await events(await post('/v2/chat', { model: 'command-r-plus', stream: true, messages: [{ role: 'user', content: 'x' }] }))
    expect(decoded.at(-1)).toMatchObject({ event: 'message-end', data: { delta: { finish_reason: 'ERROR' } } })
  })
})
