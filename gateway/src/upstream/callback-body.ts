/**
 * A streamed response body fed straight from the dispatcher's callbacks, read as an async iterable.
 *
 * Why not undici's `request()` body: that is a Node `Readable`, and its construction, its async
 * iterator and its end-of-stream machinery were the largest gateway-side cost of a streamed chat
 * answer (more than decoding and writing the events). This queue hands each network read to the
 * reader with one promise at most, pauses the connection when the reader falls behind, and ends
 * in one of two ways the owner chooses: `dump` (read off what little follows, so the connection
 * returns to the pool) or `destroy` (abort the request, closing the connection).
 */
import type { Dispatcher } from 'undici'

/** Past this many queued bytes the connection is paused until the reader catches up. */
const HIGH_WATER_BYTES = 1024 * 1024

interface Waiter {
  resolve(result: IteratorResult<Uint8Array>): void
  reject(error: unknown): void
}

export interface IteratorOptions {
  /** Whether leaving a `for await` early aborts the request (the default, as for a Readable). */
  destroyOnReturn?: boolean
}

export class CallbackBody implements AsyncIterable<Uint8Array> {
  #controller: Dispatcher.DispatchController | null = null
  readonly #chunks: Buffer[] = []
  #queuedBytes = 0
  #paused = false
  #ended = false
  #failure: unknown = null
  #waiter: Waiter | null = null
  #destroyed = false
  #deliveryQueued = false
  /** Set while dumping: how many more bytes may be read off before the request is aborted instead. */
  #dumpBudgetBytes: number | null = null
  #dumped: (() => void) | null = null

  get destroyed(): boolean {
    return this.#destroyed
  }

  /** The dispatcher's controller, once the request started (pause, resume, abort). */
  attach(controller: Dispatcher.DispatchController): void {
    this.#controller = controller
  }

  push(chunk: Buffer): void {
    if (this.#destroyed) return
    if (this.#dumpBudgetBytes !== null) {
      this.#dumpBudgetBytes -= chunk.byteLength
      if (this.#dumpBudgetBytes < 0) this.destroy()
      return
    }
    this.#chunks.push(chunk)
    this.#queuedBytes += chunk.byteLength
    // A waiting reader gets what arrived once the current network read is parsed (a microtask
    // later), so pieces of one read reach it together, as a Readable's `read()` would join them.
    if (this.#waiter && !this.#deliveryQueued) {
      this.#deliveryQueued = true
      queueMicrotask(this.#deliver)
    }
    if (!this.#paused && this.#queuedBytes > HIGH_WATER_BYTES) {
      this.#paused = true
      this.#controller?.pause()
    }
  }

  readonly #deliver = (): void => {
    this.#deliveryQueued = false
    const waiter = this.#waiter
    if (!waiter || this.#chunks.length === 0) return
    this.#waiter = null
    waiter.resolve({ value: this.#take(), done: false })
  }

  /** Everything queued, as one buffer: fewer, larger batches for the decoder and the writer. */
  #take(): Buffer {
    const chunk = this.#chunks.length === 1 ? this.#chunks[0]! : Buffer.concat(this.#chunks, this.#queuedBytes)
    this.#chunks.length = 0
    this.#queuedBytes = 0
    if (this.#paused) {
      this.#paused = false
      this.#controller?.resume()
    }
    return chunk
  }

  end(): void {
    this.#ended = true
    this.#settleDump()
    const waiter = this.#waiter
    if (waiter && this.#chunks.length === 0) {
      this.#waiter = null
      waiter.resolve({ value: undefined, done: true })
    }
  }

  fail(error: unknown): void {
    if (this.#ended || this.#failure !== null) return
    this.#failure = error
    this.#settleDump()
    const waiter = this.#waiter
    // Data that arrived before the failure is read first; the next read throws.
    if (waiter && this.#chunks.length === 0) {
      this.#waiter = null
      waiter.reject(error)
    }
  }

  #next(): Promise<IteratorResult<Uint8Array>> {
    if (this.#chunks.length > 0) return Promise.resolve({ value: this.#take(), done: false })
    if (this.#failure !== null) return Promise.reject(this.#failure)
    if (this.#ended || this.#destroyed) return Promise.resolve({ value: undefined, done: true })
    return new Promise((resolve, reject) => {
      this.#waiter = { resolve, reject }
    })
  }

  iterator(options: IteratorOptions = {}): AsyncIterableIterator<Uint8Array> {
    const destroyOnReturn = options.destroyOnReturn !== false
    const iterator: AsyncIterableIterator<Uint8Array> = {
      next: () => this.#next(),
      return: () => {
        if (destroyOnReturn) this.destroy()
        return Promise.resolve({ value: undefined, done: true })
      },
      [Symbol.asyncIterator]: () => iterator,
    }
    return iterator
  }

  [Symbol.asyncIterator](): AsyncIterator<Uint8Array> {
    return this.iterator()
  }

  /** Aborts the request (closing its connection) and drops what was queued. Idempotent. */
  destroy(error?: Error): void {
    if (this.#destroyed) return
    this.#destroyed = true
    this.#chunks.length = 0
    this.#queuedBytes = 0
    if (!this.#ended && this.#failure === null) this.#controller?.abort(error ?? new Error('response body destroyed'))
    this.#settleDump()
    const waiter = this.#waiter
    if (waiter) {
      this.#waiter = null
      if (error) waiter.reject(error)
      else waiter.resolve({ value: undefined, done: true })
    }
  }

  /**
   * Reads off and drops the rest of the body, up to `limit` bytes, so the connection goes back to
   * the pool; past the limit the request is aborted instead. Resolves once the body is over.
   */
  dump(options: { limit: number }): Promise<void> {
    if (this.#ended || this.#destroyed || this.#failure !== null) return Promise.resolve()
    this.#dumpBudgetBytes = options.limit - this.#queuedBytes
    this.#chunks.length = 0
    this.#queuedBytes = 0
    if (this.#dumpBudgetBytes < 0) {
      this.destroy()
      return Promise.resolve()
    }
    if (this.#paused) {
      this.#paused = false
      this.#controller?.resume()
    }
    return new Promise((resolve) => {
      this.#dumped = resolve
    })
  }

  #settleDump(): void {
    const dumped = this.#dumped
    this.#dumped = null
    dumped?.()
  }
}
