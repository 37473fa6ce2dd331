/**
 * One test per bound of the spec's Limits table (chat and text completions): a violation answers
 * 400 in the OpenAI envelope naming the `param`, and the provider simulator receives nothing. The
 * values exactly on each bound are accepted, so the bounds are where the spec puts them.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { startOpenAISimulator } from '../simulators/openai.ts'
import type { Simulator } from '../simulators/index.ts'
import { startTestGateway, type TestGateway } from '../helpers/gateway.ts'

let simulator: Simulator
let gateway: TestGateway

beforeAll(async () => {
  simulator = await startOpenAISimulator({ chunks: 2 })
  gateway = await startTestGateway([{ slug: 'sim', kind: 'openai', baseUrl: simulator.baseUrl }])
})
afterAll(async () => {
  await gateway?.close()
  await simulator?.close()
})
beforeEach(() => simulator.reset())

const chat = (extra: Record<string, unknown>): Record<string, unknown> => ({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }], ...extra })
const text = (extra: Record<string, unknown>): Record<string, unknown> => ({ model: 'gpt-3.5-turbo-instruct', prompt: 'hi', ...extra })
const tool = (index: number) => ({ type: 'function', function: { name: `f${index}`, parameters: { type: 'object' } } })
const fn = (index: number) => ({ name: `f${index}`, parameters: { type: 'object' } })
const many = <T>(count: number, make: (index: number) => T): T[] => Array.from({ length: count }, (_, index) => make(index))

async function post(path: string, body: Record<string, unknown>): Promise<{ status: number; body: { error?: { param: string | null; type: string; code: string; message: string } } }> {
  const response = await fetch(`${gateway.baseUrl}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${gateway.workspaceKey}`, 'x-gateway-provider': '@sim', 'content-type': 'application/json' },
    body: JSON.stringify(body),
  })
  return { status: response.status, body: (await response.json()) as never }
}

interface Case {
  limit: string
  path: '/chat/completions' | '/completions'
  body: Record<string, unknown>
  param: string
}

const violations: Case[] = [
  { limit: 'chat messages: at least 1', path: '/chat/completions', body: chat({ messages: [] }), param: 'messages' },
  { limit: 'chat tools: at most 128', path: '/chat/completions', body: chat({ tools: many(129, tool) }), param: 'tools' },
  { limit: 'chat functions: at least 1', path: '/chat/completions', body: chat({ functions: [] }), param: 'functions' },
  { limit: 'chat functions: at most 128', path: '/chat/completions', body: chat({ functions: many(129, fn) }), param: 'functions' },
  { limit: 'chat stop: up to 4 sequences', path: '/chat/completions', body: chat({ stop: ['a', 'b', 'c', 'd', 'e'] }), param: 'stop' },
  { limit: 'text stop: up to 4 sequences', path: '/completions', body: text({ stop: ['a', 'b', 'c', 'd', 'e'] }), param: 'stop' },
  { limit: 'chat n: at least 1', path: '/chat/completions', body: chat({ n: 0 }), param: 'n' },
  { limit: 'chat n: at most 128', path: '/chat/completions', body: chat({ n: 129 }), param: 'n' },
  { limit: 'text n: at least 1', path: '/completions', body: text({ n: 0 }), param: 'n' },
  { limit: 'text n: at most 128', path: '/completions', body: text({ n: 129 }), param: 'n' },
  { limit: 'chat logit_bias: at least -100', path: '/chat/completions', body: chat({ logit_bias: { '50256': -101 } }), param: 'logit_bias.50256' },
  { limit: 'chat logit_bias: at most 100', path: '/chat/completions', body: chat({ logit_bias: { '50256': 100.5 } }), param: 'logit_bias.50256' },
  { limit: 'text logit_bias: at most 100', path: '/completions', body: text({ logit_bias: { '50256': 101 } }), param: 'logit_bias.50256' },
  { limit: 'chat frequency_penalty: at least -2', path: '/chat/completions', body: chat({ frequency_penalty: -2.01 }), param: 'frequency_penalty' },
  { limit: 'chat frequency_penalty: at most 2', path: '/chat/completions', body: chat({ frequency_penalty: 2.01 }), param: 'frequency_penalty' },
  { limit: 'chat presence_penalty: at least -2', path: '/chat/completions', body: chat({ presence_penalty: -3 }), param: 'presence_penalty' },
  { limit: 'chat presence_penalty: at most 2', path: '/chat/completions', body: chat({ presence_penalty: 2.5 }), param: 'presence_penalty' },
  { limit: 'text frequency_penalty: at most 2', path: '/completions', body: text({ frequency_penalty: 3 }), param: 'frequency_penalty' },
  { limit: 'text presence_penalty: at least -2', path: '/completions', body: text({ presence_penalty: -2.5 }), param: 'presence_penalty' },
  { limit: 'chat temperature: at least 0', path: '/chat/completions', body: chat({ temperature: -0.1 }), param: 'temperature' },
  { limit: 'chat temperature: at most 2', path: '/chat/completions', body: chat({ temperature: 2.1 }), param: 'temperature' },
  { limit: 'text temperature: at most 2', path: '/completions', body: text({ temperature: 2.1 }), param: 'temperature' },
  { limit: 'chat top_p: at least 0', path: '/chat/completions', body: chat({ top_p: -0.5 }), param: 'top_p' },
  { limit: 'chat top_p: at most 1', path: '/chat/completions', body: chat({ top_p: 1.01 }), param: 'top_p' },
  { limit: 'text top_p: at most 1', path: '/completions', body: text({ top_p: 1.5 }), param: 'top_p' },
  { limit: 'chat top_logprobs: at least 0', path: '/chat/completions', body: chat({ logprobs: true, top_logprobs: -1 }), param: 'top_logprobs' },
  { limit: 'chat top_logprobs: at most 20', path: '/chat/completions', body: chat({ logprobs: true, top_logprobs: 21 }), param: 'top_logprobs' },
  { limit: 'chat top_logprobs: needs logprobs true', path: '/chat/completions', body: chat({ top_logprobs: 3 }), param: 'top_logprobs' },
  { limit: 'text logprobs: at least 0', path: '/completions', body: text({ logprobs: -1 }), param: 'logprobs' },
  { limit: 'text logprobs: at most 5', path: '/completions', body: text({ logprobs: 6 }), param: 'logprobs' },
  { limit: 'best_of: at least 0', path: '/completions', body: text({ best_of: -1 }), param: 'best_of' },
  { limit: 'best_of: at most 20', path: '/completions', body: text({ best_of: 21 }), param: 'best_of' },
  { limit: 'best_of: not below n', path: '/completions', body: text({ best_of: 2, n: 3 }), param: 'best_of' },
  { limit: 'best_of: cannot be streamed', path: '/completions', body: text({ best_of: 2, stream: true }), param: 'best_of' },
  { limit: 'text max_tokens: at least 0', path: '/completions', body: text({ max_tokens: -1 }), param: 'max_tokens' },
  { limit: 'text seed: an integer', path: '/completions', body: text({ seed: 1.5 }), param: 'seed' },
  { limit: 'chat stream_options: only with stream', path: '/chat/completions', body: chat({ stream_options: { include_usage: true } }), param: 'stream_options' },
  { limit: 'text stream_options: only with stream', path: '/completions', body: text({ stream: false, stream_options: {} }), param: 'stream_options' },
  { limit: 'chat model: required', path: '/chat/completions', body: { messages: [{ role: 'user', content: 'hi' }] }, param: 'model' },
  { limit: 'chat message role: one of the six kinds', path: '/chat/completions', body: chat({ messages: [{ role: 'robot', content: 'x' }] }), param: 'messages.0.role' },
  { limit: 'chat tools: only functions', path: '/chat/completions', body: chat({ tools: [{ type: 'code_interpreter' }] }), param: 'tools.0.type' },
  { limit: 'chat tool_choice: none, auto, required or a named function', path: '/chat/completions', body: chat({ tool_choice: 'sometimes' }), param: 'tool_choice' },
  { limit: 'chat max_tokens: refused for reasoning models', path: '/chat/completions', body: chat({ model: 'o3-mini', max_tokens: 100 }), param: 'max_tokens' },
]

describe('spec Limits: violations are a 400 naming the param, and nothing goes upstream', () => {
  it.each(violations)('$limit', async ({ path, body, param }) => {
    const answer = await post(path, body)
    expect(answer.status).toBe(400)
    expect(answer.body.error).toMatchObject({ type: 'invalid_request_error', param })
    expect(answer.body.error?.message).toBeTruthy()
    expect(simulator.requests).toHaveLength(0)
  })
})

const accepted: Array<Omit<Case, 'param'>> = [
  { limit: 'n = 1 and n = 128', path: '/chat/completions', body: chat({ n: 128 }) },
  { limit: 'stop with 4 sequences', path: '/chat/completions', body: chat({ stop: ['a', 'b', 'c', 'd'] }) },
  { limit: 'penalties at -2 and 2', path: '/chat/completions', body: chat({ frequency_penalty: -2, presence_penalty: 2 }) },
  { limit: 'temperature 0 and top_p 1', path: '/chat/completions', body: chat({ temperature: 0, top_p: 1 }) },
  { limit: 'temperature 2 and top_p 0', path: '/completions', body: text({ temperature: 2, top_p: 0 }) },
  { limit: 'logit_bias at -100 and 100', path: '/chat/completions', body: chat({ logit_bias: { '1': -100, '2': 100 } }) },
  { limit: 'top_logprobs 0 and 20', path: '/chat/completions', body: chat({ logprobs: true, top_logprobs: 20 }) },
  { limit: 'text logprobs 0 and 5', path: '/completions', body: text({ logprobs: 5 }) },
  { limit: 'best_of 20 with n 20 (equal is accepted)', path: '/completions', body: text({ best_of: 20, n: 20 }) },
  { limit: 'best_of 0', path: '/completions', body: text({ best_of: 0 }) },
  { limit: 'text max_tokens 0', path: '/completions', body: text({ max_tokens: 0 }) },
  { limit: 'tools: 128', path: '/chat/completions', body: chat({ tools: many(128, tool) }) },
  { limit: 'functions: 1 and 128', path: '/chat/completions', body: chat({ functions: many(128, fn) }) },
  { limit: 'reasoning model with max_completion_tokens', path: '/chat/completions', body: chat({ model: 'o3-mini', max_completion_tokens: 100 }) },
  { limit: 'nulls where the spec allows null', path: '/chat/completions', body: chat({ temperature: null, n: null, stop: null, logit_bias: null }) },
]

describe('spec Limits: values on each bound are accepted and forwarded', () => {
  it.each(accepted)('$limit', async ({ path, body }) => {
    const answer = await post(path, body)
    expect(answer.status).toBe(200)
    expect(simulator.requests).toHaveLength(1)
  })
})
