import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import type { UpstreamEvent } from '../../gateway/src/providers/adapter.ts'
import { decodeSse } from '../../gateway/src/upstream/framing/sse.ts'
import type { Simulator } from './base.ts'
import { startGoogleSimulator } from './google.ts'

let sim: Simulator

beforeAll(async () => {
  sim = await startGoogleSimulator({ chunks: 3, apiKeys: ['gemini-key', 'ya29.vertex-token'] })
})

afterEach(() => {
  sim.reset()
  sim.options.cachedTokens = 0
})

afterAll(async () => {
  await sim.close()
})

function post(path: string, body: unknown, headers: Record<string, string> = { 'x-goog-api-key': 'gemini-key' }): Promise<Response> {
  return fetch(sim.url + path, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) })
}

async function sseEvents(response: Response): Promise<UpstreamEvent[]> {
  const events: UpstreamEvent[] = []
  for await (const event of decodeSse(response.body!)) events.push(event)
  return events
}

const ask = (text: string, extra: Record<string, unknown> = {}): Record<string, unknown> => ({ contents: [{ role: 'user', parts: [{ text }] }], ...extra })

interface GenerateResponse {
  candidates: Array<{ content?: { parts: Array<{ text?: string; thought?: boolean; functionCall?: { name: string; args: unknown } }> }; finishReason?: string }>
  usageMetadata: Record<string, number>
}

describe('Gemini API simulator', () => {
  it('generates content with usage metadata, key in a header or the query', async () => {
    sim.options.cachedTokens = 1
    const response = await post('/v1beta/models/gemini-2.5-flash:generateContent', ask('hello gemini'))
    const body = (await response.json()) as GenerateResponse
    expect(body.candidates[0]?.content?.parts).toEqual([{ text: 'Echo: hello gemini alpha bravo' }])
    expect(body.candidates[0]?.finishReason).toBe('STOP')
    expect(body.usageMetadata).toMatchObject({ promptTokenCount: 4, candidatesTokenCount: 3, totalTokenCount: 7, cachedContentTokenCount: 1 })
    const viaQuery = await fetch(`${sim.url}/v1beta/models/gemini-2.5-flash:generateContent?key=gemini-key`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(ask('x')),
    })
    expect(viaQuery.status).toBe(200)
    expect(sim.requests[1]?.query.key).toBe('gemini-key')
  })

  it('streams with alt=sse, usage and finishReason on the last event', async () => {
    const events = await sseEvents(await post('/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse', ask('stream')))
    const responses = events.map((event) => event.data as GenerateResponse)
    expect(responses).toHaveLength(3)
    expect(responses.map((response) => response.candidates[0]?.content?.parts[0]?.text).join('')).toBe('Echo: stream alpha bravo')
    expect(responses.at(-1)?.candidates[0]?.finishReason).toBe('STOP')
    expect(responses.at(-1)?.usageMetadata.candidatesTokenCount).toBe(3)
  })

  it('streams a JSON array without alt=sse', async () => {
    const response = await post('/v1beta/models/gemini-2.5-flash:streamGenerateContent', ask('array'))
    const body = (await response.json()) as GenerateResponse[]
    expect(body).toHaveLength(3)
  })

  it('calls a function, reports thoughts, stops at MAX_TOKENS and blocks for SAFETY', async () => {
    const tools = [{ functionDeclarations: [{ name: 'get_weather', parameters: { type: 'object', properties: { location: { type: 'string' } } } }] }]
    const called = (await (await post('/v1beta/models/gemini-2.5-flash:generateContent', ask('weather in Tokyo', { tools }))).json()) as GenerateResponse
    expect(called.candidates[0]?.content?.parts).toEqual([{ functionCall: { name: 'get_weather', args: { location: 'Tokyo' } } }])

    const thinking = (await (
      await post('/v1beta/models/gemini-2.5-flash:generateContent', ask('think', { generationConfig: { thinkingConfig: { includeThoughts: true } } }))
    ).json()) as GenerateResponse
    expect(thinking.candidates[0]?.content?.parts[0]?.thought).toBe(true)
    expect(thinking.usageMetadata.thoughtsTokenCount).toBe(4)
    expect(thinking.usageMetadata.totalTokenCount).toBe(thinking.usageMetadata.promptTokenCount! + 3 + 4)

    const short = (await (await post('/v1beta/models/gemini-2.5-flash:generateContent', ask('x', { generationConfig: { maxOutputTokens: 1 } }))).json()) as GenerateResponse
    expect(short.candidates[0]?.finishReason).toBe('MAX_TOKENS')

    const blocked = (await (await post('/v1beta/models/gemini-2.5-flash:generateContent', ask('something unsafe'))).json()) as GenerateResponse
    expect(blocked.candidates[0]?.finishReason).toBe('SAFETY')
    expect(blocked.candidates[0]?.content).toBeUndefined()
  })

  it('answers JSON when responseMimeType asks for it', async () => {
    const schema = { type: 'OBJECT', properties: { city: { type: 'STRING' } } }
    const body = (await (
      await post('/v1beta/models/gemini-2.5-flash:generateContent', ask('facts for Kyoto', { generationConfig: { responseMimeType: 'application/json', responseSchema: schema } }))
    ).json()) as GenerateResponse
    expect(JSON.parse(body.candidates[0]?.content?.parts[0]?.text ?? '')).toEqual({ city: 'Kyoto' })
  })

  it('embeds one and many', async () => {
    const one = (await (await post('/v1beta/models/text-embedding-004:embedContent', { content: { parts: [{ text: 'a' }] } })).json()) as { embedding: { values: number[] } }
    expect(one.embedding.values).toHaveLength(768)
    const many = (await (
      await post('/v1beta/models/gemini-embedding-001:batchEmbedContents', {
        requests: [{ model: 'models/gemini-embedding-001', content: { parts: [{ text: 'a' }] }, outputDimensionality: 16 }, { model: 'models/gemini-embedding-001', content: { parts: [{ text: 'b' }] } }],
      })
    ).json()) as { embeddings: Array<{ values: number[] }> }
    expect(many.embeddings.map((embedding) => embedding.values.length)).toEqual([16, 3072])
  })

  it('answers Google-shaped errors: missing key, bad key, scripted 429 with RetryInfo, in-stream error', async () => {
    const wrongRole = await post('/v1beta/models/gemini-2.5-flash:generateContent', { contents: [{ role: 'assistant', parts: [{ text: 'x' }] }] })
    expect(((await wrongRole.json()) as { error: { message: string } }).error.message).toBe('Please use a valid role: user, model.')
    const missing = await post('/v1beta/models/gemini-2.5-flash:generateContent', ask('x'), {})
    expect(missing.status).toBe(403)
    expect(((await missing.json()) as { error: { status: string } }).error.status).toBe('PERMISSION_DENIED')
    const bad = await post('/v1beta/models/gemini-2.5-flash:generateContent', ask('x'), { 'x-goog-api-key': 'nope' })
    expect(bad.status).toBe(400)
    expect(((await bad.json()) as { error: { message: string } }).error.message).toBe('API key not valid. Please pass a valid API key.')

    sim.script({ status: 429 }, { errorAfterChunks: 1, status: 503 })
    const limited = await post('/v1beta/models/gemini-2.5-flash:generateContent', ask('x'))
    expect(await limited.json()).toEqual({
      error: {
        code: 429,
        message: 'Resource has been exhausted (e.g. check quota).',
        status: 'RESOURCE_EXHAUSTED',
        details: [{ '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: '1s' }],
      },
    })
    const events = await sseEvents(await post('/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse', ask('x')))
    expect(events.at(-1)?.data).toMatchObject({ error: { code: 503, status: 'UNAVAILABLE' } })
  })
})

describe('Vertex AI on the Google simulator', () => {
  const vertex = '/v1/projects/my-project/locations/us-central1/publishers'
  const bearer = { authorization: 'Bearer ya29.vertex-token' }

  it('serves Gemini models with a bearer token and refuses without one', async () => {
    const ok = await post(`${vertex}/google/models/gemini-2.5-pro:generateContent`, ask('vertex'), bearer)
    expect(((await ok.json()) as GenerateResponse).candidates[0]?.content?.parts[0]?.text).toBe('Echo: vertex alpha bravo')
    const denied = await post(`${vertex}/google/models/gemini-2.5-pro:generateContent`, ask('vertex'), {})
    expect(denied.status).toBe(401)
    expect(((await denied.json()) as { error: { status: string } }).error.status).toBe('UNAUTHENTICATED')
  })

  it('streams Gemini on Vertex and embeds with :predict', async () => {
    const events = await sseEvents(await post(`${vertex}/google/models/gemini-2.5-pro:streamGenerateContent?alt=sse`, ask('x'), bearer))
    expect(events).toHaveLength(3)
    const predicted = (await (await post(`${vertex}/google/models/text-embedding-005:predict`, { instances: [{ content: 'hi' }] }, bearer)).json()) as {
      predictions: Array<{ embeddings: { values: number[]; statistics: { token_count: number } } }>
    }
    expect(predicted.predictions[0]?.embeddings.values).toHaveLength(768)
  })

  it('serves Anthropic models with rawPredict and streamRawPredict', async () => {
    const body = { anthropic_version: 'vertex-2023-10-16', max_tokens: 20, messages: [{ role: 'user', content: 'claude on vertex' }] }
    const message = (await (await post(`${vertex}/anthropic/models/claude-sonnet-4@20250514:rawPredict`, body, bearer)).json()) as { content: unknown[]; model: string }
    expect(message.model).toBe('claude-sonnet-4@20250514')
    expect(message.content).toEqual([{ type: 'text', text: 'Echo: claude on vertex alpha bravo' }])
    const events = await sseEvents(await post(`${vertex}/anthropic/models/claude-sonnet-4@20250514:streamRawPredict`, { ...body, stream: true }, bearer))
    expect(events[0]?.event).toBe('message_start')
    expect(events.at(-1)?.event).toBe('message_stop')
    const missingVersion = await post(`${vertex}/anthropic/models/claude-sonnet-4@20250514:rawPredict`, { max_tokens: 5, messages: body.messages }, bearer)
    expect(missingVersion.status).toBe(400)
  })
})
