/**
 * Turns store changes into snapshots. Every committed change schedules a compile; changes that
 * arrive while one runs are folded into the next, so a burst of writes yields one or two
 * snapshots, never a queue. Each snapshot gets the next generation and goes to every subscriber
 * (the in-process gateway in embedded mode; the stream to remote gateways in cluster mode).
 */
import type { GatewaySnapshot } from '@gatehouse/gateway/snapshot'
import { snapshotTracing } from '../telemetry/spans.ts'

export type SnapshotCompiler = (generation: number) => Promise<GatewaySnapshot>
export type SnapshotSubscriber = (snapshot: GatewaySnapshot) => void

export class SnapshotPublisher {
  readonly #compile: SnapshotCompiler
  readonly #subscribers = new Set<SnapshotSubscriber>()
  readonly #onError: (error: unknown) => void
  #generation: number
  readonly #now: () => number
  #latest: GatewaySnapshot | null = null
  #running: Promise<void> | null = null
  #dirty = false

  constructor(compile: SnapshotCompiler, options: { initialGeneration?: number; onError?: (error: unknown) => void; now?: () => number } = {}) {
    this.#compile = compile
    this.#now = options.now ?? Date.now
    this.#generation = options.initialGeneration ?? 0
    this.#onError = options.onError ?? (() => undefined)
  }

  get latest(): GatewaySnapshot | null {
    return this.#latest
  }

  subscribe(subscriber: SnapshotSubscriber): () => void {
    this.#subscribers.add(subscriber)
    if (this.#latest) subscriber(this.#latest)
    return () => this.#subscribers.delete(subscriber)
  }

  /** Compiles and publishes now; resolves once the state as of this call is published. */
  async publish(): Promise<GatewaySnapshot | null> {
    // With tracing on: remembers the request or reconcile that asked, for the publish span's links.
    snapshotTracing.requested(this.#now())
    this.#dirty = true
    while (this.#running) await this.#running
    if (this.#dirty) {
      this.#running = this.#run()
      await this.#running
    }
    return this.#latest
  }

  /** Fire-and-forget form for change listeners. */
  schedule(): void {
    void this.publish().catch(this.#onError)
  }

  async #run(): Promise<void> {
    try {
      while (this.#dirty) {
        this.#dirty = false
        // Generations must keep rising across control-plane restarts and replicas, or a gateway
        // resuming from a persisted generation would ignore newer state: never below the clock.
        await snapshotTracing.publish(this.#now, async () => {
          const snapshot = await this.#compile(Math.max(this.#generation + 1, this.#now()))
          this.#generation = snapshot.generation
          this.#latest = snapshot
          for (const subscriber of this.#subscribers) subscriber(snapshot)
          return snapshot
        })
      }
    } catch (error) {
      this.#onError(error)
    } finally {
      this.#running = null
    }
  }
}
