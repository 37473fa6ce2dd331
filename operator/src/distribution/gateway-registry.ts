/**
 * What the control plane knows of each gateway: the generation it last applied (ACK) or rejected
 * (NACK), when, and whether its stream is open. Shown through the admin API and used to decide
 * when a resource is `Programmed` (every connected gateway ACKed a generation that contains it).
 */
export interface GatewayStatus {
  gatewayId: string
  connected: boolean
  appliedGeneration: number | null
  appliedAt: string | null
  lastNack: { generation: number; at: string; problems: Array<{ path: string; message: string }> } | null
  lastSeenAt: string
}

export class GatewayRegistry {
  readonly #gateways = new Map<string, GatewayStatus>()
  readonly #listeners = new Set<(status: GatewayStatus) => void>()
  readonly #now: () => Date

  constructor(now: () => Date = () => new Date()) {
    this.#now = now
  }

  #entry(gatewayId: string): GatewayStatus {
    let entry = this.#gateways.get(gatewayId)
    if (!entry) {
      entry = { gatewayId, connected: false, appliedGeneration: null, appliedAt: null, lastNack: null, lastSeenAt: this.#now().toISOString() }
      this.#gateways.set(gatewayId, entry)
    }
    return entry
  }

  #changed(entry: GatewayStatus): void {
    entry.lastSeenAt = this.#now().toISOString()
    for (const listener of this.#listeners) listener(entry)
  }

  connected(gatewayId: string, isConnected: boolean): void {
    const entry = this.#entry(gatewayId)
    entry.connected = isConnected
    this.#changed(entry)
  }

  ack(gatewayId: string, generation: number): void {
    const entry = this.#entry(gatewayId)
    entry.appliedGeneration = generation
    entry.appliedAt = this.#now().toISOString()
    this.#changed(entry)
  }

  nack(gatewayId: string, generation: number, problems: Array<{ path: string; message: string }>): void {
    const entry = this.#entry(gatewayId)
    entry.lastNack = { generation, at: this.#now().toISOString(), problems }
    this.#changed(entry)
  }

  list(): GatewayStatus[] {
    return [...this.#gateways.values()].map((entry) => ({ ...entry }))
  }

  /** The lowest generation applied by every connected gateway (null when none is connected). */
  programmedGeneration(): number | null {
    const connected = [...this.#gateways.values()].filter((entry) => entry.connected)
    if (connected.length === 0) return null
    return Math.min(...connected.map((entry) => entry.appliedGeneration ?? -1))
  }

  onChange(listener: (status: GatewayStatus) => void): () => void {
    this.#listeners.add(listener)
    return () => this.#listeners.delete(listener)
  }
}
