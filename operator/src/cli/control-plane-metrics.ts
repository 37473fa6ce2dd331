/**
 * Prometheus metrics of a control-plane process (`gatehouse operator`, `gatehouse control-plane`),
 * one registry, served on its own port like the gateway's (GATEHOUSE_METRICS_PORT):
 *
 *  - reconciles per kind: how many, how they ended (ok, requeue, error), how long they took;
 *  - snapshots: compiled and published, failed compiles, the latest generation;
 *  - gateways: how many hold an open snapshot stream, ACKs and NACKs, and the ACK lag (publication
 *    to the gateway's ACK of that generation);
 *  - admin API RED by route template;
 *  - whether this replica holds the Lease; process metrics (`gatehouse_` prefixed, as the gateway's).
 *
 * Fed by callbacks the parts expose (admin app, controller manager, publisher, gateway registry),
 * so nothing below cli/ depends on prom-client.
 */
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client'
import { REQUEST_DURATION_BUCKETS } from '@gatehouse/gateway'
import type { GatehouseKind } from '@gatehouse/crds'
import type { ReconcileResult } from '../controllers/manager.ts'
import type { GatewayRegistry, GatewayStatus } from '../distribution/gateway-registry.ts'
import type { SnapshotPublisher } from '../distribution/publisher.ts'

/** A reconcile is a few store writes and API calls; a slow one waits on a dependency. */
const RECONCILE_DURATION_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30]
/** Publication to ACK: a gateway applies a snapshot within milliseconds to seconds. */
const ACK_LAG_BUCKETS = [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60]
/** Generations remembered for ACK lag: gateways ACK within seconds, older ones are dropped. */
const MAX_REMEMBERED_GENERATIONS = 64

export class ControlPlaneMetrics {
  readonly registry = new Registry()
  readonly #reconciles: Counter<'kind' | 'result'>
  readonly #reconcileDuration: Histogram<'kind'>
  readonly #published: Counter
  readonly #failed: Counter
  readonly #acks: Counter<'status'>
  readonly #ackLag: Histogram
  readonly #requests: Counter<'route' | 'method' | 'status'>
  readonly #requestDuration: Histogram<'route' | 'method'>
  readonly #publishedAtMs = new Map<number, number>()
  readonly #now: () => number
  /** Readers bound by watch(); until then the gauges read nothing. */
  #latestGeneration: () => number | null = () => null
  #connectedGateways: () => number = () => 0

  constructor(options: { processMetrics?: boolean; now?: () => number } = {}) {
    const registers = [this.registry]
    this.#now = options.now ?? Date.now
    if (options.processMetrics !== false) collectDefaultMetrics({ register: this.registry, prefix: 'gatehouse_' })
    this.#reconciles = new Counter({ name: 'gatehouse_operator_reconciles_total', help: 'Reconciles of gatehouse.dev resources by kind and result (ok, requeue: waiting on a reference or on the gateways, error).', labelNames: ['kind', 'result'], registers })
    this.#reconcileDuration = new Histogram({ name: 'gatehouse_operator_reconcile_duration_seconds', help: 'Time one reconcile took, by kind.', labelNames: ['kind'], buckets: RECONCILE_DURATION_BUCKETS, registers })
    this.#published = new Counter({ name: 'gatehouse_control_plane_snapshots_published_total', help: 'Snapshots compiled and published to the gateways (the organization-wide stream).', registers })
    this.#failed = new Counter({ name: 'gatehouse_control_plane_snapshot_failures_total', help: 'Snapshot compiles that failed (organization-wide or per deployment); gateways keep the last good one.', registers })
    this.#acks = new Counter({ name: 'gatehouse_control_plane_snapshot_acks_total', help: 'Gateway answers to published snapshots: ack (applied) or nack (refused).', labelNames: ['status'], registers })
    this.#ackLag = new Histogram({ name: 'gatehouse_control_plane_snapshot_ack_lag_seconds', help: 'Time from publishing a snapshot to a gateway ACKing that generation.', buckets: ACK_LAG_BUCKETS, registers })
    this.#requests = new Counter({ name: 'gatehouse_admin_http_requests_total', help: 'Requests answered by the control plane (admin API, snapshot stream, probes), by route template, method and status code.', labelNames: ['route', 'method', 'status'], registers })
    this.#requestDuration = new Histogram({ name: 'gatehouse_admin_http_request_duration_seconds', help: 'Time to answer a control-plane request, by route template.', labelNames: ['route', 'method'], buckets: REQUEST_DURATION_BUCKETS, registers })
    // Read through arrows: inside collect(), `this` is the gauge.
    const latestGeneration = (): number | null => this.#latestGeneration()
    const connectedGateways = (): number => this.#connectedGateways()
    new Gauge({
      name: 'gatehouse_control_plane_snapshot_generation',
      help: 'Generation of the latest published snapshot (-1 before the first one).',
      registers,
      collect() {
        this.set(latestGeneration() ?? -1)
      },
    })
    new Gauge({
      name: 'gatehouse_control_plane_connected_gateways',
      help: 'Gateways holding an open snapshot stream to this replica.',
      registers,
      collect() {
        this.set(connectedGateways())
      },
    })
  }

  readonly observeReconcile = (kind: GatehouseKind, result: ReconcileResult, seconds: number): void => {
    this.#reconciles.inc({ kind, result })
    this.#reconcileDuration.observe({ kind }, seconds)
  }

  readonly observeAdminRequest = (route: string, method: string, status: number, seconds: number): void => {
    this.#requests.inc({ route, method, status })
    this.#requestDuration.observe({ route, method }, seconds)
  }

  readonly snapshotFailed = (): void => {
    this.#failed.inc()
  }

  /** The operator's leader election: the gauge exists only in an operator (not `gatehouse control-plane`). */
  leadership(isLeader: () => boolean): void {
    new Gauge({
      name: 'gatehouse_operator_leader',
      help: 'Whether this operator replica holds the Lease and reconciles (1) or not (0).',
      registers: [this.registry],
      collect() {
        this.set(isLeader() ? 1 : 0)
      },
    })
  }

  /** Follows the publisher and the gateways' ACKs; returns the unsubscribe. */
  watch(publisher: SnapshotPublisher, gateways: GatewayRegistry): () => void {
    this.#latestGeneration = () => publisher.latest?.generation ?? null
    this.#connectedGateways = () => gateways.list().filter((gateway) => gateway.connected).length
    const unsubscribePublisher = publisher.subscribe((snapshot) => {
      this.#published.inc()
      this.#publishedAtMs.set(snapshot.generation, this.#now())
      if (this.#publishedAtMs.size > MAX_REMEMBERED_GENERATIONS) this.#publishedAtMs.delete(this.#publishedAtMs.keys().next().value!)
    })
    // The registry reports every change of a gateway's entry; an ACK or NACK is a new (time,
    // generation) on it, a connect or disconnect is not.
    const seen = new Map<string, { ack: string | null; nack: string | null }>()
    const unsubscribeGateways = gateways.onChange((status: GatewayStatus) => {
      const before = seen.get(status.gatewayId)
      const ack = status.appliedAt === null ? null : `${status.appliedAt} ${status.appliedGeneration}`
      const nack = status.lastNack === null ? null : `${status.lastNack.at} ${status.lastNack.generation}`
      seen.set(status.gatewayId, { ack, nack })
      if (ack !== null && ack !== before?.ack) {
        this.#acks.inc({ status: 'ack' })
        const publishedAtMs = status.appliedGeneration === null ? undefined : this.#publishedAtMs.get(status.appliedGeneration)
        if (publishedAtMs !== undefined) this.#ackLag.observe(Math.max(0, this.#now() - publishedAtMs) / 1000)
      }
      if (nack !== null && nack !== before?.nack) this.#acks.inc({ status: 'nack' })
    })
    return () => {
      unsubscribePublisher()
      unsubscribeGateways()
    }
  }
}
