import { describe, expect, it } from 'vitest'
import type { TargetContext } from '../adapter.ts'
import type { ChatRequest } from '../canonical.ts'
import { converseRequest } from './converse-request.ts'

const target: TargetContext = { upstreamModel: 'us.anthropic.claude-3-7-sonnet-20250219-v1:0', options: { region: 'us-east-1' } }

function translate(request: Partial<ChatRequest>) {
  return converseRequest({ model: 'alias', messages: [{ role: 'user', content: 'hi' }], ...request }, target)
}
const body = (request: Partial<ChatRequest>) => translate(request).upstream.body as Record<string, unknown>

describe('bedrock converse request', () => {
  it('posts to the encoded model path, choosing converse-stream when streaming', () => {
    expect(translate({}).upstream).toEqual({
      method: 'POST',
      path: '/model/us.anthropic.claude-3-7-sonnet-20250219-v1%3A0/converse',
      headers: {},
      body: { messages: [{ role: 'user', content: [{ text: 'hi' }] }] },
    })
    expect(translate({ stream: true, stream_options: { include_usage: true } }).upstream.path).toBe('/model/us.anthropic.claude-3-7-sonnet-20250219-v1%3A0/converse-stream')
    expect(converseRequest({ model: 'a', messages: [] }, { ...target, upstreamModel: 'arn:aws:bedrock:us-east-1:123456789012:inference-profile/x' }).upstream.path).toBe(
      '/model/arn%3Aaws%3Abedrock%3Aus-east-1%3A123456789012%3Ainference-profile%2Fx/converse',
    )
  })

  it('maps inference parameters, thinking and top_k', () => {
    const { upstream, warnings } = translate({
      max_completion_tokens: 512,
      temperature: 0.3,
      top_p: 0.8,
      top_k: 50,
      stop: 'END',
      thinking: { type: 'enabled', budget_tokens: 1024 },
      n: 1,
      presence_penalty: 0,
    })
    expect(upstream.body).toMatchObject({
      inferenceConfig: { maxTokens: 512, temperature: 0.3, topP: 0.8, stopSequences: ['END'] },
      additionalModelRequestFields: { thinking: { type: 'enabled', budget_tokens: 1024 }, top_k: 50 },
    })
    expect(warnings).toEqual([])
    expect(body({ max_tokens: 64, stop: ['a', '', 'b'] }).inferenceConfig).toEqual({ maxTokens: 64, stopSequences: ['a', 'b'] })
    expect(body({ stop: '' })).not.toHaveProperty('inferenceConfig')
  })

  it('maps system messages, images, documents, cache points and a tool conversation', () => {
    const { upstream, warnings } = translate({
      messages: [
        { role: 'system', content: [{ type: 'text', text: 'Be brief.', cache_control: { type: 'ephemeral' } } as never] },
        { role: 'developer', content: 'Answer in French.' },
        {
          role: 'user',
          content: [
            { type: 'text', text: 'What is this?' },
            { type: 'image_url', image_url: { url: 'data:image/jpeg;base64,/9j/4AAQ' } },
            { type: 'file', file: { file_data: 'data:application/pdf;base64,JVBERi0=', filename: 'Q3 report_final.pdf' } },
          ],
        },
        { role: 'assistant', content: null, tool_calls: [{ id: 'tooluse_1', type: 'function', function: { name: 'lookup', arguments: '{"q":"x"}' } }] },
        { role: 'tool', tool_call_id: 'tooluse_1', content: 'found' },
        { role: 'tool', tool_call_id: 'tooluse_2', content: '' },
        { role: 'user', content: 'Thanks' },
      ],
    })
    expect(upstream.body).toEqual({
      system: [{ text: 'Be brief.' }, { cachePoint: { type: 'default' } }, { text: 'Answer in French.' }],
      messages: [
        {
          role: 'user',
          content: [
            { text: 'What is this?' },
            { image: { format: 'jpeg', source: { bytes: '/9j/4AAQ' } } },
            { document: { format: 'pdf', name: 'Q3 report-final', source: { bytes: 'JVBERi0=' } } },
          ],
        },
        { role: 'assistant', content: [{ toolUse: { toolUseId: 'tooluse_1', name: 'lookup', input: { q: 'x' } } }] },
        {
          role: 'user',
          content: [
            { toolResult: { toolUseId: 'tooluse_1', content: [{ text: 'found' }] } },
            { toolResult: { toolUseId: 'tooluse_2', content: [{ text: '' }] } },
            { text: 'Thanks' },
          ],
        },
      ],
    })
    expect(warnings).toEqual([])
  })

  it('reports what Converse cannot take: http images, odd formats, audio, names, legacy roles', () => {
    const { upstream, warnings } = translate({
      messages: [
        {
          role: 'user',
          name: 'bob',
          content: [
            { type: 'image_url', image_url: { url: 'https://example.com/cat.png' } },
            { type: 'image_url', image_url: { url: 'data:image/bmp;base64,Qk0=' } },
            { type: 'file', file: { file_id: 'file-1' } },
            { type: 'input_audio', input_audio: { data: 'AAAA', format: 'mp3' } },
            { type: 'text', text: 'ok' },
          ],
        },
        { role: 'function', content: 'x' },
        { role: 'assistant', content: null, tool_calls: [{ id: 't', type: 'function', function: { name: 'f', arguments: 'nope' } }] },
      ],
    })
    expect(warnings.map((warning) => warning.parameter)).toEqual([
      'messages[0].name',
      'messages[0].content[0].image_url',
      'messages[0].content[1].image_url',
      'messages[0].content[2].file',
      'messages[0].content[3].type',
      'messages[1].role',
      'messages[2].tool_calls[0].function.arguments',
    ])
    expect((upstream.body as { messages: unknown[] }).messages).toEqual([
      { role: 'user', content: [{ text: 'ok' }] },
      { role: 'assistant', content: [{ toolUse: { toolUseId: 't', name: 'f', input: {} } }] },
    ])
  })

  it('maps tools and tool choices', () => {
    const tools: ChatRequest['tools'] = [{ type: 'function', function: { name: 'lookup', description: 'Search', parameters: { type: 'object', properties: { q: { type: 'string' } } } } }, { type: 'function', function: { name: 'bare' } }]
    expect(body({ tools }).toolConfig).toEqual({
      tools: [
        { toolSpec: { name: 'lookup', description: 'Search', inputSchema: { json: { type: 'object', properties: { q: { type: 'string' } } } } } },
        { toolSpec: { name: 'bare', inputSchema: { json: { type: 'object', properties: {} } } } },
      ],
    })
    const choice = (tool_choice: ChatRequest['tool_choice']) => (body({ tools, tool_choice }).toolConfig as { toolChoice?: unknown } | undefined)?.toolChoice
    expect(choice('auto')).toEqual({ auto: {} })
    expect(choice('required')).toEqual({ any: {} })
    expect(choice({ type: 'function', function: { name: 'lookup' } })).toEqual({ tool: { name: 'lookup' } })
  })

  it('honours tool_choice "none" by leaving the tools out, unless the history needs them', () => {
    const tools: ChatRequest['tools'] = [{ type: 'function', function: { name: 'lookup' } }]
    const plain = translate({ tools, tool_choice: 'none' })
    expect(plain.upstream.body).not.toHaveProperty('toolConfig')
    expect(plain.warnings).toEqual([])
    const withHistory = translate({
      tools,
      tool_choice: 'none',
      messages: [
        { role: 'assistant', content: null, tool_calls: [{ id: 't', type: 'function', function: { name: 'lookup', arguments: '{}' } }] },
        { role: 'tool', tool_call_id: 't', content: 'r' },
      ],
    })
    expect(withHistory.upstream.body).toHaveProperty('toolConfig.tools')
    expect(withHistory.warnings).toEqual([expect.objectContaining({ parameter: 'tool_choice' })])
  })

  it('refuses n above 1: Converse answers one choice', () => {
    expect(() => translate({ n: 3 })).toThrow(expect.objectContaining({ code: 'invalid_parameter', param: 'n', status: 400 }))
  })

  it('reports every parameter Converse cannot honour', () => {
    const { warnings } = translate({
      tools: [{ type: 'function', function: { name: 'f', strict: true } }],
      parallel_tool_calls: false,
      logprobs: true,
      logit_bias: { '1': 1 },
      frequency_penalty: 1,
      seed: 1,
      user: 'u',
      response_format: { type: 'json_object' },
    })
    expect(warnings.map((warning) => warning.parameter).sort()).toEqual(['frequency_penalty', 'logit_bias', 'logprobs', 'parallel_tool_calls', 'response_format', 'seed', 'tools[0].function.strict', 'user'])
  })
})
