/**
 * Reconciles one gatehouse.dev object into the admin store. Level-triggered: it reads the object
 * and what it references from the informer caches (never from the event) and converges:
 *
 *   deleted (deletionTimestamp)  -> delete the store row, then drop our finalizer
 *   invalid spec / unsupported   -> Accepted=False (+ a Warning Event), nothing written
 *   valid                        -> finalizer first, then the store write through resources/apply.ts
 *                                   (skipped when nothing it depends on changed), then status
 *
 * Status (Accepted, Programmed, Ready with observedGeneration) is written in one place, at the
 * end, and only when it differs from what the object already shows.
 */
import { createHash } from 'node:crypto'
import type { Logger } from 'pino'
import { parseResource, type GatehouseKind, type GatehouseResource, type ResourceStatus } from '@gatehouse/crds'
import {
  APPLIED_KINDS,
  ResourceError,
  applyResource,
  deleteResource,
  resourceRowExists,
  type ApplyContext,
  type SecretKeyReference,
  type SourcedResource,
} from '../resources/apply.ts'
import type { Store } from '../store/index.ts'
import type { KubeClient, KubeObject } from '../kube/client.ts'
import type { ProcessResult } from '../kube/work-queue.ts'
import { conditionsFor, findCondition, mergeConditions, sameStatus, type Acceptance } from './conditions.ts'
import { FINALIZER, resourceType } from './kinds.ts'
import type { ProgrammedTracker } from './programmed.ts'

/** Read access to the informer caches. */
export interface ObjectCaches {
  get(kind: GatehouseKind, namespace: string, name: string): KubeObject | undefined
  list(kind: GatehouseKind, namespace: string): KubeObject[]
  secret(namespace: string, name: string): KubeObject | undefined
}

export interface ReconcilerOptions {
  client: KubeClient
  caches: ObjectCaches
  store: Store
  organizationId: string
  tracker: ProgrammedTracker
  logger: Logger
  now?: () => Date
  /** How soon to look again at an object waiting for a missing Secret or Workspace. */
  missingReferenceRetryMs?: number
  /** How soon to look again at an object whose change gateways have not ACKed yet (safety net). */
  programmedRecheckMs?: number
}

const COMPONENT = 'gatehouse-operator'

/** Reasons that can resolve on their own when a referenced object appears. */
const WAITING_REASONS = new Set(['SecretNotFound', 'RefNotFound'])

interface Applied {
  fingerprint: string
  adminId: string
}

export class Reconciler {
  readonly #options: ReconcilerOptions
  readonly #now: () => Date
  /** What was last written per object uid: a rewrite happens only when this changes. */
  readonly #applied = new Map<string, Applied>()

  constructor(options: ReconcilerOptions) {
    this.#options = options
    this.#now = options.now ?? (() => new Date())
  }

  /** Forgets an object that is gone for good (its key left the cache). */
  forget(uid: string): void {
    this.#applied.delete(uid)
    this.#options.tracker.forget(uid)
  }

  /** Makes the next reconcile of this object write again (e.g. its workspace's rows were cascaded away). */
  invalidate(uid: string): void {
    this.#applied.delete(uid)
  }

  async reconcile(kind: GatehouseKind, namespace: string, name: string): Promise<ProcessResult | void> {
    const object = this.#options.caches.get(kind, namespace, name)
    if (!object) return
    if (object.metadata.deletionTimestamp) return this.#finalize(kind, object)

    const parsed = parseResource(object)
    if (!parsed.ok) {
      const problem = parsed.problems[0]!
      return this.#report(kind, object, { accepted: false, reason: 'InvalidSpec', message: `${problem.path || '(root)'}: ${problem.message}` })
    }
    const item: SourcedResource = { resource: parsed.resource, source: `${namespace}/${name}` }
    let current = object
    if (!(current.metadata.finalizers ?? []).includes(FINALIZER) && APPLIED_KINDS.has(kind)) {
      // Before any row exists: a deletion from now on waits for our cleanup.
      current = await this.#options.client.setFinalizers(resourceType(kind), namespace, name, [...(current.metadata.finalizers ?? []), FINALIZER], current.metadata.resourceVersion!)
    }
    try {
      await this.#write(kind, current, item)
    } catch (error) {
      if (!(error instanceof ResourceError)) throw error
      const result = await this.#report(kind, current, { accepted: false, reason: error.reason, message: error.detail })
      return WAITING_REASONS.has(error.reason) ? { requeueAfterMs: this.#options.missingReferenceRetryMs ?? 10_000 } : result
    }
    return this.#report(kind, current, { accepted: true })
  }

  #context(namespace: string): ApplyContext {
    const { caches, organizationId } = this.#options
    return {
      organizationId,
      managedBy: 'kubernetes',
      adoptUnmanaged: false,
      resolveSecret: (reference) => secretValue(caches.secret(namespace, reference.name), reference),
      describeMissingSecret: (reference) =>
        caches.secret(namespace, reference.name)
          ? `Secret '${reference.name}' in namespace '${namespace}' has no key '${reference.key}'`
          : `Secret '${reference.name}' not found in namespace '${namespace}'`,
    }
  }

  /** Workspace object name -> slug, for the objects of one namespace. */
  #workspaceSlugs(namespace: string): Map<string, string> {
    return new Map(
      this.#options.caches.list('Workspace', namespace).map((workspace) => {
        const spec = workspace.spec as { slug?: string } | undefined
        return [workspace.metadata.name, spec?.slug ?? workspace.metadata.name]
      }),
    )
  }

  /** Config object name -> slug, for the objects of one namespace (a Deployment names its Config). */
  #configSlugs(namespace: string): Map<string, string> {
    return new Map(
      this.#options.caches.list('Config', namespace).map((config) => {
        const spec = config.spec as { slug?: string } | undefined
        return [config.metadata.name, spec?.slug ?? config.metadata.name]
      }),
    )
  }

  /** Everything the stored row depends on: the spec, the workspace slug and the secret's value (hashed). */
  #fingerprint(resource: GatehouseResource, namespace: string, workspaces: ReadonlyMap<string, string>): string {
    const spec = resource.spec as { workspace?: string; secretRef?: SecretKeyReference }
    const secret = spec.secretRef ? secretValue(this.#options.caches.secret(namespace, spec.secretRef.name), spec.secretRef) : null
    return createHash('sha256')
      .update(JSON.stringify([resource.metadata.name, resource.spec, spec.workspace ? workspaces.get(spec.workspace) ?? null : null, secret]))
      .digest('hex')
  }

  async #write(kind: GatehouseKind, object: KubeObject, item: SourcedResource): Promise<void> {
    const { store, organizationId, tracker } = this.#options
    const uid = object.metadata.uid!
    const namespace = object.metadata.namespace!
    const workspaces = this.#workspaceSlugs(namespace)
    // References stay inside the namespace: a Workspace elsewhere (or one made through the admin
    // API) with that slug must not be reachable by naming it.
    const spec = item.resource.spec as { workspace?: string; workspaces?: string[]; config?: string }
    const refuse = (field: string, what: string, reference: string): ResourceError =>
      new ResourceError(item.source, `${kind}/${object.metadata.name}`, field, `no ${what} named '${reference}' in namespace '${namespace}'`, 'RefNotFound')
    if (spec.workspace !== undefined && !workspaces.has(spec.workspace)) throw refuse('spec.workspace', 'Workspace', spec.workspace)
    const configs = this.#configSlugs(namespace)
    if (kind === 'Deployment') {
      for (const [index, reference] of (spec.workspaces ?? []).entries()) if (!workspaces.has(reference)) throw refuse(`spec.workspaces[${index}]`, 'Workspace', reference)
      if (spec.config !== undefined && !configs.has(spec.config)) throw refuse('spec.config', 'Config', spec.config)
    }
    const fingerprint = this.#fingerprint(item.resource, namespace, workspaces)
    const previous = this.#applied.get(uid)
    if (previous?.fingerprint === fingerprint && tracker.hasRecord(uid) && (await resourceRowExists(store, organizationId, kind, previous.adminId))) return
    const mark = tracker.beforeWrite()
    const { adminId } = await applyResource(store, this.#context(namespace), item, workspaces, configs)
    this.#applied.set(uid, { fingerprint, adminId })
    await tracker.written(uid, mark)
    this.#options.logger.info({ kind, namespace, name: object.metadata.name, adminId }, 'applied to the admin store')
  }

  async #finalize(kind: GatehouseKind, object: KubeObject): Promise<void> {
    const finalizers = object.metadata.finalizers ?? []
    if (!finalizers.includes(FINALIZER)) return
    const { namespace, name, uid } = object.metadata
    const parsed = parseResource(object)
    if (parsed.ok) {
      const status = object.status as ResourceStatus | undefined
      const adminId = this.#applied.get(uid!)?.adminId ?? status?.adminId ?? null
      const item = { resource: parsed.resource, source: `${namespace}/${name}` }
      // Cleanup first; the finalizer goes only once the rows are gone (a failure retries with backoff).
      const deleted = await deleteResource(this.#options.store, this.#context(namespace!), item, this.#workspaceSlugs(namespace!), adminId)
      if (deleted) this.#options.logger.info({ kind, namespace, name }, 'deleted from the admin store')
    }
    await this.#options.client.setFinalizers(resourceType(kind), namespace!, name, finalizers.filter((f) => f !== FINALIZER), object.metadata.resourceVersion!)
    this.forget(uid!)
  }

  /** Computes and writes status; emits a Warning Event when a refusal is new or changed. */
  async #report(kind: GatehouseKind, object: KubeObject, acceptance: Acceptance): Promise<ProcessResult | void> {
    const { client, tracker } = this.#options
    const uid = object.metadata.uid!
    const previous = object.status as ResourceStatus | undefined
    const programming = acceptance.accepted ? tracker.observe(uid, kind) : { programmed: false as const, reason: 'NotAccepted' as const, message: 'The resource was not accepted; see the Accepted condition.' }
    const generation = object.metadata.generation ?? 0
    // A refused change leaves the row of the last accepted spec in place (gateways keep serving
    // it, as they keep their last good snapshot), so its id stays on the status.
    const adminId = this.#applied.get(uid)?.adminId ?? previous?.adminId
    const status: ResourceStatus = {
      observedGeneration: generation,
      conditions: mergeConditions(previous?.conditions, conditionsFor(acceptance, programming), generation, this.#now().toISOString().replace(/\.\d{3}Z$/, 'Z')),
      ...(adminId === undefined ? {} : { adminId }),
    }
    if (!acceptance.accepted) {
      const before = findCondition(previous?.conditions, 'Accepted')
      if (before?.status !== 'False' || before.reason !== acceptance.reason || before.message !== acceptance.message) {
        this.#options.logger.warn({ kind, namespace: object.metadata.namespace, name: object.metadata.name, reason: acceptance.reason, detail: acceptance.message }, 'resource refused')
        await client
          .createEvent({ involved: { type: resourceType(kind), metadata: object.metadata }, type: 'Warning', reason: acceptance.reason, message: acceptance.message, component: COMPONENT })
          .catch((error: unknown) => this.#options.logger.warn({ err: error }, 'could not record an Event'))
      }
    }
    if (!sameStatus(stripTimes(previous), stripTimes(status))) {
      await client.patchStatus(resourceType(kind), object.metadata.namespace!, object.metadata.name, status as Record<string, unknown>)
    }
    if (acceptance.accepted && !programming.programmed && programming.reason !== 'NotEnforced') return { requeueAfterMs: this.#options.programmedRecheckMs ?? 30_000 }
  }
}

/** The decoded value of one Secret key, or null when the Secret or the key is missing. */
export function secretValue(secret: KubeObject | undefined, reference: SecretKeyReference): string | null {
  const data = secret?.data as Record<string, string> | undefined
  const encoded = data?.[reference.key]
  return encoded === undefined ? null : Buffer.from(encoded, 'base64').toString('utf8')
}

/** Status without lastTransitionTime values, which differ on every computation but are kept on merge. */
function stripTimes(status: ResourceStatus | undefined): unknown {
  if (!status) return null
  return { ...status, conditions: status.conditions?.map(({ lastTransitionTime: _ignored, ...rest }) => rest) }
}
