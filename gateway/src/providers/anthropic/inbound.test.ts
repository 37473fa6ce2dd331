import { describe, expect, it } from 'vitest'
import type { TargetContext } from '../adapter.ts'
import { bedrock } from '../bedrock/index.ts'
import type { ChatChunk, ChatResponse } from '../canonical.ts'
import { openai } from '../openai/index.ts'
import { fixture, testContext } from '../shared/testing.ts'
import { anthropic } from './index.ts'
import { anthropicRequestToChat, chatResponseToAnthropic, chatStreamToAnthropic, nativeMessagesFor, type AnthropicSseEvent } from './inbound.ts'
import { chatToAnthropicBody } from './request.ts'

const target: TargetContext = { upstreamModel: 'gpt-4o', options: {} }
const minimal = { model: 'm', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] }

describe('nativeMessagesFor', () => {
  it('passes natively to Anthropic and to Claude on Bedrock, translates for the rest', () => {
    expect(nativeMessagesFor(anthropic, target)).toBe(anthropic.messages)
    expect(nativeMessagesFor(bedrock, { upstreamModel: 'anthropic.claude-3-haiku-20240307-v1:0', options: { region: 'us-east-1' } })).toBe(bedrock.messages)
    expect(nativeMessagesFor(bedrock, { upstreamModel: 'amazon.nova-pro-v1:0', options: { region: 'us-east-1' } })).toBeNull()
    expect(nativeMessagesFor(openai, target)).toBeNull()
  })

  it('sends the native body to Anthropic with the target model and headers', () => {
    const { upstream } = anthropic.messages!.toUpstream({ ...minimal, stream: true }, { upstreamModel: 'claude-opus-4-1', options: { anthropicBeta: 'context-1m-2025-08-07' } })
    expect(upstream).toEqual({
      method: 'POST',
      path: '/messages',
      headers: { 'anthropic-version': '2023-06-01', 'anthropic-beta': 'context-1m-2025-08-07' },
      body: { ...minimal, model: 'claude-opus-4-1', stream: true },
    })
  })
})

describe('anthropicRequestToChat', () => {
  it('translates every field of a Messages request', () => {
    const { request, problems, warnings } = anthropicRequestToChat(fixture(import.meta.url, 'inbound-request.json'))
    expect(problems).toEqual([])
    expect(warnings).toEqual([])
    expect(request).toEqual({
      model: 'claude-sonnet-4-5',
      max_completion_tokens: 1024,
      messages: [
        { role: 'system', content: [{ type: 'text', text: 'You are a weather bot.' }] },
        { role: 'user', content: [{ type: 'text', text: 'Weather in Paris? Here is a map.' }] },
        {
          role: 'assistant',
          content: 'Let me check.',
          reasoning_content: 'Need the tool.',
          tool_calls: [{ id: 'toolu_01', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }],
        },
        { role: 'tool', tool_call_id: 'toolu_01', content: '18C, sunny' },
        {
          role: 'user',
          content: [
            { type: 'text', text: 'And this picture?' },
            { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } },
            { type: 'image_url', image_url: { url: 'https://example.com/map.png' } },
            { type: 'file', file: { file_data: 'data:application/pdf;base64,JVBERi0=', filename: 'forecast.pdf' } },
          ],
        },
      ],
      temperature: 0.5,
      top_p: 0.9,
      top_k: 20,
      stop: ['END'],
      stream: true,
      stream_options: { include_usage: true },
      user: 'user-7',
      tools: [{ type: 'function', function: { name: 'get_weather', description: 'Current weather', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } } }],
      tool_choice: 'auto',
      parallel_tool_calls: false,
      thinking: { type: 'enabled', budget_tokens: 2000 },
    })
  })

  it('round-trips through the anthropic adapter to an equivalent Messages body', () => {
    const original = fixture<Record<string, unknown>>(import.meta.url, 'inbound-request.json')
    const { body } = chatToAnthropicBody(anthropicRequestToChat(original).request!, target)
    expect(body.max_tokens).toBe(original.max_tokens)
    expect(body.tools).toEqual(original.tools)
    expect(body.tool_choice).toEqual(original.tool_choice)
    expect(body.thinking).toEqual(original.thinking)
    expect(body.stop_sequences).toEqual(original.stop_sequences)
    expect(body.metadata).toEqual(original.metadata)
    expect(body.messages.map((message) => message.role)).toEqual(['user', 'assistant', 'user'])
    expect(body.messages[2]!.content).toHaveLength(5)
  })

  it('maps tool choices, output_config and plain-text documents', () => {
    const translate = (extra: Record<string, unknown>) => anthropicRequestToChat({ ...minimal, ...extra }).request!
    expect(translate({ tool_choice: { type: 'any' } }).tool_choice).toBe('required')
    expect(translate({ tool_choice: { type: 'none' } }).tool_choice).toBe('none')
    expect(translate({ tool_choice: { type: 'tool', name: 'f' } }).tool_choice).toEqual({ type: 'function', function: { name: 'f' } })
    const schema = { type: 'object', properties: {} }
    expect(translate({ output_config: { format: { type: 'json_schema', schema }, effort: 'low' } })).toMatchObject({
      response_format: { type: 'json_schema', json_schema: { name: 'response', schema, strict: true } },
      reasoning_effort: 'low',
    })
    const doc = translate({ messages: [{ role: 'user', content: [{ type: 'document', source: { type: 'text', media_type: 'text/plain', data: 'plain words' } }] }] })
    expect(doc.messages).toEqual([{ role: 'user', content: [{ type: 'text', text: 'plain words' }] }])
    expect(translate({ stream: false })).not.toHaveProperty('stream_options')
  })

  it('lists validation problems with parameter paths', () => {
    const { problems } = anthropicRequestToChat({
      max_tokens: 0,
      messages: [
        { role: 'system', content: 'x' },
        { role: 'user', content: [{ type: 'image', source: { type: 'file', file_id: 'file_1' } }, { type: 'tool_result', content: 'x' }, { type: 'search_result' }] },
        { role: 'assistant', content: [{ type: 'server_tool_use', id: 's', name: 'web_search', input: {} }] },
        { role: 'user', content: 7 },
      ],
      temperature: 'hot',
      stop_sequences: [1],
      tools: [{ type: 'web_search_20250305', name: 'web_search' }, { name: 'no_schema' }],
      tool_choice: { type: 'sometimes' },
      thinking: { type: 'enabled' },
      output_config: { format: { type: 'xml' } },
    })
    expect(problems.map((problem) => problem.param)).toEqual([
      'model',
      'max_tokens',
      'messages.0.role',
      'messages.1.content.0.source',
      'messages.1.content.1.tool_use_id',
      'messages.1.content.2.type',
      'messages.2.content.0.type',
      'messages.3.content',
      'temperature',
      'stop_sequences',
      'tools.0.type',
      'tools.1.input_schema',
      'tool_choice.type',
      'thinking.budget_tokens',
      'output_config.format',
    ])
    expect(anthropicRequestToChat([1, 2])).toEqual({ request: null, problems: [{ param: 'body', message: 'The request body must be a JSON object' }], warnings: [] })
  })

  it('warns about fields it leaves out instead of failing on them', () => {
    const { problems, warnings } = anthropicRequestToChat({
      ...minimal,
      service_tier: 'auto',
      mystery: 1,
      messages: [{ role: 'assistant', content: [{ type: 'redacted_thinking', data: 'abc' }, { type: 'text', text: 'ok' }] }],
    })
    expect(problems).toEqual([])
    expect(warnings.map((warning) => warning.parameter)).toEqual(['messages.0.content.0', 'service_tier', 'mystery'])
  })
})

describe('chatResponseToAnthropic', () => {
  const response = (message: Record<string, unknown>, finish: string | null, usage?: Record<string, unknown>): ChatResponse =>
    ({ id: 'chatcmpl-1', object: 'chat.completion', created: 1, model: 'gpt-4o-2024-08-06', choices: [{ index: 0, message: { role: 'assistant', ...message }, finish_reason: finish }], usage }) as ChatResponse

  it('builds thinking, text and tool_use blocks with Anthropic usage', () => {
    const message = chatResponseToAnthropic(
      response(
        { content: 'Checking.', reasoning_content: 'hmm', tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'f', arguments: '{"a":1}' } }, { id: 'call_2', type: 'function', function: { name: 'g', arguments: 'oops' } }] },
        'tool_calls',
        { prompt_tokens: 100, completion_tokens: 20, total_tokens: 120, prompt_tokens_details: { cached_tokens: 60 } },
      ),
      { requestModel: 'asked' },
    )
    expect(message).toEqual({
      id: 'chatcmpl-1',
      type: 'message',
      role: 'assistant',
      model: 'gpt-4o-2024-08-06',
      content: [
        { type: 'thinking', thinking: 'hmm', signature: '' },
        { type: 'text', text: 'Checking.' },
        { type: 'tool_use', id: 'call_1', name: 'f', input: { a: 1 } },
        { type: 'tool_use', id: 'call_2', name: 'g', input: { _raw: 'oops' } },
      ],
      stop_reason: 'tool_use',
      stop_sequence: null,
      usage: { input_tokens: 40, output_tokens: 20, cache_read_input_tokens: 60, cache_creation_input_tokens: 0 },
    })
  })

  it('maps finish reasons and refusals, and prefers the usage the gateway measured', () => {
    const stop = (finish: string | null) => chatResponseToAnthropic(response({ content: 'x' }, finish), { requestModel: 'm' }).stop_reason
    expect(stop('stop')).toBe('end_turn')
    expect(stop('length')).toBe('max_tokens')
    expect(stop('content_filter')).toBe('refusal')
    expect(stop('function_call')).toBe('tool_use')
    expect(stop(null)).toBe('end_turn')
    const refused = chatResponseToAnthropic(response({ content: null, refusal: 'I cannot help with that.' }, 'stop'), { requestModel: 'm' })
    expect(refused.content).toEqual([{ type: 'text', text: 'I cannot help with that.' }])
    expect(refused.stop_reason).toBe('refusal')
    const measured = chatResponseToAnthropic(response({ content: 'x' }, 'stop'), { requestModel: 'm' }, { inputTokens: 9, outputTokens: 3, cachedInputTokens: 4, cacheWriteInputTokens: 2 })
    expect(measured.usage).toEqual({ input_tokens: 3, output_tokens: 3, cache_read_input_tokens: 4, cache_creation_input_tokens: 2 })
  })
})

describe('chatStreamToAnthropic', () => {
  const chunk = (delta: Record<string, unknown>, finish: string | null = null, usage?: Record<string, unknown>): ChatChunk =>
    ({ id: 'chatcmpl-9', object: 'chat.completion.chunk', created: 1, model: 'gpt-4o', choices: [{ index: 0, delta, finish_reason: finish }], ...(usage && { usage }) }) as ChatChunk

  function run(chunks: ChatChunk[], usage?: Parameters<typeof chatStreamToAnthropic.finish>[1]): AnthropicSseEvent[] {
    const state = chatStreamToAnthropic.start(testContext)
    return [...chunks.flatMap((item) => chatStreamToAnthropic.step(state, item)), ...chatStreamToAnthropic.finish(state, usage)]
  }

  it('streams thinking, text and parallel tool calls as numbered blocks', () => {
    const events = run([
      chunk({ role: 'assistant', content: '' }),
      chunk({ reasoning_content: 'Think' }),
      chunk({ content: 'Hel' }),
      chunk({ content: 'lo' }),
      chunk({ tool_calls: [{ index: 0, id: 'call_a', type: 'function', function: { name: 'f', arguments: '' } }] }),
      chunk({ tool_calls: [{ index: 0, function: { arguments: '{"x":' } }] }),
      chunk({ tool_calls: [{ index: 0, function: { arguments: '1}' } }] }),
      chunk({ tool_calls: [{ index: 1, id: 'call_b', type: 'function', function: { name: 'g', arguments: '{}' } }] }),
      chunk({}, 'tool_calls'),
      { id: 'chatcmpl-9', object: 'chat.completion.chunk', created: 1, model: 'gpt-4o', choices: [], usage: { prompt_tokens: 50, completion_tokens: 7, total_tokens: 57 } },
    ])
    expect(events).toEqual([
      {
        event: 'message_start',
        data: { type: 'message_start', message: { id: 'chatcmpl-9', type: 'message', role: 'assistant', model: 'gpt-4o', content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 0, output_tokens: 0 } } },
      },
      { event: 'content_block_start', data: { type: 'content_block_start', index: 0, content_block: { type: 'thinking', thinking: '', signature: '' } } },
      { event: 'content_block_delta', data: { type: 'content_block_delta', index: 0, delta: { type: 'thinking_delta', thinking: 'Think' } } },
      { event: 'content_block_stop', data: { type: 'content_block_stop', index: 0 } },
      { event: 'content_block_start', data: { type: 'content_block_start', index: 1, content_block: { type: 'text', text: '' } } },
      { event: 'content_block_delta', data: { type: 'content_block_delta', index: 1, delta: { type: 'text_delta', text: 'Hel' } } },
      { event: 'content_block_delta', data: { type: 'content_block_delta', index: 1, delta: { type: 'text_delta', text: 'lo' } } },
      { event: 'content_block_stop', data: { type: 'content_block_stop', index: 1 } },
      { event: 'content_block_start', data: { type: 'content_block_start', index: 2, content_block: { type: 'tool_use', id: 'call_a', name: 'f', input: {} } } },
      { event: 'content_block_delta', data: { type: 'content_block_delta', index: 2, delta: { type: 'input_json_delta', partial_json: '{"x":' } } },
      { event: 'content_block_delta', data: { type: 'content_block_delta', index: 2, delta: { type: 'input_json_delta', partial_json: '1}' } } },
      { event: 'content_block_stop', data: { type: 'content_block_stop', index: 2 } },
      { event: 'content_block_start', data: { type: 'content_block_start', index: 3, content_block: { type: 'tool_use', id: 'call_b', name: 'g', input: {} } } },
      { event: 'content_block_delta', data: { type: 'content_block_delta', index: 3, delta: { type: 'input_json_delta', partial_json: '{}' } } },
      { event: 'content_block_stop', data: { type: 'content_block_stop', index: 3 } },
      {
        event: 'message_delta',
        data: { type: 'message_delta', delta: { stop_reason: 'tool_use', stop_sequence: null }, usage: { input_tokens: 50, output_tokens: 7, cache_read_input_tokens: 0, cache_creation_input_tokens: 0 } },
      },
      { event: 'message_stop', data: { type: 'message_stop' } },
    ])
  })

  it('round-trips the anthropic adapter: Anthropic events -> chat chunks -> the same blocks', () => {
    const upstream = anthropic.chat!.stream
    const state = upstream.start(testContext)
    const chunks = fixture<Array<{ event: string; data: unknown }>>(import.meta.url, 'stream-tool-use.json').flatMap((item) => upstream.step(state, item))
    const result = upstream.finish(state)
    const events = run(chunks, result.usage)
    const blocks = events.filter((item) => item.event === 'content_block_start').map((item) => item.data.content_block)
    expect(blocks).toEqual([
      { type: 'text', text: '' },
      { type: 'tool_use', id: 'toolu_01T1x1fJ34qAmk2tNTrN7Up6', name: 'get_weather', input: {} },
      { type: 'tool_use', id: 'toolu_02abc', name: 'get_time', input: {} },
    ])
    expect(events.at(-2)!.data).toEqual({ type: 'message_delta', delta: { stop_reason: 'tool_use', stop_sequence: null }, usage: { input_tokens: 472, output_tokens: 89, cache_read_input_tokens: 0, cache_creation_input_tokens: 0 } })
  })

  it('closes a stream that produced nothing, ends refusals as refusal, and names tool calls without ids', () => {
    expect(run([]).map((item) => item.event)).toEqual(['message_start', 'message_delta', 'message_stop'])
    const refused = run([chunk({ refusal: 'No.' }), chunk({}, 'stop')])
    expect((refused.at(-2)!.data.delta as Record<string, unknown>).stop_reason).toBe('refusal')
    const unnamed = run([chunk({ tool_calls: [{ index: 0, function: { name: 'f', arguments: '{}' } }] }, 'tool_calls')])
    expect(unnamed[1]!.data.content_block).toEqual({ type: 'tool_use', id: 'chatcmpl-9_call_0', name: 'f', input: {} })
  })
})
