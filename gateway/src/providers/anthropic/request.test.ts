import { describe, expect, it } from 'vitest'
import type { TargetContext } from '../adapter.ts'
import type { ChatRequest } from '../canonical.ts'
import { anthropic } from './index.ts'
import { chatToAnthropicBody, DEFAULT_MAX_TOKENS } from './request.ts'

const target: TargetContext = { upstreamModel: 'claude-sonnet-4-5', options: {} }

function body(request: Partial<ChatRequest>, options: Record<string, string> = {}) {
  return chatToAnthropicBody({ model: 'alias', messages: [{ role: 'user', content: 'hi' }], ...request }, { ...target, options })
}

describe('anthropic chat request', () => {
  it('builds the upstream request: path, headers, model, stream flag', () => {
    const { upstream, warnings } = anthropic.chat!.toUpstream({ model: 'alias', messages: [{ role: 'user', content: 'hi' }], stream: true }, target)
    expect(upstream).toEqual({
      method: 'POST',
      path: '/messages',
      headers: { 'anthropic-version': '2023-06-01' },
      body: { model: 'claude-sonnet-4-5', max_tokens: DEFAULT_MAX_TOKENS, messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }], stream: true },
    })
    expect(warnings).toEqual([])
  })

  it('adds anthropic-beta from the target options', () => {
    const { upstream } = anthropic.chat!.toUpstream({ model: 'a', messages: [] }, { ...target, options: { anthropicBeta: 'prompt-caching-2024-07-31,pdfs-2024-09-25' } })
    expect(upstream.headers).toEqual({ 'anthropic-version': '2023-06-01', 'anthropic-beta': 'prompt-caching-2024-07-31,pdfs-2024-09-25' })
    expect(upstream.body).not.toHaveProperty('stream')
  })

  it('maps every supported sampling and control field', () => {
    const { body: mapped, warnings } = body({
      max_completion_tokens: 300,
      max_tokens: 999,
      temperature: 0.2,
      top_p: 0.9,
      top_k: 40,
      stop: ['END', 'STOP'],
      user: 'user-42',
      thinking: { type: 'enabled', budget_tokens: 2048 },
      stream_options: { include_usage: true },
      n: 1,
      logprobs: false,
      presence_penalty: 0,
      frequency_penalty: 0,
    })
    expect(mapped).toMatchObject({
      max_tokens: 300,
      temperature: 0.2,
      top_p: 0.9,
      top_k: 40,
      stop_sequences: ['END', 'STOP'],
      metadata: { user_id: 'user-42' },
      thinking: { type: 'enabled', budget_tokens: 2048 },
    })
    expect(warnings).toEqual([])
  })

  it('falls back to max_tokens, then to the default, adding the thinking budget to the default', () => {
    expect(body({ max_tokens: 77 }).body.max_tokens).toBe(77)
    expect(body({}).body.max_tokens).toBe(DEFAULT_MAX_TOKENS)
    expect(body({}, { defaultMaxTokens: '1000' }).body.max_tokens).toBe(1000)
    expect(body({}, { defaultMaxTokens: 'lots' }).body.max_tokens).toBe(DEFAULT_MAX_TOKENS)
    expect(body({ thinking: { type: 'enabled', budget_tokens: 8000 } }).body.max_tokens).toBe(8000 + DEFAULT_MAX_TOKENS)
  })

  it('turns a single stop string into a list', () => {
    expect(body({ stop: 'END' }).body.stop_sequences).toEqual(['END'])
    expect(body({ stop: [] }).body).not.toHaveProperty('stop_sequences')
  })

  it('moves system and developer messages to system blocks, keeping cache_control', () => {
    const { body: mapped } = body({
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'developer', content: [{ type: 'text', text: 'Long shared context', cache_control: { type: 'ephemeral' } } as never] },
        { role: 'user', content: 'hi' },
      ],
    })
    expect(mapped.system).toEqual([
      { type: 'text', text: 'Be brief.' },
      { type: 'text', text: 'Long shared context', cache_control: { type: 'ephemeral' } },
    ])
    expect(mapped.messages).toEqual([{ role: 'user', content: [{ type: 'text', text: 'hi' }] }])
  })

  it('maps a tool conversation: tool_use blocks, tool_result blocks, merged consecutive turns', () => {
    const { body: mapped, warnings } = body({
      messages: [
        { role: 'user', content: 'Weather and time in SF?' },
        {
          role: 'assistant',
          content: 'Checking.',
          tool_calls: [
            { id: 'toolu_1', type: 'function', function: { name: 'get_weather', arguments: '{"location":"SF"}' } },
            { id: 'toolu_2', type: 'function', function: { name: 'get_time', arguments: '' } },
          ],
        },
        { role: 'tool', tool_call_id: 'toolu_1', content: '18C' },
        { role: 'tool', tool_call_id: 'toolu_2', content: [{ type: 'text', text: '09:00' }] },
        { role: 'user', content: 'Thanks' },
        { role: 'user', content: 'And tomorrow?' },
      ],
    })
    expect(mapped.messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'Weather and time in SF?' }] },
      {
        role: 'assistant',
        content: [
          { type: 'text', text: 'Checking.' },
          { type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: { location: 'SF' } },
          { type: 'tool_use', id: 'toolu_2', name: 'get_time', input: {} },
        ],
      },
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 'toolu_1', content: [{ type: 'text', text: '18C' }] },
          { type: 'tool_result', tool_use_id: 'toolu_2', content: [{ type: 'text', text: '09:00' }] },
          { type: 'text', text: 'Thanks' },
          { type: 'text', text: 'And tomorrow?' },
        ],
      },
    ])
    expect(warnings).toEqual([])
  })

  it('reports tool arguments that are not a JSON object and sends {}', () => {
    const { body: mapped, warnings } = body({
      messages: [{ role: 'assistant', content: null, tool_calls: [{ id: 't', type: 'function', function: { name: 'f', arguments: '[1,2' } }] }],
    })
    expect(mapped.messages[0]!.content).toEqual([{ type: 'tool_use', id: 't', name: 'f', input: {} }])
    expect(warnings).toEqual([expect.objectContaining({ kind: 'unsupported_parameter', parameter: 'messages[0].tool_calls[0].function.arguments' })])
  })

  it('maps images (data URL -> base64, http URL -> url) and PDFs, reporting what it cannot send', () => {
    const { body: mapped, warnings } = body({
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'Compare' },
            { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } },
            { type: 'image_url', image_url: { url: 'https://example.com/cat.jpg', detail: 'high' } },
            { type: 'image_url', image_url: { url: 'ftp://example.com/x.png' } },
            { type: 'file', file: { file_data: 'data:application/pdf;base64,JVBERi0=', filename: 'report.pdf' } },
            { type: 'file', file: { file_id: 'file-abc' } },
            { type: 'input_audio', input_audio: { data: 'AAAA', format: 'wav' } },
            { type: 'text', text: '' },
          ],
        },
      ],
    })
    expect(mapped.messages[0]!.content).toEqual([
      { type: 'text', text: 'Compare' },
      { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' } },
      { type: 'image', source: { type: 'url', url: 'https://example.com/cat.jpg' } },
      { type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: 'JVBERi0=' }, title: 'report.pdf' },
    ])
    expect(warnings.map((warning) => warning.parameter)).toEqual([
      'messages[0].content[3].image_url',
      'messages[0].content[5].file',
      'messages[0].content[6].type',
    ])
  })

  it('maps tools and every tool_choice, with parallel_tool_calls -> disable_parallel_tool_use', () => {
    const tools: ChatRequest['tools'] = [
      { type: 'function', function: { name: 'get_weather', description: 'Weather', parameters: { type: 'object', properties: { location: { type: 'string' } } }, strict: true } },
      { type: 'function', function: { name: 'noop' } },
    ]
    const choice = (request: Partial<ChatRequest>) => body({ tools, ...request }).body.tool_choice
    expect(body({ tools }).body.tools).toEqual([
      { name: 'get_weather', description: 'Weather', input_schema: { type: 'object', properties: { location: { type: 'string' } } }, strict: true },
      { name: 'noop', input_schema: { type: 'object', properties: {} } },
    ])
    expect(choice({})).toBeUndefined()
    expect(choice({ tool_choice: 'auto' })).toEqual({ type: 'auto' })
    expect(choice({ tool_choice: 'required' })).toEqual({ type: 'any' })
    expect(choice({ tool_choice: 'none' })).toEqual({ type: 'none' })
    expect(choice({ tool_choice: { type: 'function', function: { name: 'noop' } } })).toEqual({ type: 'tool', name: 'noop' })
    expect(choice({ parallel_tool_calls: false })).toEqual({ type: 'auto', disable_parallel_tool_use: true })
    expect(choice({ tool_choice: 'required', parallel_tool_calls: false })).toEqual({ type: 'any', disable_parallel_tool_use: true })
    expect(choice({ tool_choice: 'none', parallel_tool_calls: false })).toEqual({ type: 'none' })
    expect(choice({ parallel_tool_calls: true })).toBeUndefined()
    // Without tools, parallel_tool_calls says nothing.
    expect(body({ parallel_tool_calls: false }).body).not.toHaveProperty('tool_choice')
  })

  it('maps a json_schema response_format to output_config and reports json_object', () => {
    const schema = { type: 'object', properties: { a: { type: 'string' } }, required: ['a'], additionalProperties: false }
    const mapped = body({ response_format: { type: 'json_schema', json_schema: { name: 'out', schema, strict: true } } })
    expect(mapped.body.output_config).toEqual({ format: { type: 'json_schema', schema } })
    expect(mapped.warnings).toEqual([])
    expect(body({ response_format: { type: 'text' } }).warnings).toEqual([])
    const jsonObject = body({ response_format: { type: 'json_object' } })
    expect(jsonObject.body).not.toHaveProperty('output_config')
    expect(jsonObject.warnings).toEqual([expect.objectContaining({ parameter: 'response_format' })])
  })

  it('refuses n above 1 rather than answering fewer choices than asked', () => {
    expect(() => body({ n: 2 })).toThrow(expect.objectContaining({ code: 'invalid_parameter', param: 'n', status: 400 }))
  })

  it('reports every parameter Anthropic cannot honour, never dropping one silently', () => {
    const { warnings } = body({
      logprobs: true,
      top_logprobs: 3,
      logit_bias: { '50256': -100 },
      presence_penalty: 0.5,
      frequency_penalty: -0.5,
      seed: 7,
      store: true,
      reasoning_effort: 'high',
      modalities: ['text', 'audio'],
      messages: [
        { role: 'user', content: 'hi', name: 'alice' },
        { role: 'function', name: 'legacy', content: '{}' },
      ],
    })
    expect(warnings.map((warning) => warning.parameter).sort()).toEqual(
      [
        'frequency_penalty',
        'logit_bias',
        'logprobs',
        'messages[0].name',
        'messages[1].name',
        'messages[1].role',
        'modalities',
        'presence_penalty',
        'reasoning_effort',
        'seed',
        'store',
        'top_logprobs',
      ].sort(),
    )
    expect(warnings.every((warning) => warning.kind === 'unsupported_parameter' && typeof warning.detail === 'string')).toBe(true)
  })

  it('drops empty turns and non-text system parts with a warning', () => {
    const { body: mapped, warnings } = body({
      messages: [
        { role: 'system', content: [{ type: 'image_url', image_url: { url: 'https://example.com/a.png' } }] },
        { role: 'user', content: 'hi' },
        { role: 'assistant', content: '' },
      ],
    })
    expect(mapped).not.toHaveProperty('system')
    expect(mapped.messages).toEqual([{ role: 'user', content: [{ type: 'text', text: 'hi' }] }])
    expect(warnings).toEqual([expect.objectContaining({ parameter: 'messages[0].content' })])
  })
})
