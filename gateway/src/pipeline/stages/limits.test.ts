/**
 * The limits stage composed around a fake terminal (the provider's answer): refusals and their
 * headers, policies with conditions and group_by, budgets that settle and stay exhausted, shadow
 * mode, streams cut mid-way, periodic resets, and the counter store going away.
 */
import type { Dispatcher } from 'undici'
import { describe, expect, it } from 'vitest'
import { GatewayError } from '../../core/errors.ts'
import { LimiterUnavailableError, type Limiter } from '../../limits/limiter.ts'
import { MemoryLimiter } from '../../limits/memory-limiter.ts'
import type { Usage } from '../../providers/canonical.ts'
import { compileRuntime, type RuntimeConfig } from '../../runtime/compile.ts'
import type { SnapshotLimit } from '../../snapshot/policies.ts'
import { gatewaySnapshot, SNAPSHOT_SCHEMA_VERSION } from '../../snapshot/schema.ts'
import { ExchangeContext } from '../context.ts'
import { composePipeline, newFacts, type Answer, type Exchange, type Operation, type Terminal } from '../stage.ts'
import { limitsStage, type CostEstimator } from './limits.ts'

const CHAT: Operation = { name: 'chat', endpointType: 'chatComplete', format: 'openai', textual: true, cacheable: false }
const EMBED: Operation = { name: 'embeddings', endpointType: 'embed', format: 'openai', textual: false, cacheable: true }
const KEY_HASH = 'a'.repeat(64)

function runtime(limits: Array<Partial<SnapshotLimit> & Pick<SnapshotLimit, 'id' | 'kind' | 'type'>>): RuntimeConfig {
  const snapshot = gatewaySnapshot.parse({
    schemaVersion: SNAPSHOT_SCHEMA_VERSION, generation: 1, producedAt: new Date().toISOString(), producedBy: { component: 'test', version: '0' },
    organizationId: 'org-1',
    workspaces: [{ id: 'ws-1', slug: 'team', name: 'Team', status: 'active' }],
    apiKeys: [{ id: 'key-1', hash: KEY_HASH, type: 'workspace', subtype: 'service', workspaceId: 'ws-1', userId: 'user-1', scopes: [], status: 'active' }],
    providers: [{ id: 'prov-1', slug: 'oa', name: 'oa', kind: 'openai', baseUrl: 'http://127.0.0.1:9', credentials: { apiKey: 'x' }, options: {}, models: [], workspaceId: 'ws-1' }],
    limits: limits.map((limit) => ({ source: 'policy', ownerId: limit.id, name: limit.id, ...limit })),
  })
  const compiled = compileRuntime(snapshot, 'hash', () => ({ close: async () => undefined }) as unknown as Dispatcher)
  if (!compiled.ok) throw new Error(JSON.stringify(compiled.problems))
  return compiled.runtime
}

function exchange(rt: RuntimeConfig, body: Record<string, unknown> | null = { model: '@oa/gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] }, metadata: Record<string, unknown> = {}, operation = CHAT): Exchange {
  const context = new ExchangeContext({ traceId: 't', spanId: null, parentSpanId: null, spanName: null }, rt, new AbortController().signal, 0)
  const key = rt.keysByHash.get(KEY_HASH)!
  context.authenticated({ kind: 'api_key', id: 'key-1', workspaceId: 'ws-1', userId: 'user-1', scopes: [], defaultConfig: null, key, attributes: {} }, metadata)
  const facts = newFacts()
  // What the resolve-route stage leaves for the limits stage: the model asked for and its provider.
  facts.requestedModel = typeof body?.model === 'string' ? body.model : null
  facts.provider = rt.providers.slugged('ws-1', 'oa') ?? null
  return { operation, context, headers: {}, url: '/v1/chat/completions', params: {}, rawBody: body, body, upload: null, relayStreams: false, route: null, facts, responseHeaders: {} }
}

const usage = (inputTokens: number, outputTokens: number): Usage => ({ inputTokens, outputTokens })
const jsonTerminal = (used: Usage): Terminal => async () => ({ kind: 'json', status: 200, body: { ok: true }, usage: used })

function streamTerminal(chunks: number, charsPerChunk: number, final: Usage | null): Terminal {
  return async () => {
    let done = false
    async function* batches() {
      for (let i = 0; i < chunks; i++) yield [{ choices: [{ index: 0, delta: { content: 'x'.repeat(charsPerChunk) } }] }]
      done = true
    }
    return { kind: 'stream', status: 200, batches: batches(), result: () => (done && final ? { usage: final, finishReason: { unified: 'stop', raw: 'stop' } } : null) } as Answer
  }
}

async function drain(answer: Answer): Promise<number> {
  if (answer.kind !== 'stream') throw new Error('not a stream')
  let batches = 0
  for await (const batch of answer.batches) batches += batch.length > 0 ? 1 : 0
  return batches
}

async function refusal(run: Promise<unknown>): Promise<GatewayError> {
  const error = await run.then(() => null, (e: unknown) => e)
  expect(error).toBeInstanceOf(GatewayError)
  return error as GatewayError
}

function clock(start = Date.UTC(2026, 10, 23, 12)) {
  const state = { nowMs: start }
  return { now: () => state.nowMs, advance: (ms: number) => { state.nowMs += ms } }
}

describe('limits stage', () => {
  it('admits N requests per window with x-ratelimit headers, then 429 naming the policy, with retry-after', async () => {
    const time = clock()
    const rt = runtime([{ id: 'rpm3', kind: 'rate', type: 'requests', unit: 'rpm', value: 3, conditions: [{ key: 'api_key', values: ['key-1'] }] }])
    const pipeline = composePipeline(CHAT, [limitsStage({ limiter: new MemoryLimiter(time.now), now: time.now })], jsonTerminal(usage(1, 1))).run
    const seen: Array<Record<string, string>> = []
    for (let i = 0; i < 3; i++) {
      const ex = exchange(rt)
      await pipeline(ex)
      seen.push(ex.responseHeaders)
    }
    expect(seen.map((h) => h['x-ratelimit-remaining-requests'])).toEqual(['2', '1', '0'])
    expect(seen[0]).toMatchObject({ 'x-ratelimit-limit-requests': '3', 'x-ratelimit-reset-requests': '60s' })
    time.advance(20_000)
    const error = await refusal(pipeline(exchange(rt)))
    expect(error).toMatchObject({ status: 429, code: 'rate_limited' })
    expect(error.message).toContain("policy 'rpm3'")
    expect(error.message).toContain('3 requests per minute')
    expect(error.headers).toMatchObject({ 'retry-after': '40', 'x-ratelimit-remaining-requests': '0' })
    time.advance(40_001)
    await expect(pipeline(exchange(rt))).resolves.toMatchObject({ status: 200 })
  })

  it('applies a policy only where its conditions match, counting each group_by value apart', async () => {
    const time = clock()
    const rt = runtime([{
      id: 'per-user', kind: 'rate', type: 'requests', unit: 'rph', value: 1, workspaceId: 'ws-1',
      conditions: [{ key: 'endpoint_type', values: ['chatComplete'] }, { key: 'metadata.team', values: ['red', 'blue'] }], groupBy: ['metadata.user'],
    }])
    const factories = [limitsStage({ limiter: new MemoryLimiter(time.now), now: time.now })]
    const chat = composePipeline(CHAT, factories, jsonTerminal(usage(1, 1))).run
    const embed = composePipeline(EMBED, factories, jsonTerminal(usage(1, 0))).run
    await chat(exchange(rt, undefined, { team: 'red', user: 'ann' }))
    await chat(exchange(rt, undefined, { team: 'red', user: 'bob' }))
    expect((await refusal(chat(exchange(rt, undefined, { team: 'blue', user: 'ann' })))).status).toBe(429)
    // Other teams, other endpoint types: not this policy's requests.
    await chat(exchange(rt, undefined, { team: 'green', user: 'ann' }))
    await embed(exchange(rt, { model: '@oa/e', input: 'x' }, { team: 'red', user: 'ann' }, EMBED))
  })

  it('reserves a token budget, settles to actual usage, stays exhausted, and admits again when the limit is raised', async () => {
    const time = clock()
    const limiter = new MemoryLimiter(time.now)
    const limit = { id: 'key-budget', source: 'api_key' as const, kind: 'usage' as const, type: 'tokens' as const, creditLimit: 1_000, conditions: [{ key: 'api_key', values: ['key-1'] }] }
    const factories = [limitsStage({ limiter, now: time.now })]
    const body = { model: '@oa/m', max_tokens: 300, messages: [] }
    const pipeline = composePipeline(CHAT, factories, jsonTerminal(usage(100, 300))).run
    const rt = runtime([limit])
    for (let i = 0; i < 2; i++) await pipeline(exchange(rt, body))
    // 800 spent; the next worst case (body bytes + 300) does not fit in the 200 left.
    const error = await refusal(pipeline(exchange(rt, body)))
    expect(error).toMatchObject({ status: 412, code: 'budget_exhausted' })
    expect(error.message).toContain("api key 'key-budget' limit allows 1000 tokens")
    // A request whose worst case (47 bytes + 160) just exceeds what is left is refused too.
    await refusal(pipeline(exchange(rt, { ...body, max_tokens: 160 })))
    const raised = runtime([{ ...limit, creditLimit: 1_300 }])
    await expect(pipeline(exchange(raised, body))).resolves.toMatchObject({ status: 200 })
    await refusal(pipeline(exchange(raised, body)))
    await expect(pipeline(exchange(raised, { ...body, max_tokens: 10 }))).resolves.toMatchObject({ status: 200 })
  })

  it('starts a fresh budget when a weekly period resets', async () => {
    const time = clock(Date.UTC(2026, 10, 22, 23, 0)) // a Sunday, an hour before the week turns
    const rt = runtime([{ id: 'weekly', kind: 'usage', type: 'tokens', creditLimit: 500, periodicReset: 'weekly', conditions: [{ key: 'workspace_id', values: ['team'] }] }])
    const pipeline = composePipeline(CHAT, [limitsStage({ limiter: new MemoryLimiter(time.now), now: time.now })], jsonTerminal(usage(50, 400))).run
    const body = { model: '@oa/m', max_tokens: 400, messages: [] }
    await pipeline(exchange(rt, body))
    const error = await refusal(pipeline(exchange(rt, body)))
    expect(error.message).toContain('period resets at 2026-11-23T00:00:00.000Z')
    time.advance(3_600_000)
    await expect(pipeline(exchange(rt, body))).resolves.toMatchObject({ status: 200 })
  })

  it('reserves priced worst cases for a cost budget: of 100 concurrent streams that fit 37, 37 run and spend stays within', async () => {
    const limiter = new MemoryLimiter()
    // 1 µUSD per token; each request reserves (body bytes + 100) µUSD and streams exactly that.
    const costs: CostEstimator = { costOf: (_target, used) => (used.inputTokens + used.outputTokens) * 1e-6 }
    const body = { model: '@oa/m', max_tokens: 100, stream: true, messages: [{ role: 'user', content: 'go' }] }
    const worst = Buffer.byteLength(JSON.stringify(body)) + 100
    const rt = runtime([{ id: 'usd', kind: 'usage', type: 'cost', creditLimit: (worst * 37 + 5) * 1e-6, conditions: [{ key: 'workspace_id', values: ['ws-1'] }] }])
    const pipeline = composePipeline(CHAT, [limitsStage({ limiter, costs })], streamTerminal(4, 100, usage(worst - 100, 100))).run
    const outcomes: string[] = await Promise.all(Array.from({ length: 100 }, async () => {
      try {
        return await drain(await pipeline(exchange(rt, body))) > 0 ? 'served' : 'empty'
      } catch (error) {
        return (error as GatewayError).code
      }
    }))
    expect(outcomes.filter((o) => o === 'served')).toHaveLength(37)
    expect(outcomes.filter((o) => o === 'budget_exhausted')).toHaveLength(63)
    const key = `gh:{org-1}:b:usd:s0:-`
    await new Promise((resolve) => setTimeout(resolve, 10))
    expect(await limiter.usage([key])).toEqual([worst * 37 * 1000])
  })

  describe('relayed answers (audio, images)', () => {
    // A route that declares its worst case: images at $0.04 each, from the body's `n`; an upload says nothing.
    const IMAGES: Operation = {
      name: 'passthrough:images', endpointType: 'imageGenerate', format: 'openai', textual: false, cacheable: false,
      worstCase: (body) => (body === null ? null : { inputTokens: 0, outputTokens: 0, images: Number(body.n ?? 1) }),
    }
    const perImage: CostEstimator = { costOf: (_target, used) => (used.images ?? 0) * 0.04 }
    const key = 'gh:{org-1}:b:img:s0:-'
    const budget = (creditLimit: number) => runtime([{ id: 'img', kind: 'usage', type: 'cost', creditLimit, conditions: [{ key: 'workspace_id', values: ['ws-1'] }] }])

    /** Relays a body whose metering leaves `images` on the facts when it ends, as relay-metering.ts does; `gate` holds its end. */
    function relayTerminal(images: number, gate: Promise<void> = Promise.resolve()): Terminal {
      return async (ex) => {
        async function* body(): AsyncGenerator<Uint8Array> {
          try {
            yield Buffer.from('{"data":[')
            await gate
            yield Buffer.from(']}')
          } finally {
            ex.facts.usage = { inputTokens: 0, outputTokens: 0, images }
          }
        }
        return { kind: 'relay', status: 200, headers: {}, body: body(), eventStream: false }
      }
    }
    async function read(answer: Answer): Promise<void> {
      if (answer.kind !== 'relay') throw new Error('not a relay')
      for await (const chunk of answer.body) void chunk
    }

    it('reserves the worst case the route declares, and charges what the body cost once it ended, not when its headers went out', async () => {
      const limiter = new MemoryLimiter()
      const gate = Promise.withResolvers<void>()
      const pipeline = composePipeline(IMAGES, [limitsStage({ limiter, costs: perImage })], relayTerminal(2, gate.promise)).run
      const answer = await pipeline(exchange(budget(1), { model: '@oa/dall-e-3', n: 3 }, {}, IMAGES))
      // While the body runs, the worst case (3 images) is held.
      expect(await limiter.usage([key])).toEqual([120_000_000])
      gate.resolve()
      await read(answer)
      await new Promise((resolve) => setTimeout(resolve, 10))
      expect(await limiter.usage([key])).toEqual([80_000_000])
    })

    it('a client that leaves mid-body is charged what its metering saw', async () => {
      const limiter = new MemoryLimiter()
      const pipeline = composePipeline(IMAGES, [limitsStage({ limiter, costs: perImage })], relayTerminal(1, new Promise(() => undefined))).run
      const answer = await pipeline(exchange(budget(1), { model: '@oa/dall-e-3' }, {}, IMAGES))
      if (answer.kind !== 'relay') throw new Error('not a relay')
      const reader = answer.body[Symbol.asyncIterator]()
      await reader.next()
      await reader.return?.()
      await new Promise((resolve) => setTimeout(resolve, 10))
      expect(await limiter.usage([key])).toEqual([40_000_000])
    })

    it('refuses once the budget is spent, an upload of unknown cost too', async () => {
      const limiter = new MemoryLimiter()
      const factories = [limitsStage({ limiter, costs: perImage })]
      const pipeline = composePipeline(IMAGES, factories, relayTerminal(2)).run
      const rt = budget(0.1)
      await read(await pipeline(exchange(rt, { model: '@oa/dall-e-3', n: 2 }, {}, IMAGES)))
      await new Promise((resolve) => setTimeout(resolve, 10))
      // $0.08 spent: a request for one more image ($0.04) no longer fits.
      expect(await refusal(pipeline(exchange(rt, { model: '@oa/dall-e-3', n: 1 }, {}, IMAGES)))).toMatchObject({ status: 412, code: 'budget_exhausted' })
      // An upload (no body: its worst case is unknown) reserves the least and is charged at the end: it overshoots.
      const upload = composePipeline(IMAGES, factories, relayTerminal(1)).run
      await read(await upload(exchange(rt, null, {}, IMAGES)))
      await new Promise((resolve) => setTimeout(resolve, 10))
      expect(await limiter.usage([key])).toEqual([120_000_000])
      // Spent: every request is refused, even one expected to cost nothing.
      await refusal(upload(exchange(rt, null, {}, IMAGES)))
    })
  })

  it('cuts a stream that outgrows its reservation when the budget has no more', async () => {
    const rt = runtime([{ id: 'tok', kind: 'usage', type: 'tokens', creditLimit: 6_000, conditions: [{ key: 'api_key', values: ['key-1'] }] }])
    const limiter = new MemoryLimiter()
    // No max_tokens: 4096 reserved; 40 chunks of 800 chars is about 8000 tokens.
    const pipeline = composePipeline(CHAT, [limitsStage({ limiter })], streamTerminal(40, 800, null)).run
    const answer = await pipeline(exchange(rt, { model: '@oa/m', stream: true, messages: [] }))
    const error = await drain(answer).then(() => null, (e: unknown) => e)
    expect(error).toMatchObject({ code: 'budget_exhausted' })
    await new Promise((resolve) => setTimeout(resolve, 10))
    const [spent] = await limiter.usage(['gh:{org-1}:b:tok:s0:-'])
    expect(spent).toBeLessThanOrEqual(6_000)
    expect(spent).toBeGreaterThan(4_096)
  })

  it('reports shadow limits without refusing', async () => {
    const rt = runtime([{ id: 'shadow', kind: 'rate', type: 'requests', unit: 'rpm', value: 1, shadow: true, conditions: [{ key: 'api_key', values: ['*'] }] }])
    const pipeline = composePipeline(CHAT, [limitsStage({ limiter: new MemoryLimiter() })], jsonTerminal(usage(1, 1))).run
    const first = exchange(rt)
    await pipeline(first)
    expect(first.responseHeaders['x-gateway-limits-shadow']).toBeUndefined()
    const second = exchange(rt)
    await expect(pipeline(second)).resolves.toMatchObject({ status: 200 })
    expect(second.responseHeaders['x-gateway-limits-shadow']).toBe('shadow')
    expect(second.facts.annotations.limitsShadowExceeded).toEqual(['shadow'])
  })

  it('with the counter store down: fail-open request rates hold per replica, budgets answer 503 with Retry-After', async () => {
    const down: Limiter = {
      reserve: async () => { throw new LimiterUnavailableError('connection refused') },
      settle: async () => { throw new LimiterUnavailableError('connection refused') },
      usage: async () => { throw new LimiterUnavailableError('connection refused') },
      close: async () => undefined,
    }
    const warnings: string[] = []
    const factories = [limitsStage({ limiter: down, log: { warn: (_fields, message) => warnings.push(message) } })]
    const pipeline = composePipeline(CHAT, factories, jsonTerminal(usage(1, 1))).run
    const rates = runtime([{ id: 'rpm2', kind: 'rate', type: 'requests', unit: 'rpm', value: 2, conditions: [{ key: 'api_key', values: ['key-1'] }] }])
    await pipeline(exchange(rates))
    await pipeline(exchange(rates))
    expect((await refusal(pipeline(exchange(rates)))).status).toBe(429)
    expect(warnings.some((w) => w.includes('fail-open'))).toBe(true)
    const budget = runtime([{ id: 'b', kind: 'usage', type: 'tokens', creditLimit: 1e6, conditions: [{ key: 'api_key', values: ['key-1'] }] }])
    const error = await refusal(pipeline(exchange(budget)))
    expect(error).toMatchObject({ status: 503, code: 'dependency_unavailable', headers: { 'retry-after': '1' } })
    const opened = runtime([{ id: 'b2', kind: 'usage', type: 'tokens', creditLimit: 1e6, failureMode: 'open', conditions: [{ key: 'api_key', values: ['key-1'] }] }])
    await expect(pipeline(exchange(opened))).resolves.toMatchObject({ status: 200 })
  })
})
