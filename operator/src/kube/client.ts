/**
 * The KubeClient port: the few Kubernetes calls the operator makes, over plain JSON objects. One
 * implementation talks to the API server (http-client.ts); tests use an in-memory fake
 * (fake-client.ts). Keeping the port this small is what makes controllers testable without a
 * cluster and keeps @kubernetes/client-node out of everything but one module.
 */

export interface ObjectMeta {
  name: string
  namespace?: string
  uid?: string
  resourceVersion?: string
  generation?: number
  creationTimestamp?: string
  deletionTimestamp?: string
  finalizers?: string[]
  labels?: Record<string, string>
  annotations?: Record<string, string>
}

export interface KubeObject {
  apiVersion?: string
  kind?: string
  metadata: ObjectMeta
  [field: string]: unknown
}

/** Where a kind is served: `/apis/<group>/<version>/namespaces/<ns>/<plural>` (core: `/api/v1/...`). */
export interface ResourceType {
  group: string
  version: string
  plural: string
  kind: string
}

export const SECRETS: ResourceType = { group: '', version: 'v1', plural: 'secrets', kind: 'Secret' }
export const LEASES: ResourceType = { group: 'coordination.k8s.io', version: 'v1', plural: 'leases', kind: 'Lease' }
export const EVENTS: ResourceType = { group: '', version: 'v1', plural: 'events', kind: 'Event' }

export interface ObjectList {
  items: KubeObject[]
  resourceVersion: string
}

export type WatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK'

export interface WatchHandlers {
  onEvent(type: WatchEventType, object: KubeObject): void
  /** The watch ended: null when the server closed it normally, else the error (410 means relist). */
  onDone(error: unknown): void
}

export interface LeaseSpec {
  holderIdentity?: string | null
  leaseDurationSeconds?: number
  acquireTime?: string | null
  renewTime?: string | null
  leaseTransitions?: number
}

export interface Lease extends KubeObject {
  spec: LeaseSpec
}

export interface EventInput {
  /** The object the event is about. */
  involved: { type: ResourceType; metadata: ObjectMeta }
  type: 'Normal' | 'Warning'
  reason: string
  message: string
  /** Who reports it (Event.source.component / reportingController). */
  component: string
}

export interface KubeClient {
  get(type: ResourceType, namespace: string, name: string): Promise<KubeObject | null>
  /** `namespace` null lists across all namespaces. */
  list(type: ResourceType, namespace: string | null): Promise<ObjectList>
  /** Starts a watch from `resourceVersion`; the returned function stops it (onDone is then not called). */
  watch(type: ResourceType, namespace: string | null, resourceVersion: string, handlers: WatchHandlers): Promise<() => void>
  /** Replaces `.status` through the status subresource (never bumps metadata.generation). */
  patchStatus(type: ResourceType, namespace: string, name: string, status: Record<string, unknown>): Promise<KubeObject>
  /**
   * Sets metadata.finalizers, guarded by resourceVersion (a conflict throws KubeApiError 409 so the
   * caller re-reads and tries again instead of clobbering someone else's finalizer).
   */
  setFinalizers(type: ResourceType, namespace: string, name: string, finalizers: string[], resourceVersion: string): Promise<KubeObject>
  createEvent(event: EventInput): Promise<void>
  getLease(namespace: string, name: string): Promise<Lease | null>
  createLease(lease: Lease): Promise<Lease>
  /** Optimistic update: fails with 409 when lease.metadata.resourceVersion is stale. */
  replaceLease(lease: Lease): Promise<Lease>
  /** Deletes a Lease; a missing one is not an error. */
  deleteLease(namespace: string, name: string): Promise<void>
}

/** Raw JSON calls, for the few APIs outside the KubeClient port (HttpKubeClient.call). */
export interface KubeRest {
  call<T>(method: 'GET' | 'POST' | 'PUT' | 'PATCH', path: string, body?: unknown, contentType?: string): Promise<T>
}

/** A failed API call with its HTTP status (404 not found, 409 conflict, 410 gone, ...). */
export class KubeApiError extends Error {
  readonly statusCode: number
  readonly reason: string
  constructor(statusCode: number, reason: string, message: string) {
    super(message)
    this.name = 'KubeApiError'
    this.statusCode = statusCode
    this.reason = reason
  }
}

export function isStatus(error: unknown, statusCode: number): boolean {
  return error instanceof KubeApiError && error.statusCode === statusCode
}

export function objectKey(metadata: Pick<ObjectMeta, 'namespace' | 'name'>): string {
  return `${metadata.namespace ?? ''}/${metadata.name}`
}

export function parseKey(key: string): { namespace: string; name: string } {
  const slash = key.indexOf('/')
  return { namespace: key.slice(0, slash), name: key.slice(slash + 1) }
}

export function apiVersionOf(type: ResourceType): string {
  return type.group === '' ? type.version : `${type.group}/${type.version}`
}

/** Collection path of a kind, in one namespace or (namespace null) across all of them. */
export function collectionPath(type: ResourceType, namespace: string | null): string {
  const base = type.group === '' ? `/api/${type.version}` : `/apis/${type.group}/${type.version}`
  return namespace === null ? `${base}/${type.plural}` : `${base}/namespaces/${encodeURIComponent(namespace)}/${type.plural}`
}

export function objectPath(type: ResourceType, namespace: string, name: string): string {
  return `${collectionPath(type, namespace)}/${encodeURIComponent(name)}`
}
