/**
 * Per-deployment snapshots for gateways that name their deployment on the sync stream
 * (`?deployment=<slug>`): one SnapshotPublisher per deployment asked for, created on first use
 * and kept current by the same change feed as the organisation-wide one. A deployment that does
 * not exist is refused to the asking gateway and not kept.
 */
import type { GatewaySnapshot } from '@gatehouse/gateway/snapshot'
import { SnapshotPublisher } from '../distribution/publisher.ts'

export type DeploymentCompiler = (generation: number, deployment: string) => Promise<GatewaySnapshot>

export class DeploymentPublishers {
  readonly #compile: DeploymentCompiler
  readonly #onError: (error: unknown, deployment: string) => void
  readonly #now: (() => number) | undefined
  readonly #publishers = new Map<string, Promise<SnapshotPublisher>>()

  constructor(compile: DeploymentCompiler, options: { onError?: (error: unknown, deployment: string) => void; now?: () => number } = {}) {
    this.#compile = compile
    this.#onError = options.onError ?? (() => undefined)
    this.#now = options.now
  }

  /** The deployment's publisher with its first snapshot published; rejects when it cannot compile. */
  get(deployment: string): Promise<SnapshotPublisher> {
    const existing = this.#publishers.get(deployment)
    if (existing) return existing
    let firstFailure: unknown = null
    let started = false
    const publisher = new SnapshotPublisher((generation) => this.#compile(generation, deployment), {
      ...(this.#now ? { now: this.#now } : {}),
      onError: (error) => {
        // Before the first snapshot, the failure goes to the asking gateway; later ones are logged.
        if (started) this.#onError(error, deployment)
        else firstFailure = error
      },
    })
    const ready = publisher.publish().then((snapshot) => {
      if (!snapshot) throw firstFailure ?? new Error(`deployment ${deployment} could not be compiled`)
      started = true
      return publisher
    })
    this.#publishers.set(deployment, ready)
    ready.catch(() => this.#publishers.delete(deployment))
    return ready
  }

  /** After a store change: recompile every deployment's snapshot. */
  schedule(): void {
    for (const ready of this.#publishers.values()) void ready.then((publisher) => publisher.schedule(), () => undefined)
  }

  get deployments(): string[] {
    return [...this.#publishers.keys()]
  }
}
