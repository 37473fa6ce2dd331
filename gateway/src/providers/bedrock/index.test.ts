import { describe, expect, it } from 'vitest'
import { GatewayError } from '../../core/errors.ts'
import type { TargetContext, UpstreamEvent } from '../adapter.ts'
import { ProviderStreamError } from '../adapter.ts'
import { anthropic } from '../anthropic/index.ts'
import type { ChatChunk } from '../canonical.ts'
import { fixture, runStream, testContext } from '../shared/testing.ts'
import { bedrock } from './index.ts'
import { BEDROCK_ANTHROPIC_VERSION } from './invoke.ts'

const chat = bedrock.chat!
const claude = 'anthropic.claude-3-5-sonnet-20241022-v2:0'
const converseTarget: TargetContext = { upstreamModel: claude, options: { region: 'eu-west-1' } }
const invokeTarget: TargetContext = { upstreamModel: claude, options: { region: 'eu-west-1', mode: 'invoke', anthropicBeta: 'token-efficient-tools-2025-02-19, interleaved-thinking-2025-05-14' } }
const request = { model: 'alias', messages: [{ role: 'user' as const, content: 'Bonjour' }], stop: '###', max_tokens: 100 }

describe('bedrock adapter', () => {
  it('signs with SigV4 for bedrock and derives the regional endpoint', () => {
    expect(bedrock.auth).toEqual({ type: 'aws-sigv4', service: 'bedrock' })
    expect(chat.framing).toBe('aws-eventstream')
    expect(bedrock.baseUrlFor!({ region: 'eu-west-1' })).toBe('https://bedrock-runtime.eu-west-1.amazonaws.com')
    expect(bedrock.baseUrlFor!({ region: 'us-gov-west-1' })).toBe('https://bedrock-runtime.us-gov-west-1.amazonaws.com')
    expect(() => bedrock.baseUrlFor!({})).toThrow(GatewayError)
    expect(() => bedrock.baseUrlFor!({ region: 'evil.example.com/x' })).toThrow(/not an AWS region/)
  })

  it('uses Converse by default and refuses an unknown mode', () => {
    expect(chat.toUpstream(request, converseTarget).upstream.path).toBe('/model/anthropic.claude-3-5-sonnet-20241022-v2%3A0/converse')
    expect(() => chat.toUpstream(request, { ...converseTarget, options: { region: 'eu-west-1', mode: 'legacy' } })).toThrow(/'converse' or 'invoke'/)
  })

  it('in invoke mode sends the Anthropic body with the Bedrock version and no model', () => {
    const { upstream, warnings } = chat.toUpstream({ ...request, stream: true }, invokeTarget)
    expect(upstream).toEqual({
      method: 'POST',
      path: '/model/anthropic.claude-3-5-sonnet-20241022-v2%3A0/invoke-with-response-stream',
      headers: {},
      body: {
        anthropic_version: BEDROCK_ANTHROPIC_VERSION,
        max_tokens: 100,
        messages: [{ role: 'user', content: [{ type: 'text', text: 'Bonjour' }] }],
        stop_sequences: ['###'],
        anthropic_beta: ['token-efficient-tools-2025-02-19', 'interleaved-thinking-2025-05-14'],
      },
    })
    expect(warnings).toEqual([])
    // The same body the anthropic adapter builds, less model and stream.
    const direct = anthropic.chat!.toUpstream(request, invokeTarget).upstream.body as Record<string, unknown>
    const { model: _model, ...rest } = direct
    expect(chat.toUpstream(request, invokeTarget).upstream.body).toEqual({ anthropic_version: BEDROCK_ANTHROPIC_VERSION, ...rest, anthropic_beta: ['token-efficient-tools-2025-02-19', 'interleaved-thinking-2025-05-14'] })
    expect(chat.toUpstream(request, invokeTarget).upstream.path).toBe('/model/anthropic.claude-3-5-sonnet-20241022-v2%3A0/invoke')
  })

  it('reads an invoke answer with the anthropic transforms and a Converse answer with its own', () => {
    const invoked = chat.fromUpstream(fixture(import.meta.url, 'invoke-response.json'), testContext)
    expect(invoked).toMatchObject({ id: 'msg_bdrk_01Mvzb2fxyBTQ6eyFmJrbDkq', model: 'claude-3-5-sonnet-20241022', choices: [{ message: { content: 'Bonjour !' }, finish_reason: 'stop' }] })
    expect(chat.usage(invoked)).toEqual({ inputTokens: 14, outputTokens: 6, cachedInputTokens: 0, cacheWriteInputTokens: 0 })
    const conversed = chat.fromUpstream(fixture(import.meta.url, 'converse-response-tool-use.json'), testContext)
    expect(conversed.choices[0]!.finish_reason).toBe('tool_calls')
  })

  it('streams invoke chunks through the anthropic stream transform', () => {
    const result = runStream(chat.stream, fixture<UpstreamEvent[]>(import.meta.url, 'invoke-stream-tool-use.json'))
    const deltas = result.chunks.map((chunk: ChatChunk) => chunk.choices[0]?.delta)
    expect(deltas).toEqual([
      { role: 'assistant', content: '' },
      { content: 'Checking both.' },
      { tool_calls: [{ index: 0, id: 'toolu_01T1x1fJ34qAmk2tNTrN7Up6', type: 'function', function: { name: 'get_weather', arguments: '' } }] },
      { tool_calls: [{ index: 0, function: { arguments: '{"location":' } }] },
      { tool_calls: [{ index: 0, function: { arguments: ' "San Francisco, CA"}' } }] },
      { tool_calls: [{ index: 1, id: 'toolu_02abc', type: 'function', function: { name: 'get_time', arguments: '' } }] },
      { tool_calls: [{ index: 1, function: { arguments: '{}' } }] },
      {},
    ])
    expect(result.usage).toEqual({ inputTokens: 472, outputTokens: 89 })
    expect(result.finishReason).toEqual({ unified: 'tool_calls', raw: 'tool_use' })
  })

  it('streams Converse events through the Converse transform', () => {
    const result = runStream(chat.stream, fixture<UpstreamEvent[]>(import.meta.url, 'converse-stream-text.json'))
    expect(result.finishReason).toEqual({ unified: 'length', raw: 'max_tokens' })
    expect(result.usage.outputTokens).toBe(64)
  })

  it('throws on an exception before or inside an invoke stream, and ends cleanly with no events', () => {
    expect(() => runStream(chat.stream, [{ event: 'exception:throttlingException', data: { message: 'slow down' } }])).toThrow(ProviderStreamError)
    const [first] = fixture<UpstreamEvent[]>(import.meta.url, 'invoke-stream-tool-use.json')
    expect(() => runStream(chat.stream, [first!, { event: 'exception:modelStreamErrorException', data: { message: 'x' } }])).toThrow(ProviderStreamError)
    expect(() => runStream(chat.stream, [{ event: 'chunk', data: { bytes: Buffer.from('not json').toString('base64') } }])).toThrow(/does not hold JSON/)
    expect(runStream(chat.stream, [])).toEqual({ chunks: [], usage: { inputTokens: 0, outputTokens: 0 }, finishReason: { unified: 'other' } })
  })

  it('passes /v1/messages bodies natively to Claude models through invoke', () => {
    const messages = bedrock.messages!
    expect(messages.accepts(converseTarget)).toBe(true)
    expect(messages.accepts({ upstreamModel: 'us.anthropic.claude-sonnet-4-5-20250929-v1:0', options: { region: 'us-east-1' } })).toBe(true)
    expect(messages.accepts({ upstreamModel: 'meta.llama3-70b-instruct-v1:0', options: { region: 'us-east-1' } })).toBe(false)
    expect(messages.accepts({ upstreamModel: 'arn:aws:bedrock:us-east-1:1:application-inference-profile/abc', options: { region: 'us-east-1', mode: 'invoke' } })).toBe(true)

    const { upstream } = messages.toUpstream({ model: 'claude', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }], stream: true, top_k: 5 }, converseTarget)
    expect(upstream).toEqual({
      method: 'POST',
      path: '/model/anthropic.claude-3-5-sonnet-20241022-v2%3A0/invoke-with-response-stream',
      headers: {},
      body: { anthropic_version: BEDROCK_ANTHROPIC_VERSION, max_tokens: 10, messages: [{ role: 'user', content: 'hi' }], top_k: 5 },
    })
    expect(messages.framing).toBe('aws-eventstream')
    const result = runStream(messages.stream, fixture<UpstreamEvent[]>(import.meta.url, 'invoke-stream-tool-use.json'))
    expect(result.chunks.map((event) => event.event)).toEqual([
      'message_start',
      'content_block_start',
      'content_block_delta',
      'content_block_stop',
      'content_block_start',
      'content_block_delta',
      'content_block_delta',
      'content_block_delta',
      'content_block_stop',
      'content_block_start',
      'content_block_delta',
      'content_block_stop',
      'message_delta',
      'message_stop',
    ])
    expect(result.chunks.at(-1)!.data).toHaveProperty(['amazon-bedrock-invocationMetrics', 'outputTokenCount'], 89)
    expect(result.usage).toEqual({ inputTokens: 472, outputTokens: 89 })
    expect(messages.usage(messages.fromUpstream(fixture(import.meta.url, 'invoke-response.json'), testContext))).toEqual({ inputTokens: 14, outputTokens: 6, cachedInputTokens: 0, cacheWriteInputTokens: 0 })
  })
})
