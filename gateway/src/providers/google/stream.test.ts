import { describe, expect, it } from 'vitest'
import type { UpstreamEvent } from '../adapter.ts'
import { ProviderStreamError } from '../adapter.ts'
import { fixture, runStream, testContext } from '../shared/testing.ts'
import { google } from './index.ts'

const stream = google.chat!.stream

describe('Gemini stream', () => {
  it('turns each event into a chunk: reasoning, text, finish reason and usage', () => {
    const result = runStream(stream, fixture<UpstreamEvent[]>(import.meta.url, 'stream-text.sse.json'))
    const base = { id: 'stream-1', object: 'chat.completion.chunk', created: testContext.createdAt, model: 'gemini-2.5-flash' }
    expect(result.chunks).toEqual([
      { ...base, choices: [{ index: 0, delta: { role: 'assistant', reasoning_content: 'Considering the question.' }, finish_reason: null }] },
      { ...base, choices: [{ index: 0, delta: { content: 'Hello' }, finish_reason: null }] },
      {
        ...base,
        choices: [{ index: 0, delta: { content: ' there!' }, finish_reason: 'stop' }],
        usage: { prompt_tokens: 8, completion_tokens: 9, total_tokens: 17, prompt_tokens_details: { cached_tokens: 2 }, completion_tokens_details: { reasoning_tokens: 6 } },
      },
    ])
    expect(result.usage).toEqual({ inputTokens: 8, outputTokens: 9, cachedInputTokens: 2, reasoningTokens: 6 })
    expect(result.finishReason).toEqual({ unified: 'stop', raw: 'STOP' })
  })

  it('streams each function call as one complete tool-call delta with running indexes', () => {
    const result = runStream(stream, fixture<UpstreamEvent[]>(import.meta.url, 'stream-tool-calls.sse.json'))
    expect(result.chunks.map((chunk) => chunk.choices[0])).toEqual([
      {
        index: 0,
        delta: { role: 'assistant', tool_calls: [{ index: 0, id: 'stream-tools_call_0', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' }, extra_content: { google: { thought_signature: 'sig-a' } } }] },
        finish_reason: null,
      },
      {
        index: 0,
        delta: { tool_calls: [{ index: 1, id: 'stream-tools_call_1', type: 'function', function: { name: 'get_time', arguments: '{"zone":"CET"}' } }] },
        finish_reason: 'tool_calls',
      },
    ])
    expect(result.finishReason).toEqual({ unified: 'tool_calls', raw: 'STOP' })
    expect(result.usage).toEqual({ inputTokens: 40, outputTokens: 12 })
  })

  it('throws a retryable ProviderStreamError on an in-band error', () => {
    const events = fixture<UpstreamEvent[]>(import.meta.url, 'stream-error.sse.json')
    const state = stream.start(testContext)
    expect(stream.step(state, events[0]!)).toHaveLength(1)
    try {
      stream.step(state, events[1]!)
      expect.unreachable()
    } catch (error) {
      expect(error).toBeInstanceOf(ProviderStreamError)
      expect((error as ProviderStreamError).info).toMatchObject({ status: 503, providerCode: 'UNAVAILABLE', retryable: true, fault: 'upstream' })
    }
  })

  it('reports a blocked prompt as content_filter', () => {
    const result = runStream(stream, [{ data: { promptFeedback: { blockReason: 'SAFETY' }, usageMetadata: { promptTokenCount: 3 } } }])
    expect(result.chunks[0]?.choices).toEqual([{ index: 0, delta: { role: 'assistant' }, finish_reason: 'content_filter' }])
    expect(result.finishReason).toEqual({ unified: 'content_filter', raw: 'SAFETY' })
    expect(result.usage).toEqual({ inputTokens: 3, outputTokens: 0 })
  })
})
