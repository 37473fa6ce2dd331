/**
 * Per-target circuit breakers. A run of consecutive failures, or a high failure rate over the
 * recent outcomes, opens a target's circuit for a cool-down; fallback and loadbalance skip open
 * targets. After the cool-down one request probes (half-open): success closes the circuit, failure
 * reopens it for longer. State lives per gateway process, keyed by provider, and survives snapshot
 * swaps; the thresholds come from whichever config recorded the outcome.
 */

export interface BreakerSettings {
  readonly failureThreshold: number
  readonly failureRateThreshold: number
  readonly minimumRequests: number
  readonly cooldownMs: number
  readonly failureStatusCodes: ReadonlySet<number>
}

/** Outlier-detection defaults from reliability.md: 5 in a row, or half of the last 20, 30 s x n. */
export const defaultBreakerSettings: BreakerSettings = {
  failureThreshold: 5,
  failureRateThreshold: 0.5,
  minimumRequests: 10,
  cooldownMs: 30_000,
  failureStatusCodes: new Set([408, 429, 500, 502, 503, 504]),
}

/** Outcomes the failure rate is computed over. */
export const BREAKER_WINDOW = 20
/** Reopenings lengthen the cool-down linearly up to this many times the base. */
const MAX_COOLDOWN_MULTIPLIER = 10

export type BreakerState = 'closed' | 'open' | 'half-open'

export class CircuitBreaker {
  readonly #window = new Uint8Array(BREAKER_WINDOW)
  #cursor = 0
  #filled = 0
  #failuresInWindow = 0
  #consecutiveFailures = 0
  /** 0 while closed; otherwise when the cool-down ends. */
  #openUntil = 0
  #openings = 0
  #probing = false

  state(now: number): BreakerState {
    if (this.#openUntil === 0) return 'closed'
    return now < this.#openUntil ? 'open' : 'half-open'
  }

  /** Whether a strategy should pick this target now: closed, or half-open with no probe out. */
  available(now: number): boolean {
    const state = this.state(now)
    return state === 'closed' || (state === 'half-open' && !this.#probing)
  }

  /** Marks the start of an attempt; true when it is the half-open probe (its outcome decides). */
  begin(now: number): boolean {
    if (this.state(now) !== 'half-open' || this.#probing) return false
    this.#probing = true
    return true
  }

  /** A probe that ended without an outcome (client gone) frees the slot for the next one. */
  abandon(probe: boolean): void {
    if (probe) this.#probing = false
  }

  record(failed: boolean, settings: BreakerSettings, now: number, probe: boolean): void {
    if (probe) {
      this.#probing = false
      if (failed) this.#open(settings, now)
      else this.#close()
      return
    }
    // Outcomes of attempts made while open (every target of a group was open) change nothing.
    if (this.#openUntil !== 0) return
    this.#consecutiveFailures = failed ? this.#consecutiveFailures + 1 : 0
    if (this.#filled === BREAKER_WINDOW) this.#failuresInWindow -= this.#window[this.#cursor]!
    else this.#filled++
    this.#window[this.#cursor] = failed ? 1 : 0
    this.#failuresInWindow += failed ? 1 : 0
    this.#cursor = (this.#cursor + 1) % BREAKER_WINDOW
    if (!failed) return
    const rateTripped = this.#filled >= settings.minimumRequests && this.#failuresInWindow / this.#filled >= settings.failureRateThreshold
    if (this.#consecutiveFailures >= settings.failureThreshold || rateTripped) this.#open(settings, now)
  }

  #open(settings: BreakerSettings, now: number): void {
    this.#openings = Math.min(this.#openings + 1, MAX_COOLDOWN_MULTIPLIER)
    this.#openUntil = now + settings.cooldownMs * this.#openings
    this.#resetCounts()
  }

  #close(): void {
    this.#openUntil = 0
    this.#openings = 0
    this.#resetCounts()
  }

  #resetCounts(): void {
    this.#window.fill(0)
    this.#cursor = 0
    this.#filled = 0
    this.#failuresInWindow = 0
    this.#consecutiveFailures = 0
  }
}
