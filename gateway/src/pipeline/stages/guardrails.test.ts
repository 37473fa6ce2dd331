/**
 * The guardrail stages around a fake terminal (the provider): deny (446, no provider call), flag
 * (246 with hook_results), async (answered first, verdict reported after), mutation, attachment by
 * organisation, workspace and config deduplicated, output checks on JSON answers and on streams
 * with each hold-back mode.
 */
import { Registry } from 'prom-client'
import { describe, expect, it } from 'vitest'
import { Agent } from 'undici'
import { GuardrailBlockedError } from '../../guardrails/blocked.ts'
import { compileGuardrails, type GuardrailRuntime } from '../../guardrails/compile.ts'
import { createGuardrailMetrics } from '../../guardrails/metrics.ts'
import type { SnapshotGuardrail, SnapshotGuardrailDefaults } from '../../snapshot/policies.ts'
import type { RequestContext } from '../context.ts'
import { composePipeline, newFacts, type Answer, type Exchange, type HookResult, type Operation, type StreamAnswer } from '../stage.ts'
import { guardrailStages, type ConfigGuardrails } from './guardrails.ts'

const chat: Operation = { name: 'chat', endpointType: 'chatComplete', format: 'openai', textual: true, cacheable: true }
const messages: Operation = { name: 'messages', endpointType: 'messages', format: 'anthropic', textual: true, cacheable: true }
const embeddings: Operation = { name: 'embeddings', endpointType: 'embed', format: 'openai', textual: false, cacheable: true }

type Check = SnapshotGuardrail['checks'][number]
function g(id: string, checks: Check[], extra: Partial<SnapshotGuardrail> = {}): SnapshotGuardrail {
  return { id, slug: `slug-${id}`, name: id, workspaceId: null, version: 1, checks, actions: {}, hooks: ['beforeRequestHook'], holdBack: { mode: 'none', windowChars: 256 }, ...extra }
}
const check = (id: string, parameters: Record<string, unknown>): Check => ({ id, parameters, isEnabled: true })
const banned = (word: string) => check('default.contains', { words: [word], operator: 'none' })

function runtimeOf(guardrails: SnapshotGuardrail[], defaults: SnapshotGuardrailDefaults[]): GuardrailRuntime {
  const { runtime, problems } = compileGuardrails(guardrails, defaults, { dispatcher: new Agent() })
  expect(problems).toEqual([])
  return runtime
}

function exchange(operation: Operation, body: Record<string, unknown>, metadata: Record<string, unknown> = {}): Exchange {
  const context = { metadata, workspaceId: 'ws1', signal: new AbortController().signal } as unknown as RequestContext
  return { operation, context, headers: {}, body, facts: newFacts(), responseHeaders: {} } as unknown as Exchange
}

const chatBody = (text: string) => ({ model: 'gpt-4o', messages: [{ role: 'user', content: text }] })
const jsonAnswer = (text: string): Answer => ({ kind: 'json', status: 200, body: { id: 'c1', object: 'chat.completion', choices: [{ index: 0, message: { role: 'assistant', content: text }, finish_reason: 'stop' }] }, usage: null })

interface Harness {
  run: (ex: Exchange) => Promise<Answer>
  calls: Array<Record<string, unknown> | null>
  asyncResults: HookResult[][]
  metrics: Registry
}

function harness(runtime: GuardrailRuntime, answer: () => Answer, config: ConfigGuardrails | null = null, operation: Operation = chat): Harness {
  const calls: Harness['calls'] = []
  const asyncResults: HookResult[][] = []
  const registry = new Registry()
  const stages = guardrailStages({
    guardrailsOf: () => runtime,
    configGuardrails: () => config,
    metrics: createGuardrailMetrics(registry),
    onAsyncResults: (_exchange, results) => asyncResults.push([...results]),
  })
  const { run } = composePipeline(operation, [stages.before, stages.after], async (ex) => {
    calls.push(ex.body)
    return answer()
  })
  return { run, calls, asyncResults, metrics: registry }
}

async function rejection(promise: Promise<unknown>): Promise<GuardrailBlockedError> {
  const error = await promise.then(() => null, (e: unknown) => e)
  expect(error).toBeInstanceOf(GuardrailBlockedError)
  return error as GuardrailBlockedError
}

describe('guardrails before the request', () => {
  const org = [{ workspaceId: null, input: ['deny-secret'], output: [] }]
  const denySecret = g('deny-secret', [banned('secret')], { actions: { deny: true } })

  it('a failed denying guardrail answers 446 with hook_results, and the provider is never called', async () => {
    const h = harness(runtimeOf([denySecret], org), () => jsonAnswer('ok'))
    const error = await rejection(h.run(exchange(chat, chatBody('tell me the SECRET'))))
    expect(error.status).toBe(446)
    expect(error.code).toBe('guardrail_blocked')
    const body = error.toBody()
    expect(body.error).toMatchObject({ code: 'guardrail_blocked', type: 'guardrail_error' })
    expect(body.hook_results.before_request_hooks).toEqual([expect.objectContaining({ id: 'deny-secret', verdict: false, deny: true, checks: [expect.objectContaining({ id: 'default.contains', verdict: false })] })])
    expect(body.hook_results.after_request_hooks).toEqual([])
    expect(h.calls).toEqual([])
  })

  it('a passing request is served with hook_results attached and status 200', async () => {
    const h = harness(runtimeOf([denySecret], org), () => jsonAnswer('ok'))
    const ex = exchange(chat, chatBody('hello'))
    const answer = await h.run(ex)
    expect(answer.status).toBe(200)
    expect((answer as { body: { hook_results: { before_request_hooks: unknown[] } } }).body.hook_results.before_request_hooks).toEqual([expect.objectContaining({ id: 'deny-secret', verdict: true, feedback: null })])
    expect(ex.facts.hookResults).toEqual([expect.objectContaining({ guardrailId: 'deny-secret', hook: 'beforeRequestHook', verdict: true })])
  })

  it('a failed guardrail without deny is served flagged: status 246, verdicts and on-fail feedback attached', async () => {
    const flag = g('flag', [banned('secret')], { actions: { deny: false, on_fail: { feedback: { value: -3, weight: 0.5, metadata: 'leak' } }, on_success: { feedback: { value: 4, weight: 1, metadata: '' } } } })
    const h = harness(runtimeOf([flag], [{ workspaceId: 'ws1', input: ['flag'], output: [] }]), () => jsonAnswer('ok'))
    const failed = await h.run(exchange(chat, chatBody('secret')))
    expect(failed.status).toBe(246)
    expect((failed as { body: { hook_results: { before_request_hooks: unknown[] } } }).body.hook_results.before_request_hooks[0]).toMatchObject({ verdict: false, deny: false, feedback: { value: -3, weight: 0.5, metadata: { text: 'leak' } } })
    const passed = await h.run(exchange(chat, chatBody('fine')))
    expect(passed.status).toBe(200)
    expect((passed as { body: { hook_results: { before_request_hooks: unknown[] } } }).body.hook_results.before_request_hooks[0]).toMatchObject({ verdict: true, feedback: { value: 4, weight: 1, metadata: {} } })
  })

  it('async guardrails never delay or block: the answer comes first, the verdict is reported after', async () => {
    const audit = g('audit', [banned('secret')], { actions: { async: true } })
    const h = harness(runtimeOf([audit], [{ workspaceId: null, input: ['audit'], output: [] }]), () => jsonAnswer('ok'))
    const answer = await h.run(exchange(chat, chatBody('secret')))
    expect(answer.status).toBe(200)
    expect((answer as { body: Record<string, unknown> }).body.hook_results).toBeUndefined()
    await new Promise((resolve) => setImmediate(resolve))
    expect(h.asyncResults).toEqual([[expect.objectContaining({ guardrailId: 'audit', verdict: false, async: true })]])
  })

  it('mutating checks change what the provider receives', async () => {
    const prefix = g('prefix', [check('default.addPrefix', { prefix: 'Answer briefly. ' })])
    const h = harness(runtimeOf([prefix], [{ workspaceId: null, input: ['prefix'], output: [] }]), () => jsonAnswer('ok'))
    await h.run(exchange(chat, chatBody('why?')))
    expect(h.calls[0]).toEqual(chatBody('Answer briefly. why?'))
  })

  it('organisation, workspace and config attachments add up; a guardrail attached twice runs once', async () => {
    const a = g('a', [check('default.requiredMetadataKeys', { metadataKeys: ['team'] })], { actions: { deny: true } })
    const b = g('b', [check('default.modelWhitelist', { models: ['gpt-4o'] })], { actions: { deny: true } })
    const c = g('c', [check('default.wordCount', { maxWords: 5 })], { actions: { deny: true } })
    const runtime = runtimeOf([a, b, c], [{ workspaceId: null, input: ['a'], output: [] }, { workspaceId: 'ws1', input: ['slug-a', 'b'], output: [] }])
    const config: ConfigGuardrails = { input: ['c', 'a'], output: () => [] }
    const h = harness(runtime, () => jsonAnswer('ok'), config)
    const ex = exchange(chat, chatBody('short'), { team: 'x' })
    await h.run(ex)
    expect(ex.facts.hookResults.map((r) => r.guardrailId)).toEqual(['a', 'b', 'c'])
    const error = await rejection(h.run(exchange(chat, chatBody('short'))))
    expect(error.hookResults.before_request_hooks.map((r) => (r as { id: string; verdict: boolean }).verdict)).toEqual([false, true, true])
  })

  it('a config naming an unknown guardrail is a 400', async () => {
    const h = harness(runtimeOf([g('a', [banned('x')])], []), () => jsonAnswer('ok'), { input: ['nope'], output: () => [] })
    await expect(h.run(exchange(chat, chatBody('hi')))).rejects.toMatchObject({ status: 400, code: 'invalid_parameter' })
  })

  it('takes no part in non-textual routes, and a snapshot without guardrails passes straight through', async () => {
    const stages = guardrailStages({ guardrailsOf: () => null })
    expect(stages.before.forOperation(embeddings)).toBeNull()
    expect(stages.after.forOperation(embeddings)).toBeNull()
    const h = harness(runtimeOf([], []), () => jsonAnswer('ok'))
    const answer = await h.run(exchange(chat, chatBody('secret')))
    expect(answer.status).toBe(200)
    expect((answer as { body: Record<string, unknown> }).body.hook_results).toBeUndefined()
  })
})

describe('guardrails on the answer', () => {
  const jsonOnly = g('json', [check('default.jsonKeys', { keys: ['name'] })], { actions: { deny: true } })
  const flagLong = g('long', [check('default.wordCount', { maxWords: 3 })])

  it('deny replaces the answer with 446 carrying both hooks\' verdicts', async () => {
    const h = harness(runtimeOf([jsonOnly], [{ workspaceId: null, input: [], output: ['json'] }]), () => jsonAnswer('not json'))
    const error = await rejection(h.run(exchange(chat, chatBody('give json'))))
    expect(error.hookResults.after_request_hooks).toEqual([expect.objectContaining({ id: 'json', verdict: false })])
    expect(h.calls).toHaveLength(1)
    const ok = harness(runtimeOf([jsonOnly], [{ workspaceId: null, input: [], output: ['json'] }]), () => jsonAnswer('{"name":"x"}'))
    expect((await ok.run(exchange(chat, chatBody('give json')))).status).toBe(200)
  })

  it('flag serves the answer with 246 and its verdict', async () => {
    const h = harness(runtimeOf([flagLong], [{ workspaceId: null, input: [], output: ['long'] }]), () => jsonAnswer('one two three four'))
    const answer = await h.run(exchange(chat, chatBody('hi')))
    expect(answer.status).toBe(246)
    expect((answer as { body: { hook_results: { after_request_hooks: unknown[] } } }).body.hook_results.after_request_hooks).toEqual([expect.objectContaining({ id: 'long', verdict: false })])
  })

  it('config output guardrails follow the target that answered', async () => {
    const runtime = runtimeOf([flagLong], [])
    const config: ConfigGuardrails = { input: [], output: (path) => (path === 'config.targets[1]' ? ['long'] : []) }
    const h = harness(runtime, () => jsonAnswer('one two three four'), config)
    const first = exchange(chat, chatBody('hi'))
    first.facts.targetPath = 'config.targets[0]'
    expect((await h.run(first)).status).toBe(200)
    const second = exchange(chat, chatBody('hi'))
    second.facts.targetPath = 'config.targets[1]'
    expect((await h.run(second)).status).toBe(246)
  })

  it('provider errors are passed on unjudged', async () => {
    const h = harness(runtimeOf([jsonOnly], [{ workspaceId: null, input: [], output: ['json'] }]), () => ({ kind: 'json', status: 429, body: { error: {} }, usage: null }))
    expect((await h.run(exchange(chat, chatBody('hi')))).status).toBe(429)
  })
})

describe('guardrails on streams', () => {
  const chunk = (content: string, extra: Record<string, unknown> = {}) => ({ id: 's1', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta: { content }, finish_reason: null }], ...extra })
  function streamOf(batches: unknown[][]): () => StreamAnswer {
    return () => ({
      kind: 'stream',
      status: 200,
      batches: (async function* () {
        for (const batch of batches) yield batch
      })(),
      result: () => null,
    })
  }

  /** What the client got before the stream ended, and how it ended. */
  async function consume(answer: Answer): Promise<{ received: unknown[]; error: unknown }> {
    const received: unknown[] = []
    try {
      for await (const batch of (answer as StreamAnswer).batches) received.push(...batch)
      return { received, error: null }
    } catch (error) {
      return { received, error }
    }
  }
  const texts = (received: unknown[]) => received.map((c) => ((c as { choices: Array<{ delta?: { content?: string } }> }).choices[0]?.delta?.content ?? null))

  const words = ['Hello ', 'there, ', 'the secret ', 'code is ', '42.']
  const batches = words.map((word) => [chunk(word)])
  const deny = (holdBack: SnapshotGuardrail['holdBack']) => g('deny', [banned('secret')], { actions: { deny: true }, holdBack })
  const attach = [{ workspaceId: null, input: [], output: ['deny'] }]

  it('none: chunks go out as they arrive; a deny mid-stream ends it with an error after what was sent', async () => {
    const h = harness(runtimeOf([deny({ mode: 'none', windowChars: 256 })], attach), streamOf(batches))
    const ex = exchange(chat, { ...chatBody('hi'), stream: true })
    const { received, error } = await consume(await h.run(ex))
    expect(texts(received)).toEqual(['Hello ', 'there, '])
    expect(error).toBeInstanceOf(GuardrailBlockedError)
    expect((error as GuardrailBlockedError).status).toBe(446)
    expect(ex.facts.annotations.guardrailStream).toEqual({ holdBack: 'none', sentChars: 13, withheldChars: 11 })
  })

  it('window N: the last N characters are held, and what was held is never released after a deny', async () => {
    const h = harness(runtimeOf([deny({ mode: 'window', windowChars: 5 })], attach), streamOf(batches))
    const ex = exchange(chat, { ...chatBody('hi'), stream: true })
    const { received, error } = await consume(await h.run(ex))
    expect(texts(received)).toEqual(['Hello '])
    expect(error).toBeInstanceOf(GuardrailBlockedError)
    expect(ex.facts.annotations.guardrailStream).toMatchObject({ holdBack: 'window', sentChars: 6 })
  })

  it('all: nothing reaches the client before the verdict', async () => {
    const h = harness(runtimeOf([deny({ mode: 'all', windowChars: 256 })], attach), streamOf(batches))
    const { received, error } = await consume(await h.run(exchange(chat, { ...chatBody('hi'), stream: true })))
    expect(received).toEqual([])
    expect(error).toBeInstanceOf(GuardrailBlockedError)
    const text = await h.metrics.getSingleMetricAsString('gatehouse_guardrail_stream_held_chars')
    expect(text).toMatch(/gatehouse_guardrail_stream_held_chars_count\{mode="all"\} 1/)
  })

  it('a passing stream is released whole, in order, with the verdicts as a last event; checks needing the whole answer run at the end', async () => {
    const whole = g('whole', [check('default.endsWith', { suffix: '42.' })], { actions: { deny: true }, holdBack: { mode: 'window', windowChars: 8 } })
    const clean = [['Hello ', 'there. '], ['The code ', 'is 42.'], [chunk('', { choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] })]].map((b) => b.map((x) => (typeof x === 'string' ? chunk(x) : x)))
    const h = harness(runtimeOf([whole], [{ workspaceId: null, input: [], output: ['whole'] }]), streamOf(clean))
    const answer = await h.run(exchange(chat, { ...chatBody('hi'), stream: true }))
    const { received, error } = await consume(answer)
    expect(error).toBeNull()
    expect(answer.status).toBe(200)
    expect(texts(received)).toEqual(['Hello ', 'there. ', 'The code ', 'is 42.', null, null])
    expect(received.at(-1)).toMatchObject({ id: 's1', object: 'chat.completion.chunk', choices: [], hook_results: { after_request_hooks: [expect.objectContaining({ id: 'whole', verdict: true })] } })
    const ttft = await h.metrics.getSingleMetricAsString('gatehouse_guardrail_stream_added_ttft_seconds')
    expect(ttft).toMatch(/_count\{mode="window"\} 1/)
  })

  it('a whole-answer check that fails denies at the end: the held tail is never sent', async () => {
    const whole = g('whole', [check('default.endsWith', { suffix: 'Bye.' })], { actions: { deny: true }, holdBack: { mode: 'window', windowChars: 8 } })
    const h = harness(runtimeOf([whole], [{ workspaceId: null, input: [], output: ['whole'] }]), streamOf([[chunk('Hello there. '), chunk('The end.')]]))
    const { received, error } = await consume(await h.run(exchange(chat, { ...chatBody('hi'), stream: true })))
    expect(texts(received)).toEqual(['Hello there. '])
    expect(error).toBeInstanceOf(GuardrailBlockedError)
  })

  it('Anthropic streams: text deltas are judged, the verdict event is a named event', async () => {
    const event = (text: string) => ({ event: 'content_block_delta', data: { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text } } })
    const flag = g('flag', [check('default.wordCount', { maxWords: 2 })])
    const h = harness(runtimeOf([flag], [{ workspaceId: null, input: [], output: ['flag'] }]), streamOf([[event('one two ')], [event('three')]]), null, messages)
    const { received, error } = await consume(await h.run(exchange(messages, { model: 'claude', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }], stream: true })))
    expect(error).toBeNull()
    expect(received.at(-1)).toMatchObject({ event: 'hook_results', data: { type: 'hook_results', hook_results: { after_request_hooks: [expect.objectContaining({ verdict: false })] } } })
  })

  it('tool-call arguments are judged like text', async () => {
    const toolChunk = (args: string) => ({ id: 's', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta: { tool_calls: [{ index: 0, function: { arguments: args } }] }, finish_reason: null }] })
    const h = harness(runtimeOf([deny({ mode: 'all', windowChars: 1 })], attach), streamOf([[toolChunk('{"q":"the sec')], [toolChunk('ret"}')]]))
    const { received, error } = await consume(await h.run(exchange(chat, { ...chatBody('hi'), stream: true })))
    expect(received).toEqual([])
    expect(error).toBeInstanceOf(GuardrailBlockedError)
  })
})

describe('verdicts on streams without output guardrails', () => {
  it('the input verdicts end the stream as an event, and a flag makes it 246', async () => {
    const flag = g('flag', [check('default.contains', { words: ['please'], operator: 'all' })])
    const runtime = runtimeOf([flag], [{ workspaceId: null, input: ['flag'], output: [] }])
    const chunk = { id: 's9', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta: { content: 'ok' }, finish_reason: null }] }
    const h = harness(runtime, () => ({ kind: 'stream', status: 200, batches: (async function* () { yield [chunk] })(), result: () => null }))
    const answer = await h.run(exchange(chat, { ...chatBody('no manners'), stream: true }))
    expect(answer.status).toBe(246)
    const received: unknown[] = []
    for await (const batch of (answer as StreamAnswer).batches) received.push(...batch)
    expect(received).toEqual([chunk, expect.objectContaining({ id: 's9', choices: [], hook_results: { before_request_hooks: [expect.objectContaining({ id: 'flag', verdict: false })], after_request_hooks: [] } })])
  })

  it('async output guardrails run on the whole streamed text once it passed', async () => {
    const audit = g('audit', [check('default.contains', { words: ['secret'], operator: 'none' })], { actions: { async: true } })
    const runtime = runtimeOf([audit], [{ workspaceId: null, input: [], output: ['audit'] }])
    const chunk = (content: string) => ({ id: 's', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta: { content }, finish_reason: null }] })
    const h = harness(runtime, () => ({ kind: 'stream', status: 200, batches: (async function* () { yield [chunk('the sec')]; yield [chunk('ret')] })(), result: () => null }))
    const answer = await h.run(exchange(chat, { ...chatBody('hi'), stream: true }))
    const received: unknown[] = []
    for await (const batch of (answer as StreamAnswer).batches) received.push(...batch)
    // Served unchanged: async verdicts are never shown, so no verdict event (as on JSON answers).
    expect(received).toEqual([chunk('the sec'), chunk('ret')])
    await new Promise((resolve) => setImmediate(resolve))
    expect(h.asyncResults).toEqual([[expect.objectContaining({ guardrailId: 'audit', hook: 'afterRequestHook', verdict: false, async: true })]])
  })
})
