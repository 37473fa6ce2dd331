import { describe, expect, it } from 'vitest'
import { MalformedResponseError } from '../adapter.ts'
import { fixture, testContext } from '../shared/testing.ts'
import { cohere } from './index.ts'

describe('Cohere embed', () => {
  const target = { upstreamModel: 'embed-v4.0', options: {} }

  it('sends texts with input_type search_document and float embedding types by default', () => {
    const { upstream, warnings } = cohere.embeddings!.toUpstream({ model: 'x', input: ['hello', 'goodbye'], dimensions: 512 }, target)
    expect(upstream).toEqual({
      method: 'POST',
      path: '/v2/embed',
      headers: {},
      body: { model: 'embed-v4.0', texts: ['hello', 'goodbye'], input_type: 'search_document', embedding_types: ['float'], output_dimension: 512 },
    })
    expect(warnings).toEqual([])
    expect(cohere.embeddings!.toUpstream({ model: 'x', input: 'q', input_type: 'search_query' }, target).upstream.body).toMatchObject({ input_type: 'search_query', texts: ['q'] })
    expect(cohere.embeddings!.toUpstream({ model: 'x', input: 'q' }, { ...target, options: { inputType: 'classification' } }).upstream.body).toMatchObject({ input_type: 'classification' })
  })

  it('maps float embeddings and billed input tokens', () => {
    const response = cohere.embeddings!.fromUpstream(fixture(import.meta.url, 'embed.json'), testContext)
    expect(response).toEqual({
      object: 'list',
      data: [{ object: 'embedding', index: 0, embedding: [0.016296387, -0.008354187] }, { object: 'embedding', index: 1, embedding: [-0.04699707, 0.035888672] }],
      model: 'requested-model',
      usage: { prompt_tokens: 2, total_tokens: 2 },
    })
    expect(() => cohere.embeddings!.fromUpstream({ embeddings: {} }, testContext)).toThrow(MalformedResponseError)
  })
})

describe('Cohere rerank', () => {
  const target = { upstreamModel: 'rerank-v3.5', options: {} }

  it('sends documents as strings and warns that v2 returns no documents', () => {
    const { upstream, warnings } = cohere.rerank!.toUpstream({
      model: 'x',
      query: 'capital of the US?',
      documents: ['Carson City is in Nevada.', { text: 'Washington, D.C. is the capital.' }, { title: 'Paris', body: 'capital of France' }],
      top_n: 2,
      max_tokens_per_doc: 512,
      return_documents: true,
    }, target)
    expect(upstream).toEqual({
      method: 'POST',
      path: '/v2/rerank',
      headers: {},
      body: {
        model: 'rerank-v3.5',
        query: 'capital of the US?',
        documents: ['Carson City is in Nevada.', 'Washington, D.C. is the capital.', '{"title":"Paris","body":"capital of France"}'],
        top_n: 2,
        max_tokens_per_doc: 512,
      },
    })
    expect(warnings.map((warning) => warning.parameter)).toEqual(['return_documents'])
  })

  it('maps results and search units', () => {
    const response = cohere.rerank!.fromUpstream(fixture(import.meta.url, 'rerank.json'), testContext)
    expect(response).toEqual({
      object: 'list',
      id: '07734bd2-2473-4f07-94e1-0d9f0e6843cf',
      model: 'requested-model',
      results: [{ index: 3, relevance_score: 0.999071 }, { index: 4, relevance_score: 0.7867867 }, { index: 0, relevance_score: 0.32713068 }],
      usage: { search_units: 1 },
    })
    expect(cohere.rerank!.usage(response)).toEqual({ inputTokens: 0, outputTokens: 0, searchUnits: 1 })
    expect(() => cohere.rerank!.fromUpstream({ results: [{ index: 'a' }] }, testContext)).toThrow(MalformedResponseError)
  })
})

describe('Cohere errors', () => {
  it('reads the message; the status decides fault and retry', () => {
    expect(cohere.parseError(429, { 'retry-after': '6' }, fixture(import.meta.url, 'error-rate-limit.json'))).toEqual({
      status: 429,
      message: 'You are using a Trial key, which is limited to 10 API calls / minute.',
      providerCode: null,
      param: null,
      fault: 'upstream',
      retryable: true,
      retryAfterMs: 6000,
    })
    expect(cohere.parseError(400, {}, fixture(import.meta.url, 'error-invalid.json'))).toMatchObject({ fault: 'client', retryable: false })
    expect(cohere.parseError(503, {}, '')).toMatchObject({ message: 'Upstream answered HTTP 503', retryable: true })
  })
})
