import { describe, expect, it } from 'vitest'
import type { UpstreamEvent } from '../adapter.ts'
import { MalformedResponseError, ProviderStreamError } from '../adapter.ts'
import { fixture, runStream, testContext } from '../shared/testing.ts'
import { cohere } from './index.ts'

const chat = cohere.chat!

describe('Cohere chat responses', () => {
  it('maps text, thinking, billed usage and logprobs', () => {
    const response = chat.fromUpstream(fixture(import.meta.url, 'chat-text.json'), testContext)
    expect(response).toEqual({
      id: 'c14c80c3-18eb-4519-9460-6c92edd8cfb4',
      object: 'chat.completion',
      created: testContext.createdAt,
      model: 'requested-model',
      choices: [{
        index: 0,
        message: { role: 'assistant', content: 'Hello! How can I help?', reasoning_content: 'A greeting is expected.' },
        finish_reason: 'stop',
        logprobs: { content: [{ token: 'Hello!', logprob: -0.75, bytes: [72, 101, 108, 108, 111, 33], top_logprobs: [] }] },
      }],
      usage: { prompt_tokens: 5, completion_tokens: 7, total_tokens: 12 },
    })
  })

  it('maps tool calls, with the tool plan as reasoning', () => {
    const response = chat.fromUpstream(fixture(import.meta.url, 'chat-tool-calls.json'), testContext)
    expect(response.choices[0]).toEqual({
      index: 0,
      message: {
        role: 'assistant',
        content: null,
        reasoning_content: 'I will look up the weather in Madrid and Brasilia.',
        tool_calls: [
          { id: 'get_weather_1byjy32y4hvq', type: 'function', function: { name: 'get_weather', arguments: '{"location":"Madrid"}' } },
          { id: 'get_weather_e1k8hxr8zhbz', type: 'function', function: { name: 'get_weather', arguments: '{"location":"Brasilia"}' } },
        ],
      },
      finish_reason: 'tool_calls',
    })
    expect(chat.usage(response)).toEqual({ inputTokens: 37, outputTokens: 28 })
    expect(() => chat.fromUpstream({ message: 'x' }, testContext)).toThrow(MalformedResponseError)
  })
})

describe('Cohere chat stream', () => {
  it('streams text deltas and ends with finish reason and usage', () => {
    const result = runStream(chat.stream, fixture<UpstreamEvent[]>(import.meta.url, 'stream-text.sse.json'))
    const base = { id: '29f14a5a-11de-4cae-9800-25e4747408ea', object: 'chat.completion.chunk', created: testContext.createdAt, model: 'requested-model' }
    expect(result.chunks).toEqual([
      { ...base, choices: [{ index: 0, delta: { role: 'assistant' }, finish_reason: null }] },
      { ...base, choices: [{ index: 0, delta: { content: 'A large' }, finish_reason: null }] },
      { ...base, choices: [{ index: 0, delta: { content: ' language model' }, finish_reason: null }] },
      { ...base, choices: [{ index: 0, delta: {}, finish_reason: 'length' }], usage: { prompt_tokens: 6, completion_tokens: 3, total_tokens: 9 } },
    ])
    expect(result.finishReason).toEqual({ unified: 'length', raw: 'MAX_TOKENS' })
    expect(result.usage).toEqual({ inputTokens: 6, outputTokens: 3 })
  })

  it('streams the tool plan as reasoning and tool calls as start + argument deltas', () => {
    const result = runStream(chat.stream, fixture<UpstreamEvent[]>(import.meta.url, 'stream-tool-calls.sse.json'))
    expect(result.chunks.map((chunk) => chunk.choices[0]?.delta)).toEqual([
      { role: 'assistant' },
      { reasoning_content: 'I will search' },
      { reasoning_content: ' twice.' },
      { tool_calls: [{ index: 0, id: 'get_weather_nsz5zm3w56q3', type: 'function', function: { name: 'get_weather', arguments: '' } }] },
      { tool_calls: [{ index: 0, function: { arguments: '{"location":' } }] },
      { tool_calls: [{ index: 0, function: { arguments: '"Madrid"}' } }] },
      { tool_calls: [{ index: 1, id: 'get_weather_j0x7rkrplgq1', type: 'function', function: { name: 'get_weather', arguments: '' } }] },
      { tool_calls: [{ index: 1, function: { arguments: '{"location":"Brasilia"}' } }] },
      {},
    ])
    expect(result.chunks.at(-1)?.choices[0]?.finish_reason).toBe('tool_calls')
    expect(result.finishReason).toEqual({ unified: 'tool_calls', raw: 'TOOL_CALL' })
    expect(result.usage).toEqual({ inputTokens: 37, outputTokens: 28 })
  })

  it('an error at message-end is a ProviderStreamError', () => {
    const state = chat.stream.start(testContext)
    expect(() => chat.stream.step(state, { data: { type: 'message-end', delta: { finish_reason: 'ERROR', error: 'internal failure' } } })).toThrow(ProviderStreamError)
  })
})
