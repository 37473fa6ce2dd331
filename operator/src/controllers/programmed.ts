/**
 * When is an object `Programmed`? When every gateway connected to this control plane has ACKed a
 * snapshot generation at least as new as the first one compiled after the object's store write.
 * The tracker remembers that generation per object (by uid); it is in memory on purpose: after a
 * restart the first reconcile writes again and gets a fresh one.
 */
import type { GatewayRegistry } from '../distribution/gateway-registry.ts'
import type { SnapshotPublisher } from '../distribution/publisher.ts'
import type { Programming } from './conditions.ts'

export class ProgrammedTracker {
  readonly #publisher: SnapshotPublisher
  readonly #registry: GatewayRegistry
  readonly #required = new Map<string, number>()
  /** Objects whose status last said not Programmed: they are re-checked when a gateway reports. */
  readonly #waiting = new Set<string>()

  constructor(publisher: SnapshotPublisher, registry: GatewayRegistry) {
    this.#publisher = publisher
    this.#registry = registry
  }

  /** The generation before a store write, to tell afterwards whether a newer snapshot was compiled. */
  latestGeneration(): number {
    return this.#publisher.latest?.generation ?? -1
  }

  /**
   * Called after the object's store write: compiles now and records the generation that contains
   * the write. If compiling failed, nothing published so far contains it: the bar is set above
   * the last one, so the object stays Pending until a snapshot compiles.
   */
  async written(uid: string, generationBefore: number): Promise<void> {
    const snapshot = await this.#publisher.publish()
    const generation = snapshot?.generation ?? -1
    this.#required.set(uid, generation > generationBefore ? generation : generationBefore + 1)
  }

  hasRecord(uid: string): boolean {
    return this.#required.has(uid)
  }

  forget(uid: string): void {
    this.#required.delete(uid)
    this.#waiting.delete(uid)
  }

  /** The Programmed state for the object's status, remembering objects that still wait. */
  observe(uid: string): Programming {
    const programming = this.#state(uid)
    if (programming.programmed) this.#waiting.delete(uid)
    else this.#waiting.add(uid)
    return programming
  }

  #state(uid: string): Programming {
    const required = this.#required.get(uid)
    if (required === undefined) return { programmed: false, reason: 'Pending', message: 'The resource has not been written to the admin store yet.' }
    const connected = this.#registry.list().filter((gateway) => gateway.connected)
    if (connected.length === 0) {
      return { programmed: false, reason: 'NoGateways', message: `No gateway is connected to the control plane; snapshot generation ${required} is waiting to be served.` }
    }
    const rejecting = connected.filter((gateway) => gateway.lastNack !== null && gateway.lastNack.generation >= required && (gateway.appliedGeneration ?? -1) < gateway.lastNack.generation)
    if (rejecting.length > 0) {
      const first = rejecting[0]!
      const problem = first.lastNack!.problems[0]
      return {
        programmed: false,
        reason: 'Rejected',
        message: `Gateway ${first.gatewayId} rejected snapshot generation ${first.lastNack!.generation}${problem ? `: ${problem.path}: ${problem.message}` : ''}; gateways keep serving the previous snapshot.`,
      }
    }
    const lowest = this.#registry.programmedGeneration() ?? -1
    if (lowest >= required) return { programmed: true, generation: required }
    const behind = connected.filter((gateway) => (gateway.appliedGeneration ?? -1) < required).length
    return { programmed: false, reason: 'Pending', message: `Waiting for ${behind} of ${connected.length} gateways to apply snapshot generation ${required}.` }
  }

  /**
   * Objects whose status still says not Programmed. Taken from what was last reported, not
   * recomputed: an object that a gateway report just made Programmed must be reconciled too.
   */
  waiting(): string[] {
    return [...this.#waiting]
  }
}
