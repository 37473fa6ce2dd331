import { beforeAll, describe, expect, it } from 'vitest'
import { GatewayError } from '../../core/errors.ts'
import { ExchangeContext } from '../context.ts'
import { RawJson } from '../../core/raw-json.ts'
import { RuntimeHolder } from '../../runtime/holder.ts'
import { SNAPSHOT_SCHEMA_VERSION, type GatewaySnapshotInput } from '../../snapshot/schema.ts'
import type { UsageDraft } from '../../usage/draft.ts'
import { composePipeline, newFacts, type Answer, type Exchange, type Operation, type StreamAnswer } from '../stage.ts'
import { accountStage } from './account.ts'
import { loadTokenizer } from '../../usage/estimate.ts'

// Estimates count with the real encoding once it is loaded (a gateway loads it on its first count).
beforeAll(() => loadTokenizer())

const chat: Operation = { name: 'chat', endpointType: 'chatComplete', format: 'openai', textual: true, cacheable: true }

function runtime(change: (snapshot: GatewaySnapshotInput) => void = () => {}) {
  const snapshot: GatewaySnapshotInput = {
    schemaVersion: SNAPSHOT_SCHEMA_VERSION,
    generation: 1,
    producedAt: new Date().toISOString(),
    producedBy: { component: 'test', version: '0' },
    organizationId: 'org-1',
    workspaces: [{ id: 'ws-1', slug: 'one', name: 'One', status: 'active' }],
    apiKeys: [{ id: 'key-1', hash: 'a'.repeat(64), type: 'workspace', subtype: 'service', workspaceId: 'ws-1', scopes: [], status: 'active' }],
    providers: [
      { id: 'prov-a', slug: 'openai', name: 'OpenAI', kind: 'openai', baseUrl: 'http://127.0.0.1:9/v1', integrationId: 'int-1' },
      { id: 'prov-b', slug: 'claude', name: 'Claude', kind: 'anthropic', baseUrl: 'http://127.0.0.1:9/v1' },
    ],
  }
  change(snapshot)
  const holder = new RuntimeHolder()
  const result = holder.apply(snapshot)
  if (!result.ok) throw new Error(JSON.stringify(result.problems))
  return holder.current!
}

function exchange(body: Record<string, unknown>, options: { runtime?: ReturnType<typeof runtime>; metadata?: Record<string, unknown>; signal?: AbortSignal } = {}): Exchange {
  const rt = options.runtime ?? runtime()
  const context = new ExchangeContext({ traceId: 'trace-1', spanId: null, parentSpanId: null, spanName: null }, rt, options.signal ?? new AbortController().signal, 1_000)
  const key = rt.keysByHash.get('a'.repeat(64))!
  context.authenticated({ kind: 'api_key', id: key.record.id, workspaceId: 'ws-1', userId: null, scopes: [], defaultConfig: null, key, attributes: {} }, options.metadata ?? {})
  return {
    operation: chat,
    context,
    headers: {},
    url: '/v1/chat/completions',
    params: {},
    rawBody: body,
    body,
    upload: null,
    relayStreams: true,
    route: null,
    facts: newFacts(),
    responseHeaders: {},
  }
}

function collector() {
  const drafts: UsageDraft[] = []
  return { drafts, sink: { offer: (draft: UsageDraft) => drafts.push(draft) } }
}

let clock = 1_250
const now = () => clock

describe('account stage, JSON answers', () => {
  it('records the provider usage, the target that answered and its cost', async () => {
    const { drafts, sink } = collector()
    const ex = exchange({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] }, { metadata: { _user: 'alice', team: 'search', n: 3 } })
    const pipeline = composePipeline(chat, [accountStage({ sink, now })], async (e): Promise<Answer> => {
      e.facts.provider = e.context.runtime.providers.byId('prov-a')!
      e.facts.upstreamModel = 'gpt-4o-mini'
      e.facts.attempts = 2
      e.facts.targetPath = 'config.targets[1]'
      e.facts.configId = 'cfg-1'
      return { kind: 'json', status: 200, body: { model: 'gpt-4o-mini-2024-07-18', choices: [] }, usage: { inputTokens: 1000, outputTokens: 500, cachedInputTokens: 200 } }
    })
    await pipeline.run(ex)
    expect(drafts).toHaveLength(1)
    const draft = drafts[0]!
    expect(draft).toMatchObject({
      organizationId: 'org-1', workspaceId: 'ws-1', apiKeyId: 'key-1', userId: 'alice', traceId: 'trace-1',
      providerId: 'prov-a', providerSlug: 'openai', providerKind: 'openai', integrationId: 'int-1', configId: 'cfg-1',
      route: 'chat', endpointType: 'chatComplete', modelRequested: 'gpt-4o-mini', modelServed: 'gpt-4o-mini-2024-07-18',
      attempts: 2, targetPath: 'config.targets[1]', statusCode: 200, errorCode: null,
      inputTokens: 1000, outputTokens: 500, cachedInputTokens: 200, estimated: false, latencyMs: 250, ttftMs: 250,
      pricingVersion: 'gatehouse-2026-11-29.2', logLevel: 'full',
    })
    expect(draft.costUsd).toBeCloseTo((800 * 0.15 + 200 * 0.075 + 500 * 0.6) / 1e6, 12)
    expect(draft.requestBody).toBe(ex.body)
    expect(ex.facts.annotations.costUsd).toBe(draft.costUsd)
  })

  it.each(['HIT', 'SEMANTIC HIT'] as const)('prices a cache %s at zero, with the usage of the stored answer on the record', async (status) => {
    const { drafts, sink } = collector()
    const ex = exchange({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] })
    // A hit under a config answers before dispatch: no provider is set on the facts.
    await composePipeline(chat, [accountStage({ sink, now })], async (e): Promise<Answer> => {
      e.facts.cacheStatus = status
      // What the cache stage read off the stored entry: the answer's cost when first served.
      e.facts.cacheSavedCostUsd = 0.00045
      return { kind: 'json', status: 200, body: { model: 'gpt-4o-mini', choices: [] }, usage: { inputTokens: 1000, outputTokens: 500 } }
    }).run(ex)
    expect(drafts[0]).toMatchObject({ cacheStatus: status, costUsd: 0, cacheSavedCostUsd: 0.00045, inputTokens: 1000, outputTokens: 500 })
    expect(ex.facts.annotations.costUsd).toBe(0)
  })

  it('counts tokens itself when the provider gave none, and says so', async () => {
    const { drafts, sink } = collector()
    const ex = exchange({ model: 'gpt-4o', messages: [{ role: 'user', content: 'Say hello to the whole world, please.' }] })
    await composePipeline(chat, [accountStage({ sink, now })], async (e) => {
      e.facts.provider = e.context.runtime.providers.byId('prov-a')!
      return { kind: 'json', status: 200, body: { model: 'gpt-4o', choices: [{ message: { role: 'assistant', content: 'Hello, whole world!' } }] }, usage: null }
    }).run(ex)
    expect(drafts[0]).toMatchObject({ estimated: true, inputTokens: 9, outputTokens: 5 })
    expect(ex.facts).toMatchObject({ usageEstimated: true, usage: { inputTokens: 9, outputTokens: 5 } })
    expect(drafts[0]!.costUsd).toBeCloseTo((9 * 2.5 + 5 * 10) / 1e6, 12)
  })

  it('prices with the snapshot override for the workspace and names its version', async () => {
    const rt = runtime((s) => {
      s.prices = [{ provider: 'prov-a', model: 'gpt-4o-mini', workspaceId: 'ws-1', input: 1e-3, output: 2e-3, version: 'ws-price-7' }]
    })
    const { drafts, sink } = collector()
    await composePipeline(chat, [accountStage({ sink, now })], async (e) => {
      e.facts.provider = e.context.runtime.providers.byId('prov-a')!
      return { kind: 'json', status: 200, body: { model: 'gpt-4o-mini' }, usage: { inputTokens: 10, outputTokens: 5 } }
    }).run(exchange({ model: 'gpt-4o-mini' }, { runtime: rt }))
    expect(drafts[0]!.pricingVersion).toBe('ws-price-7')
    expect(drafts[0]!.costUsd).toBeCloseTo(10 * 1e-3 + 5 * 2e-3, 12)
  })

  it('keeps neither metadata nor bodies when the workspace logs counts only', async () => {
    const rt = runtime((s) => {
      s.workspaces[0]!.logLevel = 'off'
    })
    const { drafts, sink } = collector()
    await composePipeline(chat, [accountStage({ sink, now })], async (): Promise<Answer> => ({ kind: 'json', status: 200, body: {}, usage: { inputTokens: 1, outputTokens: 1 } })).run(
      exchange({ model: 'x' }, { runtime: rt, metadata: { team: 'a' } }),
    )
    expect(drafts[0]).toMatchObject({ logLevel: 'off', metadata: null, requestBody: null, responseBody: null, inputTokens: 1 })
  })
})

describe('account stage, errors', () => {
  it('records the status and code of a thrown error and rethrows it', async () => {
    const { drafts, sink } = collector()
    const pipeline = composePipeline(chat, [accountStage({ sink, now })], async (e): Promise<Answer> => {
      e.facts.provider = e.context.runtime.providers.byId('prov-b')!
      e.facts.attempts = 3
      throw new GatewayError('provider_overloaded', 'busy')
    })
    await expect(pipeline.run(exchange({ model: 'claude-3-5-haiku' }))).rejects.toThrow('busy')
    expect(drafts[0]).toMatchObject({ statusCode: 503, errorCode: 'provider_overloaded', attempts: 3, providerSlug: 'claude', inputTokens: 0, costUsd: 0 })
  })
})

function streamOf(batches: unknown[][], usage: { inputTokens: number; outputTokens: number } | null): StreamAnswer {
  let done = false
  return {
    kind: 'stream',
    status: 200,
    batches: (async function* () {
      for (const batch of batches) yield batch
      done = true
    })(),
    result: () => (done && usage ? { usage, finishReason: { unified: 'stop' } } : null),
  }
}

const chunk = (content: string) => ({ object: 'chat.completion.chunk', model: 'gpt-4o', choices: [{ index: 0, delta: { content }, finish_reason: null }] })

async function drain(answer: Answer, stopAfter = Infinity): Promise<number> {
  if (answer.kind !== 'stream') throw new Error('not a stream')
  let seen = 0
  for await (const batch of answer.batches) {
    seen += batch.length
    if (seen >= stopAfter) break
  }
  return seen
}

describe('account stage, streams', () => {
  it('records once the stream ended, with the usage the provider reported at the end', async () => {
    const { drafts, sink } = collector()
    const answer = await composePipeline(chat, [accountStage({ sink, now })], async (e) => {
      e.facts.provider = e.context.runtime.providers.byId('prov-a')!
      return streamOf([[chunk('Hel')], [chunk('lo')]], { inputTokens: 12, outputTokens: 2 })
    }).run(exchange({ model: 'gpt-4o', stream: true }))
    expect(drafts).toHaveLength(0)
    clock = 1_400
    await drain(answer)
    expect(drafts).toHaveLength(1)
    expect(drafts[0]).toMatchObject({ streamed: true, aborted: false, inputTokens: 12, outputTokens: 2, estimated: false, finishReason: 'stop', latencyMs: 400, ttftMs: 400 })
  })

  it('estimates a stream without usage (no include_usage) from the chunks it relayed', async () => {
    const { drafts, sink } = collector()
    const answer = await composePipeline(chat, [accountStage({ sink, now })], async (e) => {
      e.facts.provider = e.context.runtime.providers.byId('prov-a')!
      // Relayed unparsed, as OpenAI-shaped streams are when no stage reads chunks.
      return streamOf([[new RawJson(JSON.stringify(chunk('Hello'))), new RawJson(JSON.stringify(chunk(' there')))], [chunk(' friend')]], null)
    }).run(exchange({ model: 'gpt-4o', stream: true, messages: [{ role: 'user', content: 'hi' }] }))
    await drain(answer)
    expect(drafts[0]).toMatchObject({ estimated: true, inputTokens: 1, outputTokens: 3, aborted: false })
  })

  it('records what was sent when the client leaves mid-stream', async () => {
    const { drafts, sink } = collector()
    const answer = await composePipeline(chat, [accountStage({ sink, now })], async (e) => {
      e.facts.provider = e.context.runtime.providers.byId('prov-a')!
      return streamOf([[chunk('one')], [chunk(' two')], [chunk(' three')], [chunk(' four')]], { inputTokens: 5, outputTokens: 4 })
    }).run(exchange({ model: 'gpt-4o', stream: true, messages: [{ role: 'user', content: 'count' }] }))
    expect(await drain(answer, 2)).toBe(2)
    expect(drafts).toHaveLength(1)
    expect(drafts[0]).toMatchObject({ aborted: true, errorCode: 'request_cancelled', estimated: true, outputTokens: 2, statusCode: 200 })
  })
})
