/**
 * The in-process limiter: embedded mode (one process, no Redis) and the per-replica fallback when
 * Redis is down. The same algorithms as the Redis script (see limiter.ts), over maps.
 */
import type { Counter, CounterState, Limiter, ReserveResult, SettleCounter } from './limiter.ts'

interface Entry {
  readonly atMs: number
  weight: number
}

interface RateLog {
  /** Insertion order is time order: entries are only ever added at "now". */
  readonly entries: Map<string, Entry>
  sum: number
  windowMs: number
}

interface Budget {
  spent: number
  reserved: number
  readonly reservations: Map<string, { amount: number; expiresAtMs: number }>
}

export class MemoryLimiter implements Limiter {
  readonly #rates = new Map<string, RateLog>()
  readonly #budgets = new Map<string, Budget>()
  readonly #now: () => number

  constructor(now: () => number = Date.now) {
    this.#now = now
  }

  #rate(key: string, windowMs: number, nowMs: number): RateLog {
    let log = this.#rates.get(key)
    if (!log) {
      log = { entries: new Map(), sum: 0, windowMs }
      this.#rates.set(key, log)
    }
    log.windowMs = windowMs
    for (const [member, entry] of log.entries) {
      if (entry.atMs > nowMs - windowMs) break
      log.sum -= entry.weight
      log.entries.delete(member)
    }
    return log
  }

  #budget(key: string, nowMs: number): Budget {
    let budget = this.#budgets.get(key)
    if (!budget) {
      budget = { spent: 0, reserved: 0, reservations: new Map() }
      this.#budgets.set(key, budget)
    }
    for (const [id, reservation] of budget.reservations) {
      if (reservation.expiresAtMs > nowMs) continue
      budget.reserved -= reservation.amount
      budget.reservations.delete(id)
    }
    return budget
  }

  #rateState(counter: Counter & { kind: 'rate' }, log: RateLog, nowMs: number): CounterState {
    const used = log.sum
    const ok = used + counter.amount <= counter.limit
    const first = log.entries.values().next().value
    const resetMs = first ? first.atMs + counter.windowMs - nowMs : 0
    let retryAfterMs = 0
    if (!ok) {
      retryAfterMs = counter.windowMs
      if (counter.amount <= counter.limit) {
        let freed = 0
        for (const entry of log.entries.values()) {
          freed += entry.weight
          if (used + counter.amount - freed <= counter.limit) {
            retryAfterMs = entry.atMs + counter.windowMs - nowMs
            break
          }
        }
      }
    }
    return { key: counter.key, limit: counter.limit, used, remaining: Math.max(0, counter.limit - used), ok, retryAfterMs, resetMs }
  }

  async reserve(reservationId: string, counters: readonly Counter[], ttlMs: number): Promise<ReserveResult> {
    const nowMs = this.#now()
    const states: CounterState[] = counters.map((counter) => {
      if (counter.kind === 'rate') return this.#rateState(counter, this.#rate(counter.key, counter.windowMs, nowMs), nowMs)
      const budget = this.#budget(counter.key, nowMs)
      const used = budget.spent + budget.reserved
      const ok = used + counter.amount <= counter.limit
      return { key: counter.key, limit: counter.limit, used, remaining: Math.max(0, counter.limit - used), ok, retryAfterMs: 0, resetMs: 0 }
    })
    const admitted = counters.every((counter, index) => !counter.enforce || states[index]!.ok)
    if (!admitted) return { admitted, states }
    const recorded = counters.map((counter, index) => {
      const before = states[index]!
      if (counter.kind === 'rate') {
        const log = this.#rates.get(counter.key)!
        const entry = log.entries.get(reservationId)
        if (entry) entry.weight += counter.amount
        else log.entries.set(reservationId, { atMs: nowMs, weight: counter.amount })
        log.sum += counter.amount
      } else {
        const budget = this.#budgets.get(counter.key)!
        const reservation = budget.reservations.get(reservationId)
        budget.reservations.set(reservationId, { amount: (reservation?.amount ?? 0) + counter.amount, expiresAtMs: nowMs + ttlMs })
        budget.reserved += counter.amount
      }
      const used = before.used + counter.amount
      // A rate log that was empty now ends its window with this entry.
      const resetMs = counter.kind === 'rate' && before.resetMs === 0 ? counter.windowMs : before.resetMs
      return { ...before, used, remaining: Math.max(0, counter.limit - used), resetMs }
    })
    return { admitted, states: recorded }
  }

  async settle(reservationId: string, counters: readonly SettleCounter[]): Promise<void> {
    for (const counter of counters) {
      if (counter.kind === 'rate') {
        const log = this.#rates.get(counter.key)
        const entry = log?.entries.get(reservationId)
        if (!log || !entry) continue
        log.sum += counter.actual - entry.weight
        entry.weight = counter.actual
        continue
      }
      const budget = this.#budget(counter.key, this.#now())
      const reservation = budget.reservations.get(reservationId)
      if (reservation) {
        budget.reserved -= reservation.amount
        budget.reservations.delete(reservationId)
      }
      budget.spent += counter.actual
    }
  }

  async usage(keys: readonly string[]): Promise<number[]> {
    const nowMs = this.#now()
    return keys.map((key) => {
      if (!this.#budgets.has(key)) return 0
      const budget = this.#budget(key, nowMs)
      return budget.spent + budget.reserved
    })
  }

  async close(): Promise<void> {}
}
