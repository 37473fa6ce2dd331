/**
 * Test doubles for the routing engine: a clock that advances only when something sleeps on it, and
 * a seeded random source, so timings and weighted draws are exact and repeatable.
 */
import type { Clock } from './retry.ts'

export class ManualClock implements Clock {
  #now = 0
  /** Every wait asked for, in order. */
  readonly sleeps: number[] = []
  /** When set, sleeps wait for the test (or an abort) instead of completing at once. */
  hold = false
  #release: Array<() => void> = []

  now(): number {
    return this.#now
  }

  advance(ms: number): void {
    this.#now += ms
  }

  sleep(ms: number, signal: AbortSignal): Promise<void> {
    if (signal.aborted) return Promise.reject(signal.reason)
    this.sleeps.push(ms)
    if (!this.hold) {
      this.#now += ms
      return Promise.resolve()
    }
    return new Promise((resolve, reject) => {
      const onAbort = (): void => reject(signal.reason)
      signal.addEventListener('abort', onAbort, { once: true })
      this.#release.push(() => {
        signal.removeEventListener('abort', onAbort)
        this.#now += ms
        resolve()
      })
    })
  }

  /** Ends every held sleep. */
  releaseAll(): void {
    for (const release of this.#release.splice(0)) release()
  }

  get pendingSleeps(): number {
    return this.#release.length
  }
}

/** mulberry32: a small, well-distributed seeded generator. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0
  return () => {
    state = (state + 0x6d2b79f5) >>> 0
    let t = state
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}
