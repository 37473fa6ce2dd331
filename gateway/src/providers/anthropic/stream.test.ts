import { describe, expect, it } from 'vitest'
import type { UpstreamEvent } from '../adapter.ts'
import { ProviderStreamError } from '../adapter.ts'
import type { ChatChunk } from '../canonical.ts'
import { fixture, runStream, testContext } from '../shared/testing.ts'
import { anthropicStream } from './stream.ts'

const events = (name: string) => fixture<UpstreamEvent[]>(import.meta.url, name)
const deltas = (chunks: ChatChunk[]) => chunks.map((chunk) => chunk.choices[0]?.delta)

describe('anthropic stream', () => {
  it('turns text and thinking deltas into chunks, with usage on the finishing chunk', () => {
    const result = runStream(anthropicStream, events('stream-text.json'))
    expect(deltas(result.chunks)).toEqual([
      { role: 'assistant', content: '' },
      { reasoning_content: 'Let me think.' },
      { content: 'Hello' },
      { content: '!' },
      {},
    ])
    const last = result.chunks.at(-1)!
    expect(last).toEqual({
      id: 'msg_1nZdL29xx5MUA1yADyHTEsnR8uuvGzszyY',
      object: 'chat.completion.chunk',
      created: testContext.createdAt,
      model: 'claude-sonnet-4-5-20250929',
      choices: [{ index: 0, delta: {}, finish_reason: 'stop' }],
      usage: { prompt_tokens: 1025, completion_tokens: 15, total_tokens: 1040, prompt_tokens_details: { cached_tokens: 1000 }, cache_creation_input_tokens: 0 },
    })
    expect(result.usage).toEqual({ inputTokens: 1025, outputTokens: 15, cachedInputTokens: 1000, cacheWriteInputTokens: 0 })
    expect(result.finishReason).toEqual({ unified: 'stop', raw: 'end_turn' })
  })

  it('numbers tool calls from 0 whatever their content block index, streaming their arguments', () => {
    const result = runStream(anthropicStream, events('stream-tool-use.json'))
    expect(deltas(result.chunks)).toEqual([
      { role: 'assistant', content: '' },
      { content: 'Checking both.' },
      { tool_calls: [{ index: 0, id: 'toolu_01T1x1fJ34qAmk2tNTrN7Up6', type: 'function', function: { name: 'get_weather', arguments: '' } }] },
      { tool_calls: [{ index: 0, function: { arguments: '{"location":' } }] },
      { tool_calls: [{ index: 0, function: { arguments: ' "San Francisco, CA"}' } }] },
      { tool_calls: [{ index: 1, id: 'toolu_02abc', type: 'function', function: { name: 'get_time', arguments: '' } }] },
      { tool_calls: [{ index: 1, function: { arguments: '{}' } }] },
      {},
    ])
    expect(result.chunks.at(-1)!.choices[0]!.finish_reason).toBe('tool_calls')
    expect(result.usage).toEqual({ inputTokens: 472, outputTokens: 89 })
    expect(result.finishReason).toEqual({ unified: 'tool_calls', raw: 'tool_use' })
    expect(new Set(result.chunks.map((chunk) => chunk.id))).toEqual(new Set(['msg_014p7gG3wDgGV9EUtLvnow3U']))
  })

  it('takes cumulative usage fields from message_delta when Anthropic sends them there', () => {
    const state = anthropicStream.start(testContext)
    anthropicStream.step(state, { event: 'message_start', data: { type: 'message_start', message: { id: 'm', model: 'c', usage: { input_tokens: 10, output_tokens: 1 } } } })
    anthropicStream.step(state, { event: 'message_delta', data: { type: 'message_delta', delta: { stop_reason: 'max_tokens' }, usage: { input_tokens: 12, cache_read_input_tokens: 4, output_tokens: 30 } } })
    expect(anthropicStream.finish(state)).toEqual({
      chunks: [],
      usage: { inputTokens: 16, outputTokens: 30, cachedInputTokens: 4 },
      finishReason: { unified: 'length', raw: 'max_tokens' },
    })
  })

  it('throws ProviderStreamError on an in-band error event, with the status its type implies', () => {
    const state = anthropicStream.start(testContext)
    const [start, error] = events('stream-error.json')
    expect(anthropicStream.step(state, start!)).toHaveLength(1)
    let thrown: unknown
    try {
      anthropicStream.step(state, error!)
    } catch (caught) {
      thrown = caught
    }
    expect(thrown).toBeInstanceOf(ProviderStreamError)
    expect((thrown as ProviderStreamError).info).toEqual({
      status: 529,
      message: 'Overloaded',
      providerCode: 'overloaded_error',
      param: null,
      fault: 'upstream',
      retryable: true,
      retryAfterMs: null,
    })
  })

  it('ends with an "other" finish reason when the stream stops before message_delta', () => {
    const [start] = events('stream-text.json')
    const result = runStream(anthropicStream, [start!])
    expect(result.finishReason).toEqual({ unified: 'other' })
    expect(result.usage).toEqual({ inputTokens: 1025, outputTokens: 1, cachedInputTokens: 1000, cacheWriteInputTokens: 0 })
  })

  it('uses the context id and model until message_start names them, and ignores unknown events', () => {
    const state = anthropicStream.start(testContext)
    expect(anthropicStream.step(state, { event: 'content_block_start', data: { type: 'content_block_start', index: 0, content_block: { type: 'text', text: 'Hi' } } })).toEqual([
      { id: testContext.responseId, object: 'chat.completion.chunk', created: testContext.createdAt, model: testContext.requestModel, choices: [{ index: 0, delta: { content: 'Hi' }, finish_reason: null }] },
    ])
    expect(anthropicStream.step(state, { event: 'future_event', data: { type: 'future_event' } })).toEqual([])
    expect(anthropicStream.step(state, { data: 'not an object' })).toEqual([])
    expect(anthropicStream.step(state, { data: { type: 'content_block_delta', index: 0, delta: { type: 'citations_delta', citation: {} } } })).toEqual([])
  })
})
