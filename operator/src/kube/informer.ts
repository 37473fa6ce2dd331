/**
 * A list+watch cache of one kind, over the KubeClient port. What @kubernetes/client-node's
 * informer lacks and controllers need:
 * - a watch that ends with an error is restarted after a capped exponential backoff with jitter
 *   (the library's informer stops for good on any error but 410);
 * - 410 Gone (our resourceVersion is too old) relists at once;
 * - a periodic relist repairs anything a dropped watch event left wrong: the cache is replaced by
 *   the list and objects missing from it are reported deleted;
 * - `synced` resolves after the first successful list, so controllers never act on a partial view.
 * Handlers get the object after the change (for deletions, the last state seen).
 */
import { backoffDelayMs } from './backoff.ts'
import { isStatus, objectKey, type KubeClient, type KubeObject, type ResourceType } from './client.ts'

/** The client's inactivity timeout on a quiet watch: not a failure, the watch just resumes. */
function isTimeout(error: unknown): boolean {
  return error instanceof Error && error.name === 'TimeoutError'
}

export type InformerEvent = 'upsert' | 'delete'
export type InformerHandler = (event: InformerEvent, object: KubeObject) => void

export interface InformerOptions {
  /** Watch one namespace, or (null) all of them. */
  namespace: string | null
  /** Full relist interval (level-triggered repair of missed events). */
  relistIntervalMs?: number
  restartInitialDelayMs?: number
  restartMaxDelayMs?: number
  onError?: (error: unknown, retryInMs: number) => void
}

export class Informer {
  readonly type: ResourceType
  readonly #client: KubeClient
  readonly #options: InformerOptions
  readonly #cache = new Map<string, KubeObject>()
  readonly #handlers = new Set<InformerHandler>()
  #stopWatch: (() => void) | null = null
  #timer: NodeJS.Timeout | null = null
  #relistTimer: NodeJS.Timeout | null = null
  #failures = 0
  #running = false
  /** Bumped on each (re)start so callbacks of an abandoned watch are ignored. */
  #epoch = 0
  #markSynced: () => void = () => undefined
  readonly synced: Promise<void>

  constructor(client: KubeClient, type: ResourceType, options: InformerOptions) {
    this.#client = client
    this.type = type
    this.#options = options
    this.synced = new Promise((resolve) => (this.#markSynced = resolve))
  }

  on(handler: InformerHandler): () => void {
    this.#handlers.add(handler)
    return () => this.#handlers.delete(handler)
  }

  get(namespace: string, name: string): KubeObject | undefined {
    return this.#cache.get(objectKey({ namespace, name }))
  }

  list(): KubeObject[] {
    return [...this.#cache.values()]
  }

  start(): void {
    if (this.#running) return
    this.#running = true
    void this.#listAndWatch()
    const relistMs = this.#options.relistIntervalMs ?? 5 * 60_000
    this.#relistTimer = setInterval(() => this.#restart(0), relistMs)
    this.#relistTimer.unref()
  }

  stop(): void {
    this.#running = false
    this.#epoch++
    this.#stopWatch?.()
    this.#stopWatch = null
    if (this.#timer) clearTimeout(this.#timer)
    if (this.#relistTimer) clearInterval(this.#relistTimer)
    this.#timer = null
    this.#relistTimer = null
  }

  #emit(event: InformerEvent, object: KubeObject): void {
    for (const handler of this.#handlers) handler(event, object)
  }

  #restart(delayMs: number): void {
    if (!this.#running) return
    this.#epoch++
    this.#stopWatch?.()
    this.#stopWatch = null
    if (this.#timer) clearTimeout(this.#timer)
    this.#timer = setTimeout(() => {
      this.#timer = null
      void this.#listAndWatch()
    }, delayMs)
    this.#timer.unref()
  }

  #failed(error: unknown): void {
    if (!this.#running) return
    if (isStatus(error, 410)) {
      this.#restart(0)
      return
    }
    const delayMs = backoffDelayMs(this.#failures++, {
      initialMs: this.#options.restartInitialDelayMs ?? 200,
      maxMs: this.#options.restartMaxDelayMs ?? 30_000,
      jitter: 0.5,
    })
    this.#options.onError?.(error, delayMs)
    this.#restart(delayMs)
  }

  async #listAndWatch(): Promise<void> {
    const epoch = this.#epoch
    try {
      const { items, resourceVersion } = await this.#client.list(this.type, this.#options.namespace)
      if (epoch !== this.#epoch) return
      this.#replace(items)
      this.#markSynced()
      await this.#watchFrom(resourceVersion, epoch)
    } catch (error) {
      if (epoch === this.#epoch) this.#failed(error)
    }
  }

  /** Watches from a resourceVersion; a normal close (server timeout) resumes from the last one seen. */
  async #watchFrom(resourceVersion: string, epoch: number): Promise<void> {
    let lastResourceVersion = resourceVersion
    const stop = await this.#client.watch(this.type, this.#options.namespace, resourceVersion, {
      onEvent: (type, object) => {
        if (epoch !== this.#epoch) return
        // A healthy stream resets the restart backoff.
        this.#failures = 0
        if (object.metadata.resourceVersion) lastResourceVersion = object.metadata.resourceVersion
        if (type === 'BOOKMARK') return
        const key = objectKey(object.metadata)
        if (type === 'DELETED') {
          this.#cache.delete(key)
          this.#emit('delete', object)
        } else {
          this.#cache.set(key, object)
          this.#emit('upsert', object)
        }
      },
      onDone: (error) => {
        if (epoch !== this.#epoch) return
        this.#stopWatch = null
        if (error === null || error === undefined || isTimeout(error)) {
          void this.#watchFrom(lastResourceVersion, epoch).catch((failure: unknown) => {
            if (epoch === this.#epoch) this.#failed(failure)
          })
        } else {
          this.#failed(error)
        }
      },
    })
    if (epoch !== this.#epoch) stop()
    else this.#stopWatch = stop
  }

  /** Swaps in a fresh list: emits upserts for what changed and deletes for what vanished. */
  #replace(items: KubeObject[]): void {
    const seen = new Set<string>()
    for (const object of items) {
      const key = objectKey(object.metadata)
      seen.add(key)
      const previous = this.#cache.get(key)
      this.#cache.set(key, object)
      if (previous?.metadata.resourceVersion !== object.metadata.resourceVersion) this.#emit('upsert', object)
    }
    for (const [key, object] of [...this.#cache]) {
      if (seen.has(key)) continue
      this.#cache.delete(key)
      this.#emit('delete', object)
    }
  }
}
