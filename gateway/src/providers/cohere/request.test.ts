import { describe, expect, it } from 'vitest'
import { GatewayError } from '../../core/errors.ts'
import { cohere } from './index.ts'

const target = { upstreamModel: 'command-a-03-2025', options: {} }

describe('Cohere chat request mapping', () => {
  it('maps messages, tools, tool results and every sampling field', () => {
    const { upstream, warnings } = cohere.chat!.toUpstream({
      model: 'alias',
      stream: true,
      stream_options: { include_usage: true },
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: [{ type: 'text', text: 'Weather?' }, { type: 'image_url', image_url: { url: 'https://x/y.png', detail: 'low' } }] },
        {
          role: 'assistant',
          content: null,
          reasoning_content: 'I will look it up.',
          tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"location":"Madrid"}' } }],
        },
        { role: 'tool', tool_call_id: 'call_1', content: [{ type: 'text', text: '{"temp":24}' }] },
        { role: 'assistant', content: 'It is 24°C.' },
      ],
      tools: [{ type: 'function', function: { name: 'get_weather', description: 'Weather', parameters: { type: 'object', properties: { location: { type: 'string' } } }, strict: true } }],
      tool_choice: 'required',
      max_tokens: 5,
      max_completion_tokens: 300,
      stop: 'END',
      temperature: 0.3,
      top_p: 0.75,
      top_k: 40,
      seed: 11,
      presence_penalty: 0.2,
      frequency_penalty: 0.4,
      logprobs: true,
      response_format: { type: 'json_schema', json_schema: { name: 'x', schema: { type: 'object' } } },
      thinking: { type: 'enabled', budget_tokens: 1024 },
      safety_mode: 'STRICT',
    }, target)
    expect(warnings).toEqual([])
    expect(upstream).toEqual({
      method: 'POST',
      path: '/v2/chat',
      headers: {},
      body: {
        model: 'command-a-03-2025',
        stream: true,
        messages: [
          { role: 'system', content: 'Be brief.' },
          { role: 'user', content: [{ type: 'text', text: 'Weather?' }, { type: 'image_url', image_url: { url: 'https://x/y.png', detail: 'low' } }] },
          { role: 'assistant', tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"location":"Madrid"}' } }], tool_plan: 'I will look it up.' },
          { role: 'tool', tool_call_id: 'call_1', content: '{"temp":24}' },
          { role: 'assistant', content: 'It is 24°C.' },
        ],
        tools: [{ type: 'function', function: { name: 'get_weather', description: 'Weather', parameters: { type: 'object', properties: { location: { type: 'string' } } } } }],
        strict_tools: true,
        tool_choice: 'REQUIRED',
        max_tokens: 300,
        stop_sequences: ['END'],
        temperature: 0.3,
        p: 0.75,
        k: 40,
        seed: 11,
        presence_penalty: 0.2,
        frequency_penalty: 0.4,
        logprobs: true,
        response_format: { type: 'json_object', json_schema: { type: 'object' } },
        thinking: { type: 'enabled', token_budget: 1024 },
        safety_mode: 'STRICT',
      },
    })
  })

  it('maps tool_choice none and json_object; auto sends nothing', () => {
    const base = { model: 'm', messages: [{ role: 'user' as const, content: 'hi' }] }
    expect(cohere.chat!.toUpstream({ ...base, tool_choice: 'none', response_format: { type: 'json_object' } }, target).upstream.body).toMatchObject({ tool_choice: 'NONE', response_format: { type: 'json_object' } })
    expect(cohere.chat!.toUpstream({ ...base, tool_choice: 'auto' }, target).upstream.body).not.toHaveProperty('tool_choice')
  })

  it('warns for what Cohere cannot honour', () => {
    const { warnings, upstream } = cohere.chat!.toUpstream({
      model: 'm',
      messages: [{ role: 'user', content: 'hi' }],
      n: 3,
      top_logprobs: 2,
      logit_bias: { '1': 1 },
      user: 'u',
      parallel_tool_calls: false,
      tools: [{ type: 'function', function: { name: 'f' } }],
      tool_choice: { type: 'function', function: { name: 'f' } },
    }, target)
    expect(warnings.map((warning) => warning.parameter).sort()).toEqual(['logit_bias', 'n', 'parallel_tool_calls', 'tool_choice', 'top_logprobs', 'user'])
    expect(upstream.body).toMatchObject({ tool_choice: 'REQUIRED', tools: [{ type: 'function', function: { name: 'f' } }] })
  })

  it('rejects parts and roles Cohere cannot take with a 400', () => {
    expect(() => cohere.chat!.toUpstream({ model: 'm', messages: [{ role: 'user', content: [{ type: 'input_audio', input_audio: { data: 'x', format: 'wav' } }] }] }, target)).toThrow(GatewayError)
    expect(() => cohere.chat!.toUpstream({ model: 'm', messages: [{ role: 'function', name: 'f', content: 'x' }] }, target)).toThrow(/role 'function'/)
  })
})
