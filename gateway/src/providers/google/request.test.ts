import { describe, expect, it } from 'vitest'
import type { ChatRequest } from '../canonical.ts'
import { GatewayError } from '../../core/errors.ts'
import { google } from './index.ts'
import { toGeminiRequest } from './request.ts'

const target = { upstreamModel: 'gemini-2.5-flash', options: {} }

describe('Gemini chat request mapping', () => {
  it('maps every supported field and picks the streaming path', () => {
    const request: ChatRequest = {
      model: 'gemini-2.5-flash',
      stream: true,
      stream_options: { include_usage: true },
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'developer', content: [{ type: 'text', text: 'Use metric units.' }] },
        {
          role: 'user',
          content: [
            { type: 'text', text: 'What is in these?' },
            { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } },
            { type: 'image_url', image_url: { url: 'https://example.com/cat.jpg' } },
            { type: 'input_audio', input_audio: { data: 'UklGRg==', format: 'wav' } },
            { type: 'file', file: { file_data: 'data:application/pdf;base64,JVBERi0=' } },
            { type: 'file', file: { file_id: 'https://generativelanguage.googleapis.com/v1beta/files/abc' } },
          ],
        },
        {
          role: 'assistant',
          content: null,
          tool_calls: [
            { id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' }, extra_content: { google: { thought_signature: 'sig-1' } } } as never,
            { id: 'call_2', type: 'function', function: { name: 'get_time', arguments: '' } },
          ],
        },
        { role: 'tool', tool_call_id: 'call_1', content: '{"temp_c":21}' },
        { role: 'tool', tool_call_id: 'call_2', content: '12:00' },
        { role: 'assistant', content: 'It is 21°C at noon.' },
        { role: 'user', content: 'Thanks' },
      ],
      max_completion_tokens: 256,
      max_tokens: 999,
      temperature: 0.2,
      top_p: 0.9,
      n: 2,
      stop: 'END',
      seed: 7,
      presence_penalty: 0.1,
      frequency_penalty: 0.3,
      logprobs: true,
      top_logprobs: 3,
      tools: [
        { type: 'function', function: { name: 'get_weather', description: 'Weather', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false } } },
        { type: 'function', function: { name: 'get_time', parameters: { type: 'object', properties: {} } } },
      ],
      tool_choice: { type: 'function', function: { name: 'get_weather' } },
      response_format: { type: 'json_schema', json_schema: { name: 'answer', schema: { type: 'object', properties: { answer: { type: ['string', 'null'] } }, $schema: 'x' } } },
      thinking: { type: 'enabled', budget_tokens: 2048 },
    }
    const { upstream, warnings } = google.chat!.toUpstream(request, target)
    expect(upstream).toMatchObject({ method: 'POST', path: '/models/gemini-2.5-flash:streamGenerateContent?alt=sse' })
    expect(warnings).toEqual([])
    expect(upstream.body).toEqual({
      systemInstruction: { parts: [{ text: 'Be brief.' }, { text: 'Use metric units.' }] },
      contents: [
        {
          role: 'user',
          parts: [
            { text: 'What is in these?' },
            { inlineData: { mimeType: 'image/png', data: 'iVBORw0KGgo=' } },
            { fileData: { mimeType: 'image/jpeg', fileUri: 'https://example.com/cat.jpg' } },
            { inlineData: { mimeType: 'audio/wav', data: 'UklGRg==' } },
            { inlineData: { mimeType: 'application/pdf', data: 'JVBERi0=' } },
            { fileData: { fileUri: 'https://generativelanguage.googleapis.com/v1beta/files/abc' } },
          ],
        },
        {
          role: 'model',
          parts: [
            { functionCall: { name: 'get_weather', args: { city: 'Paris' } }, thoughtSignature: 'sig-1' },
            { functionCall: { name: 'get_time', args: {} } },
          ],
        },
        {
          role: 'user',
          parts: [
            { functionResponse: { name: 'get_weather', response: { temp_c: 21 } } },
            { functionResponse: { name: 'get_time', response: { content: '12:00' } } },
          ],
        },
        { role: 'model', parts: [{ text: 'It is 21°C at noon.' }] },
        { role: 'user', parts: [{ text: 'Thanks' }] },
      ],
      tools: [{
        functionDeclarations: [
          { name: 'get_weather', description: 'Weather', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } },
          { name: 'get_time' },
        ],
      }],
      toolConfig: { functionCallingConfig: { mode: 'ANY', allowedFunctionNames: ['get_weather'] } },
      generationConfig: {
        temperature: 0.2,
        topP: 0.9,
        maxOutputTokens: 256,
        stopSequences: ['END'],
        candidateCount: 2,
        seed: 7,
        presencePenalty: 0.1,
        frequencyPenalty: 0.3,
        responseLogprobs: true,
        logprobs: 3,
        responseMimeType: 'application/json',
        responseSchema: { type: 'object', properties: { answer: { type: 'string', nullable: true } } },
        thinkingConfig: { includeThoughts: true, thinkingBudget: 2048 },
      },
    })
  })

  it('uses generateContent without stream and maps tool_choice words', () => {
    const base: ChatRequest = { model: 'm', messages: [{ role: 'user', content: 'hi' }] }
    const { upstream } = google.chat!.toUpstream(base, target)
    expect(upstream.path).toBe('/models/gemini-2.5-flash:generateContent')
    expect(upstream.body).toEqual({ contents: [{ role: 'user', parts: [{ text: 'hi' }] }] })
    const modes = (['none', 'auto', 'required'] as const).map((choice) => toGeminiRequest({ ...base, tool_choice: choice }).body.toolConfig?.functionCallingConfig.mode)
    expect(modes).toEqual(['NONE', 'AUTO', 'ANY'])
  })

  it('maps the top_k and safety_settings extensions', () => {
    const safety = [{ category: 'HARM_CATEGORY_HATE_SPEECH', threshold: 'BLOCK_ONLY_HIGH' }]
    const { body, warnings } = toGeminiRequest({ model: 'm', messages: [{ role: 'user', content: 'hi' }], top_k: 20, safety_settings: safety })
    expect(body).toMatchObject({ safetySettings: safety, generationConfig: { topK: 20 } })
    expect(warnings).toEqual([])
  })

  it('maps json_object, disabled thinking and reasoning_effort', () => {
    const base: ChatRequest = { model: 'm', messages: [{ role: 'user', content: 'hi' }] }
    expect(toGeminiRequest({ ...base, response_format: { type: 'json_object' } }).body.generationConfig).toEqual({ responseMimeType: 'application/json' })
    expect(toGeminiRequest({ ...base, thinking: { type: 'disabled' } }).body.generationConfig).toEqual({ thinkingConfig: { thinkingBudget: 0 } })
    expect(toGeminiRequest({ ...base, reasoning_effort: 'medium' }).body.generationConfig).toEqual({ thinkingConfig: { thinkingBudget: 8192 } })
  })

  it('warns for every parameter Gemini cannot honour instead of dropping it silently', () => {
    const { warnings } = toGeminiRequest({
      model: 'm',
      messages: [{ role: 'user', content: 'hi', name: 'alice' }],
      logit_bias: { '42': 1 },
      user: 'u-1',
      parallel_tool_calls: false,
      reasoning_effort: 'extreme',
      service_tier: 'flex',
      tools: [{ type: 'function', function: { name: 'f', strict: true, parameters: { type: 'object', properties: { a: { type: 'string' } } } } }],
      response_format: { type: 'json_schema', json_schema: { name: 'x', strict: true, schema: { type: 'object' } } },
    })
    expect(warnings.map((warning) => warning.parameter).sort()).toEqual([
      'logit_bias', 'messages[].name', 'parallel_tool_calls', 'reasoning_effort', 'response_format.json_schema.strict', 'service_tier', 'tools[].function.strict', 'user',
    ])
    expect(warnings.every((warning) => warning.kind === 'unsupported_parameter')).toBe(true)
  })

  it('rejects what it cannot express with a 400 naming the field', () => {
    const bad = (messages: ChatRequest['messages']) => () => toGeminiRequest({ model: 'm', messages })
    expect(bad([{ role: 'tool', tool_call_id: 'nope', content: 'x' }])).toThrow(GatewayError)
    expect(bad([{ role: 'assistant', content: null, tool_calls: [{ id: 'a', type: 'function', function: { name: 'f', arguments: '[1]' } }] }])).toThrow(/JSON object/)
    try {
      bad([{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'ftp://x/y.png' } }] }])()
    } catch (error) {
      expect(error).toMatchObject({ status: 400, param: 'messages[0].content[0].image_url.url' })
    }
  })

  it('rewrites JSON Schema to the Gemini subset: refs inlined, const as enum', () => {
    const { body } = toGeminiRequest({
      model: 'm',
      messages: [{ role: 'user', content: 'hi' }],
      tools: [{
        type: 'function',
        function: {
          name: 'f',
          parameters: {
            type: 'object',
            $defs: { unit: { type: 'string', enum: ['c', 'f'] } },
            properties: { unit: { $ref: '#/$defs/unit' }, kind: { const: 'x' }, tags: { type: 'array', items: { type: 'string', examples: ['a'] } } },
          },
        },
      }],
    })
    expect(body.tools?.[0]?.functionDeclarations[0]?.parameters).toEqual({
      type: 'object',
      properties: { unit: { type: 'string', enum: ['c', 'f'] }, kind: { enum: ['x'] }, tags: { type: 'array', items: { type: 'string' } } },
    })
  })
})
