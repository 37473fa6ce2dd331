/**
 * In-memory KubeClient for unit tests: objects with resourceVersion and generation, optimistic
 * concurrency (409 on a stale resourceVersion), finalizer-aware deletion, watches, Events and
 * Leases. It models the API server's contract that controllers rely on, nothing more.
 */
import {
  KubeApiError,
  LEASES,
  objectKey,
  type EventInput,
  type KubeClient,
  type KubeObject,
  type Lease,
  type ObjectList,
  type ResourceType,
  type WatchEventType,
  type WatchHandlers,
} from './client.ts'

const typeKey = (type: ResourceType): string => `${type.group}/${type.plural}`

export class FakeKubeClient implements KubeClient {
  readonly #objects = new Map<string, Map<string, KubeObject>>()
  readonly #watches = new Set<{ type: string; namespace: string | null; handlers: WatchHandlers }>()
  #resourceVersion = 0
  readonly events: EventInput[] = []
  /** Set to make every call fail (API server down). */
  failWith: Error | null = null
  calls = 0

  #bucket(type: ResourceType): Map<string, KubeObject> {
    let bucket = this.#objects.get(typeKey(type))
    if (!bucket) {
      bucket = new Map()
      this.#objects.set(typeKey(type), bucket)
    }
    return bucket
  }

  #check(): void {
    this.calls++
    if (this.failWith) throw this.failWith
  }

  #notify(type: ResourceType, event: WatchEventType, object: KubeObject): void {
    for (const watch of this.#watches) {
      if (watch.type !== typeKey(type)) continue
      if (watch.namespace !== null && watch.namespace !== object.metadata.namespace) continue
      watch.handlers.onEvent(event, structuredClone(object))
    }
  }

  #store(type: ResourceType, object: KubeObject, event: WatchEventType): KubeObject {
    object.metadata.resourceVersion = String(++this.#resourceVersion)
    this.#bucket(type).set(objectKey(object.metadata), object)
    this.#notify(type, event, object)
    return structuredClone(object)
  }

  /** Test setup: creates or updates an object as a user would (spec change bumps generation). */
  apply(type: ResourceType, object: KubeObject): KubeObject {
    const key = objectKey(object.metadata)
    const existing = this.#bucket(type).get(key)
    const next = structuredClone(object)
    if (existing) {
      const specChanged = JSON.stringify(existing.spec) !== JSON.stringify(next.spec) || JSON.stringify(existing.data) !== JSON.stringify(next.data)
      next.metadata = { ...existing.metadata, labels: next.metadata.labels, annotations: next.metadata.annotations }
      next.metadata.generation = (existing.metadata.generation ?? 1) + (specChanged ? 1 : 0)
      if (existing.status !== undefined && next.status === undefined) next.status = existing.status
      return this.#store(type, next, 'MODIFIED')
    }
    next.metadata.uid ??= `uid-${object.metadata.name}-${this.#resourceVersion + 1}`
    next.metadata.generation = 1
    next.metadata.creationTimestamp = new Date().toISOString()
    return this.#store(type, next, 'ADDED')
  }

  /** Test setup: deletes as the API server does (marks it while finalizers remain). */
  delete(type: ResourceType, namespace: string, name: string): void {
    const key = objectKey({ namespace, name })
    const existing = this.#bucket(type).get(key)
    if (!existing) return
    if ((existing.metadata.finalizers ?? []).length > 0) {
      existing.metadata.deletionTimestamp ??= new Date().toISOString()
      this.#store(type, existing, 'MODIFIED')
      return
    }
    this.#bucket(type).delete(key)
    this.#notify(type, 'DELETED', existing)
  }

  /** Ends every open watch with `error` (as a dropped connection would). */
  breakWatches(error: unknown): void {
    const watches = [...this.#watches]
    this.#watches.clear()
    for (const watch of watches) watch.handlers.onDone(error)
  }

  get watchCount(): number {
    return this.#watches.size
  }

  peek(type: ResourceType, namespace: string, name: string): KubeObject | undefined {
    const object = this.#bucket(type).get(objectKey({ namespace, name }))
    return object ? structuredClone(object) : undefined
  }

  async get(type: ResourceType, namespace: string, name: string): Promise<KubeObject | null> {
    this.#check()
    return this.peek(type, namespace, name) ?? null
  }

  async list(type: ResourceType, namespace: string | null): Promise<ObjectList> {
    this.#check()
    const items = [...this.#bucket(type).values()].filter((o) => namespace === null || o.metadata.namespace === namespace)
    return { items: structuredClone(items), resourceVersion: String(this.#resourceVersion) }
  }

  async watch(type: ResourceType, namespace: string | null, _resourceVersion: string, handlers: WatchHandlers): Promise<() => void> {
    this.#check()
    const watch = { type: typeKey(type), namespace, handlers }
    this.#watches.add(watch)
    return () => this.#watches.delete(watch)
  }

  #require(type: ResourceType, namespace: string, name: string): KubeObject {
    const object = this.#bucket(type).get(objectKey({ namespace, name }))
    if (!object) throw new KubeApiError(404, 'NotFound', `${type.plural} "${name}" not found`)
    return object
  }

  async patchStatus(type: ResourceType, namespace: string, name: string, status: Record<string, unknown>): Promise<KubeObject> {
    this.#check()
    const object = this.#require(type, namespace, name)
    object.status = structuredClone(status)
    return this.#store(type, object, 'MODIFIED')
  }

  async setFinalizers(type: ResourceType, namespace: string, name: string, finalizers: string[], resourceVersion: string): Promise<KubeObject> {
    this.#check()
    const object = this.#require(type, namespace, name)
    if (object.metadata.resourceVersion !== resourceVersion) throw new KubeApiError(409, 'Conflict', 'the object has been modified')
    object.metadata.finalizers = [...finalizers]
    if (object.metadata.deletionTimestamp && finalizers.length === 0) {
      this.#bucket(type).delete(objectKey(object.metadata))
      this.#notify(type, 'DELETED', object)
      return structuredClone(object)
    }
    return this.#store(type, object, 'MODIFIED')
  }

  async createEvent(event: EventInput): Promise<void> {
    this.#check()
    this.events.push(structuredClone(event))
  }

  async getLease(namespace: string, name: string): Promise<Lease | null> {
    this.#check()
    return (this.peek(LEASES, namespace, name) as Lease | undefined) ?? null
  }

  async createLease(lease: Lease): Promise<Lease> {
    this.#check()
    const namespace = lease.metadata.namespace ?? 'default'
    if (this.peek(LEASES, namespace, lease.metadata.name)) throw new KubeApiError(409, 'AlreadyExists', 'lease exists')
    return this.#store(LEASES, structuredClone({ ...lease, metadata: { ...lease.metadata, namespace } }), 'ADDED') as Lease
  }

  async deleteLease(namespace: string, name: string): Promise<void> {
    this.#check()
    this.delete(LEASES, namespace, name)
  }

  async replaceLease(lease: Lease): Promise<Lease> {
    this.#check()
    const namespace = lease.metadata.namespace ?? 'default'
    const current = this.#require(LEASES, namespace, lease.metadata.name)
    if (current.metadata.resourceVersion !== lease.metadata.resourceVersion) throw new KubeApiError(409, 'Conflict', 'the object has been modified')
    return this.#store(LEASES, structuredClone(lease), 'MODIFIED') as Lease
  }
}
