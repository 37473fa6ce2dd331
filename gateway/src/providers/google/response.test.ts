import { describe, expect, it } from 'vitest'
import { MalformedResponseError } from '../adapter.ts'
import { fixture, testContext } from '../shared/testing.ts'
import { google } from './index.ts'

const chat = google.chat!

describe('Gemini chat response mapping', () => {
  it('maps text, thoughts and usage (completion = candidates + thoughts)', () => {
    const response = chat.fromUpstream(fixture(import.meta.url, 'generate-content-text.json'), testContext)
    expect(response).toEqual({
      id: 'mJQqaOTXA4mvz7IP5MGnqQ4',
      object: 'chat.completion',
      created: testContext.createdAt,
      model: 'gemini-2.5-flash',
      choices: [{
        index: 0,
        message: { role: 'assistant', content: 'Hello! How can I help you today?', reasoning_content: 'The user wants a short greeting.' },
        finish_reason: 'stop',
      }],
      usage: {
        prompt_tokens: 12,
        completion_tokens: 30,
        total_tokens: 42,
        prompt_tokens_details: { cached_tokens: 4 },
        completion_tokens_details: { reasoning_tokens: 21 },
      },
    })
    expect(chat.usage(response)).toEqual({ inputTokens: 12, outputTokens: 30, cachedInputTokens: 4, reasoningTokens: 21 })
  })

  it('maps function calls to tool_calls with deterministic ids and keeps thought signatures', () => {
    const response = chat.fromUpstream(fixture(import.meta.url, 'generate-content-tool-calls.json'), testContext)
    expect(response.choices[0]).toEqual({
      index: 0,
      message: {
        role: 'assistant',
        content: null,
        tool_calls: [
          { id: 'resp-tools-1_call_0', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' }, extra_content: { google: { thought_signature: 'CiQBVKhc7sig-1' } } },
          { id: 'resp-tools-1_call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Berlin"}' } },
        ],
      },
      finish_reason: 'tool_calls',
    })
  })

  it('maps several candidates, logprobs, MAX_TOKENS and SAFETY', () => {
    const response = chat.fromUpstream(fixture(import.meta.url, 'generate-content-logprobs.json'), testContext)
    expect(response.choices.map((choice) => [choice.index, choice.finish_reason])).toEqual([[0, 'length'], [1, 'content_filter']])
    expect(response.choices[0]?.logprobs).toEqual({
      content: [{ token: 'Yes', logprob: -0.05, bytes: [89, 101, 115], top_logprobs: [{ token: 'Yes', logprob: -0.05, bytes: [89, 101, 115] }, { token: 'No', logprob: -3.1, bytes: [78, 111] }] }],
    })
  })

  it('turns a blocked prompt into one content_filter choice', () => {
    const response = chat.fromUpstream(fixture(import.meta.url, 'generate-content-blocked.json'), testContext)
    expect(response.choices).toEqual([{ index: 0, message: { role: 'assistant', content: null }, finish_reason: 'content_filter' }])
    expect(response.usage).toEqual({ prompt_tokens: 7, completion_tokens: 0, total_tokens: 7 })
  })

  it('falls back to the context for id and model, and rejects other shapes', () => {
    const response = chat.fromUpstream({ candidates: [{ content: { parts: [{ text: 'x' }] }, finishReason: 'OTHER' }] }, testContext)
    expect(response).toMatchObject({ id: 'gen-fallback-id', model: 'requested-model', choices: [{ finish_reason: 'stop' }] })
    expect(() => chat.fromUpstream('nope', testContext)).toThrow(MalformedResponseError)
    expect(() => chat.fromUpstream({ candidates: 'x' }, testContext)).toThrow(MalformedResponseError)
  })
})
