import { describe, expect, it } from 'vitest'
import { GatewayError } from '../core/errors.ts'
import { backoffDelayMs, noRetries, retryDelayMs, runWithRetries, type FailureInfo, type RetryPolicy } from './retry.ts'
import { ManualClock, seededRandom } from './testing.ts'

const policy = (overrides: Partial<RetryPolicy> = {}): RetryPolicy => ({ ...noRetries, attempts: 3, initialDelayMs: 1000, maxDelayMs: 8000, ...overrides })

class Failure extends Error {
  readonly info: FailureInfo
  constructor(status: number, retryAfterMs: number | null = null) {
    super(`HTTP ${status}`)
    this.info = { status, retryAfterMs }
  }
}
const classify = (error: unknown): FailureInfo | null => (error instanceof Failure ? error.info : null)

/** An operation that fails with the given failures in turn, then answers; records when it ran. */
function scripted(clock: ManualClock, failures: Failure[]): { run: () => Promise<string>; calls: number[] } {
  const calls: number[] = []
  return {
    calls,
    run: async () => {
      calls.push(clock.now())
      const failure = failures.shift()
      if (failure) throw failure
      return 'ok'
    },
  }
}

describe('backoff', () => {
  it('doubles each step up to the cap, with half of each step jittered', () => {
    const p = policy()
    expect([1, 2, 3, 4, 5].map((n) => backoffDelayMs(n, p, () => 0))).toEqual([500, 1000, 2000, 4000, 4000])
    expect([1, 2, 3, 4, 5].map((n) => backoffDelayMs(n, p, () => 0.999999))).toEqual([1000, 2000, 4000, 8000, 8000])
  })

  it('spreads concurrent retries apart', () => {
    const random = seededRandom(7)
    const delays = Array.from({ length: 100 }, () => backoffDelayMs(1, policy(), random))
    // 100 draws over 500 whole milliseconds: a few birthday collisions, no lockstep.
    expect(new Set(delays).size).toBeGreaterThan(80)
    expect(Math.max(...delays) - Math.min(...delays)).toBeGreaterThanOrEqual(0.3 * 1000)
  })

  it('retries only listed statuses, within the attempts', () => {
    const p = policy({ attempts: 1 })
    expect(retryDelayMs({ status: 503, retryAfterMs: null }, 1, p, () => 0)).toBe(500)
    expect(retryDelayMs({ status: 400, retryAfterMs: null }, 1, p, () => 0)).toBeNull()
    expect(retryDelayMs({ status: 503, retryAfterMs: null }, 2, p, () => 0)).toBeNull()
  })

  it('waits what retry-after asks when within the bound, and does not retry beyond it', () => {
    const p = policy({ maxRetryAfterMs: 10_000 })
    expect(retryDelayMs({ status: 429, retryAfterMs: 2500 }, 1, p, () => 0.5)).toBe(2500)
    expect(retryDelayMs({ status: 429, retryAfterMs: 10_001 }, 1, p, () => 0.5)).toBeNull()
    expect(retryDelayMs({ status: 429, retryAfterMs: 2500 }, 1, { ...p, useRetryAfter: false }, () => 0)).toBe(500)
  })
})

describe('runWithRetries timing (manual clock, no real sleeps)', () => {
  it('attempts at 0, then after each exponential backoff step', async () => {
    const clock = new ManualClock()
    const op = scripted(clock, [new Failure(503), new Failure(502), new Failure(500)])
    const retries: Array<[number, number]> = []
    const answer = await runWithRetries(op.run, policy(), { clock, random: () => 0, signal: new AbortController().signal }, classify, (n, delay) => retries.push([n, delay]))
    expect(answer).toBe('ok')
    expect(op.calls).toEqual([0, 500, 1500, 3500])
    expect(retries).toEqual([
      [1, 500],
      [2, 1000],
      [3, 2000],
    ])
  })

  it('honours retry-after-ms and retry-after from the provider', async () => {
    const clock = new ManualClock()
    // 429 with retry-after: 2 (seconds, already converted by the adapter), then retry-after-ms: 750.
    const op = scripted(clock, [new Failure(429, 2000), new Failure(429, 750)])
    await runWithRetries(op.run, policy(), { clock, random: () => 0.5, signal: new AbortController().signal }, classify)
    expect(op.calls).toEqual([0, 2000, 2750])
    expect(clock.sleeps).toEqual([2000, 750])
  })

  it('gives up at once when retry-after exceeds the bound', async () => {
    const clock = new ManualClock()
    const op = scripted(clock, [new Failure(429, 600_000)])
    await expect(runWithRetries(op.run, policy(), { clock, random: () => 0, signal: new AbortController().signal }, classify)).rejects.toThrow('HTTP 429')
    expect(op.calls).toEqual([0])
    expect(clock.sleeps).toEqual([])
  })

  it('stops after the configured attempts and rethrows the last failure', async () => {
    const clock = new ManualClock()
    const op = scripted(clock, [new Failure(503), new Failure(503), new Failure(504)])
    await expect(runWithRetries(op.run, policy({ attempts: 2 }), { clock, random: () => 0, signal: new AbortController().signal }, classify)).rejects.toThrow('HTTP 504')
    expect(op.calls).toHaveLength(3)
  })

  it('never retries a client error', async () => {
    const clock = new ManualClock()
    const op = scripted(clock, [new Failure(400)])
    await expect(runWithRetries(op.run, policy(), { clock, random: () => 0, signal: new AbortController().signal }, classify)).rejects.toThrow('HTTP 400')
    expect(op.calls).toHaveLength(1)
  })

  it('keeps the total wait within its cap', async () => {
    const clock = new ManualClock()
    const op = scripted(clock, [new Failure(429, 25_000), new Failure(429, 25_000), new Failure(429, 25_000)])
    await expect(runWithRetries(op.run, policy({ maxRetryAfterMs: 30_000 }), { clock, random: () => 0, signal: new AbortController().signal }, classify)).rejects.toThrow('HTTP 429')
    expect(clock.sleeps).toEqual([25_000, 25_000])
  })

  it('a client abort during the wait cancels at once and starts no further attempt', async () => {
    const clock = new ManualClock()
    clock.hold = true
    const controller = new AbortController()
    const op = scripted(clock, [new Failure(503), new Failure(503)])
    const running = runWithRetries(op.run, policy(), { clock, random: () => 0, signal: controller.signal }, classify)
    await waitFor(() => clock.pendingSleeps === 1)
    controller.abort()
    await expect(running).rejects.toSatisfy((error: unknown) => error instanceof GatewayError && error.code === 'request_cancelled')
    expect(op.calls).toHaveLength(1)
  })
})

async function waitFor(condition: () => boolean): Promise<void> {
  for (let turn = 0; turn < 100 && !condition(); turn++) await Promise.resolve()
  if (!condition()) throw new Error('condition never held')
}
