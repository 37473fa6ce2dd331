/**
 * Guardrails end to end through the official `openai` and `@anthropic-ai/sdk` clients against the
 * simulators: deny (446, the provider never called), flag (246 with hook_results), async, for chat,
 * completions, messages and their streams; a deny mid-stream surfaces as an SDK error and held-back
 * text never arrives; guardrails attached by the organisation, the workspace and a config (under
 * API-key authentication; JWT principals take the same workspace path).
 *
 * Breaks tried: the after stage not judging JSON answers fails "deny: the answer of chat,
 * completions and messages"; a window that holds nothing fails the completions window test.
 */
import Anthropic from '@anthropic-ai/sdk'
import OpenAI from 'openai'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import type { GatewaySnapshotInput, SnapshotGuardrail } from '@gatehouse/gateway/snapshot'
import { startOpenAISimulator } from '../simulators/openai.ts'
import { startAnthropicSimulator } from '../simulators/anthropic.ts'
import type { Simulator } from '../simulators/index.ts'
import { startTestGateway, WORKSPACE_ID, type TestGateway } from '../helpers/gateway.ts'

let simulator: Simulator
let claude: Simulator
/** Frames 30 ms apart, so chunks reach the gateway one batch at a time. */
let slow: Simulator
let gateway: TestGateway
let openai: OpenAI
let anthropic: Anthropic

type GuardrailInput = Partial<SnapshotGuardrail> & Pick<SnapshotGuardrail, 'id' | 'checks'>
const guardrail = (input: GuardrailInput): SnapshotGuardrail => ({
  slug: input.id, name: input.id, workspaceId: null, version: 1, actions: {}, hooks: ['beforeRequestHook'], holdBack: { mode: 'none', windowChars: 256 }, ...input,
})
const check = (id: string, parameters: Record<string, unknown>) => ({ id, parameters, isEnabled: true })

/** Replaces the guardrails and their default attachments of the running snapshot. */
function attach(guardrails: SnapshotGuardrail[], defaults: NonNullable<GatewaySnapshotInput['guardrailDefaults']>, configs: GatewaySnapshotInput['configs'] = []): void {
  gateway.update((snapshot) => {
    snapshot.guardrails = guardrails
    snapshot.guardrailDefaults = defaults
    snapshot.configs = configs
  })
}

const GUARDS = {
  noPasswords: guardrail({ id: 'no-passwords', checks: [check('default.contains', { words: ['password'], operator: 'none' })], actions: { deny: true } }),
  politeFlag: guardrail({ id: 'polite', checks: [check('default.contains', { words: ['please'], operator: 'any' })], actions: { deny: false, on_fail: { feedback: { value: -2, weight: 1, metadata: '' } } } }),
  noCharlie: (holdBack: SnapshotGuardrail['holdBack']) => guardrail({ id: 'no-charlie', checks: [check('default.contains', { words: ['charlie'], operator: 'none' })], actions: { deny: true }, holdBack }),
  shortAnswer: guardrail({ id: 'short', checks: [check('default.wordCount', { maxWords: 3 })] }),
  audit: guardrail({ id: 'audit', checks: [check('default.contains', { words: ['alpha'], operator: 'none' })], actions: { async: true } }),
}

beforeAll(async () => {
  simulator = await startOpenAISimulator({ chunks: 4 })
  claude = await startAnthropicSimulator({ chunks: 4 })
  slow = await startOpenAISimulator({ chunks: 4, tokenIntervalMs: 30 })
  gateway = await startTestGateway([
    { slug: 'slow', kind: 'openai', baseUrl: slow.baseUrl },
    { slug: 'sim', kind: 'openai', baseUrl: simulator.baseUrl },
    { slug: 'claude', kind: 'anthropic', baseUrl: `${claude.url}/v1` },
  ])
  openai = new OpenAI({ apiKey: gateway.workspaceKey, baseURL: gateway.baseUrl, maxRetries: 0, defaultHeaders: { 'x-gateway-provider': '@sim' } })
  anthropic = new Anthropic({ apiKey: gateway.workspaceKey, baseURL: gateway.url, maxRetries: 0, defaultHeaders: { 'x-gateway-provider': '@claude' } })
})

afterAll(async () => {
  await gateway?.close()
  await simulator?.close()
  await claude?.close()
  await slow?.close()
})

beforeEach(() => {
  simulator.reset()
  claude.reset()
})

const ask = (content: string) => ({ model: 'gpt-4o-mini', messages: [{ role: 'user' as const, content }] })
const askClaude = (content: string) => ({ model: 'claude-sonnet-4-5', max_tokens: 64, messages: [{ role: 'user' as const, content }] })

async function apiError(promise: Promise<unknown>): Promise<{ status: number; error: Record<string, unknown> }> {
  const error = await promise.then(() => null, (e: unknown) => e)
  expect(error, 'expected the SDK to throw').toBeInstanceOf(Error)
  return error as { status: number; error: Record<string, unknown> }
}

describe('deny: 446 before the provider is called', () => {
  beforeAll(() => attach([GUARDS.noPasswords], [{ workspaceId: null, input: ['no-passwords'], output: [] }]))

  it('chat, completions and messages', async () => {
    const chat = await apiError(openai.chat.completions.create(ask('my password is hunter2')))
    expect(chat.status).toBe(446)
    expect(chat.error).toMatchObject({ code: 'guardrail_blocked', type: 'guardrail_error' })
    const completion = await apiError(openai.completions.create({ model: 'gpt-3.5-turbo-instruct', prompt: 'the password is' }))
    expect(completion.status).toBe(446)
    const message = await apiError(anthropic.messages.create(askClaude('password please')))
    expect(message.status).toBe(446)
    expect(simulator.requests).toHaveLength(0)
    expect(claude.requests).toHaveLength(0)
  })

  it('the 446 body carries hook_results with the failing check', async () => {
    const response = await fetch(`${gateway.baseUrl}/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${gateway.workspaceKey}`, 'x-gateway-provider': '@sim', 'content-type': 'application/json' },
      body: JSON.stringify(ask('password')),
    })
    expect(response.status).toBe(446)
    const body = (await response.json()) as { hook_results: { before_request_hooks: Array<Record<string, unknown>> } }
    expect(body.hook_results.before_request_hooks).toEqual([expect.objectContaining({ id: 'no-passwords', verdict: false, deny: true, checks: [expect.objectContaining({ id: 'default.contains', verdict: false })] })])
  })

  it('streams are refused before they start', async () => {
    const error = await apiError(openai.chat.completions.create({ ...ask('password'), stream: true }))
    expect(error.status).toBe(446)
    expect((await apiError(anthropic.messages.create({ ...askClaude('password'), stream: true }))).status).toBe(446)
  })

  it('passes what the guardrail allows, with its verdict attached', async () => {
    const { data, response } = await openai.chat.completions.create(ask('hello')).withResponse()
    expect(response.status).toBe(200)
    expect((data as unknown as { hook_results: unknown }).hook_results).toMatchObject({ before_request_hooks: [{ id: 'no-passwords', verdict: true }], after_request_hooks: [] })
  })
})

describe('flag: served with 246 and the verdicts', () => {
  beforeAll(() => attach([GUARDS.politeFlag, GUARDS.shortAnswer], [{ workspaceId: WORKSPACE_ID, input: ['polite'], output: ['short'] }]))

  it('chat and completions through the OpenAI SDK', async () => {
    const { data, response } = await openai.chat.completions.create(ask('hello')).withResponse()
    expect(response.status).toBe(246)
    expect(data.choices[0]!.message.content).toContain('Echo: hello')
    expect((data as unknown as { hook_results: unknown }).hook_results).toMatchObject({
      before_request_hooks: [{ id: 'polite', verdict: false, deny: false, feedback: { value: -2 } }],
      after_request_hooks: [{ id: 'short', verdict: false }],
    })
    const completion = await openai.completions.create({ model: 'gpt-3.5-turbo-instruct', prompt: 'please' }).withResponse()
    expect(completion.response.status).toBe(246)
    expect((completion.data as unknown as { hook_results: { before_request_hooks: Array<{ verdict: boolean }> } }).hook_results.before_request_hooks[0]!.verdict).toBe(true)
  })

  it('messages through the Anthropic SDK', async () => {
    const { data, response } = await anthropic.messages.create(askClaude('hi there')).withResponse()
    expect(response.status).toBe(246)
    expect(data.type).toBe('message')
    expect((data as unknown as { hook_results: unknown }).hook_results).toMatchObject({ before_request_hooks: [{ id: 'polite', verdict: false }] })
  })

  it('streams: 246 and a last hook_results event the SDKs pass through', async () => {
    const { data: stream, response } = await openai.chat.completions.create({ ...ask('hello'), stream: true }).withResponse()
    expect(response.status).toBe(246)
    const chunks: unknown[] = []
    for await (const chunk of stream) chunks.push(chunk)
    expect(chunks.at(-1)).toMatchObject({ choices: [], hook_results: { before_request_hooks: [{ id: 'polite', verdict: false }], after_request_hooks: [{ id: 'short', verdict: false }] } })
    const events: Array<{ type: string }> = []
    for await (const event of await anthropic.messages.create({ ...askClaude('hello'), stream: true })) events.push(event as { type: string })
    expect(events.at(-1)).toMatchObject({ type: 'hook_results', hook_results: { after_request_hooks: [{ id: 'short', verdict: false }] } })
    expect(events.some((event) => event.type === 'message_stop')).toBe(true)
  })
})

describe('output guardrails on streams', () => {
  it('none: a deny mid-stream ends it with an error the OpenAI SDK throws, after what was already sent', async () => {
    attach([GUARDS.noCharlie({ mode: 'none', windowChars: 256 })], [{ workspaceId: null, input: [], output: ['no-charlie'] }])
    const received: string[] = []
    const stream = await openai.chat.completions.create({ ...ask('hello'), stream: true }, { headers: { 'x-gateway-provider': '@slow' } })
    const error = await (async () => {
      for await (const chunk of stream) received.push(chunk.choices[0]?.delta?.content ?? '')
    })().then(() => null, (e: unknown) => e)
    expect(error).toBeInstanceOf(OpenAI.APIError)
    expect((error as InstanceType<typeof OpenAI.APIError>).message).toMatch(/blocked by guardrail no-charlie/)
    expect(received.join('')).toContain('Echo: hello')
    expect(received.join('')).not.toContain('charlie')
  })

  it('all: nothing of a denied answer reaches the client, through the Anthropic SDK', async () => {
    attach([GUARDS.noCharlie({ mode: 'all', windowChars: 256 })], [{ workspaceId: null, input: [], output: ['no-charlie'] }])
    const texts: string[] = []
    const stream = await anthropic.messages.create({ ...askClaude('hello'), stream: true })
    const error = await (async () => {
      for await (const event of stream) if (event.type === 'content_block_delta' && event.delta.type === 'text_delta') texts.push(event.delta.text)
    })().then(() => null, (e: unknown) => e)
    expect(error).toBeInstanceOf(Anthropic.APIError)
    expect(texts).toEqual([])
  })

  it('window: a completions stream denied mid-way throws in the OpenAI SDK; the held window never arrives', async () => {
    attach([GUARDS.noCharlie({ mode: 'window', windowChars: 10 })], [{ workspaceId: null, input: [], output: ['no-charlie'] }])
    let text = ''
    const stream = await openai.completions.create({ model: 'gpt-3.5-turbo-instruct', prompt: 'hello', stream: true }, { headers: { 'x-gateway-provider': '@slow' } })
    const error = await (async () => {
      for await (const chunk of stream) text += chunk.choices[0]?.text ?? ''
    })().then(() => null, (e: unknown) => e)
    expect(error).toBeInstanceOf(OpenAI.APIError)
    expect(error).toMatchObject({ code: 'guardrail_blocked' })
    // "Echo: hello alpha bravo" had arrived before the deny; its last 10 characters were held and stay unsent.
    expect(text).toBe('Echo: hello')
  })

  it('window: passes a clean answer whole, in order', async () => {
    attach([GUARDS.noCharlie({ mode: 'window', windowChars: 8 })], [{ workspaceId: null, input: [], output: ['no-charlie'] }])
    const { data, response } = await openai.chat.completions.create({ ...ask('hello'), stream: true, max_tokens: 2 }).withResponse()
    expect(response.status).toBe(200)
    let text = ''
    for await (const chunk of data) text += chunk.choices[0]?.delta?.content ?? ''
    expect(text).toMatch(/^Echo: hello alpha$/)
  })

  it('the hold-back and added time to first token are metrics', async () => {
    const metrics = await (await fetch(`${gateway.url}/metrics`)).text()
    expect(metrics).toMatch(/gatehouse_guardrail_stream_held_chars_count\{mode="all"\} [1-9]/)
    expect(metrics).toMatch(/gatehouse_guardrail_stream_added_ttft_seconds_count\{mode="window"\} [1-9]/)
  })
})

describe('output guardrails on JSON answers and async guardrails, per route', () => {
  it('deny: the answer of chat, completions and messages is replaced by a 446 after the provider answered', async () => {
    attach([GUARDS.noCharlie({ mode: 'none', windowChars: 256 })], [{ workspaceId: null, input: [], output: ['no-charlie'] }])
    const chat = await apiError(openai.chat.completions.create(ask('hello')))
    expect(chat.status).toBe(446)
    expect(chat.error).toMatchObject({ code: 'guardrail_blocked' })
    expect((await apiError(openai.completions.create({ model: 'gpt-3.5-turbo-instruct', prompt: 'hello' }))).status).toBe(446)
    expect((await apiError(anthropic.messages.create(askClaude('hello')))).status).toBe(446)
    // Judged on the answer: the providers were called.
    expect(simulator.requests).toHaveLength(2)
    expect(claude.requests).toHaveLength(1)
  })

  it('async: completions, messages and streams are served unchanged, with no verdict in the answer', async () => {
    attach([GUARDS.audit], [{ workspaceId: null, input: ['audit'], output: ['audit'] }])
    const completion = await openai.completions.create({ model: 'gpt-3.5-turbo-instruct', prompt: 'alpha' }).withResponse()
    expect(completion.response.status).toBe(200)
    expect((completion.data as unknown as { hook_results?: unknown }).hook_results).toBeUndefined()
    const message = await anthropic.messages.create(askClaude('alpha')).withResponse()
    expect(message.response.status).toBe(200)
    expect((message.data as unknown as { hook_results?: unknown }).hook_results).toBeUndefined()
    const { data: stream, response } = await openai.chat.completions.create({ ...ask('alpha'), stream: true }).withResponse()
    expect(response.status).toBe(200)
    let text = ''
    let verdictChunks = 0
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta?.content ?? ''
      if ('hook_results' in chunk) verdictChunks++
    }
    expect(text).toContain('alpha')
    expect(verdictChunks).toBe(0)
    const events: Array<{ type: string }> = []
    for await (const event of await anthropic.messages.create({ ...askClaude('alpha'), stream: true })) events.push(event as { type: string })
    expect(events.at(-1)?.type).toBe('message_stop')
  })
})

describe('attachments', () => {
  it('async guardrails never block: the answer is served unchanged', async () => {
    attach([GUARDS.audit], [{ workspaceId: null, input: [], output: ['audit'] }])
    const { data, response } = await openai.chat.completions.create(ask('hello')).withResponse()
    expect(response.status).toBe(200)
    expect(data.choices[0]!.message.content).toContain('alpha')
    expect((data as unknown as { hook_results?: unknown }).hook_results).toBeUndefined()
  })

  it('a config attaches guardrails by slug; the same guardrail from organisation and config runs once', async () => {
    const config = { id: 'cfg-1', slug: 'guarded', workspaceId: WORKSPACE_ID, version: 1, config: { provider: '@sim', input_guardrails: ['no-passwords'], output_guardrails: ['short'] } }
    attach([GUARDS.noPasswords, GUARDS.shortAnswer], [{ workspaceId: null, input: ['no-passwords'], output: [] }], [config])
    const headers = { 'x-gateway-config': 'guarded' }
    expect((await apiError(openai.chat.completions.create(ask('password'), { headers }))).status).toBe(446)
    const { data, response } = await openai.chat.completions.create(ask('hello'), { headers }).withResponse()
    expect(response.status).toBe(246)
    expect((data as unknown as { hook_results: { before_request_hooks: unknown[]; after_request_hooks: unknown[] } }).hook_results).toMatchObject({
      before_request_hooks: [{ id: 'no-passwords', verdict: true }],
      after_request_hooks: [{ id: 'short', verdict: false }],
    })
    // Without the config only the organisation's guardrail applies.
    expect((await openai.chat.completions.create(ask('hello')).withResponse()).response.status).toBe(200)
  })

  it('a config holding only guardrails routes by the request (its provider header) and runs them', async () => {
    attach([GUARDS.noPasswords, GUARDS.shortAnswer], [])
    const headers = { 'x-gateway-config': JSON.stringify({ input_guardrails: ['no-passwords'], output_guardrails: ['short'] }) }
    expect((await apiError(openai.chat.completions.create(ask('password'), { headers }))).status).toBe(446)
    const { response } = await openai.chat.completions.create(ask('hello'), { headers }).withResponse()
    expect(response.status).toBe(246)
    expect(response.headers.get('x-gateway-provider')).toBe('sim')
  })

  it('a responses-API answer with an output guardrail through the OpenAI SDK: a deny is a 446', async () => {
    attach([GUARDS.noCharlie({ mode: 'all', windowChars: 256 })], [{ workspaceId: null, input: [], output: ['no-charlie'] }])
    expect((await apiError(openai.responses.create({ model: 'gpt-4o-mini', input: 'charlie' }))).status).toBe(446)
  })

  it('mutating checks change what the provider receives', async () => {
    attach([guardrail({ id: 'prefix', checks: [check('default.addPrefix', { prefix: 'Be brief. ' })] })], [{ workspaceId: WORKSPACE_ID, input: ['prefix'], output: [] }])
    await openai.chat.completions.create(ask('why?'))
    expect((simulator.requests.at(-1)!.body as { messages: Array<{ content: string }> }).messages.at(-1)!.content).toBe('Be brief. why?')
  })

  it('routes that carry no text never meet a guardrail', async () => {
    attach([GUARDS.noPasswords], [{ workspaceId: null, input: ['no-passwords'], output: [] }])
    const embedding = await openai.embeddings.create({ model: 'text-embedding-3-small', input: 'password' }).withResponse()
    expect(embedding.response.status).toBe(200)
  })
})
