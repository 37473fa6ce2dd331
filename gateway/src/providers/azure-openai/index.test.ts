import { describe, expect, it } from 'vitest'
import type { UpstreamEvent } from '../adapter.ts'
import { GatewayError } from '../../core/errors.ts'
import { fixture, runStream, testContext } from '../shared/testing.ts'
import { azureOpenAI, defaultAzureApiVersion } from './index.ts'

const chatRequest = { model: 'my-gpt', messages: [{ role: 'user' as const, content: 'hi' }], temperature: 0.5 }

describe('Azure OpenAI adapter', () => {
  it('derives the base URL from the resource name and refuses host-changing names', () => {
    expect(azureOpenAI.baseUrlFor!({ resourceName: 'contoso-eu' })).toBe('https://contoso-eu.openai.azure.com')
    expect(() => azureOpenAI.baseUrlFor!({})).toThrow(GatewayError)
    expect(() => azureOpenAI.baseUrlFor!({ resourceName: 'evil.com/x' })).toThrow(/letters, digits and hyphens/)
  })

  it('calls the deployment path with the default GA api-version, body unchanged but for the model', () => {
    const { upstream, warnings } = azureOpenAI.chat!.toUpstream(chatRequest, { upstreamModel: 'gpt-4o', options: {} })
    expect(defaultAzureApiVersion).toBe('2024-10-21')
    expect(upstream).toEqual({
      method: 'POST',
      path: '/openai/deployments/gpt-4o/chat/completions?api-version=2024-10-21',
      headers: {},
      body: { ...chatRequest, model: 'gpt-4o' },
    })
    expect(warnings).toEqual([])
  })

  it('honours deployment and apiVersion options for every operation', () => {
    const target = { upstreamModel: 'gpt-4o', options: { deployment: 'prod chat', apiVersion: '2025-04-01-preview' } }
    expect(azureOpenAI.chat!.toUpstream(chatRequest, target).upstream.path).toBe('/openai/deployments/prod%20chat/chat/completions?api-version=2025-04-01-preview')
    expect(azureOpenAI.completions!.toUpstream({ model: 'x', prompt: 'a' }, target).upstream.path).toBe('/openai/deployments/prod%20chat/completions?api-version=2025-04-01-preview')
    expect(azureOpenAI.embeddings!.toUpstream({ model: 'x', input: 'a' }, target).upstream.path).toBe('/openai/deployments/prod%20chat/embeddings?api-version=2025-04-01-preview')
  })

  it('uses the v1 GA paths with the deployment as the model when apiStyle=v1', () => {
    const { upstream } = azureOpenAI.chat!.toUpstream(chatRequest, { upstreamModel: 'gpt-4o', options: { apiStyle: 'v1', deployment: 'chat-prod' } })
    expect(upstream.path).toBe('/openai/v1/chat/completions')
    expect(upstream.body).toMatchObject({ model: 'chat-prod', temperature: 0.5 })
  })

  it('keeps Azure extras (content filter results) in responses and streams', () => {
    const response = azureOpenAI.chat!.fromUpstream(fixture(import.meta.url, 'chat-completion.json'), testContext)
    expect(response.choices[0]).toHaveProperty('content_filter_results')
    expect(azureOpenAI.chat!.usage(response)).toEqual({ inputTokens: 9, outputTokens: 3, cachedInputTokens: 0, reasoningTokens: 0 })
    const result = runStream(azureOpenAI.chat!.stream, fixture<UpstreamEvent[]>(import.meta.url, 'stream.sse.json'))
    expect(result.chunks).toHaveLength(5)
    expect(result.finishReason).toEqual({ unified: 'stop', raw: 'stop' })
    expect(result.usage).toEqual({ inputTokens: 9, outputTokens: 1 })
  })

  it('parses content filter and rate limit errors', () => {
    expect(azureOpenAI.parseError(400, {}, fixture(import.meta.url, 'error-content-filter.json'))).toMatchObject({ providerCode: 'content_filter', param: 'prompt', fault: 'client', retryable: false })
    expect(azureOpenAI.parseError(429, { 'retry-after-ms': '6000' }, fixture(import.meta.url, 'error-rate-limit.json'))).toMatchObject({ providerCode: '429', retryable: true, retryAfterMs: 6000 })
  })
})
