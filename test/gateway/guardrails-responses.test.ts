/**
 * Guardrails on the Responses API (`POST /v1/responses`), streamed and not, through the official
 * `openai` SDK against the simulator (whose answer to "hello" is "Echo: hello alpha bravo charlie",
 * one event 30 ms apart on the slow simulator):
 *
 * - a stream that passes ends with `response.completed` carrying `hook_results`, which both
 *   `responses.create({stream: true})` and `responses.stream()` accept;
 * - a deny mid-stream ends it with an error event the SDK throws as an APIError with our code,
 *   without the denied text and without `response.completed`;
 * - window and whole-answer hold-back never release what a deny withheld;
 * - flag (an input guardrail) answers 246 with the verdicts on the terminal event and on the
 *   non-streamed response;
 * - the usage record says the deny and how many characters were sent and withheld.
 *
 * Breaks tried: relaying `/v1/responses` streams unguarded (the after stage skipping relay event
 * streams) fails the deny, window and usage tests; releasing the terminal event with the other
 * chunks (no `final` hold in guardrails/stream.ts) fails "none: a deny decided on the whole answer".
 */
import OpenAI from 'openai'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import type { GatewaySnapshotInput, SnapshotGuardrail } from '@gatehouse/gateway/snapshot'
import { accountStage } from '../../gateway/src/pipeline/stages/account.ts'
import type { UsageDraft } from '../../gateway/src/usage/draft.ts'
import { startOpenAISimulator } from '../simulators/openai.ts'
import type { Simulator } from '../simulators/index.ts'
import { startTestGateway, WORKSPACE_ID, type TestGateway } from '../helpers/gateway.ts'

let slow: Simulator
let gateway: TestGateway
let openai: OpenAI
const records: UsageDraft[] = []

const guardrail = (input: Partial<SnapshotGuardrail> & Pick<SnapshotGuardrail, 'id' | 'checks'>): SnapshotGuardrail => ({
  slug: input.id, name: input.id, workspaceId: null, version: 1, actions: {}, hooks: ['afterRequestHook'], holdBack: { mode: 'none', windowChars: 256 }, ...input,
})
const contains = (words: string[], operator: 'any' | 'none') => ({ id: 'default.contains', parameters: { words, operator }, isEnabled: true })
const noCharlie = (holdBack: SnapshotGuardrail['holdBack']) => guardrail({ id: 'no-charlie', checks: [contains(['charlie'], 'none')], actions: { deny: true }, holdBack })
const noDelta = (holdBack: SnapshotGuardrail['holdBack']) => guardrail({ id: 'no-delta', checks: [contains(['delta'], 'none')], actions: { deny: true }, holdBack })
const polite = guardrail({ id: 'polite', checks: [contains(['please'], 'any')], hooks: ['beforeRequestHook'] })

function attach(guardrails: SnapshotGuardrail[], defaults: NonNullable<GatewaySnapshotInput['guardrailDefaults']>): void {
  gateway.update((snapshot) => {
    snapshot.guardrails = guardrails
    snapshot.guardrailDefaults = defaults
  })
}
const output = (...ids: string[]) => [{ workspaceId: null, input: [], output: ids }]

type Event = OpenAI.Responses.ResponseStreamEvent
interface Drained { events: Event[]; text: string; error: unknown }

/** Reads a stream to its end or its error, keeping every event and the text deltas. */
async function drain(stream: AsyncIterable<Event>): Promise<Drained> {
  const events: Event[] = []
  let text = ''
  const error = await (async () => {
    for await (const event of stream) {
      events.push(event)
      if (event.type === 'response.output_text.delta') text += event.delta
    }
  })().then(() => null, (e: unknown) => e)
  return { events, text, error }
}

const create = (input: string) => openai.responses.create({ model: 'gpt-4o-mini', input, stream: true })
/** The usage record of the last request, once its stream ended. */
const lastRecord = async (): Promise<UsageDraft> => {
  await expect.poll(() => records.length).toBeGreaterThan(0)
  return records.at(-1)!
}

beforeAll(async () => {
  slow = await startOpenAISimulator({ chunks: 4, tokenIntervalMs: 30 })
  gateway = await startTestGateway([{ slug: 'slow', kind: 'openai', baseUrl: slow.baseUrl }], {
    features: { account: accountStage({ sink: { offer: (draft) => records.push(draft) } }) },
  })
  openai = new OpenAI({ apiKey: gateway.workspaceKey, baseURL: gateway.baseUrl, maxRetries: 0, defaultHeaders: { 'x-gateway-provider': '@slow' } })
})

afterAll(async () => {
  await gateway?.close()
  await slow?.close()
})

beforeEach(() => {
  records.length = 0
})

describe('output guardrails on streamed responses', () => {
  it('pass: every event arrives, response.completed carries hook_results, responses.stream() accepts it', async () => {
    attach([noDelta({ mode: 'all', windowChars: 256 })], output('no-delta'))
    const { events, text, error } = await drain(await create('hello'))
    expect(error).toBeNull()
    expect(text).toBe('Echo: hello alpha bravo charlie')
    const completed = events.at(-1)!
    expect(completed.type).toBe('response.completed')
    expect((completed as OpenAI.Responses.ResponseCompletedEvent).response).toMatchObject({ hook_results: { after_request_hooks: [{ id: 'no-delta', verdict: true }] } })

    const stream = openai.responses.stream({ model: 'gpt-4o-mini', input: 'hello' })
    const final = await stream.finalResponse()
    expect(final.output_text).toBe('Echo: hello alpha bravo charlie')
    expect((await lastRecord()).annotations).toMatchObject({ guardrailStream: { holdBack: 'all', sentChars: 31, withheldChars: 0 } })
  })

  it('none: a deny mid-stream is an APIError with our code; the denied text never arrives, never marked complete', async () => {
    attach([noCharlie({ mode: 'none', windowChars: 256 })], output('no-charlie'))
    const { events, text, error } = await drain(await create('hello'))
    expect(error).toBeInstanceOf(OpenAI.APIError)
    expect(error).toMatchObject({ code: 'guardrail_blocked', type: 'guardrail_error' })
    expect((error as Error).message).toMatch(/blocked by guardrail no-charlie/)
    // Sent as it arrived until the deny: the text before the denied delta, nothing after.
    expect(text).toBe('Echo: hello alpha bravo')
    expect(events.map((event) => event.type)).not.toContain('response.completed')
    const record = await lastRecord()
    expect(record).toMatchObject({ streamed: true, errorCode: 'guardrail_blocked' })
    expect(record.annotations).toMatchObject({ guardrailStream: { holdBack: 'none', sentChars: 23, withheldChars: 8 }, hookResults: [expect.objectContaining({ guardrailId: 'no-charlie', verdict: false })] })
  })

  it('none: a deny decided on the whole answer comes after every delta, but response.completed never arrives', async () => {
    // "must mention zulu" can only fail once the answer ended: no early check stops the deltas.
    attach([guardrail({ id: 'zulu', checks: [contains(['zulu'], 'any')], actions: { deny: true } })], output('zulu'))
    const { events, text, error } = await drain(await create('hello'))
    expect(error).toMatchObject({ code: 'guardrail_blocked' })
    expect(text).toBe('Echo: hello alpha bravo charlie')
    expect(events.at(-1)?.type).toBe('response.output_item.done')
    expect((await lastRecord()).annotations).toMatchObject({ guardrailStream: { holdBack: 'none', sentChars: 31, withheldChars: 0 } })
  })

  it('the error event is the Responses API\'s own (type, code, message) with the OpenAI envelope and the verdicts', async () => {
    attach([noCharlie({ mode: 'none', windowChars: 256 })], output('no-charlie'))
    const response = await fetch(`${gateway.baseUrl}/responses`, {
      method: 'POST',
      headers: { authorization: `Bearer ${gateway.workspaceKey}`, 'x-gateway-provider': '@slow', 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-4o-mini', input: 'hello', stream: true }),
    })
    const last = (await response.text()).trim().split('\n\n').at(-1)!
    expect(last.split('\n')[0]).toBe('event: error')
    expect(JSON.parse(last.split('\n')[1]!.slice('data: '.length))).toMatchObject({
      type: 'error',
      code: 'guardrail_blocked',
      message: expect.stringMatching(/blocked by guardrail no-charlie/),
      error: { code: 'guardrail_blocked', type: 'guardrail_error' },
      hook_results: { after_request_hooks: [{ id: 'no-charlie', verdict: false, deny: true }] },
    })
  })

  it('responses.stream() surfaces the same deny as an APIError', async () => {
    attach([noCharlie({ mode: 'none', windowChars: 256 })], output('no-charlie'))
    const error = await openai.responses.stream({ model: 'gpt-4o-mini', input: 'hello' }).finalResponse().then(() => null, (e: unknown) => e)
    expect(error).toBeInstanceOf(OpenAI.APIError)
    expect(error).toMatchObject({ code: 'guardrail_blocked' })
  })

  it('window: what a deny withheld (the last N characters) never arrives', async () => {
    attach([noCharlie({ mode: 'window', windowChars: 10 })], output('no-charlie'))
    const { text, error } = await drain(await create('hello'))
    expect(error).toMatchObject({ code: 'guardrail_blocked' })
    // "Echo: hello alpha bravo" (23 characters) had arrived before the deny; its last 10 were held and stay unsent.
    expect(text).toBe('Echo: hello')
    expect((await lastRecord()).annotations).toMatchObject({ guardrailStream: { holdBack: 'window', sentChars: 11, withheldChars: 20 } })
  })

  it('window: a clean answer arrives whole and in order', async () => {
    attach([noDelta({ mode: 'window', windowChars: 10 })], output('no-delta'))
    const { events, text, error } = await drain(await create('hello'))
    expect(error).toBeNull()
    expect(text).toBe('Echo: hello alpha bravo charlie')
    expect(events.map((event) => event.sequence_number)).toEqual([...events.keys()])
  })

  it('all: nothing of a denied answer arrives', async () => {
    attach([noCharlie({ mode: 'all', windowChars: 256 })], output('no-charlie'))
    const { events, error } = await drain(await create('hello'))
    expect(error).toMatchObject({ code: 'guardrail_blocked' })
    expect(events).toEqual([])
  })

  it('flag: an output guardrail that fails without deny is reported on response.completed', async () => {
    attach([guardrail({ id: 'short', checks: [{ id: 'default.wordCount', parameters: { maxWords: 3 }, isEnabled: true }] })], output('short'))
    const { data, response } = await create('hello').withResponse()
    // The verdict comes after the headers: a stream keeps its 200.
    expect(response.status).toBe(200)
    const { events, error } = await drain(data)
    expect(error).toBeNull()
    expect((events.at(-1) as OpenAI.Responses.ResponseCompletedEvent).response).toMatchObject({ hook_results: { after_request_hooks: [{ id: 'short', verdict: false, deny: false }] } })
  })
})

describe('input guardrails on responses', () => {
  it('flag: 246 with the verdicts on the terminal event (streamed) and in the response (not streamed)', async () => {
    attach([polite], [{ workspaceId: WORKSPACE_ID, input: ['polite'], output: [] }])
    const streamed = await create('hello').withResponse()
    expect(streamed.response.status).toBe(246)
    const { events, error } = await drain(streamed.data)
    expect(error).toBeNull()
    expect((events.at(-1) as OpenAI.Responses.ResponseCompletedEvent).response).toMatchObject({ hook_results: { before_request_hooks: [{ id: 'polite', verdict: false }] } })

    const { data, response } = await openai.responses.create({ model: 'gpt-4o-mini', input: 'hello' }).withResponse()
    expect(response.status).toBe(246)
    expect(data.output_text).toBe('Echo: hello alpha bravo charlie')
    expect((data as unknown as { hook_results: unknown }).hook_results).toMatchObject({ before_request_hooks: [{ id: 'polite', verdict: false }], after_request_hooks: [] })
  })
})
