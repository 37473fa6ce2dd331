/**
 * The limiter port: where rate-limit and budget counters live. Two backends keep one contract
 * (`limiter.contract.ts`): in process (embedded mode, one replica) and Redis (every replica shares
 * the counters). Both run the same algorithms:
 *
 * - Rate limits are a weighted sliding log: every admitted request is an entry stamped with its
 *   time and weighing 1 (requests) or its tokens. A counter admits an amount when the entries of the
 *   last window plus the amount stay within the limit, so N per window is never exceeded in ANY
 *   window (no fixed-window boundary burst, no token-bucket burst on top).
 * - Budgets are spent + reserved ≤ limit. A request reserves its worst case before the call; the
 *   settle step charges the actual amount and drops the reservation. A reservation carries an
 *   expiry, refreshed while its stream runs, so one left by a dead gateway stops holding budget.
 *
 * All amounts are integers (tokens, requests, or nano-USD for cost budgets): Redis and Lua count
 * integers exactly where floating sums would drift at the limit.
 *
 * One call covers every counter a request touches, all or nothing: when any enforced counter
 * refuses, nothing is recorded. Shadow counters are evaluated, reported and recorded, never refuse.
 */

export interface RateCounter {
  readonly kind: 'rate'
  /** Storage key (see `counterKey`). */
  readonly key: string
  readonly windowMs: number
  readonly limit: number
  /** 1 for a request; the tokens reserved for a token rate. */
  readonly amount: number
  /** False in shadow mode: reported, recorded, never refuses. */
  readonly enforce: boolean
}

export interface BudgetCounter {
  readonly kind: 'budget'
  readonly key: string
  readonly limit: number
  /** The worst case reserved (or, extending, the extra). */
  readonly amount: number
  readonly enforce: boolean
}

export type Counter = RateCounter | BudgetCounter

export interface CounterState {
  readonly key: string
  readonly limit: number
  /** Counted after this call (including the amount when it was admitted). */
  readonly used: number
  readonly remaining: number
  /** This counter alone would admit the amount. */
  readonly ok: boolean
  /** Milliseconds until this counter could admit the amount (rates); 0 when ok or for budgets. */
  readonly retryAfterMs: number
  /** Milliseconds until the whole window's entries have aged out (rates; 0 for budgets). */
  readonly resetMs: number
}

export interface ReserveResult {
  readonly admitted: boolean
  readonly states: readonly CounterState[]
}

export interface SettleCounter {
  readonly kind: 'rate' | 'budget'
  readonly key: string
  /** What the request actually used (tokens, requests, nano-USD). */
  readonly actual: number
}

export interface Limiter {
  /**
   * Reserves `amount` on every counter under one reservation id, or nothing. Called again with the
   * same id it adds to the reservation (a stream that outgrew its estimate) and refreshes its expiry.
   */
  reserve(reservationId: string, counters: readonly Counter[], ttlMs: number): Promise<ReserveResult>
  /** Replaces the reservation by the actual amounts: budgets charge `actual`, rate entries weigh `actual`. */
  settle(reservationId: string, counters: readonly SettleCounter[]): Promise<void>
  /** Budget counters' spent + live reservations, in the counters' units (0 for unknown keys). */
  usage(keys: readonly string[]): Promise<number[]>
  close(): Promise<void>
}

/** The counter store could not answer (Redis down, timed out). */
export class LimiterUnavailableError extends Error {
  override name = 'LimiterUnavailableError'
}

/** Cost budgets count nano-USD: exact integers up to about 9 million USD in a double. */
export const NANO_USD_PER_USD = 1_000_000_000

export const usdToNano = (usd: number): number => Math.ceil(usd * NANO_USD_PER_USD - 1e-6)
