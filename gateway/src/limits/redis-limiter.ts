/**
 * The Redis limiter: counters every gateway replica shares, one script call per request (see
 * redis-scripts.ts). Single node, Sentinel or Cluster by configuration; keys carry one hash tag per
 * organisation (see counter-keys.ts), so a Cluster keeps a request's counters in one slot.
 *
 * The settlements and reservations requested in one turn of the event loop go to Redis as one
 * script call per hash slot (tick-batch.ts): each request is still all or nothing on its own
 * counters, and a counter many of them touch is sent, read and written once.
 *
 * Fails fast: a call made while the client is not connected fails at once (nothing is queued),
 * and a short command timeout bounds the rest, so a Redis outage surfaces as a
 * `LimiterUnavailableError` within `commandTimeoutMs` and the limits stage applies each limit's
 * failure mode, instead of requests hanging on a reconnecting client.
 */
import type * as IORedis from 'ioredis'
import type { Redis, Cluster, RedisOptions } from 'ioredis'
import { onDemand } from '../core/on-demand.ts'
import { LimiterUnavailableError, type Counter, type CounterState, type Limiter, type ReserveResult, type SettleCounter } from './limiter.ts'
import { APPLY_LUA, USAGE_LUA } from './redis-scripts.ts'
import { TickBatch } from './tick-batch.ts'

export interface RedisLimiterOptions {
  /** `redis://[user:password@]host:port[/db]` or `rediss://` for a single node. */
  url?: string
  /** Sentinel: the sentinels and the monitored master's name. */
  sentinels?: Array<{ host: string; port: number }>
  sentinelName?: string
  /** Cluster: seed nodes. */
  clusterNodes?: Array<{ host: string; port: number }>
  /** User and password for Sentinel/Cluster (a single node takes them from the URL). */
  username?: string
  password?: string
  commandTimeoutMs?: number
  connectTimeoutMs?: number
}

/** ioredis flattens array arguments (one level) into the command's. */
type ScriptArgs = Array<string | number | ReadonlyArray<string | number>>

interface Scripted {
  gatehouseApply(numberOfKeys: number, ...args: ScriptArgs): Promise<number[]>
  gatehouseUsage(numberOfKeys: number, ...args: string[]): Promise<number[]>
}

type Client = (Redis | Cluster) & Scripted

const RATE_SUFFIXES = [':z', ':w', ':s'] as const
const BUDGET_SUFFIXES = [':b', ':r', ':a'] as const

function keysOf(counter: { kind: 'rate' | 'budget'; key: string }): string[] {
  return (counter.kind === 'rate' ? RATE_SUFFIXES : BUDGET_SUFFIXES).map((suffix) => counter.key + suffix)
}

interface Slot {
  readonly index: number
  readonly windowMs: number
  readonly limit: number
}

/**
 * The counters of one script call, each declared once (keys, kind, window, limit) however many
 * requests of the batch touch it; the requests name it by slot (see APPLY_LUA), so a batch under
 * the same limits sends each counter once instead of once per request.
 */
class Slots {
  readonly keys: string[] = []
  /** Per slot: kind (r|b), window ms (0 for a budget), limit. */
  readonly specs: Array<string | number> = []
  readonly #rates = new Map<string, Slot>()
  readonly #budgets = new Map<string, Slot>()

  get count(): number {
    return this.specs.length / 3
  }

  /** A reservation's counter. Its limit can differ from an earlier call's (a snapshot changed in between): then a slot of its own. */
  forReserve(counter: Counter): number {
    const windowMs = counter.kind === 'rate' ? counter.windowMs : 0
    const slot = this.#slots(counter.kind).get(counter.key)
    if (slot !== undefined && slot.windowMs === windowMs && slot.limit === counter.limit) return slot.index
    return this.#declare(counter.kind, counter.key, windowMs, counter.limit, slot === undefined).index
  }

  /** A settlement's counter: any slot with its key (only the keys matter). */
  forSettle(counter: SettleCounter): number {
    return (this.#slots(counter.kind).get(counter.key) ?? this.#declare(counter.kind, counter.key, 0, 0, true)).index
  }

  #slots(kind: 'rate' | 'budget'): Map<string, Slot> {
    return kind === 'rate' ? this.#rates : this.#budgets
  }

  #declare(kind: 'rate' | 'budget', key: string, windowMs: number, limit: number, remember: boolean): Slot {
    const slot = { index: this.count + 1, windowMs, limit }
    if (remember) this.#slots(kind).set(key, slot)
    const [first, second, third] = kind === 'rate' ? RATE_SUFFIXES : BUDGET_SUFFIXES
    this.keys.push(key + first, key + second, key + third)
    this.specs.push(kind === 'rate' ? 'r' : 'b', windowMs, limit)
    return slot
  }
}

interface Pending<Result> {
  readonly slotKey: string
  readonly reservationId: string
  resolve(result: Result): void
  reject(error: unknown): void
}

interface PendingReserve extends Pending<ReserveResult> {
  readonly kind: 'reserve'
  readonly counters: readonly Counter[]
  readonly ttlMs: number
}

interface PendingSettle extends Pending<void> {
  readonly kind: 'settle'
  readonly counters: readonly SettleCounter[]
}

type PendingCall = PendingReserve | PendingSettle

/** Processes without shared counters (most sidecars, embedded mode) never load the Redis client. */
const ioredis = onDemand<typeof IORedis>('ioredis')

export function connectRedis(options: RedisLimiterOptions): Redis | Cluster {
  const common: RedisOptions = {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    commandTimeout: options.commandTimeoutMs ?? 500,
    connectTimeout: options.connectTimeoutMs ?? 2_000,
    // Reconnect quickly but never give up: Redis coming back resumes enforcement by itself.
    retryStrategy: (times) => Math.min(times * 100, 2_000),
    lazyConnect: false,
  }
  if (options.clusterNodes && options.clusterNodes.length > 0) {
    return new (ioredis().Cluster)(options.clusterNodes, {
      // Not false here: ioredis's Cluster then refuses its own ready check (CLUSTER INFO) while a
      // node connection is still being set up, and can retry its connection forever. Failing fast
      // on an outage is RedisLimiter's (#connected).
      clusterRetryStrategy: (times) => Math.min(times * 100, 2_000),
      redisOptions: { ...common, username: options.username, password: options.password },
    })
  }
  if (options.sentinels && options.sentinels.length > 0) {
    return new (ioredis().Redis)({ ...common, sentinels: options.sentinels, name: options.sentinelName ?? 'mymaster', username: options.username, password: options.password })
  }
  if (!options.url) throw new Error('a Redis limiter needs a URL, sentinels or cluster nodes')
  return new (ioredis().Redis)(options.url, common)
}

export class RedisLimiter implements Limiter {
  readonly #client: Client
  readonly #bootWaitMs: number
  #everReady = false
  readonly #calls = new TickBatch<PendingCall>((calls) => void this.#apply(calls))

  /** `bootWaitMs`: how long a call made before the first connection waits for it (a gateway serving right after boot). */
  constructor(client: Redis | Cluster, bootWaitMs = 2_000) {
    this.#bootWaitMs = bootWaitMs
    client.once('ready', () => {
      this.#everReady = true
    })
    client.defineCommand('gatehouseApply', { lua: APPLY_LUA })
    client.defineCommand('gatehouseUsage', { lua: USAGE_LUA })
    // Errors surface on the calls; an unhandled 'error' event would crash the process.
    client.on('error', () => {})
    this.#client = client as Client
  }

  /** Before the first connection, waits for it (bounded); after, a disconnected client fails fast (nothing queues). */
  async #connected(): Promise<void> {
    if (this.#client.status === 'ready') return
    if (this.#everReady) throw new Error(`not connected (${this.#client.status})`)
    await new Promise<void>((resolve, reject) => {
      const onReady = (): void => {
        clearTimeout(timer)
        resolve()
      }
      const timer = setTimeout(() => {
        this.#client.off('ready', onReady)
        reject(new Error(`not connected (${this.#client.status})`))
      }, this.#bootWaitMs)
      this.#client.once('ready', onReady)
    })
  }

  async #call<T>(run: () => Promise<T>): Promise<T> {
    try {
      await this.#connected()
      return await run()
    } catch (error) {
      throw new LimiterUnavailableError(`limit counters unavailable: ${(error as Error).message}`, { cause: error })
    }
  }

  reserve(reservationId: string, counters: readonly Counter[], ttlMs: number): Promise<ReserveResult> {
    if (counters.length === 0) return Promise.resolve({ admitted: true, states: [] })
    return new Promise((resolve, reject) => this.#calls.add({ kind: 'reserve', slotKey: counters[0]!.key, reservationId, counters, ttlMs, resolve, reject }))
  }

  settle(reservationId: string, counters: readonly SettleCounter[]): Promise<void> {
    if (counters.length === 0) return Promise.resolve()
    return new Promise((resolve, reject) => this.#calls.add({ kind: 'settle', slotKey: counters[0]!.key, reservationId, counters, resolve, reject }))
  }

  /** One script call for a batch: its settlements, then its reservations (see APPLY_LUA for the arguments). */
  async #apply(calls: readonly PendingCall[]): Promise<void> {
    const slots = new Slots()
    const reserves: PendingReserve[] = []
    const settles: Array<string | number> = [0]
    const requests: Array<string | number> = [0]
    for (const call of calls) {
      if (call.kind === 'settle') {
        settles[0] = (settles[0] as number) + 1
        settles.push(call.reservationId, call.counters.length)
        for (const counter of call.counters) settles.push(slots.forSettle(counter), Math.ceil(counter.actual))
        continue
      }
      reserves.push(call)
      requests.push(call.reservationId, Math.ceil(call.ttlMs), call.counters.length)
      // A shadow counter is named by its slot negated.
      for (const counter of call.counters) requests.push(counter.enforce ? slots.forReserve(counter) : -slots.forReserve(counter), Math.ceil(counter.amount))
    }
    requests[0] = reserves.length
    let reply: number[]
    try {
      reply = await this.#call(() => this.#client.gatehouseApply(slots.keys.length, slots.keys, slots.count, slots.specs, settles, requests))
    } catch (error) {
      for (const call of calls) call.reject(error)
      return
    }
    let at = 0
    for (const call of reserves) {
      const admitted = reply[at] === 1
      const states: CounterState[] = []
      for (const counter of call.counters) {
        const used = reply[at + 1]!
        states.push({ key: counter.key, limit: counter.limit, used, remaining: Math.max(0, counter.limit - used), ok: reply[at + 2] === 1, retryAfterMs: reply[at + 3]!, resetMs: reply[at + 4]! })
        at += 4
      }
      at += 1
      call.resolve({ admitted, states })
    }
    for (const call of calls) if (call.kind === 'settle') call.resolve()
  }

  async usage(keys: readonly string[]): Promise<number[]> {
    if (keys.length === 0) return []
    const all = keys.flatMap((key) => keysOf({ kind: 'budget', key }))
    const reply = await this.#call(() => this.#client.gatehouseUsage(all.length, ...all))
    return reply.map(Number)
  }

  async close(): Promise<void> {
    this.#client.disconnect()
  }
}
