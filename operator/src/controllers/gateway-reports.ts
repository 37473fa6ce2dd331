/**
 * Gateways connect to any operator replica (the Service balances them), but only the leader
 * writes status. So every replica publishes what its own GatewayRegistry knows in a small Lease
 * of its own (`gatehouse-gateways-<identity>`, labelled, the gateway list in an annotation),
 * renewed on every gateway report and on a heartbeat; the leader reads the fresh ones and decides
 * `Programmed` over all gateways, not just those connected to itself. A replica that dies stops
 * renewing: its report goes stale and its gateways, reconnecting elsewhere, show up there.
 *
 * Generations are compared across replicas: each replica numbers its snapshots from its own clock
 * (never below the compile time, see distribution/publisher.ts), and a replica compiles after it
 * hears of a commit, so a remote gateway holds a change once it applied a generation at or above
 * the leader's clock reading at the write (programmed.ts explains the bar).
 */
import type { GatewayRegistry } from '../distribution/gateway-registry.ts'
import { isStatus, type KubeClient, type KubeObject, type Lease } from '../kube/client.ts'
import { microTime } from '../kube/leader-election.ts'

export const REPORT_LABEL = 'gatehouse.dev/gateway-report'
export const REPORT_ANNOTATION = 'gatehouse.dev/gateways'
const MAX_REPORTED_PROBLEM_CHARS = 300

export interface ReportedGateway {
  gatewayId: string
  appliedGeneration: number | null
  lastNack: { generation: number; problem: string | null } | null
}

export function reportLeaseName(identity: string): string {
  return `gatehouse-gateways-${identity}`.toLowerCase().replace(/[^a-z0-9.-]/g, '-').slice(0, 253)
}

/** Connected gateways of one registry, in the reported shape. */
export function connectedGateways(registry: GatewayRegistry): ReportedGateway[] {
  return registry
    .list()
    .filter((gateway) => gateway.connected)
    .map((gateway) => {
      const problem = gateway.lastNack?.problems[0]
      return {
        gatewayId: gateway.gatewayId,
        appliedGeneration: gateway.appliedGeneration,
        lastNack: gateway.lastNack
          ? { generation: gateway.lastNack.generation, problem: problem ? `${problem.path}: ${problem.message}`.slice(0, MAX_REPORTED_PROBLEM_CHARS) : null }
          : null,
      }
    })
}

/** Gateways reported by the other replicas whose report is still fresh. */
export function remoteGateways(leases: readonly KubeObject[], selfIdentity: string, nowMs: number): ReportedGateway[] {
  const self = reportLeaseName(selfIdentity)
  const gateways: ReportedGateway[] = []
  for (const lease of leases as Lease[]) {
    if (lease.metadata.labels?.[REPORT_LABEL] !== 'true' || lease.metadata.name === self) continue
    const renewedMs = Date.parse(lease.spec?.renewTime ?? '')
    if (!(renewedMs + (lease.spec?.leaseDurationSeconds ?? 0) * 1000 > nowMs)) continue
    try {
      const reported = JSON.parse(lease.metadata.annotations?.[REPORT_ANNOTATION] ?? '[]') as ReportedGateway[]
      if (Array.isArray(reported)) gateways.push(...reported)
    } catch {
      // A report we cannot read counts as no report: those gateways are simply not seen.
    }
  }
  return gateways
}

/**
 * Reports of replicas gone for longer than `graceMs` past expiry (crashed pods never delete theirs,
 * and pod names change with every rollout): the leader deletes them.
 */
export function abandonedReports(leases: readonly KubeObject[], nowMs: number, graceMs: number): string[] {
  return (leases as Lease[])
    .filter((lease) => lease.metadata.labels?.[REPORT_LABEL] === 'true')
    .filter((lease) => Date.parse(lease.spec?.renewTime ?? '') + (lease.spec?.leaseDurationSeconds ?? 0) * 1000 + graceMs < nowMs)
    .map((lease) => lease.metadata.name)
}

export interface GatewayReporterOptions {
  client: KubeClient
  registry: GatewayRegistry
  namespace: string
  identity: string
  /** How long a report stays fresh without renewal; renewed every third of it. */
  reportTtlMs: number
  /** Coalesces bursts of gateway reports into one write. */
  debounceMs?: number
  onError?(error: unknown): void
}

/** Publishes this replica's gateways (every replica runs one). */
export class GatewayReporter {
  readonly #options: GatewayReporterOptions
  readonly #name: string
  #lease: Lease | null = null
  #timer: NodeJS.Timeout | null = null
  #heartbeat: NodeJS.Timeout | null = null
  #writing: Promise<void> = Promise.resolve()
  #unsubscribe: (() => void) | null = null

  constructor(options: GatewayReporterOptions) {
    this.#options = options
    this.#name = reportLeaseName(options.identity)
  }

  start(): void {
    this.#unsubscribe = this.#options.registry.onChange(() => this.#schedule())
    this.#heartbeat = setInterval(() => this.#schedule(), Math.max(1, Math.floor(this.#options.reportTtlMs / 3)))
    this.#heartbeat.unref()
    this.#schedule()
  }

  async stop(): Promise<void> {
    this.#unsubscribe?.()
    if (this.#timer) clearTimeout(this.#timer)
    if (this.#heartbeat) clearInterval(this.#heartbeat)
    await this.#writing
    // This replica's gateways are about to reconnect elsewhere; its report must not outlive it.
    await this.#options.client.deleteLease(this.#options.namespace, this.#name).catch((error: unknown) => this.#options.onError?.(error))
  }

  #schedule(): void {
    if (this.#timer) return
    this.#timer = setTimeout(() => {
      this.#timer = null
      this.#writing = this.#writing.then(() => this.write()).catch((error: unknown) => this.#options.onError?.(error))
    }, this.#options.debounceMs ?? 100)
    this.#timer.unref()
  }

  /** Writes the report now (exposed for tests). */
  async write(): Promise<void> {
    const { client, namespace, registry } = this.#options
    const annotations = { [REPORT_ANNOTATION]: JSON.stringify(connectedGateways(registry)) }
    const spec = { holderIdentity: this.#options.identity, leaseDurationSeconds: Math.max(1, Math.ceil(this.#options.reportTtlMs / 1000)), renewTime: microTime(Date.now()) }
    const labels = { [REPORT_LABEL]: 'true' }
    try {
      this.#lease ??= await client.getLease(namespace, this.#name)
      this.#lease = this.#lease
        ? await client.replaceLease({ ...this.#lease, metadata: { ...this.#lease.metadata, labels, annotations }, spec })
        : await client.createLease({ metadata: { name: this.#name, namespace, labels, annotations }, spec })
    } catch (error) {
      // Someone else touched it (or it vanished): read it afresh next time.
      this.#lease = null
      if (!isStatus(error, 409) && !isStatus(error, 404)) throw error
      this.#schedule()
    }
  }
}
