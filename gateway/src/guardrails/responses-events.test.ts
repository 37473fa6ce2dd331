/**
 * A Responses API event stream under output guardrails: decoded from bytes and written back as
 * the provider sent each event, function-call arguments judged like text, the terminal event held
 * until the final verdict and carrying it.
 *
 * Breaks tried: `chunkText` without `response.function_call_arguments.delta` fails the
 * function-call deny; `encodeResponseEvents` dropping event names fails the round trip.
 */
import { Agent } from 'undici'
import { describe, expect, it } from 'vitest'
import type { HookResult } from '../core/exchange-types.ts'
import type { SnapshotGuardrail } from '../snapshot/policies.ts'
import { GuardrailBlockedError } from './blocked.ts'
import { compileGuardrails } from './compile.ts'
import { decodeResponseEvents, encodeResponseEvents, isTerminalResponseEvent } from './responses-events.ts'
import { guardStream } from './stream.ts'

const encoder = new TextEncoder()
const sse = (type: string, payload: Record<string, unknown>, sequence: number): string => `event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: sequence, ...payload })}\n\n`

/** A function call streamed as the Responses API does: item added, argument deltas, item done, completed. */
const functionCallEvents = (argumentPieces: string[]): string[] => {
  const item = { id: 'fc_1', type: 'function_call', call_id: 'call_1', name: 'lookup', arguments: '' }
  const args = argumentPieces.join('')
  let sequence = 0
  return [
    sse('response.created', { response: { id: 'resp_1', object: 'response', status: 'in_progress', output: [] } }, sequence++),
    sse('response.output_item.added', { output_index: 0, item }, sequence++),
    ...argumentPieces.map((delta) => sse('response.function_call_arguments.delta', { item_id: 'fc_1', output_index: 0, delta }, sequence++)),
    sse('response.function_call_arguments.done', { item_id: 'fc_1', output_index: 0, arguments: args }, sequence++),
    sse('response.output_item.done', { output_index: 0, item: { ...item, arguments: args } }, sequence++),
    sse('response.completed', { response: { id: 'resp_1', object: 'response', status: 'completed', output: [{ ...item, arguments: args }] } }, sequence++),
  ]
}

async function* bytesOf(events: string[]): AsyncGenerator<Uint8Array> {
  // One network read per event, as a provider streaming slowly sends them.
  for (const event of events) yield encoder.encode(event)
}

async function collect(bytes: AsyncIterable<Uint8Array>): Promise<{ text: string; error: unknown }> {
  const decoder = new TextDecoder()
  let text = ''
  try {
    for await (const chunk of bytes) text += decoder.decode(chunk, { stream: true })
    return { text, error: null }
  } catch (error) {
    return { text, error }
  }
}

function guard(guardrail: SnapshotGuardrail) {
  const { runtime, problems } = compileGuardrails([guardrail], [{ workspaceId: null, input: [], output: [guardrail.id] }], { dispatcher: new Agent() })
  expect(problems).toEqual([])
  const facts = { hookResults: [] as HookResult[], annotations: {} as Record<string, unknown> }
  const input = { body: null, metadata: {}, endpointType: 'responses' as const, model: 'gpt-4o', providerKind: 'openai' }
  return {
    facts,
    run: (events: string[]) => encodeResponseEvents(guardStream(decodeResponseEvents(bytesOf(events)), { facts, format: 'responses', guardrails: runtime.defaults(null).output, input, signal: new AbortController().signal })),
  }
}

const guardrail = (holdBack: SnapshotGuardrail['holdBack'], words: string[]): SnapshotGuardrail => ({
  id: 'no-drop', slug: 'no-drop', name: 'no-drop', workspaceId: null, version: 1, hooks: ['afterRequestHook'], actions: { deny: true }, holdBack,
  checks: [{ id: 'default.contains', parameters: { words, operator: 'none' }, isEnabled: true }],
})

describe('Responses API streams under output guardrails', () => {
  it('round trip: every event comes back with its name and JSON as sent; the terminal one gains hook_results', async () => {
    const events = functionCallEvents(['{"city":', '"Paris"}'])
    const { facts, run } = guard(guardrail({ mode: 'none', windowChars: 256 }, ['drop table']))
    const { text, error } = await collect(run(events))
    expect(error).toBeNull()
    const written = text.split('\n\n').filter(Boolean).map((event) => `${event}\n\n`)
    expect(written.slice(0, -1)).toEqual(events.slice(0, -1))
    const last = JSON.parse(written.at(-1)!.split('data: ')[1]!) as { type: string; response: { hook_results: unknown } }
    expect(written.at(-1)).toMatch(/^event: response\.completed\n/)
    expect(last.response.hook_results).toMatchObject({ after_request_hooks: [{ id: 'no-drop', verdict: true }] })
    expect(facts.annotations.guardrailStream).toEqual({ holdBack: 'none', sentChars: 16, withheldChars: 0 })
  })

  it('function-call arguments are judged: a deny stops the stream before the denied delta, the terminal event never written', async () => {
    const { facts, run } = guard(guardrail({ mode: 'none', windowChars: 256 }, ['drop table']))
    const { text, error } = await collect(run(functionCallEvents(['{"q":"x; ', 'DROP TABLE users"}'])))
    expect(error).toBeInstanceOf(GuardrailBlockedError)
    expect(text).toContain('{\\"q\\":\\"x; ')
    expect(text).not.toContain('DROP TABLE')
    expect(text).not.toContain('response.completed')
    expect(facts.annotations.guardrailStream).toMatchObject({ sentChars: 9, withheldChars: 18 })
  })

  it('whole-answer hold-back writes nothing of a denied function call', async () => {
    const { run } = guard(guardrail({ mode: 'all', windowChars: 256 }, ['drop table']))
    const { text, error } = await collect(run(functionCallEvents(['{"q":"x; ', 'DROP TABLE users"}'])))
    expect(error).toBeInstanceOf(GuardrailBlockedError)
    expect(text).toBe('')
  })

  it('an event that is not JSON ends the stream as the provider\'s malformed answer', async () => {
    const { run } = guard(guardrail({ mode: 'none', windowChars: 256 }, ['drop table']))
    const { error } = await collect(run([...functionCallEvents(['{}']).slice(0, 2), 'event: response.output_text.delta\ndata: {not json\n\n']))
    expect(error).toMatchObject({ code: 'upstream_malformed_response' })
  })

  it('knows the terminal events', () => {
    for (const type of ['response.completed', 'response.incomplete', 'response.failed']) expect(isTerminalResponseEvent({ event: type, data: { type } })).toBe(true)
    expect(isTerminalResponseEvent({ event: 'response.output_text.delta', data: { type: 'response.output_text.delta' } })).toBe(false)
    expect(isTerminalResponseEvent({ data: null })).toBe(false)
  })
})
