import { describe, expect, it } from 'vitest'
import { genAiChunkAttributes, genAiOperationName, genAiProviderName, genAiRequestAttributes, genAiResponseAttributes, genAiSpanName, genAiUsageAttributes } from './genai.ts'
import { contentAllowed, contentWorkspacesSetting, inputContent, MAX_CONTENT_CHARS, outputContent, StreamedText } from './genai-content.ts'

describe('GenAI names', () => {
  it('maps routes to the convention\'s operation names and provider kinds to its provider names', () => {
    expect(['chat', 'messages', 'completions', 'embeddings', 'passthrough:responses', 'passthrough:images'].map(genAiOperationName)).toEqual([
      'chat', 'chat', 'text_completion', 'embeddings', 'chat', 'images',
    ])
    expect(['openai', 'bedrock', 'azure-openai', 'google', 'vertex-ai', 'mistral-ai', 'ollama'].map(genAiProviderName)).toEqual([
      'openai', 'aws.bedrock', 'azure.ai.openai', 'gcp.gemini', 'gcp.vertex_ai', 'mistral_ai', 'ollama',
    ])
    expect(genAiSpanName('chat', 'gpt-4o')).toBe('chat gpt-4o')
    expect(genAiSpanName('embeddings', null)).toBe('embeddings')
  })
})

describe('GenAI attributes', () => {
  it('reads request parameters present in the body, and only those', () => {
    expect(genAiRequestAttributes({ model: 'm', max_completion_tokens: 10, temperature: 0, top_p: 1, stop: 'END', n: 2, seed: 7, stream: true })).toEqual({
      'gen_ai.request.max_tokens': 10,
      'gen_ai.request.temperature': 0,
      'gen_ai.request.top_p': 1,
      'gen_ai.request.stop_sequences': ['END'],
      'gen_ai.request.choice.count': 2,
      'gen_ai.request.seed': 7,
      'gen_ai.request.stream': true,
    })
    expect(genAiRequestAttributes({ model: 'claude', max_tokens: 5, top_k: 3, stop_sequences: ['a', 'b'], temperature: 'hot' })).toEqual({
      'gen_ai.request.max_tokens': 5,
      'gen_ai.request.top_k': 3,
      'gen_ai.request.stop_sequences': ['a', 'b'],
    })
    expect(genAiRequestAttributes(null)).toEqual({})
  })

  it('reads id, model and finish reasons from OpenAI and Anthropic answers and chunks', () => {
    expect(genAiResponseAttributes({ id: 'c1', model: 'gpt', choices: [{ finish_reason: 'stop' }, { finish_reason: 'length' }] })).toEqual({
      'gen_ai.response.id': 'c1', 'gen_ai.response.model': 'gpt', 'gen_ai.response.finish_reasons': ['stop', 'length'],
    })
    expect(genAiResponseAttributes({ id: 'msg_1', model: 'claude', stop_reason: 'end_turn', content: [] })['gen_ai.response.finish_reasons']).toEqual(['end_turn'])
    expect(genAiChunkAttributes({ event: 'message_start', data: { message: { id: 'msg_2', model: 'claude' } } })).toEqual({ 'gen_ai.response.id': 'msg_2', 'gen_ai.response.model': 'claude' })
    expect(genAiChunkAttributes({ id: 'c2', model: 'gpt', choices: [{ finish_reason: null }] })).toEqual({ 'gen_ai.response.id': 'c2', 'gen_ai.response.model': 'gpt' })
    expect(genAiUsageAttributes({ inputTokens: 3, outputTokens: 4, cachedInputTokens: 2 })).toEqual({
      'gen_ai.usage.input_tokens': 3, 'gen_ai.usage.output_tokens': 4, 'gen_ai.usage.cache_read.input_tokens': 2,
    })
  })
})

describe('message content', () => {
  const workspace = { id: 'ws-1', slug: 'team', logLevel: 'full' }

  it('is allowed only for listed workspaces (id, slug or *) whose log level is full', () => {
    expect(contentWorkspacesSetting(' team, ws-9 ,')).toEqual(['team', 'ws-9'])
    expect(contentAllowed(['team'], workspace)).toBe(true)
    expect(contentAllowed(['ws-1'], workspace)).toBe(true)
    expect(contentAllowed(['*'], workspace)).toBe(true)
    expect(contentAllowed(['other'], workspace)).toBe(false)
    expect(contentAllowed([], workspace)).toBe(false)
    expect(contentAllowed(['*'], { ...workspace, logLevel: 'metadata' })).toBe(false)
    expect(contentAllowed(['*'], undefined)).toBe(false)
  })

  it('records messages in the convention\'s parts shape, redacted and capped', () => {
    const input = inputContent({ system: 'rules', messages: [{ role: 'user', content: [{ type: 'text', text: 'Bearer abcdefghijklmnopqrstuvwxyz' }, { type: 'image_url' }] }] })
    expect(JSON.parse(input['gen_ai.input.messages'] as string)).toEqual([{ role: 'user', parts: [{ type: 'text', content: '[REDACTED]' }, { type: 'image_url' }] }])
    expect(JSON.parse(input['gen_ai.system_instructions'] as string)).toEqual([{ type: 'text', content: 'rules' }])
    expect(JSON.parse(outputContent({ choices: [{ message: { role: 'assistant', content: 'hi' }, finish_reason: 'stop' }] })['gen_ai.output.messages'] as string)).toEqual([
      { role: 'assistant', parts: [{ type: 'text', content: 'hi' }], finish_reason: 'stop' },
    ])
    const long = inputContent({ prompt: 'x'.repeat(MAX_CONTENT_CHARS * 2) })['gen_ai.input.messages'] as string
    expect(long.length).toBeLessThan(MAX_CONTENT_CHARS + 100)
    expect(long).toMatch(/…\[truncated \d+ characters\]$/)
  })

  it('collects streamed text from OpenAI deltas and Anthropic text deltas', () => {
    const text = new StreamedText()
    text.add({ choices: [{ delta: { content: 'Hel' } }] })
    text.add({ event: 'content_block_delta', data: { delta: { text: 'lo' } } })
    text.add({ choices: [{ delta: {} }] })
    expect(JSON.parse(text.attributes('stop')['gen_ai.output.messages'] as string)).toEqual([{ role: 'assistant', parts: [{ type: 'text', content: 'Hello' }], finish_reason: 'stop' }])
  })
})
