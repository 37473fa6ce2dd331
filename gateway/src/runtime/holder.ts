/**
 * Holds the current runtime and swaps it atomically. A request reads `current` once and keeps that
 * reference until it ends, so streams in flight never see a half-applied config. Pools that a new
 * runtime no longer uses are closed gracefully (in-flight requests finish first).
 */
import type { Dispatcher } from 'undici'
import { TargetHealthRegistry } from '../routing/target-health.ts'
import { validateSnapshot, type SnapshotProblem } from '../snapshot/validate.ts'
import type { ProviderNetwork } from '../snapshot/schema.ts'
import { compileRuntime, createProviderPool, type RuntimeConfig } from './compile.ts'

export type ApplyResult =
  | { ok: true; generation: number; hash: string; unchanged: boolean }
  | { ok: false; generation: number | null; problems: SnapshotProblem[] }

export class RuntimeHolder {
  #current: RuntimeConfig | null = null
  #appliedAtMs: number | null = null
  readonly #pools = new Map<string, Dispatcher>()
  readonly #listeners = new Set<(runtime: RuntimeConfig) => void>()
  readonly #rejectionListeners = new Set<(problems: SnapshotProblem[]) => void>()
  /** Circuit breakers and retry budgets live as long as the process, not a snapshot: a swap must not close open circuits. */
  readonly targetHealth = new TargetHealthRegistry()

  get current(): RuntimeConfig | null {
    return this.#current
  }

  /** When (ms since the epoch) the current runtime was applied; null before the first. */
  get appliedAtMs(): number | null {
    return this.#appliedAtMs
  }

  get ready(): boolean {
    return this.#current !== null
  }

  onApplied(listener: (runtime: RuntimeConfig) => void): () => void {
    this.#listeners.add(listener)
    return () => this.#listeners.delete(listener)
  }

  onRejected(listener: (problems: SnapshotProblem[]) => void): () => void {
    this.#rejectionListeners.add(listener)
    return () => this.#rejectionListeners.delete(listener)
  }

  /** Validates and compiles fully before swapping; on any problem the previous runtime stays. */
  apply(value: unknown): ApplyResult {
    const validation = validateSnapshot(value)
    const generation = typeof (value as { generation?: unknown })?.generation === 'number' ? (value as { generation: number }).generation : null
    if (!validation.ok) return this.#rejected(generation, validation.problems)
    if (this.#current && this.#current.hash === validation.hash && this.#current.generation === validation.snapshot.generation) {
      return { ok: true, generation: validation.snapshot.generation, hash: validation.hash, unchanged: true }
    }
    const compiled = compileRuntime(validation.snapshot, validation.hash, (origin, network) => this.#poolFor(origin, network))
    if (!compiled.ok) {
      this.#closeUnused()
      return this.#rejected(generation, compiled.problems)
    }
    this.#current = compiled.runtime
    this.#appliedAtMs = Date.now()
    this.#closeUnused()
    for (const listener of this.#listeners) listener(compiled.runtime)
    return { ok: true, generation: compiled.runtime.generation, hash: validation.hash, unchanged: false }
  }

  #rejected(generation: number | null, problems: SnapshotProblem[]): ApplyResult {
    for (const listener of this.#rejectionListeners) listener(problems)
    return { ok: false, generation, problems }
  }

  async close(): Promise<void> {
    this.#current = null
    const pools = [...this.#pools.values()]
    this.#pools.clear()
    await Promise.allSettled(pools.map((pool) => pool.close()))
  }

  #poolFor(origin: string, network: ProviderNetwork): Dispatcher {
    // Keyed by what the pool may reach too: a provider moved to `public` must not keep a pool that reaches private addresses.
    const key = `${network} ${origin}`
    let pool = this.#pools.get(key)
    if (!pool) {
      pool = createProviderPool(origin, network)
      this.#pools.set(key, pool)
    }
    return pool
  }

  #closeUnused(): void {
    const inUse = this.#current?.dispatchers ?? new Set<Dispatcher>()
    for (const [origin, pool] of this.#pools) {
      if (!inUse.has(pool)) {
        this.#pools.delete(origin)
        // close() lets requests already dispatched on it finish.
        void pool.close().catch(() => undefined)
      }
    }
  }
}
