/**
 * A limiter whose counter store is replaced while serving. A sidecar has no Redis setting in its
 * pod spec: it counts in process until the control plane hands it the shared counters' connection
 * (sidecar-main.ts), then in Redis with every other gateway. The limits stage was built with one
 * key prefix; the store's own prefix (GATEHOUSE_LIMITS_KEY_PREFIX of the shared settings) replaces
 * it on the way in and back on the way out, so keys match the central gateways' exactly.
 */
import type { Counter, Limiter, ReserveResult, SettleCounter } from './limiter.ts'

export class SwitchableLimiter implements Limiter {
  #current: Limiter
  #prefix: string
  readonly #stagePrefix: string

  /** `stagePrefix`: the key prefix the limits stage was built with. */
  constructor(initial: Limiter, stagePrefix: string) {
    this.#current = initial
    this.#prefix = stagePrefix
    this.#stagePrefix = stagePrefix
  }

  /** Counts in `next` (keys under `prefix`) from now on; the previous store is closed. */
  async replace(next: Limiter, prefix: string): Promise<void> {
    const previous = this.#current
    this.#current = next
    this.#prefix = prefix
    await previous.close()
  }

  #in(key: string): string {
    return key.startsWith(this.#stagePrefix) ? this.#prefix + key.slice(this.#stagePrefix.length) : key
  }

  #out(key: string): string {
    return key.startsWith(this.#prefix) ? this.#stagePrefix + key.slice(this.#prefix.length) : key
  }

  async reserve(reservationId: string, counters: readonly Counter[], ttlMs: number): Promise<ReserveResult> {
    const result = await this.#current.reserve(reservationId, counters.map((counter) => ({ ...counter, key: this.#in(counter.key) })), ttlMs)
    return { admitted: result.admitted, states: result.states.map((state) => ({ ...state, key: this.#out(state.key) })) }
  }

  settle(reservationId: string, counters: readonly SettleCounter[]): Promise<void> {
    return this.#current.settle(reservationId, counters.map((counter) => ({ ...counter, key: this.#in(counter.key) })))
  }

  usage(keys: readonly string[]): Promise<number[]> {
    return this.#current.usage(keys.map((key) => this.#in(key)))
  }

  close(): Promise<void> {
    return this.#current.close()
  }
}
