/**
 * A work queue with controller-runtime semantics, keyed by object (`namespace/name`):
 * - a key waiting in the queue is queued once however often it is added (dedupe);
 * - a key is never handed to two workers at once: added while in flight, it is queued again when
 *   the worker is done, so the newest state is always reconciled after the event;
 * - a failing key comes back after a per-key exponential backoff that resets on success;
 * - `addAfter` schedules time-based work (re-checks, periodic resync).
 * Reconcilers read the current state for the key, never the event, so dropping duplicate events
 * loses nothing.
 */
import { backoffDelayMs } from './backoff.ts'

export interface WorkQueueOptions {
  /** First retry delay of a failing key. */
  baseDelayMs?: number
  /** Longest retry delay of a failing key. */
  maxDelayMs?: number
  jitter?: number
}

/** What a handler may ask for after a successful pass: come back later (e.g. to re-check status). */
export interface ProcessResult {
  requeueAfterMs?: number
}

export type KeyHandler = (key: string) => Promise<ProcessResult | void>

export class WorkQueue {
  readonly #options: Required<WorkQueueOptions>
  readonly #ready: string[] = []
  /** Keys that need processing: waiting in #ready, or added while in flight. */
  readonly #dirty = new Set<string>()
  readonly #processing = new Set<string>()
  readonly #delayed = new Map<string, { dueAtMs: number; timer: NodeJS.Timeout }>()
  readonly #failures = new Map<string, number>()
  #waiters: Array<(key: string | null) => void> = []
  #shutDown = false

  constructor(options: WorkQueueOptions = {}) {
    this.#options = { baseDelayMs: options.baseDelayMs ?? 50, maxDelayMs: options.maxDelayMs ?? 60_000, jitter: options.jitter ?? 0.2 }
  }

  get length(): number {
    return this.#ready.length
  }

  get isShutDown(): boolean {
    return this.#shutDown
  }

  add(key: string): void {
    if (this.#shutDown || this.#dirty.has(key)) return
    this.#dirty.add(key)
    if (this.#processing.has(key)) return
    const waiter = this.#waiters.shift()
    if (waiter) {
      this.#dirty.delete(key)
      this.#processing.add(key)
      waiter(key)
      return
    }
    this.#ready.push(key)
  }

  /** Adds the key after `delayMs`; an earlier pending schedule for the key wins. */
  addAfter(key: string, delayMs: number): void {
    if (this.#shutDown) return
    if (delayMs <= 0) {
      this.add(key)
      return
    }
    const dueAtMs = Date.now() + delayMs
    const pending = this.#delayed.get(key)
    if (pending && pending.dueAtMs <= dueAtMs) return
    if (pending) clearTimeout(pending.timer)
    const timer = setTimeout(() => {
      this.#delayed.delete(key)
      this.add(key)
    }, delayMs)
    timer.unref()
    this.#delayed.set(key, { dueAtMs, timer })
  }

  /** Requeues a failed key after its backoff, which doubles with each consecutive failure. */
  addRateLimited(key: string): number {
    const failures = this.#failures.get(key) ?? 0
    this.#failures.set(key, failures + 1)
    const delayMs = backoffDelayMs(failures, { initialMs: this.#options.baseDelayMs, maxMs: this.#options.maxDelayMs, jitter: this.#options.jitter })
    this.addAfter(key, delayMs)
    return delayMs
  }

  /** Resets the key's failure count (after a success). */
  forget(key: string): void {
    this.#failures.delete(key)
  }

  failures(key: string): number {
    return this.#failures.get(key) ?? 0
  }

  /** The next key to process (marked in flight), or null once the queue is shut down. */
  get(): Promise<string | null> {
    if (this.#shutDown) return Promise.resolve(null)
    const key = this.#ready.shift()
    if (key !== undefined) {
      this.#dirty.delete(key)
      this.#processing.add(key)
      return Promise.resolve(key)
    }
    return new Promise((resolve) => this.#waiters.push(resolve))
  }

  /** Marks the key no longer in flight; queues it again if it was added meanwhile. */
  done(key: string): void {
    this.#processing.delete(key)
    if (!this.#dirty.has(key)) return
    this.#dirty.delete(key)
    this.add(key)
  }

  shutDown(): void {
    this.#shutDown = true
    for (const { timer } of this.#delayed.values()) clearTimeout(timer)
    this.#delayed.clear()
    this.#ready.length = 0
    this.#dirty.clear()
    const waiters = this.#waiters
    this.#waiters = []
    for (const waiter of waiters) waiter(null)
  }

  /**
   * Runs `workers` loops until shut down. A handler that throws is retried with backoff; one that
   * returns `requeueAfterMs` is looked at again after that long. Resolves when every loop ended.
   */
  async process(handler: KeyHandler, options: { workers: number; onError?: (key: string, error: unknown) => void }): Promise<void> {
    const loop = async (): Promise<void> => {
      for (let key = await this.get(); key !== null; key = await this.get()) {
        try {
          const result = await handler(key)
          this.forget(key)
          if (result?.requeueAfterMs !== undefined) this.addAfter(key, result.requeueAfterMs)
        } catch (error) {
          options.onError?.(key, error)
          this.addRateLimited(key)
        } finally {
          this.done(key)
        }
      }
    }
    await Promise.all(Array.from({ length: options.workers }, loop))
  }
}
