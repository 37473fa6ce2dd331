/**
 * When is an object `Programmed`? When every connected gateway has ACKed a snapshot containing the
 * object's last store write: gateways on this replica a generation at least as new as the first
 * one compiled here after the write, gateways on other replicas (from their reports) a generation
 * at least this replica's clock at the write (see gateway-reports.ts and `written`). The tracker remembers both
 * per object (by uid), in memory on purpose: after a restart the first reconcile writes again.
 */
import type { GatewayRegistry } from '../distribution/gateway-registry.ts'
import type { SnapshotPublisher } from '../distribution/publisher.ts'
import type { PolicyKind } from '@gatehouse/gateway/snapshot'
import { enforcementOf, isPolicyKind } from '../enforcement.ts'
import type { Programming } from './conditions.ts'
import { connectedGateways, type ReportedGateway } from './gateway-reports.ts'

/** What an object's last write needs from gateways. */
interface Requirement {
  /** Generation of this replica's first snapshot containing the write. */
  generation: number
  /** This replica's clock before the write: what other replicas' generations must reach. */
  remoteGeneration: number
}

export interface WriteMark {
  generation: number
  atMs: number
}

export class ProgrammedTracker {
  readonly #publisher: SnapshotPublisher
  readonly #registry: GatewayRegistry
  readonly #remote: () => ReportedGateway[]
  readonly #required = new Map<string, Requirement>()
  /** Objects whose status last said not Programmed: they are re-checked when a gateway reports. */
  readonly #waiting = new Set<string>()

  /** `remote`: gateways connected to the other replicas (see gateway-reports.ts). */
  readonly #enforced: ((kind: PolicyKind) => boolean) | undefined

  /** `enforced`: which policy kinds the gateways enforce (the gateway's own list by default). */
  constructor(publisher: SnapshotPublisher, registry: GatewayRegistry, remote: () => ReportedGateway[] = () => [], enforced?: (kind: PolicyKind) => boolean) {
    this.#enforced = enforced
    this.#publisher = publisher
    this.#registry = registry
    this.#remote = remote
  }

  /** Taken right before a store write: what `written` compares against. */
  beforeWrite(): WriteMark {
    return { generation: this.#publisher.latest?.generation ?? -1, atMs: Date.now() }
  }

  /**
   * Called after the object's store write: compiles now and records the generation that contains
   * the write. If compiling failed, nothing published so far contains it: the bar is set above
   * the last one, so the object stays Pending until a snapshot compiles.
   *
   * For other replicas the bar is the clock before the write. Taking it after the commit would
   * race: a replica that hears the commit at once can compile a snapshot containing it with a
   * generation below that reading, and the object would wait for the next change. The price is
   * that a remote snapshot compiled during the write itself (milliseconds) also passes the bar;
   * that replica compiles again as soon as it hears of the commit.
   */
  async written(uid: string, mark: WriteMark): Promise<void> {
    const snapshot = await this.#publisher.publish()
    const generation = snapshot?.generation ?? -1
    this.#required.set(uid, { generation: generation > mark.generation ? generation : mark.generation + 1, remoteGeneration: mark.atMs })
  }

  hasRecord(uid: string): boolean {
    return this.#required.has(uid)
  }

  forget(uid: string): void {
    this.#required.delete(uid)
    this.#waiting.delete(uid)
  }

  /**
   * The Programmed state for the object's status, remembering objects that still wait. A policy
   * kind the gateway does not enforce is never Programmed (reason NotEnforced) and waits for no
   * gateway: no snapshot it could apply would change that.
   */
  observe(uid: string, kind?: string): Programming {
    if (kind !== undefined && isPolicyKind(kind)) {
      const enforcement = enforcementOf(kind, this.#enforced)
      if (!enforcement.enforced) {
        this.#waiting.delete(uid)
        return { programmed: false, reason: enforcement.reason, message: enforcement.message }
      }
    }
    const programming = this.#state(uid)
    if (programming.programmed) this.#waiting.delete(uid)
    else this.#waiting.add(uid)
    return programming
  }

  #state(uid: string): Programming {
    const required = this.#required.get(uid)
    if (required === undefined) return { programmed: false, reason: 'Pending', message: 'The resource has not been written to the admin store yet.' }
    const gateways = [
      ...connectedGateways(this.#registry).map((gateway) => ({ ...gateway, needs: required.generation })),
      ...this.#remote().map((gateway) => ({ ...gateway, needs: required.remoteGeneration })),
    ]
    if (gateways.length === 0) {
      return { programmed: false, reason: 'NoGateways', message: `No gateway is connected to the control plane; snapshot generation ${required.generation} is waiting to be served.` }
    }
    const rejecting = gateways.find((gateway) => gateway.lastNack !== null && gateway.lastNack.generation >= gateway.needs && (gateway.appliedGeneration ?? -1) < gateway.lastNack.generation)
    if (rejecting) {
      return {
        programmed: false,
        reason: 'Rejected',
        message: `Gateway ${rejecting.gatewayId} rejected snapshot generation ${rejecting.lastNack!.generation}${rejecting.lastNack!.problem ? `: ${rejecting.lastNack!.problem}` : ''}; gateways keep serving the previous snapshot.`,
      }
    }
    const behind = gateways.filter((gateway) => (gateway.appliedGeneration ?? -1) < gateway.needs).length
    if (behind === 0) return { programmed: true, generation: required.generation, gateways: gateways.length }
    return { programmed: false, reason: 'Pending', message: `Waiting for ${behind} of ${gateways.length} gateways to apply snapshot generation ${required.generation}.` }
  }

  /**
   * Objects whose status still says not Programmed. Taken from what was last reported, not
   * recomputed: an object that a gateway report just made Programmed must be reconciled too.
   */
  waiting(): string[] {
    return [...this.#waiting]
  }
}
