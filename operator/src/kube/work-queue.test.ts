import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { backoffDelayMs } from './backoff.ts'
import { WorkQueue } from './work-queue.ts'

describe('backoffDelayMs', () => {
  it('doubles from the initial delay up to the cap', () => {
    const options = { initialMs: 10, maxMs: 100 }
    expect([0, 1, 2, 3, 4, 5].map((attempt) => backoffDelayMs(attempt, options))).toEqual([10, 20, 40, 80, 100, 100])
  })

  it('takes up to `jitter` off the delay', () => {
    expect(backoffDelayMs(3, { initialMs: 10, maxMs: 1000, jitter: 0.5, random: () => 1 })).toBe(40)
    expect(backoffDelayMs(3, { initialMs: 10, maxMs: 1000, jitter: 0.5, random: () => 0 })).toBe(80)
  })
})

describe('WorkQueue', () => {
  beforeEach(() => vi.useFakeTimers())
  afterEach(() => vi.useRealTimers())

  it('queues a key once however often it is added', async () => {
    const queue = new WorkQueue()
    queue.add('ns/a')
    queue.add('ns/a')
    queue.add('ns/b')
    queue.add('ns/a')
    expect(queue.length).toBe(2)
    expect(await queue.get()).toBe('ns/a')
    expect(await queue.get()).toBe('ns/b')
    expect(queue.length).toBe(0)
  })

  it('never hands out a key that is in flight; one added meanwhile comes back after done', async () => {
    const queue = new WorkQueue()
    queue.add('ns/a')
    const key = await queue.get()
    queue.add('ns/a')
    queue.add('ns/a')
    expect(queue.length).toBe(0)
    queue.done(key!)
    expect(queue.length).toBe(1)
    expect(await queue.get()).toBe('ns/a')
    queue.done('ns/a')
    expect(queue.length).toBe(0)
  })

  it('process() runs one handler per key at a time even with several workers', async () => {
    const queue = new WorkQueue()
    let inFlight = 0
    let maxInFlight = 0
    let runs = 0
    const running = queue.process(async () => {
      inFlight++
      maxInFlight = Math.max(maxInFlight, inFlight)
      runs++
      await new Promise((resolve) => setTimeout(resolve, 10))
      inFlight--
    }, { workers: 4 })
    queue.add('ns/a')
    await vi.advanceTimersByTimeAsync(1)
    queue.add('ns/a')
    queue.add('ns/a')
    await vi.advanceTimersByTimeAsync(50)
    expect(maxInFlight).toBe(1)
    // The first run, then one more for the adds that arrived while it ran.
    expect(runs).toBe(2)
    queue.shutDown()
    await running
  })

  it('retries a failing key with per-key exponential backoff and resets it on success', async () => {
    const queue = new WorkQueue({ baseDelayMs: 100, maxDelayMs: 1000, jitter: 0 })
    const attemptsAt: number[] = []
    const start = Date.now()
    let failuresLeft = 3
    const running = queue.process(async () => {
      attemptsAt.push(Date.now() - start)
      if (failuresLeft-- > 0) throw new Error('store down')
    }, { workers: 1 })
    queue.add('ns/a')
    await vi.advanceTimersByTimeAsync(2000)
    expect(attemptsAt).toEqual([0, 100, 300, 700])
    expect(queue.failures('ns/a')).toBe(0)
    queue.shutDown()
    await running
  })

  it('caps the retry delay', () => {
    const queue = new WorkQueue({ baseDelayMs: 100, maxDelayMs: 250, jitter: 0 })
    expect([1, 2, 3, 4].map(() => queue.addRateLimited('ns/a'))).toEqual([100, 200, 250, 250])
    queue.forget('ns/a')
    expect(queue.addRateLimited('ns/a')).toBe(100)
    queue.shutDown()
  })

  it('addAfter keeps the earliest schedule and a requeueAfterMs result comes back', async () => {
    const queue = new WorkQueue()
    queue.addAfter('ns/a', 500)
    queue.addAfter('ns/a', 100)
    queue.addAfter('ns/a', 900)
    await vi.advanceTimersByTimeAsync(99)
    expect(queue.length).toBe(0)
    await vi.advanceTimersByTimeAsync(1)
    expect(queue.length).toBe(1)
    await vi.advanceTimersByTimeAsync(1000)
    expect(queue.length).toBe(1)

    let runs = 0
    const running = queue.process(async () => {
      runs++
      return runs === 1 ? { requeueAfterMs: 200 } : undefined
    }, { workers: 1 })
    await vi.advanceTimersByTimeAsync(199)
    expect(runs).toBe(1)
    await vi.advanceTimersByTimeAsync(1)
    expect(runs).toBe(2)
    queue.shutDown()
    await running
  })

  it('shutDown releases waiting workers and drops pending work', async () => {
    const queue = new WorkQueue()
    const waiting = queue.get()
    queue.addAfter('ns/a', 100)
    queue.shutDown()
    expect(await waiting).toBeNull()
    queue.add('ns/b')
    expect(queue.length).toBe(0)
    expect(await queue.get()).toBeNull()
  })
})
