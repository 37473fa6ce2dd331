import { describe, expect, it } from 'vitest'
import { MalformedResponseError } from '../adapter.ts'
import { fixture, testContext } from '../shared/testing.ts'
import { converseFinishReason, converseToChat, usageFromConverse } from './converse-response.ts'

describe('bedrock converse response', () => {
  it('maps text, reasoning and cache usage, taking id and model from the context', () => {
    expect(converseToChat(fixture(import.meta.url, 'converse-response-text.json'), testContext)).toEqual({
      id: testContext.responseId,
      object: 'chat.completion',
      created: testContext.createdAt,
      model: testContext.requestModel,
      choices: [
        {
          index: 0,
          message: { role: 'assistant', content: 'Hello! How can I help?', reasoning_content: 'A greeting; reply in kind.' },
          finish_reason: 'stop',
          logprobs: null,
        },
      ],
      usage: { prompt_tokens: 530, completion_tokens: 12, total_tokens: 542, prompt_tokens_details: { cached_tokens: 400 }, cache_creation_input_tokens: 100 },
    })
  })

  it('maps toolUse blocks to tool_calls', () => {
    const response = converseToChat(fixture(import.meta.url, 'converse-response-tool-use.json'), testContext)
    expect(response.choices[0]!.message).toEqual({
      role: 'assistant',
      content: 'Let me look that up.',
      tool_calls: [{ id: 'tooluse_kZJMlvQmRJ6eAyJE5GIl7Q', type: 'function', function: { name: 'top_song', arguments: '{"sign":"WZPZ"}' } }],
    })
    expect(response.choices[0]!.finish_reason).toBe('tool_calls')
    expect(response.usage).toEqual({ prompt_tokens: 375, completion_tokens: 46, total_tokens: 421 })
  })

  it('maps every stop reason', () => {
    const cases: Array<[string, string]> = [
      ['end_turn', 'stop'],
      ['stop_sequence', 'stop'],
      ['max_tokens', 'length'],
      ['model_context_window_exceeded', 'length'],
      ['tool_use', 'tool_calls'],
      ['guardrail_intervened', 'content_filter'],
      ['content_filtered', 'content_filter'],
      ['malformed_model_output', 'error'],
      ['malformed_tool_use', 'error'],
      ['brand_new', 'other'],
    ]
    for (const [raw, unified] of cases) expect(converseFinishReason(raw)).toEqual({ unified, raw })
    const filtered = converseToChat({ output: { message: { role: 'assistant', content: [] } }, stopReason: 'guardrail_intervened' }, testContext)
    expect(filtered.choices[0]!.finish_reason).toBe('content_filter')
    expect(filtered.choices[0]!.message.content).toBe('')
  })

  it('reads usage with and without cache fields', () => {
    expect(usageFromConverse({ inputTokens: 10, outputTokens: 2, cacheReadInputTokens: 5, cacheWriteInputTokens: 3 })).toEqual({ inputTokens: 18, outputTokens: 2, cachedInputTokens: 5, cacheWriteInputTokens: 3 })
    expect(usageFromConverse(undefined)).toEqual({ inputTokens: 0, outputTokens: 0 })
  })

  it('rejects a body without output.message', () => {
    expect(() => converseToChat({ output: {} }, testContext)).toThrow(MalformedResponseError)
  })
})
