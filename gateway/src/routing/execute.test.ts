import { describe, expect, it } from 'vitest'
import { GatewayError } from '../core/errors.ts'
import { errorFromProvider } from '../upstream/provider-errors.ts'
import { errorInfo } from '../providers/shared/errors.ts'
import type { ConditionInput } from './conditions.ts'
import { validateConfig, type ConfigNode } from '../snapshot/config-schema.ts'
import { PlanExecutor, pickWeighted } from './execute.ts'
import { mapTargets, planConfig, type PlanLeaf, type PlanNode } from './plan.ts'
import { TargetHealthRegistry } from './target-health.ts'
import { ManualClock, seededRandom } from './testing.ts'

interface FakeTarget {
  readonly healthKey: string
  readonly name: string
}

/** What a fake provider does on each call: answer, or fail with a status (and retry-after). */
type Step = 'ok' | { status: number; retryAfterMs?: number } | 'transport'

function providerError(status: number, retryAfterMs?: number): Error {
  const headers: Record<string, string> = retryAfterMs === undefined ? {} : { 'retry-after-ms': String(retryAfterMs) }
  return errorFromProvider(errorInfo(status, headers, { message: `HTTP ${status}` }), 'fake')
}

class FakeUpstreams {
  readonly calls: Array<{ name: string; at: number }> = []
  readonly #scripts = new Map<string, Step[]>()
  readonly #clock: ManualClock

  constructor(clock: ManualClock) {
    this.#clock = clock
  }

  script(name: string, ...steps: Step[]): void {
    this.#scripts.set(name, steps)
  }

  readonly attempt = async (leaf: PlanLeaf<FakeTarget>): Promise<string> => {
    const name = leaf.target.name
    this.calls.push({ name, at: this.#clock.now() })
    const step = this.#scripts.get(name)?.shift() ?? 'ok'
    if (step === 'ok') return `answer from ${name}`
    if (step === 'transport') throw new GatewayError('upstream_unavailable', 'could not connect')
    throw providerError(step.status, step.retryAfterMs)
  }

  names(): string[] {
    return this.calls.map((call) => call.name)
  }
}

function plan(config: ConfigNode): PlanNode<FakeTarget> {
  const validation = validateConfig(config)
  if (!validation.ok) throw new Error(JSON.stringify(validation.issues))
  return mapTargets(planConfig(validation.config), (leaf) => ({ healthKey: leaf.target.name, name: leaf.target.name }))
}

interface Harness {
  clock: ManualClock
  upstreams: FakeUpstreams
  health: TargetHealthRegistry
  run(config: PlanNode<FakeTarget>, options?: { conditions?: ConditionInput; signal?: AbortSignal; random?: () => number }): Promise<{ answer: string; path: string | null; retries: number; attempts: number }>
}

function harness(): Harness {
  const clock = new ManualClock()
  const upstreams = new FakeUpstreams(clock)
  const health = new TargetHealthRegistry(() => clock.now())
  return {
    clock,
    upstreams,
    health,
    async run(root, options = {}) {
      const executor = new PlanExecutor<FakeTarget, string>(upstreams.attempt, {
        health,
        clock,
        random: options.random ?? seededRandom(1),
        signal: options.signal ?? new AbortController().signal,
        conditions: options.conditions ?? { metadata: {}, params: {} },
      })
      const answer = await executor.run(root)
      return { answer, path: executor.trace.leaf?.path ?? null, retries: executor.trace.retries, attempts: executor.trace.attempts }
    },
  }
}

describe('fallback', () => {
  const config = plan({ strategy: { mode: 'fallback' }, targets: [{ provider: '@primary' }, { provider: '@secondary' }] })

  it.each<[string, Step]>([
    ['503', { status: 503 }],
    ['429', { status: 429 }],
    ['a timeout', { status: 408 }],
    ['a transport error', 'transport'],
  ])('moves on from %s to the next target', async (_name, failure) => {
    const h = harness()
    h.upstreams.script('primary', failure)
    const result = await h.run(config)
    expect(result).toMatchObject({ answer: 'answer from secondary', path: 'config.targets[1]', retries: 0, attempts: 2 })
  })

  it('with on_status_codes, moves on only for those', async () => {
    const h = harness()
    const only429 = plan({ strategy: { mode: 'fallback', on_status_codes: [429] }, targets: [{ provider: '@primary' }, { provider: '@secondary' }] })
    h.upstreams.script('primary', { status: 500 })
    await expect(h.run(only429)).rejects.toMatchObject({ status: 502 })
    expect(h.upstreams.names()).toEqual(['primary'])
  })

  it('retries a target before falling back, and reports the retries at the answering target', async () => {
    const h = harness()
    const withRetry = plan({
      strategy: { mode: 'fallback' },
      targets: [
        { provider: '@primary', retry: { attempts: 2, backoff_initial_ms: 100 } },
        { provider: '@secondary', retry: { attempts: 1, backoff_initial_ms: 100 } },
      ],
    })
    h.upstreams.script('primary', { status: 503 }, { status: 503 }, { status: 503 })
    h.upstreams.script('secondary', { status: 502 })
    const result = await h.run(withRetry, { random: () => 0 })
    expect(h.upstreams.calls).toEqual([
      { name: 'primary', at: 0 },
      { name: 'primary', at: 50 },
      { name: 'primary', at: 150 },
      { name: 'secondary', at: 150 },
      { name: 'secondary', at: 200 },
    ])
    expect(result).toMatchObject({ path: 'config.targets[1]', retries: 1, attempts: 5 })
  })

  it('fails with the last error when every target fails', async () => {
    const h = harness()
    h.upstreams.script('primary', { status: 503 })
    h.upstreams.script('secondary', { status: 429 })
    await expect(h.run(config)).rejects.toMatchObject({ code: 'provider_rate_limited' })
  })
})

describe('loadbalance', () => {
  it('draws within 2 percentage points of the weights over 10,000 requests', async () => {
    const h = harness()
    const weighted = plan({
      strategy: { mode: 'loadbalance' },
      targets: [
        { provider: '@a', weight: 0.5 },
        { provider: '@b', weight: 0.3 },
        { provider: '@c', weight: 0.2 },
        { provider: '@never', weight: 0 },
      ],
    })
    const random = seededRandom(42)
    for (let index = 0; index < 10_000; index++) await h.run(weighted, { random })
    const counts = new Map<string, number>()
    for (const name of h.upstreams.names()) counts.set(name, (counts.get(name) ?? 0) + 1)
    expect(Math.abs((counts.get('a') ?? 0) / 10_000 - 0.5)).toBeLessThan(0.02)
    expect(Math.abs((counts.get('b') ?? 0) / 10_000 - 0.3)).toBeLessThan(0.02)
    expect(Math.abs((counts.get('c') ?? 0) / 10_000 - 0.2)).toBeLessThan(0.02)
    expect(counts.get('never')).toBeUndefined()
  })

  it('pickWeighted covers the whole range, edges included', () => {
    const nodes = [{ weight: 1 }, { weight: 0 }, { weight: 3 }]
    expect(pickWeighted(nodes, () => 0)).toBe(nodes[0])
    expect(pickWeighted(nodes, () => 0.2499)).toBe(nodes[0])
    expect(pickWeighted(nodes, () => 0.25)).toBe(nodes[2])
    expect(pickWeighted(nodes, () => 0.9999999999)).toBe(nodes[2])
    expect(pickWeighted([{ weight: 0 }], () => 0.5)).toBeNull()
  })
})

describe('conditional', () => {
  const config = plan({
    strategy: {
      mode: 'conditional',
      conditions: [
        { query: { 'metadata.team': { $eq: 'search' } }, then: 'fast' },
        { query: { $and: [{ model: { $regex: '^o' } }, { 'params.max_completion_tokens': { $gt: 1000 } }] }, then: 'reasoning' },
      ],
      default: 'cheap',
    },
    targets: [
      { name: 'fast', provider: '@fast' },
      { name: 'reasoning', provider: '@reasoning' },
      { name: 'cheap', provider: '@cheap' },
    ],
  })

  it.each<[string, ConditionInput, string]>([
    ['metadata', { metadata: { team: 'search' }, params: { model: 'gpt-4o' } }, 'fast'],
    ['model and params', { metadata: { team: 'ads' }, params: { model: 'o3', max_completion_tokens: 4000 } }, 'reasoning'],
    ['the default', { metadata: {}, params: { model: 'o3', max_completion_tokens: 10 } }, 'cheap'],
  ])('picks by %s', async (_name, conditions, expected) => {
    const h = harness()
    const result = await h.run(config, { conditions })
    expect(result.answer).toBe(`answer from ${expected}`)
  })

  it('with no match and no default, refuses with a 400', async () => {
    const h = harness()
    const noDefault = plan({ strategy: { mode: 'conditional', conditions: [{ query: { model: 'x' }, then: 'a' }] }, targets: [{ name: 'a', provider: '@a' }] })
    await expect(h.run(noDefault)).rejects.toMatchObject({ code: 'no_route_matched', status: 400 })
    expect(h.upstreams.calls).toHaveLength(0)
  })
})

describe('circuit breaker in strategies', () => {
  const config = plan({
    strategy: { mode: 'fallback' },
    circuit_breaker: { failure_threshold: 3, cooldown_ms: 10_000 },
    targets: [{ provider: '@primary' }, { provider: '@secondary' }],
  })

  it('opens after consecutive failures, is skipped while open, and recovers through a probe', async () => {
    const h = harness()
    h.upstreams.script('primary', { status: 503 }, { status: 503 }, { status: 503 })
    for (let index = 0; index < 3; index++) await h.run(config)
    expect(h.health.get('primary').breaker.state(h.clock.now())).toBe('open')

    h.upstreams.calls.length = 0
    const skipped = await h.run(config)
    expect(skipped.path).toBe('config.targets[1]')
    expect(h.upstreams.names()).toEqual(['secondary'])

    h.clock.advance(10_000)
    h.upstreams.calls.length = 0
    const probed = await h.run(config)
    expect(probed.path).toBe('config.targets[0]')
    expect(h.health.get('primary').breaker.state(h.clock.now())).toBe('closed')
  })

  it('a failed probe keeps traffic on the fallback for a longer cool-down', async () => {
    const h = harness()
    h.upstreams.script('primary', { status: 503 }, { status: 503 }, { status: 503 }, { status: 503 })
    for (let index = 0; index < 3; index++) await h.run(config)
    h.clock.advance(10_000)
    await h.run(config)
    expect(h.upstreams.names().slice(-2)).toEqual(['primary', 'secondary'])
    h.clock.advance(10_000)
    expect((await h.run(config)).path).toBe('config.targets[1]')
    h.clock.advance(10_000)
    expect((await h.run(config)).path).toBe('config.targets[0]')
  })

  it('stops retrying a target once its circuit opens, and falls back', async () => {
    const h = harness()
    const retrying = plan({
      strategy: { mode: 'fallback' },
      circuit_breaker: { failure_threshold: 2, cooldown_ms: 10_000 },
      targets: [{ provider: '@primary', retry: { attempts: 5 } }, { provider: '@secondary' }],
    })
    h.upstreams.script('primary', { status: 503 }, { status: 503 }, { status: 503 }, { status: 503 })
    const result = await h.run(retrying)
    expect(h.upstreams.names()).toEqual(['primary', 'primary', 'secondary'])
    expect(result.path).toBe('config.targets[1]')
  })

  it('beyond the retry budget, a failing request falls back at once instead of retrying', async () => {
    const h = harness()
    h.clock.hold = true
    const config = plan({
      strategy: { mode: 'fallback' },
      circuit_breaker: { failure_threshold: 1000, failure_rate_threshold: 1, minimum_requests: 20 },
      targets: [{ provider: '@primary', retry: { attempts: 1 } }, { provider: '@secondary' }],
    })
    h.upstreams.script('primary', ...Array.from({ length: 10 }, () => ({ status: 503 })))
    // Ten concurrent requests fail at the primary: the budget lets max(3, 20% of 10) of them retry.
    const runs = Array.from({ length: 10 }, () => h.run(config))
    for (let turn = 0; turn < 200 && h.upstreams.names().filter((name) => name === 'secondary').length < 7; turn++) await Promise.resolve()
    expect(h.clock.pendingSleeps).toBe(3)
    expect(h.upstreams.names().filter((name) => name === 'secondary')).toHaveLength(7)
    h.clock.releaseAll()
    await Promise.all(runs)
    expect(h.upstreams.names().filter((name) => name === 'primary')).toHaveLength(13)
    expect(h.health.get('primary').retryBudget).toMatchObject({ active: 0, retrying: 0 })
  })

  it('client errors do not count against a target', async () => {
    const h = harness()
    h.upstreams.script('primary', { status: 400 }, { status: 400 }, { status: 400 })
    for (let index = 0; index < 3; index++) await h.run(config)
    expect(h.health.get('primary').breaker.state(h.clock.now())).toBe('closed')
  })

  it('loadbalance skips an open target, and uses all when all are open', async () => {
    const h = harness()
    const balanced = plan({ strategy: { mode: 'loadbalance' }, circuit_breaker: { failure_threshold: 1, cooldown_ms: 10_000 }, targets: [{ provider: '@a' }, { provider: '@b' }] })
    h.upstreams.script('a', { status: 503 })
    await h.run(balanced, { random: () => 0 }).catch(() => undefined)
    h.upstreams.calls.length = 0
    for (let index = 0; index < 20; index++) await h.run(balanced, { random: seededRandom(index) })
    expect(new Set(h.upstreams.names())).toEqual(new Set(['b']))

    h.upstreams.script('b', { status: 503 })
    await h.run(balanced, { random: () => 0.99 }).catch(() => undefined)
    h.upstreams.calls.length = 0
    await h.run(balanced, { random: () => 0 })
    expect(h.upstreams.names()).toEqual(['a'])
  })
})

describe('client abort', () => {
  it('during a retry wait: no further attempt anywhere', async () => {
    const h = harness()
    h.clock.hold = true
    const controller = new AbortController()
    const config = plan({ strategy: { mode: 'fallback' }, targets: [{ provider: '@primary', retry: { attempts: 3 } }, { provider: '@secondary' }] })
    h.upstreams.script('primary', { status: 503 })
    const running = h.run(config, { signal: controller.signal })
    for (let turn = 0; turn < 50 && h.clock.pendingSleeps === 0; turn++) await Promise.resolve()
    expect(h.clock.pendingSleeps).toBe(1)
    controller.abort()
    await expect(running).rejects.toMatchObject({ code: 'request_cancelled' })
    expect(h.upstreams.names()).toEqual(['primary'])
  })

  it('during an attempt: no fallback, and the circuit is not blamed', async () => {
    const h = harness()
    const controller = new AbortController()
    const config = plan({ strategy: { mode: 'fallback' }, circuit_breaker: { failure_threshold: 1 }, targets: [{ provider: '@primary' }, { provider: '@secondary' }] })
    const executor = new PlanExecutor<FakeTarget, string>(
      async (leaf) => {
        h.upstreams.calls.push({ name: leaf.target.name, at: 0 })
        controller.abort()
        throw new GatewayError('request_timeout', 'The request was cancelled before the provider answered')
      },
      { health: h.health, clock: h.clock, random: Math.random, signal: controller.signal, conditions: { metadata: {}, params: {} } },
    )
    await expect(executor.run(config)).rejects.toMatchObject({ code: 'request_cancelled' })
    expect(h.upstreams.names()).toEqual(['primary'])
    expect(h.health.get('primary').breaker.state(0)).toBe('closed')
  })
})
