/**
 * What the gateway process remembers about each upstream target between requests: its circuit
 * breaker and its retry budget. Keyed by provider id (plus the custom host when one is set), it
 * outlives snapshots, so a swap neither closes open circuits nor forgets load.
 */
import { CircuitBreaker } from './circuit-breaker.ts'

/** Share of a target's active requests that may be retrying at once (Envoy's default budget). */
export const RETRY_BUDGET_RATIO = 0.2
/** Retries always allowed at once, so a quiet target still gets its retries. */
export const RETRY_BUDGET_MIN_CONCURRENCY = 3

/**
 * A retry budget: when a target struggles, every request retrying it multiplies its load just when
 * it can least take it. Only a share of the requests active on a target may be retrying; the rest
 * fail over (or answer) at once.
 */
export class RetryBudget {
  #active = 0
  #retrying = 0

  get active(): number {
    return this.#active
  }

  get retrying(): number {
    return this.#retrying
  }

  /** A request starts using the target (its first attempt). */
  enter(): void {
    this.#active++
  }

  /** A request that holds no retry slot asks for one; true when it got it. */
  acquireRetry(): boolean {
    if (this.#retrying >= Math.max(RETRY_BUDGET_MIN_CONCURRENCY, RETRY_BUDGET_RATIO * this.#active)) return false
    this.#retrying++
    return true
  }

  /** The request is done with the target, releasing its retry slot if it held one. */
  leave(heldRetry: boolean): void {
    this.#active--
    if (heldRetry) this.#retrying--
  }
}

export interface TargetHealth {
  readonly breaker: CircuitBreaker
  readonly retryBudget: RetryBudget
}

/**
 * Created on first use. Custom hosts come from tenants' configs, so the map is bounded: past
 * `maxEntries` the least recently created entry is dropped (it starts again closed and unloaded,
 * the safe side).
 */
export class TargetHealthRegistry {
  readonly #targets = new Map<string, TargetHealth>()
  readonly #maxEntries: number
  /** Monotonic milliseconds, for cool-downs. */
  readonly now: () => number

  constructor(now: () => number = () => performance.now(), maxEntries = 10_000) {
    this.now = now
    this.#maxEntries = maxEntries
  }

  get size(): number {
    return this.#targets.size
  }

  /** Every target's health by key (for metrics at scrape time). */
  entries(): IterableIterator<[string, TargetHealth]> {
    return this.#targets.entries()
  }

  get(key: string): TargetHealth {
    let health = this.#targets.get(key)
    if (!health) {
      health = { breaker: new CircuitBreaker(), retryBudget: new RetryBudget() }
      this.#targets.set(key, health)
      if (this.#targets.size > this.#maxEntries) this.#targets.delete(this.#targets.keys().next().value!)
    }
    return health
  }
}
