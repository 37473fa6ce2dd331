/**
 * KubeClient over the API server's REST API, with @kubernetes/client-node for what it does well:
 * loading the kubeconfig (in-cluster service account or KUBECONFIG), authenticating requests, and
 * the watch stream. Requests and responses stay plain JSON: the generated model serializers would
 * reshape our custom resources and mis-format Lease MicroTime fields.
 */
import { HttpMethod, KubeConfig, RequestContext, Watch } from '@kubernetes/client-node'
import { fetch } from 'undici'
import {
  EVENTS,
  KubeApiError,
  LEASES,
  apiVersionOf,
  collectionPath,
  objectPath,
  type EventInput,
  type KubeClient,
  type KubeObject,
  type Lease,
  type ObjectList,
  type ResourceType,
  type WatchEventType,
  type WatchHandlers,
} from './client.ts'

const MERGE_PATCH = 'application/merge-patch+json'
/**
 * Bound on every non-watch call: a hung API server must fail a reconcile (retried with backoff)
 * and a Lease renewal (so a leader steps down in time) rather than block them forever.
 */
const DEFAULT_REQUEST_TIMEOUT_MS = 10_000
const FIELD_MANAGER = 'gatehouse-operator'

/** In a pod: the service account; elsewhere: KUBECONFIG or ~/.kube/config. */
export function loadKubeConfig(env: NodeJS.ProcessEnv): KubeConfig {
  const config = new KubeConfig()
  if (env.KUBERNETES_SERVICE_HOST && !env.KUBECONFIG) config.loadFromCluster()
  else config.loadFromDefault()
  if (!config.getCurrentCluster()) throw new Error('no Kubernetes cluster configured (not in a pod, and KUBECONFIG names none)')
  return config
}

async function apiError(method: string, path: string, status: number, text: string): Promise<KubeApiError> {
  let reason = 'Unknown'
  let message = text.slice(0, 500)
  try {
    const body = JSON.parse(text) as { reason?: string; message?: string }
    reason = body.reason ?? reason
    message = body.message ?? message
  } catch {
    // not a Status object: keep the raw text
  }
  return new KubeApiError(status, reason, `${method} ${path}: ${status} ${reason}: ${message}`)
}

export class HttpKubeClient implements KubeClient {
  readonly #config: KubeConfig
  readonly #server: string
  readonly #watcher: Watch
  readonly #requestTimeoutMs: number

  constructor(config: KubeConfig, options: { requestTimeoutMs?: number } = {}) {
    this.#config = config
    this.#requestTimeoutMs = options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS
    const cluster = config.getCurrentCluster()
    if (!cluster) throw new Error('the kubeconfig has no current cluster')
    this.#server = cluster.server.replace(/\/$/, '')
    this.#watcher = new Watch(config)
  }

  async #request<T>(method: HttpMethod, path: string, body?: unknown, contentType = 'application/json'): Promise<T> {
    const context = new RequestContext(`${this.#server}${path}`, method)
    await this.#config.applySecurityAuthentication(context)
    const headers: Record<string, string> = { ...context.getHeaders(), accept: 'application/json' }
    if (body !== undefined) headers['content-type'] = contentType
    const dispatcher = context.getDispatcher()
    const response = await fetch(`${this.#server}${path}`, {
      method,
      headers,
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      ...(dispatcher === undefined ? {} : { dispatcher }),
      signal: AbortSignal.timeout(this.#requestTimeoutMs),
    })
    const text = await response.text()
    if (!response.ok) throw await apiError(method, path, response.status, text)
    return JSON.parse(text) as T
  }

  /** Any other API call, JSON in and out (TokenReview, webhook configurations, Secrets). */
  call<T>(method: 'GET' | 'POST' | 'PUT' | 'PATCH', path: string, body?: unknown, contentType?: string): Promise<T> {
    return this.#request<T>(HttpMethod[method], path, body, contentType)
  }

  async get(type: ResourceType, namespace: string, name: string): Promise<KubeObject | null> {
    try {
      return await this.#request<KubeObject>(HttpMethod.GET, objectPath(type, namespace, name))
    } catch (error) {
      if (error instanceof KubeApiError && error.statusCode === 404) return null
      throw error
    }
  }

  async list(type: ResourceType, namespace: string | null): Promise<ObjectList> {
    const list = await this.#request<{ items: KubeObject[]; metadata: { resourceVersion: string } }>(HttpMethod.GET, collectionPath(type, namespace))
    // List items carry no apiVersion/kind; set them so objects look the same as from a watch.
    const items = list.items.map((item) => ({ ...item, apiVersion: apiVersionOf(type), kind: type.kind }))
    return { items, resourceVersion: list.metadata.resourceVersion }
  }

  async watch(type: ResourceType, namespace: string | null, resourceVersion: string, handlers: WatchHandlers): Promise<() => void> {
    let stopped = false
    const controller = await this.#watcher.watch(
      collectionPath(type, namespace),
      { resourceVersion, allowWatchBookmarks: true },
      (phase, object: KubeObject) => {
        if (stopped) return
        if (phase === 'ERROR') {
          // A Status object in the stream, e.g. 410 Gone when resourceVersion is too old.
          const status = object as unknown as { code?: number; reason?: string; message?: string }
          stopped = true
          controller.abort()
          handlers.onDone(new KubeApiError(status.code ?? 500, status.reason ?? 'Unknown', status.message ?? 'watch error'))
          return
        }
        handlers.onEvent(phase as WatchEventType, object)
      },
      (error: unknown) => {
        if (stopped) return
        stopped = true
        handlers.onDone(error ?? null)
      },
    )
    return () => {
      stopped = true
      controller.abort()
    }
  }

  /** Creates an object; a KubeApiError with statusCode 409 when it exists. */
  create(type: ResourceType, namespace: string, object: Record<string, unknown>): Promise<KubeObject> {
    return this.#request(HttpMethod.POST, `${collectionPath(type, namespace)}?fieldManager=${FIELD_MANAGER}`, object)
  }

  /** A JSON merge patch of the object itself (not its status). */
  mergePatch(type: ResourceType, namespace: string, name: string, patch: Record<string, unknown>): Promise<KubeObject> {
    return this.#request(HttpMethod.PATCH, `${objectPath(type, namespace, name)}?fieldManager=${FIELD_MANAGER}`, patch, MERGE_PATCH)
  }

  patchStatus(type: ResourceType, namespace: string, name: string, status: Record<string, unknown>): Promise<KubeObject> {
    // A merge patch replaces lists whole, so `conditions` is written exactly as computed.
    return this.#request(HttpMethod.PATCH, `${objectPath(type, namespace, name)}/status?fieldManager=${FIELD_MANAGER}`, { status }, MERGE_PATCH)
  }

  setFinalizers(type: ResourceType, namespace: string, name: string, finalizers: string[], resourceVersion: string): Promise<KubeObject> {
    return this.#request(
      HttpMethod.PATCH,
      `${objectPath(type, namespace, name)}?fieldManager=${FIELD_MANAGER}`,
      { metadata: { finalizers, resourceVersion } },
      MERGE_PATCH,
    )
  }

  async createEvent(event: EventInput): Promise<void> {
    const { involved } = event
    const namespace = involved.metadata.namespace ?? 'default'
    const now = new Date().toISOString()
    await this.#request(HttpMethod.POST, collectionPath(EVENTS, namespace), {
      apiVersion: 'v1',
      kind: 'Event',
      metadata: { generateName: `${involved.metadata.name}.`, namespace },
      involvedObject: {
        apiVersion: apiVersionOf(involved.type),
        kind: involved.type.kind,
        name: involved.metadata.name,
        namespace,
        uid: involved.metadata.uid,
        resourceVersion: involved.metadata.resourceVersion,
      },
      type: event.type,
      reason: event.reason,
      message: event.message,
      source: { component: event.component },
      reportingComponent: event.component,
      firstTimestamp: now,
      lastTimestamp: now,
      count: 1,
    })
  }

  getLease(namespace: string, name: string): Promise<Lease | null> {
    return this.get(LEASES, namespace, name) as Promise<Lease | null>
  }

  createLease(lease: Lease): Promise<Lease> {
    return this.#request(HttpMethod.POST, collectionPath(LEASES, lease.metadata.namespace ?? 'default'), { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', ...lease })
  }

  async deleteLease(namespace: string, name: string): Promise<void> {
    try {
      await this.#request(HttpMethod.DELETE, objectPath(LEASES, namespace, name))
    } catch (error) {
      if (!(error instanceof KubeApiError && error.statusCode === 404)) throw error
    }
  }

  replaceLease(lease: Lease): Promise<Lease> {
    const namespace = lease.metadata.namespace ?? 'default'
    return this.#request(HttpMethod.PUT, objectPath(LEASES, namespace, lease.metadata.name), { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', ...lease })
  }
}
