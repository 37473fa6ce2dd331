import { describe, expect, it } from 'vitest'
import { fixture, testContext } from '../shared/testing.ts'
import { google } from './index.ts'

const embeddings = google.embeddings!
const target = { upstreamModel: 'gemini-embedding-001', options: {} }

describe('Gemini embeddings', () => {
  it('one text goes to embedContent', () => {
    const { upstream, warnings } = embeddings.toUpstream({ model: 'x', input: 'hello', dimensions: 768, task_type: 'RETRIEVAL_QUERY' }, target)
    expect(upstream).toEqual({
      method: 'POST',
      path: '/models/gemini-embedding-001:embedContent',
      headers: {},
      body: { content: { parts: [{ text: 'hello' }] }, taskType: 'RETRIEVAL_QUERY', outputDimensionality: 768 },
    })
    expect(warnings).toEqual([])
    expect(embeddings.fromUpstream(fixture(import.meta.url, 'embed-content.json'), testContext)).toEqual({
      object: 'list',
      data: [{ object: 'embedding', index: 0, embedding: [0.0123, -0.0456, 0.0789] }],
      model: 'requested-model',
      usage: { prompt_tokens: 0, total_tokens: 0 },
    })
  })

  it('a list goes to batchEmbedContents, and base64 or unknown fields warn', () => {
    const { upstream, warnings } = embeddings.toUpstream({ model: 'x', input: ['a', 'b'], encoding_format: 'base64', user: 'u' }, target)
    expect(upstream.path).toBe('/models/gemini-embedding-001:batchEmbedContents')
    expect(upstream.body).toEqual({
      requests: [
        { model: 'models/gemini-embedding-001', content: { parts: [{ text: 'a' }] } },
        { model: 'models/gemini-embedding-001', content: { parts: [{ text: 'b' }] } },
      ],
    })
    expect(warnings.map((warning) => warning.parameter)).toEqual(['user', 'encoding_format'])
    const response = embeddings.fromUpstream(fixture(import.meta.url, 'batch-embed-contents.json'), testContext)
    expect(response.data.map((item) => item.embedding)).toEqual([[0.1, 0.2], [0.3, 0.4]])
  })

  it('token-id input is a 400', () => {
    expect(() => embeddings.toUpstream({ model: 'x', input: [1, 2, 3] }, target)).toThrow(/text input only/)
  })
})
