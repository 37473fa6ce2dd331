/**
 * Wires the operator together: one informer per gatehouse.dev kind plus Secrets (kept warm on every
 * replica, so a new leader starts from a full cache), one work queue, and the Reconciler. Only the
 * leader reconciles: `startReconciling` / `stopReconciling` follow leader election.
 *
 * What enqueues a key:
 * - any change to the object itself;
 * - a change to a Secret a Provider references (reverse index Secret -> Providers);
 * - a change to a Workspace, for the objects that name it (reverse index Workspace -> objects);
 * - a gateway ACK/NACK, for objects still waiting to be Programmed;
 * - a periodic resync of every object (level-triggered repair).
 */
import type { Logger } from 'pino'
import type { GatehouseKind } from '@gatehouse/crds'
import type { GatewayRegistry } from '../distribution/gateway-registry.ts'
import type { SnapshotPublisher } from '../distribution/publisher.ts'
import type { Store } from '../store/index.ts'
import { LEASES, SECRETS, objectKey, type KubeClient, type KubeObject } from '../kube/client.ts'
import { Informer } from '../kube/informer.ts'
import { WorkQueue } from '../kube/work-queue.ts'
import { abandonedReports, remoteGateways } from './gateway-reports.ts'
import { RESOURCE_TYPES, parseWorkKey, workKey } from './kinds.ts'
import { ProgrammedTracker } from './programmed.ts'
import { Reconciler, type ObjectCaches } from './reconciler.ts'
import { ReferenceIndex } from './reference-index.ts'
import { reconcileSpan } from '../telemetry/spans.ts'

/** How long past expiry a replica's gateway report is kept before the leader deletes it. */
const REPORT_GRACE_MS = 10 * 60_000

export interface ControllerManagerOptions {
  client: KubeClient
  store: Store
  organizationId: string
  publisher: SnapshotPublisher
  registry: GatewayRegistry
  logger: Logger
  /** Watch one namespace, or (null) all of them. */
  namespace: string | null
  workers?: number
  resyncIntervalMs?: number
  relistIntervalMs?: number
  missingReferenceRetryMs?: number
  /**
   * Where the replicas' gateway reports live and who this replica is (gateway-reports.ts); without
   * it only gateways connected to this replica count for `Programmed`.
   */
  gatewayReports?: { namespace: string; identity: string }
  /** Told of every finished reconcile (the process's Prometheus metrics). */
  observeReconcile?: (kind: GatehouseKind, result: ReconcileResult, seconds: number) => void
}

/** How a reconcile ended: done, asked to run again later (waiting on something), or failed. */
export type ReconcileResult = 'ok' | 'requeue' | 'error'

export class ControllerManager {
  readonly #options: ControllerManagerOptions
  readonly #informers = new Map<GatehouseKind, Informer>()
  readonly #secrets: Informer
  /** Leases of the replicas' gateway reports (only with options.gatewayReports). */
  readonly #reports: Informer | null
  readonly #tracker: ProgrammedTracker
  readonly #reconciler: Reconciler
  readonly #secretIndex = new ReferenceIndex()
  readonly #workspaceIndex = new ReferenceIndex()
  /** uid -> work key, to map gateway reports (by uid) back to objects. */
  readonly #keysByUid = new Map<string, string>()
  #queue: WorkQueue | null = null
  #workers: Promise<void> | null = null
  /** In-flight reconciles of a previous term; a new term starts only after they finished. */
  #draining: Promise<void> = Promise.resolve()
  #resyncTimer: NodeJS.Timeout | null = null
  readonly #unsubscribe: Array<() => void> = []

  constructor(options: ControllerManagerOptions) {
    this.#options = options
    const informerOptions = {
      namespace: options.namespace,
      ...(options.relistIntervalMs === undefined ? {} : { relistIntervalMs: options.relistIntervalMs }),
      onError: (error: unknown, retryInMs: number) => options.logger.warn({ err: error, retryInMs }, 'watch failed; restarting'),
    }
    for (const [kind, type] of RESOURCE_TYPES) this.#informers.set(kind, new Informer(options.client, type, informerOptions))
    this.#secrets = new Informer(options.client, SECRETS, informerOptions)
    const reports = options.gatewayReports
    this.#reports = reports ? new Informer(options.client, LEASES, { ...informerOptions, namespace: reports.namespace }) : null
    const reportInformer = this.#reports
    this.#tracker = new ProgrammedTracker(
      options.publisher,
      options.registry,
      reports && reportInformer ? () => remoteGateways(reportInformer.list(), reports.identity, Date.now()) : undefined,
    )
    this.#reconciler = new Reconciler({
      client: options.client,
      caches: this.#caches(),
      store: options.store,
      organizationId: options.organizationId,
      tracker: this.#tracker,
      logger: options.logger,
      ...(options.missingReferenceRetryMs === undefined ? {} : { missingReferenceRetryMs: options.missingReferenceRetryMs }),
    })
  }

  #caches(): ObjectCaches {
    return {
      get: (kind, namespace, name) => this.#informers.get(kind)?.get(namespace, name),
      list: (kind, namespace) => (this.#informers.get(kind)?.list() ?? []).filter((object) => object.metadata.namespace === namespace),
      secret: (namespace, name) => this.#secrets.get(namespace, name),
    }
  }

  /** Starts the informers (every replica); resolves once all have listed. */
  async start(): Promise<void> {
    for (const [kind, informer] of this.#informers) {
      this.#unsubscribe.push(informer.on((event, object) => this.#onObject(kind, event, object)))
      informer.start()
    }
    this.#unsubscribe.push(this.#secrets.on((_event, secret) => this.#enqueueAll(this.#secretIndex.referrers(objectKey(secret.metadata)))))
    this.#secrets.start()
    const recheckWaiting = (): void => this.#enqueueAll(this.#tracker.waiting().flatMap((uid) => this.#keysByUid.get(uid) ?? []))
    this.#unsubscribe.push(this.#options.registry.onChange(recheckWaiting))
    if (this.#reports) {
      this.#unsubscribe.push(this.#reports.on(recheckWaiting))
      this.#reports.start()
    }
    await Promise.all(this.#allInformers().map((informer) => informer.synced))
  }

  /** Leader only: processes the queue, starting with every known object. */
  startReconciling(): void {
    if (this.#queue) return
    const { logger } = this.#options
    const queue = new WorkQueue()
    this.#queue = queue
    // Leadership lost and regained quickly: the old term's reconciles must not overlap the new one.
    this.#workers = this.#draining.then(() => queue.process((key) => this.#handle(key), {
      workers: this.#options.workers ?? 2,
      onError: (key, error) => logger.warn({ err: error, key }, 'reconcile failed; retrying with backoff'),
    }))
    this.#resyncAll()
    this.#resyncTimer = setInterval(() => this.#resyncAll(), this.#options.resyncIntervalMs ?? 5 * 60_000)
    this.#resyncTimer.unref()
    logger.info('reconciling gatehouse.dev resources')
  }

  /** Stops processing (leadership lost, or shutdown); resolves once in-flight reconciles finished. */
  async stopReconciling(): Promise<void> {
    const queue = this.#queue
    if (queue) {
      this.#queue = null
      if (this.#resyncTimer) clearInterval(this.#resyncTimer)
      this.#resyncTimer = null
      queue.shutDown()
      this.#draining = this.#workers ?? Promise.resolve()
      this.#workers = null
    }
    await this.#draining
  }

  async stop(): Promise<void> {
    await this.stopReconciling()
    for (const unsubscribe of this.#unsubscribe.splice(0)) unsubscribe()
    for (const informer of this.#allInformers()) informer.stop()
  }

  #allInformers(): Informer[] {
    return [...this.#informers.values(), this.#secrets, ...(this.#reports ? [this.#reports] : [])]
  }

  async #handle(key: string) {
    const { kind, namespace, name } = parseWorkKey(key)
    const startedAt = performance.now()
    const observe = (outcome: ReconcileResult): void => this.#options.observeReconcile?.(kind, outcome, (performance.now() - startedAt) / 1000)
    let result: Awaited<ReturnType<Reconciler['reconcile']>>
    try {
      result = await reconcileSpan(kind, namespace, name, () => this.#reconciler.reconcile(kind, namespace, name))
    } catch (error) {
      observe('error')
      throw error
    }
    observe(result && result.requeueAfterMs !== undefined ? 'requeue' : 'ok')
    // Objects naming a Workspace may have been waiting for it to reach the store.
    if (kind === 'Workspace') this.#enqueueAll(this.#workspaceIndex.referrers(`${namespace}/${name}`))
    return result
  }

  #onObject(kind: GatehouseKind, event: 'upsert' | 'delete', object: KubeObject): void {
    const { namespace = '', name, uid } = object.metadata
    const key = workKey(kind, namespace, name)
    const spec = (object.spec ?? {}) as { workspace?: unknown; secretRef?: { name?: unknown } }
    if (event === 'delete') {
      this.#secretIndex.remove(key)
      this.#workspaceIndex.remove(key)
      if (uid) {
        this.#keysByUid.delete(uid)
        this.#reconciler.forget(uid)
      }
      if (kind === 'Workspace') this.#onWorkspaceGone(namespace, name)
      return
    }
    if (uid) this.#keysByUid.set(uid, key)
    this.#secretIndex.set(key, typeof spec.secretRef?.name === 'string' ? [`${namespace}/${spec.secretRef.name}`] : [])
    this.#workspaceIndex.set(key, typeof spec.workspace === 'string' ? [`${namespace}/${spec.workspace}`] : [])
    this.#queue?.add(key)
  }

  /** Its rows cascade away in the store: dependents must write again (or report RefNotFound). */
  #onWorkspaceGone(namespace: string, name: string): void {
    const referrers = this.#workspaceIndex.referrers(`${namespace}/${name}`)
    for (const key of referrers) {
      const { kind, name: referrer } = parseWorkKey(key)
      const uid = this.#informers.get(kind)?.get(namespace, referrer)?.metadata.uid
      if (uid) this.#reconciler.invalidate(uid)
    }
    this.#enqueueAll(referrers)
  }

  #enqueueAll(keys: readonly string[]): void {
    for (const key of keys) this.#queue?.add(key)
  }

  #resyncAll(): void {
    for (const [kind, informer] of this.#informers) {
      for (const object of informer.list()) this.#queue?.add(workKey(kind, object.metadata.namespace ?? '', object.metadata.name))
    }
    this.#collectAbandonedReports()
  }

  /** Leader housekeeping: deletes gateway reports of replicas that are long gone. */
  #collectAbandonedReports(): void {
    const { gatewayReports, client, logger } = this.#options
    if (!this.#reports || !gatewayReports) return
    for (const name of abandonedReports(this.#reports.list(), Date.now(), REPORT_GRACE_MS)) {
      client.deleteLease(gatewayReports.namespace, name).catch((error: unknown) => logger.warn({ err: error, lease: name }, 'could not delete an abandoned gateway report'))
    }
  }
}
