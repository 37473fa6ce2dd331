import { describe, expect, it } from 'vitest'
import type { UpstreamEvent } from '../adapter.ts'
import { MalformedResponseError } from '../adapter.ts'
import { fixture, runStream, testContext } from '../shared/testing.ts'
import { mistralAI } from './index.ts'

const target = { upstreamModel: 'mistral-large-latest', options: {} }

describe('Mistral chat request', () => {
  it('renames max_completion_tokens, seed and tool_choice required, and maps developer to system', () => {
    const { upstream, warnings } = mistralAI.chat!.toUpstream({
      model: 'alias',
      messages: [{ role: 'developer', content: 'Be terse.' }, { role: 'user', content: 'hi' }],
      max_tokens: 10,
      max_completion_tokens: 50,
      seed: 9,
      tool_choice: 'required',
      tools: [{ type: 'function', function: { name: 'f', parameters: { type: 'object' }, strict: true } }],
      temperature: 0.3,
      top_p: 0.8,
      n: 2,
      stop: ['x'],
      presence_penalty: 0.1,
      frequency_penalty: 0.2,
      parallel_tool_calls: false,
      response_format: { type: 'json_object' },
      stream: true,
      stream_options: { include_usage: true },
      safe_prompt: true,
    }, target)
    expect(upstream).toEqual({
      method: 'POST',
      path: '/chat/completions',
      headers: {},
      body: {
        model: 'mistral-large-latest',
        messages: [{ role: 'system', content: 'Be terse.' }, { role: 'user', content: 'hi' }],
        max_tokens: 50,
        random_seed: 9,
        tool_choice: 'any',
        tools: [{ type: 'function', function: { name: 'f', parameters: { type: 'object' }, strict: true } }],
        temperature: 0.3,
        top_p: 0.8,
        n: 2,
        stop: ['x'],
        presence_penalty: 0.1,
        frequency_penalty: 0.2,
        parallel_tool_calls: false,
        response_format: { type: 'json_object' },
        stream: true,
        safe_prompt: true,
      },
    })
    expect(warnings).toEqual([])
  })

  it('leaves out, with a warning, every field Mistral would reject', () => {
    const { upstream, warnings } = mistralAI.chat!.toUpstream({
      model: 'm',
      messages: [{ role: 'user', content: 'hi' }],
      logit_bias: { '1': 2 },
      logprobs: true,
      top_logprobs: 2,
      user: 'u',
      service_tier: 'auto',
      reasoning_effort: 'low',
      some_future_field: 1,
    }, target)
    expect(warnings.map((warning) => warning.parameter)).toEqual(['logit_bias', 'logprobs', 'top_logprobs', 'user', 'service_tier', 'reasoning_effort', 'some_future_field'])
    expect(Object.keys(upstream.body as object).sort()).toEqual(['messages', 'model'])
  })
})

describe('Mistral chat responses', () => {
  it('passes tool calls through', () => {
    const response = mistralAI.chat!.fromUpstream(fixture(import.meta.url, 'chat-completion.json'), testContext)
    expect(response.choices[0]).toMatchObject({ finish_reason: 'tool_calls', message: { tool_calls: [{ id: 'D681PevKs', function: { name: 'get_weather' } }] } })
    expect(mistralAI.chat!.usage(response)).toEqual({ inputTokens: 80, outputTokens: 22 })
  })

  it('splits thinking chunks into reasoning_content and maps model_length to length', () => {
    const body = fixture(import.meta.url, 'chat-completion-thinking.json')
    const response = mistralAI.chat!.fromUpstream(body, testContext)
    expect(response.choices[0]).toEqual({ index: 0, message: { role: 'assistant', content: '4', reasoning_content: 'Two plus two is four.' }, finish_reason: 'length' })
    expect((body as { choices: Array<{ finish_reason: string }> }).choices[0]!.finish_reason).toBe('model_length')
    expect(() => mistralAI.chat!.fromUpstream({ object: 'error' }, testContext)).toThrow(MalformedResponseError)
  })

  it('streams with normalised deltas, usage and finish reason', () => {
    const events = fixture<UpstreamEvent[]>(import.meta.url, 'stream.sse.json')
    const original = structuredClone(events)
    const result = runStream(mistralAI.chat!.stream, events)
    expect(events).toEqual(original)
    expect(result.chunks.map((chunk) => chunk.choices[0]?.delta)).toEqual([
      { role: 'assistant', content: '' },
      { content: '', reasoning_content: 'Hmm.' },
      { content: 'Salut' },
      { content: '' },
    ])
    expect(result.finishReason).toEqual({ unified: 'stop', raw: 'stop' })
    expect(result.usage).toEqual({ inputTokens: 7, outputTokens: 5 })
  })
})

describe('Mistral embeddings and OCR', () => {
  it('sends dimensions as output_dimension and warns for user', () => {
    const { upstream, warnings } = mistralAI.embeddings!.toUpstream({ model: 'x', input: ['a'], dimensions: 256, encoding_format: 'float', user: 'u' }, { upstreamModel: 'codestral-embed', options: {} })
    expect(upstream).toEqual({ method: 'POST', path: '/embeddings', headers: {}, body: { model: 'codestral-embed', input: ['a'], output_dimension: 256, encoding_format: 'float' } })
    expect(warnings.map((warning) => warning.parameter)).toEqual(['user'])
  })

  it('posts OCR requests as they are and accounts pages', () => {
    const request = { model: 'ocr', document: { type: 'document_url' as const, document_url: 'https://example.com/invoice.pdf' }, pages: [0, 1], include_image_base64: false }
    const { upstream } = mistralAI.ocr!.toUpstream(request, { upstreamModel: 'mistral-ocr-latest', options: {} })
    expect(upstream).toEqual({ method: 'POST', path: '/ocr', headers: {}, body: { ...request, model: 'mistral-ocr-latest' } })
    const response = mistralAI.ocr!.fromUpstream(fixture(import.meta.url, 'ocr.json'), testContext)
    expect(response.pages.map((page) => page.index)).toEqual([0, 1])
    expect(mistralAI.ocr!.usage(response)).toEqual({ inputTokens: 0, outputTokens: 0, pages: 2 })
    expect(() => mistralAI.ocr!.fromUpstream({ pages: 'x' }, testContext)).toThrow(MalformedResponseError)
  })
})

describe('Mistral errors', () => {
  it('reads validation details, bare messages and the top-level error object', () => {
    expect(mistralAI.parseError(422, {}, fixture(import.meta.url, 'error-validation.json'))).toMatchObject({
      message: 'logit_bias: Extra inputs are not permitted',
      param: 'logit_bias',
      providerCode: 'invalid_request_message_error',
      fault: 'client',
      retryable: false,
    })
    expect(mistralAI.parseError(429, { 'retry-after': '3' }, fixture(import.meta.url, 'error-rate-limit.json'))).toMatchObject({
      message: 'Requests rate limit exceeded',
      retryable: true,
      retryAfterMs: 3000,
    })
    expect(mistralAI.parseError(401, {}, fixture(import.meta.url, 'error-unauthorized.json'))).toMatchObject({ message: 'Unauthorized', providerCode: '1000', retryable: false })
    expect(mistralAI.parseError(422, {}, { detail: [{ loc: ['body', 'messages', 0], msg: 'Field required' }] })).toMatchObject({ message: 'messages.0: Field required' })
    expect(mistralAI.parseError(503, {}, { error: { message: 'busy', type: 'server_error' } })).toMatchObject({ message: 'busy', retryable: true })
  })
})
