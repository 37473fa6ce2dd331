import { describe, expect, it } from 'vitest'
import type { UpstreamEvent } from '../adapter.ts'
import { ProviderStreamError } from '../adapter.ts'
import type { ChatChunk } from '../canonical.ts'
import { fixture, runStream, testContext } from '../shared/testing.ts'
import { converseStream } from './converse-stream.ts'

const events = (name: string) => fixture<UpstreamEvent[]>(import.meta.url, name)
const deltas = (chunks: ChatChunk[]) => chunks.map((chunk) => chunk.choices[0]?.delta)

describe('bedrock converse stream', () => {
  it('streams reasoning and text, finishing with usage once metadata arrives', () => {
    const result = runStream(converseStream, events('converse-stream-text.json'))
    expect(deltas(result.chunks)).toEqual([{ role: 'assistant', content: '' }, { reasoning_content: 'Thinking it over.' }, { content: 'Hello' }, { content: ' there' }, {}])
    expect(result.chunks.at(-1)).toEqual({
      id: testContext.responseId,
      object: 'chat.completion.chunk',
      created: testContext.createdAt,
      model: testContext.requestModel,
      choices: [{ index: 0, delta: {}, finish_reason: 'length' }],
      usage: { prompt_tokens: 20, completion_tokens: 64, total_tokens: 84, prompt_tokens_details: { cached_tokens: 0 }, cache_creation_input_tokens: 0 },
    })
    expect(result.usage).toEqual({ inputTokens: 20, outputTokens: 64, cachedInputTokens: 0, cacheWriteInputTokens: 0 })
    expect(result.finishReason).toEqual({ unified: 'length', raw: 'max_tokens' })
  })

  it('numbers tool calls from 0 and streams their input', () => {
    const result = runStream(converseStream, events('converse-stream-tool-use.json'))
    expect(deltas(result.chunks)).toEqual([
      { role: 'assistant', content: '' },
      { content: 'Checking.' },
      { tool_calls: [{ index: 0, id: 'tooluse_1', type: 'function', function: { name: 'get_weather', arguments: '' } }] },
      { tool_calls: [{ index: 0, function: { arguments: '{"city":' } }] },
      { tool_calls: [{ index: 0, function: { arguments: '"Paris"}' } }] },
      { tool_calls: [{ index: 1, id: 'tooluse_2', type: 'function', function: { name: 'get_time', arguments: '' } }] },
      {},
    ])
    expect(result.chunks.at(-1)!.choices[0]!.finish_reason).toBe('tool_calls')
    expect(result.usage).toEqual({ inputTokens: 120, outputTokens: 40 })
    expect(result.finishReason).toEqual({ unified: 'tool_calls', raw: 'tool_use' })
  })

  it('sends the finishing chunk from finish() when metadata never came', () => {
    const withoutMetadata = events('converse-stream-text.json').filter((event) => event.event !== 'metadata')
    const result = runStream(converseStream, withoutMetadata)
    expect(result.chunks.at(-1)!.choices[0]!.finish_reason).toBe('length')
    expect(result.chunks.at(-1)).not.toHaveProperty('usage')
    expect(result.usage).toEqual({ inputTokens: 0, outputTokens: 0 })
  })

  it('throws ProviderStreamError on an in-band exception', () => {
    const [start, delta, exception] = events('converse-stream-exception.json')
    const state = converseStream.start(testContext)
    converseStream.step(state, start!)
    expect(deltas(converseStream.step(state, delta!))).toEqual([{ content: 'Hel' }])
    expect(() => converseStream.step(state, exception!)).toThrow(ProviderStreamError)
    try {
      converseStream.step(state, exception!)
    } catch (error) {
      expect((error as ProviderStreamError).info).toEqual({
        status: 429,
        message: 'Too many requests, please wait before trying again.',
        providerCode: 'ThrottlingException',
        param: null,
        fault: 'upstream',
        retryable: true,
        retryAfterMs: null,
      })
    }
  })

  it('maps unmodelled stream errors and other exceptions to their statuses', () => {
    const state = converseStream.start(testContext)
    const infoOf = (event: UpstreamEvent) => {
      try {
        converseStream.step(state, event)
      } catch (error) {
        return (error as ProviderStreamError).info
      }
      throw new Error('expected a throw')
    }
    expect(infoOf({ event: 'exception:validationException', data: { message: 'bad' } })).toMatchObject({ status: 400, providerCode: 'ValidationException', retryable: false, fault: 'client' })
    expect(infoOf({ event: 'exception:modelStreamErrorException', data: { message: 'x', originalStatusCode: 500 } })).toMatchObject({ status: 424, retryable: false })
    expect(infoOf({ event: 'exception:serviceUnavailableException', data: {} })).toMatchObject({ status: 503, retryable: true, message: 'Upstream answered HTTP 503' })
    expect(infoOf({ event: 'error:InternalFailure', data: { message: 'boom' } })).toMatchObject({ status: 500, providerCode: 'InternalFailure', message: 'boom', retryable: true })
  })
})
