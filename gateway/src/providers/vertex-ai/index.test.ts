import { describe, expect, it } from 'vitest'
import type { UpstreamEvent } from '../adapter.ts'
import { GatewayError } from '../../core/errors.ts'
import { fixture, runStream, testContext } from '../shared/testing.ts'
import { vertexAI } from './index.ts'

const gemini = { upstreamModel: 'gemini-2.5-flash', options: { project: 'demo', location: 'europe-west4' } }
const claude = { upstreamModel: 'claude-sonnet-4-5@20250929', options: { project: 'demo', location: 'us-east5' } }
const hello = { model: 'x', messages: [{ role: 'user' as const, content: 'hi' }] }

describe('Vertex AI addresses', () => {
  it('derives the regional or global base URL and validates options', () => {
    expect(vertexAI.baseUrlFor!({ location: 'europe-west4' })).toBe('https://europe-west4-aiplatform.googleapis.com/v1')
    expect(vertexAI.baseUrlFor!({ location: 'global' })).toBe('https://aiplatform.googleapis.com/v1')
    expect(vertexAI.baseUrlFor!({})).toBe('https://us-central1-aiplatform.googleapis.com/v1')
    expect(() => vertexAI.baseUrlFor!({ location: 'evil.com/' })).toThrow(GatewayError)
    expect(() => vertexAI.chat!.toUpstream(hello, { upstreamModel: 'gemini-2.5-flash', options: {} })).toThrow(/option 'project'/)
  })
})

describe('Vertex AI Gemini', () => {
  it('sends the Gemini body to the publisher model path', () => {
    const { upstream } = vertexAI.chat!.toUpstream({ ...hello, temperature: 0.1 }, gemini)
    expect(upstream).toEqual({
      method: 'POST',
      path: '/projects/demo/locations/europe-west4/publishers/google/models/gemini-2.5-flash:generateContent',
      headers: {},
      body: { contents: [{ role: 'user', parts: [{ text: 'hi' }] }], generationConfig: { temperature: 0.1 } },
    })
    expect(vertexAI.chat!.toUpstream({ ...hello, stream: true }, gemini).upstream.path).toBe(
      '/projects/demo/locations/europe-west4/publishers/google/models/gemini-2.5-flash:streamGenerateContent?alt=sse',
    )
  })

  it('maps responses and streams with the Gemini transforms', () => {
    const response = vertexAI.chat!.fromUpstream(fixture(import.meta.url, 'gemini-generate-content.json'), testContext)
    expect(response).toMatchObject({ id: 'vtx-resp-1', created: Date.UTC(2026, 10, 22, 7) / 1000, model: 'gemini-2.5-flash', choices: [{ message: { content: 'Bonjour !' }, finish_reason: 'stop' }] })
    const result = runStream(vertexAI.chat!.stream, fixture<UpstreamEvent[]>(import.meta.url, 'gemini-stream.sse.json'))
    expect(result.chunks.map((chunk) => [chunk.created, chunk.choices[0]?.delta.content])).toEqual([[Date.UTC(2026, 10, 22, 7) / 1000, 'Bon'], [Date.UTC(2026, 10, 22, 7) / 1000, 'jour']])
    expect(result.finishReason).toEqual({ unified: 'length', raw: 'MAX_TOKENS' })
    expect(result.usage).toEqual({ inputTokens: 4, outputTokens: 2 })
  })

  it('embeds through :predict and sums the token counts', () => {
    const { upstream } = vertexAI.embeddings!.toUpstream({ model: 'x', input: ['a', 'b'], dimensions: 256, task_type: 'RETRIEVAL_DOCUMENT' }, { ...gemini, upstreamModel: 'text-embedding-005' })
    expect(upstream).toEqual({
      method: 'POST',
      path: '/projects/demo/locations/europe-west4/publishers/google/models/text-embedding-005:predict',
      headers: {},
      body: { instances: [{ content: 'a', task_type: 'RETRIEVAL_DOCUMENT' }, { content: 'b', task_type: 'RETRIEVAL_DOCUMENT' }], parameters: { outputDimensionality: 256 } },
    })
    const response = vertexAI.embeddings!.fromUpstream(fixture(import.meta.url, 'predict-embeddings.json'), testContext)
    expect(response.data.map((item) => item.embedding)).toEqual([[0.01, 0.02], [0.03, 0.04]])
    expect(vertexAI.embeddings!.usage(response)).toEqual({ inputTokens: 10, outputTokens: 0 })
  })
})

describe('Vertex AI Claude', () => {
  it('sends an Anthropic Messages body to rawPredict with the Vertex anthropic_version and no model', () => {
    const { upstream } = vertexAI.chat!.toUpstream({ ...hello, max_tokens: 100, messages: [{ role: 'system', content: 'Be kind.' }, ...hello.messages] }, claude)
    expect(upstream.path).toBe('/projects/demo/locations/us-east5/publishers/anthropic/models/claude-sonnet-4-5@20250929:rawPredict')
    expect(upstream.body).toMatchObject({ anthropic_version: 'vertex-2023-10-16', max_tokens: 100, messages: [{ role: 'user' }] })
    expect(upstream.body).not.toHaveProperty('model')
    const streaming = vertexAI.chat!.toUpstream({ ...hello, stream: true }, { ...claude, upstreamModel: 'my-tuned', options: { ...claude.options, publisher: 'anthropic' } })
    expect(streaming.upstream.path).toMatch(/publishers\/anthropic\/models\/my-tuned:streamRawPredict$/)
    expect(streaming.upstream.body).toMatchObject({ stream: true })
  })

  it('maps Claude responses and streams with the Anthropic transforms', () => {
    const response = vertexAI.chat!.fromUpstream(fixture(import.meta.url, 'claude-message.json'), testContext)
    expect(response.choices[0]).toMatchObject({
      message: { content: 'Let me check.', tool_calls: [{ id: 'toolu_vrtx_01', function: { name: 'get_weather', arguments: '{"city":"Oslo"}' } }] },
      finish_reason: 'tool_calls',
    })
    const result = runStream(vertexAI.chat!.stream, fixture<UpstreamEvent[]>(import.meta.url, 'claude-stream.sse.json'))
    expect(result.chunks.map((chunk) => chunk.choices[0]?.delta.content).filter(Boolean)).toEqual(['Hej'])
    expect(result.finishReason).toMatchObject({ unified: 'stop', raw: 'end_turn' })
    expect(result.usage).toMatchObject({ inputTokens: 25, outputTokens: 4 })
  })

  it('relays native Messages bodies for Claude only', () => {
    const messages = vertexAI.messages!
    expect(messages.accepts(claude)).toBe(true)
    expect(messages.accepts(gemini)).toBe(false)
    const { upstream } = messages.toUpstream({ model: 'claude', max_tokens: 10, messages: [], stream: true }, claude)
    expect(upstream.path).toMatch(/:streamRawPredict$/)
    expect(upstream.body).toEqual({ anthropic_version: 'vertex-2023-10-16', max_tokens: 10, messages: [], stream: true })
  })
})

describe('Vertex AI errors', () => {
  it('parses Google and Anthropic envelopes', () => {
    expect(vertexAI.parseError(403, {}, fixture(import.meta.url, 'error-permission-denied.json'))).toMatchObject({ providerCode: 'PERMISSION_DENIED', fault: 'client', retryable: false })
    expect(vertexAI.parseError(529, {}, fixture(import.meta.url, 'error-claude-overloaded.json'))).toMatchObject({ providerCode: 'overloaded_error', message: 'Overloaded', retryable: true })
    expect(vertexAI.parseError(429, {}, { error: { code: 429, message: 'Quota exceeded', status: 'RESOURCE_EXHAUSTED' } })).toMatchObject({ retryable: true, fault: 'upstream' })
  })
})
