import { describe, expect, it } from 'vitest'
import { ProviderStreamError } from '../adapter.ts'
import type { ChatChunk } from '../canonical.ts'
import { openAIStream } from './index.ts'

const context = { requestModel: 'gpt-4o', responseId: 'id', createdAt: 1 }

describe('openAIStream', () => {
  it('passes chunks through and keeps the finish reason and usage for accounting', () => {
    const transform = openAIStream<ChatChunk>()
    const state = transform.start(context)
    const chunk = { id: 'c', object: 'chat.completion.chunk', created: 1, model: 'gpt-4o', choices: [{ index: 0, delta: { content: 'hi' }, finish_reason: 'stop' }] }
    expect(transform.step(state, { data: chunk })).toEqual([chunk])
    transform.step(state, { data: { ...chunk, choices: [], usage: { prompt_tokens: 3, completion_tokens: 1, total_tokens: 4 } } })
    expect(transform.finish(state)).toEqual({ chunks: [], usage: { inputTokens: 3, outputTokens: 1 }, finishReason: { unified: 'stop', raw: 'stop' } })
  })

  it('turns an in-band error event into a stream error instead of a chunk', () => {
    const transform = openAIStream<ChatChunk>()
    const state = transform.start(context)
    const step = (): unknown => transform.step(state, { data: { error: { message: 'The server had an error', type: 'server_error', code: null } } })
    expect(step).toThrow(ProviderStreamError)
    try {
      step()
    } catch (error) {
      expect((error as ProviderStreamError).info).toMatchObject({ status: 500, message: 'The server had an error', retryable: true })
    }
  })

  it('accounts for relayed events from their text: finish reason and usage read, content left unparsed, errors sent to step', () => {
    const transform = openAIStream<ChatChunk>()
    const state = transform.start(context)
    const content = '{"id":"c","object":"chat.completion.chunk","created":1,"model":"gpt-4o","choices":[{"index":0,"delta":{"content":"hi"},"finish_reason":null}]}'
    expect(transform.relay!.observe(state, content)).toBe(true)
    expect(transform.finish(state).finishReason).toEqual({ unified: 'other' })
    expect(transform.relay!.observe(state, content.replace('"finish_reason":null', '"finish_reason":"length"'))).toBe(true)
    expect(transform.relay!.observe(state, '{"id":"c","object":"chat.completion.chunk","created":1,"model":"gpt-4o","choices":[],"usage":{"prompt_tokens":7,"completion_tokens":2,"total_tokens":9}}')).toBe(true)
    expect(transform.finish(state)).toEqual({ chunks: [], usage: { inputTokens: 7, outputTokens: 2 }, finishReason: { unified: 'length', raw: 'length' } })
    expect(transform.relay!.observe(state, '{"error":{"message":"boom","type":"server_error"}}')).toBe(false)
  })

  it('reads a finish reason off the text, parses one only when the text cannot say, and hands usage the client did not ask for to step', () => {
    const transform = openAIStream<ChatChunk>()
    const state = transform.start(context)
    const finishing = (reason: string): string => `{"id":"c","choices":[{"index":0,"delta":{},"finish_reason":${JSON.stringify(reason)}}]}`
    expect(transform.relay!.observe(state, finishing('tool_calls'))).toBe(true)
    expect(transform.finish(state).finishReason).toEqual({ unified: 'tool_calls', raw: 'tool_calls' })
    expect(transform.relay!.observe(state, finishing('odd"reason'))).toBe(true)
    expect(transform.finish(state).finishReason).toEqual({ unified: 'other', raw: 'odd"reason' })
    const withoutUsage = openAIStream<ChatChunk>()
    const stripping = withoutUsage.start({ ...context, clientIncludeUsage: false })
    expect(withoutUsage.relay!.observe(stripping, '{"id":"c","choices":[],"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}}')).toBe(false)
    // Every event observe must see holds a marker (the rest are never shown to it).
    for (const text of [finishing('stop'), '{"usage":{"prompt_tokens":1}}', '{"error":{"message":"x"}}']) {
      expect(transform.relay!.markers.some((marker) => text.includes(marker))).toBe(true)
    }
  })
})
