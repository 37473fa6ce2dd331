import { describe, expect, it } from 'vitest'
import { MalformedResponseError } from '../adapter.ts'
import { fixture, testContext } from '../shared/testing.ts'
import { anthropic } from './index.ts'
import { anthropicFinishReason, usageFromAnthropic } from './response.ts'

const chat = anthropic.chat!

describe('anthropic chat response', () => {
  it('joins text blocks, maps thinking to reasoning_content and counts cache tokens as prompt tokens', () => {
    const response = chat.fromUpstream(fixture(import.meta.url, 'message-text.json'), testContext)
    expect(response).toEqual({
      id: 'msg_01XFDUDYJgAACzvnptvVoYEL',
      object: 'chat.completion',
      created: testContext.createdAt,
      model: 'claude-sonnet-4-5-20250929',
      choices: [
        {
          index: 0,
          message: { role: 'assistant', content: 'Hello! How can I help?', reasoning_content: 'The user greets me; answer briefly.' },
          finish_reason: 'stop',
          logprobs: null,
        },
      ],
      usage: { prompt_tokens: 12 + 2048 + 100, completion_tokens: 40, total_tokens: 12 + 2048 + 100 + 40, prompt_tokens_details: { cached_tokens: 2048 }, cache_creation_input_tokens: 100 },
    })
    expect(chat.usage(response)).toEqual({ inputTokens: 2160, outputTokens: 40, cachedInputTokens: 2048, cacheWriteInputTokens: 100 })
  })

  it('maps tool_use blocks to tool_calls with null content', () => {
    const response = chat.fromUpstream(fixture(import.meta.url, 'message-tool-use.json'), testContext)
    expect(response.choices[0]).toEqual({
      index: 0,
      message: {
        role: 'assistant',
        content: null,
        tool_calls: [
          { id: 'toolu_01A09q90qw90lq917835lq9', type: 'function', function: { name: 'get_weather', arguments: '{"location":"San Francisco, CA","unit":"celsius"}' } },
          { id: 'toolu_01B19q90qw90lq917835lq8', type: 'function', function: { name: 'get_time', arguments: '{}' } },
        ],
      },
      finish_reason: 'tool_calls',
      logprobs: null,
    })
    expect(response.usage).toEqual({ prompt_tokens: 472, completion_tokens: 89, total_tokens: 561, prompt_tokens_details: { cached_tokens: 0 }, cache_creation_input_tokens: 0 })
  })

  it('falls back to the context for a missing id and model, and answers "" for an empty message', () => {
    const response = chat.fromUpstream({ type: 'message', content: [], stop_reason: 'max_tokens', usage: { input_tokens: 1, output_tokens: 0 } }, testContext)
    expect(response.id).toBe(testContext.responseId)
    expect(response.model).toBe(testContext.requestModel)
    expect(response.choices[0]!.message.content).toBe('')
    expect(response.choices[0]!.finish_reason).toBe('length')
  })

  it('maps every stop reason', () => {
    expect(anthropicFinishReason('end_turn')).toEqual({ unified: 'stop', raw: 'end_turn' })
    expect(anthropicFinishReason('stop_sequence')).toEqual({ unified: 'stop', raw: 'stop_sequence' })
    expect(anthropicFinishReason('max_tokens')).toEqual({ unified: 'length', raw: 'max_tokens' })
    expect(anthropicFinishReason('model_context_window_exceeded')).toEqual({ unified: 'length', raw: 'model_context_window_exceeded' })
    expect(anthropicFinishReason('tool_use')).toEqual({ unified: 'tool_calls', raw: 'tool_use' })
    expect(anthropicFinishReason('refusal')).toEqual({ unified: 'content_filter', raw: 'refusal' })
    expect(anthropicFinishReason('pause_turn')).toEqual({ unified: 'stop', raw: 'pause_turn' })
    expect(anthropicFinishReason('something_new')).toEqual({ unified: 'other', raw: 'something_new' })
    expect(anthropicFinishReason(null)).toEqual({ unified: 'other' })
    const refused = chat.fromUpstream({ type: 'message', content: [], stop_reason: 'refusal', usage: {} }, testContext)
    expect(refused.choices[0]!.finish_reason).toBe('content_filter')
  })

  it('reads thinking tokens and cache writes into gateway usage', () => {
    expect(usageFromAnthropic({ input_tokens: 5, output_tokens: 9, cache_creation_input_tokens: 3, cache_read_input_tokens: null, output_tokens_details: { thinking_tokens: 4 } })).toEqual({
      inputTokens: 8,
      outputTokens: 9,
      cacheWriteInputTokens: 3,
      reasoningTokens: 4,
    })
  })

  it('rejects a body that is not a message', () => {
    expect(() => chat.fromUpstream({ type: 'error', error: {} }, testContext)).toThrow(MalformedResponseError)
    expect(() => chat.fromUpstream('nope', testContext)).toThrow(MalformedResponseError)
  })
})
