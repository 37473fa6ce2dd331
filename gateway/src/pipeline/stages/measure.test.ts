import { describe, expect, it } from 'vitest'
import { GatewayError } from '../../core/errors.ts'
import { ExchangeContext } from '../context.ts'
import { RuntimeHolder } from '../../runtime/holder.ts'
import { SNAPSHOT_SCHEMA_VERSION } from '../../snapshot/schema.ts'
import type { ExchangeOutcome } from '../../telemetry/outcome.ts'
import { composePipeline, newFacts, type Answer, type Exchange, type Operation, type StreamAnswer } from '../stage.ts'
import { measureStage } from './measure.ts'

const chat: Operation = { name: 'chat', endpointType: 'chatComplete', format: 'openai', textual: true, cacheable: true }

const holder = new RuntimeHolder()
holder.apply({
  schemaVersion: SNAPSHOT_SCHEMA_VERSION, generation: 1, producedAt: new Date().toISOString(), producedBy: { component: 'test', version: '0' },
  organizationId: 'org-1', workspaces: [{ id: 'ws-1', slug: 'one', name: 'One', status: 'active' }],
  apiKeys: [{ id: 'key-1', hash: 'a'.repeat(64), type: 'workspace', subtype: 'service', workspaceId: 'ws-1', scopes: [], status: 'active' }],
  providers: [
    { id: 'prov-a', slug: 'openai', name: 'OpenAI', kind: 'openai', baseUrl: 'http://127.0.0.1:9/v1' },
    { id: 'prov-b', slug: 'backup', name: 'Backup', kind: 'openai', baseUrl: 'http://127.0.0.1:9/v1' },
  ],
})
const runtime = holder.current!
const primary = runtime.providers.byId('prov-a')!
const backup = runtime.providers.byId('prov-b')!

function exchange(options: { authenticated?: boolean; signal?: AbortSignal } = {}): Exchange {
  const context = new ExchangeContext({ traceId: 'trace-1', spanId: null, parentSpanId: null, spanName: null }, runtime, options.signal ?? new AbortController().signal, Date.now())
  if (options.authenticated !== false) {
    const key = runtime.keysByHash.get('a'.repeat(64))!
    context.authenticated({ kind: 'api_key', id: key.record.id, workspaceId: 'ws-1', userId: null, scopes: [], defaultConfig: null, key, attributes: {} }, {})
  }
  const body = { model: 'gpt-4o', messages: [] }
  return { operation: chat, context, headers: {}, url: '/v1/chat/completions?x=1', params: {}, rawBody: body, body, upload: null, relayStreams: true, route: null, facts: newFacts(), responseHeaders: {} }
}

function run(terminal: (e: Exchange) => Promise<Answer>, e: Exchange = exchange()): { outcomes: ExchangeOutcome[]; answer: Promise<Answer> } {
  const outcomes: ExchangeOutcome[] = []
  const pipeline = composePipeline(chat, [measureStage({ observe: (outcome) => outcomes.push(outcome) })], terminal)
  return { outcomes, answer: pipeline.run(e) }
}

async function drain(answer: Answer): Promise<void> {
  if (answer.kind !== 'stream') return
  for await (const batch of answer.batches) void batch
}

describe('measure stage', () => {
  it('sums a JSON exchange: ids, who, provider, usage, attempts and a fallback', async () => {
    const { outcomes, answer } = run(async (e) => {
      e.facts.provider = backup
      e.facts.upstreamModel = 'gpt-4o'
      e.facts.upstreamAttempts.push({ provider: primary, targetKey: 'prov-a', status: 503, durationMs: 5 }, { provider: primary, targetKey: 'prov-a', status: 503, durationMs: 5 }, { provider: backup, targetKey: 'prov-b', status: 200, durationMs: 7 })
      e.facts.annotations.costUsd = 0.5
      return { kind: 'json', status: 200, body: {}, usage: { inputTokens: 3, outputTokens: 4 } }
    })
    await answer
    expect(outcomes).toHaveLength(1)
    const [outcome] = outcomes
    expect(outcome).toMatchObject({ workspaceId: 'ws-1', workspaceSlug: 'one', keyId: 'key-1', providerSlug: 'backup', requestedModel: 'gpt-4o', status: 200, errorCode: null, inputTokens: 3, outputTokens: 4, costUsd: 0.5, path: '/v1/chat/completions' })
    expect(outcome!.upstream.map((attempt) => [attempt.providerSlug, attempt.status, attempt.fallback])).toEqual([['openai', 503, false], ['openai', 503, false], ['backup', 200, true]])
    expect(outcome!.knownModel('gpt-4o')).toBe(true)
    expect(outcome!.knownModel('made-up-model')).toBe(false)
    expect(outcome!.modelFamily('gpt-4o-2024-08-06')).toBe('gpt-4o')
  })

  it('sums a refusal before authentication without a workspace, and rethrows it', async () => {
    const { outcomes, answer } = run(async () => {
      throw new GatewayError('invalid_api_key', 'no')
    }, exchange({ authenticated: false }))
    await expect(answer).rejects.toThrow(GatewayError)
    expect(outcomes[0]).toMatchObject({ status: 401, errorCode: 'invalid_api_key', workspaceId: null, keyId: null, providerSlug: null })
  })

  it('sums a stream at its end: usage from its result, a failure mid-way as its error code', async () => {
    const stream = (fail: boolean): StreamAnswer => ({
      kind: 'stream',
      status: 200,
      batches: (async function* () {
        yield [{ chunk: 1 }]
        if (fail) throw new GatewayError('upstream_error', 'cut')
        yield [{ chunk: 2 }]
      })(),
      result: () => ({ usage: { inputTokens: 5, outputTokens: 6 }, finishReason: { unified: 'stop', raw: 'stop' } }),
    })
    const ok = run(async () => stream(false))
    const answer = await ok.answer
    expect(ok.outcomes).toHaveLength(0)
    await drain(answer)
    expect(ok.outcomes[0]).toMatchObject({ status: 200, errorCode: null, streamed: true, outputTokens: 6 })

    const cut = run(async () => stream(true))
    await expect(drain(await cut.answer)).rejects.toThrow('cut')
    expect(cut.outcomes[0]).toMatchObject({ status: 200, errorCode: 'upstream_error' })
  })

  it('counts a client that left as cancelled (499)', async () => {
    const controller = new AbortController()
    const { outcomes, answer } = run(async () => {
      controller.abort()
      throw new GatewayError('upstream_error', 'the call was cut')
    }, exchange({ signal: controller.signal }))
    await expect(answer).rejects.toThrow()
    expect(outcomes[0]).toMatchObject({ status: 499, errorCode: 'request_cancelled' })
  })
})
