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
})
