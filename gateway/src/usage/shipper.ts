/**
 * The gateway's usage sink: drafts queue in memory (returning at once) and are serialised after
 * the event loop's current turn, off the request path; a timer (or a full batch) ships the
 * serialised records to the control plane. Serialising within the turn, rather than when a batch
 * leaves, lets a draft and the bodies it points at die young: kept until a batch of 500 left, they
 * outlived young-generation collections and were collected later at a higher price (three
 * alternating runs of test/bench/account-cpu.ts, log level full, least added CPU a request: 9.4 to
 * 10.8 µs serialising at batch time, 5.4 to 8.0 µs serialising within the turn). A batch the
 * control plane did not take goes to the on-disk spool; spooled batches are sent, oldest first,
 * before new ones once it answers again. Records carry ids, so a batch sent twice is stored once.
 *
 * Without a spool (no directory configured) failed batches wait in memory, bounded by
 * `maxQueuedRecords`: past it the oldest lose their bodies first, then (only then) the oldest
 * records go, counted in `recordsDropped`.
 */
import type { UsageRecordInput } from '../snapshot/usage-record.ts'
import { wireLine, type UsageDraft, type UsageSink } from './draft.ts'
import { RecordBatch, type UsageBatch } from './record-batch.ts'
import type { UsageSpool } from './spool.ts'

/**
 * Delivers one batch of serialised records (the transport frames them for its hop:
 * `{"records":[...]}` over HTTP); throws when the control plane did not store it.
 */
export type UsageTransport = (batch: UsageBatch) => Promise<void>

export interface UsageShipperOptions {
  transport: UsageTransport
  spool?: UsageSpool | null
  batchSize?: number
  flushIntervalMs?: number
  maxQueuedRecords?: number
  onError?: (error: unknown, context: string) => void
}

export interface UsageShipperStats {
  queued: number
  shipped: number
  spooled: number
  /** Records whose bodies were shed (memory or spool) to stay bounded. */
  bodiesDropped: number
  /** Records lost outright: only without a spool, past the memory bound. */
  recordsDropped: number
  spoolBytes: number
  spoolSegments: number
  /** The spool's bound (0 without a spool); over it, bodies are being shed. */
  spoolMaxBytes: number
  spoolOverBound: boolean
}

const DEFAULTS = { batchSize: 500, flushIntervalMs: 1000, maxQueuedRecords: 50_000 }

export class UsageShipper implements UsageSink {
  readonly #options: Required<Omit<UsageShipperOptions, 'spool' | 'onError'>> & Pick<UsageShipperOptions, 'onError'>
  readonly #spool: UsageSpool | null
  /** Offered this turn, not yet serialised. */
  #drafts: UsageDraft[] = []
  #serialiseSoon: NodeJS.Immediate | null = null
  /** The batch records are serialised into (as bytes, off the V8 heap: record-batch.ts). */
  #filling = new RecordBatch()
  /** Full batches waiting to be sent, oldest first. */
  #full: RecordBatch[] = []
  /** Serialised batches that failed and have no spool to go to. */
  #held: string[][] = []
  #timer: NodeJS.Timeout | null = null
  #immediate: NodeJS.Immediate | null = null
  #running: Promise<void> = Promise.resolve()
  #shipped = 0
  #spooled = 0
  #memoryBodiesDropped = 0
  #recordsDropped = 0

  constructor(options: UsageShipperOptions) {
    this.#options = { ...DEFAULTS, ...options }
    this.#spool = options.spool ?? null
  }

  /** Starts the flush timer (and drains what an earlier process spooled). */
  start(): void {
    if (this.#timer !== null) return
    this.#timer = setInterval(() => void this.flush(), this.#options.flushIntervalMs)
    this.#timer.unref()
    void this.flush()
  }

  offer(draft: UsageDraft): void {
    this.#drafts.push(draft)
    this.#serialiseSoon ??= setImmediate(() => {
      this.#serialiseSoon = null
      this.#serialiseDrafts()
    })
  }

  /** Serialises what was offered; a full batch is shipped at the next turn. */
  #serialiseDrafts(): void {
    const drafts = this.#drafts
    this.#drafts = []
    for (const draft of drafts) {
      try {
        this.#filling.add(wireLine(draft))
      } catch (error) {
        // One record that cannot be serialised (a body JSON cannot write) costs itself only.
        this.#recordsDropped++
        this.#options.onError?.(error, 'usage record serialisation')
        continue
      }
      if (this.#filling.count >= this.#options.batchSize) this.#sealBatch()
    }
    if (this.#full.length > 0 && this.#immediate === null) {
      this.#immediate = setImmediate(() => {
        this.#immediate = null
        void this.flush()
      })
    }
  }

  /** The filling batch joins the full ones (when it holds anything). */
  #sealBatch(): void {
    if (this.#filling.count === 0) return
    this.#full.push(this.#filling)
    this.#filling = new RecordBatch()
  }

  stats(): UsageShipperStats {
    const spool = this.#spool?.stats()
    return {
      queued: this.#drafts.length + this.#filling.count + this.#full.reduce((sum, batch) => sum + batch.count, 0) + this.#held.reduce((sum, batch) => sum + batch.length, 0),
      shipped: this.#shipped,
      spooled: this.#spooled,
      bodiesDropped: this.#memoryBodiesDropped + (spool?.bodiesDropped ?? 0),
      recordsDropped: this.#recordsDropped,
      spoolBytes: spool?.bytes ?? 0,
      spoolSegments: spool?.segments ?? 0,
      spoolMaxBytes: spool?.maxBytes ?? 0,
      spoolOverBound: spool?.overBound ?? false,
    }
  }

  /** Ships everything queued (one flush at a time); never throws. */
  flush(): Promise<void> {
    this.#running = this.#running.then(() => this.#flushOnce()).catch((error: unknown) => this.#options.onError?.(error, 'usage flush'))
    return this.#running
  }

  /** Stops the timer and ships (or spools) what is left. */
  async close(): Promise<void> {
    if (this.#timer !== null) clearInterval(this.#timer)
    if (this.#immediate !== null) clearImmediate(this.#immediate)
    if (this.#serialiseSoon !== null) clearImmediate(this.#serialiseSoon)
    this.#timer = null
    this.#immediate = null
    this.#serialiseSoon = null
    await this.flush()
  }

  async #flushOnce(): Promise<void> {
    this.#serialiseDrafts()
    this.#sealBatch()
    // Older first: what the spool (or memory) holds, then the queue.
    if (!(await this.#drainBacklog())) {
      await this.#parkQueue()
      return
    }
    while (this.#full.length > 0) {
      const batch = this.#full.shift()!
      if (!(await this.#send(batch))) {
        await this.#park(batch.lines())
        await this.#parkQueue()
        return
      }
    }
  }

  /** Sends one batch; its bytes are reused once it was delivered (after a failure they may still be read). */
  async #send(batch: RecordBatch): Promise<boolean> {
    try {
      await this.#options.transport(batch)
      this.#shipped += batch.count
      batch.release()
      return true
    } catch (error) {
      this.#options.onError?.(error, 'usage delivery')
      return false
    }
  }

  /** Sends held and spooled batches oldest first; false when the control plane still does not take them. */
  async #drainBacklog(): Promise<boolean> {
    while (this.#held.length > 0) {
      if (!(await this.#send(RecordBatch.of(this.#held[0]!)))) return false
      this.#held.shift()
    }
    if (this.#spool === null) return true
    for (;;) {
      const segment = await this.#spool.oldest()
      if (segment === null) return true
      if (!(await this.#send(RecordBatch.of(segment.lines)))) return false
      await this.#spool.remove(segment.name)
    }
  }

  /** While the control plane is away, the queue goes to the spool batch by batch. */
  async #parkQueue(): Promise<void> {
    for (let batch = this.#full.shift(); batch !== undefined; batch = this.#full.shift()) await this.#park(batch.lines())
  }

  async #park(lines: string[]): Promise<void> {
    this.#spooled += lines.length
    if (this.#spool !== null) {
      await this.#spool.append(lines)
      return
    }
    this.#held.push(lines)
    this.#boundMemory()
  }

  #boundMemory(): void {
    let total = this.#held.reduce((sum, batch) => sum + batch.length, 0)
    if (total <= this.#options.maxQueuedRecords) return
    for (const batch of this.#held) {
      for (let index = 0; index < batch.length; index++) {
        const record = JSON.parse(batch[index]!) as UsageRecordInput
        // Absent on the wire means null (wireLine leaves out what the schema defaults).
        if (record.requestBody == null && record.responseBody == null) continue
        batch[index] = JSON.stringify({ ...record, requestBody: null, responseBody: null, bodiesDropped: true })
        this.#memoryBodiesDropped++
      }
    }
    while (total > this.#options.maxQueuedRecords && this.#held.length > 1) {
      const dropped = this.#held.shift()!
      total -= dropped.length
      this.#recordsDropped += dropped.length
    }
  }
}
