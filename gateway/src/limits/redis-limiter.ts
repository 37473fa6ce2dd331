/**
 * The Redis limiter: counters every gateway replica shares, one script call per request (see
 * redis-scripts.ts). Single node, Sentinel or Cluster by configuration; keys carry one hash tag per
 * organisation (see counter-keys.ts), so a Cluster keeps a request's counters in one slot.
 *
 * The reservations (and settlements) requested in one tick go to Redis as one script call per hash
 * slot (tick-batch.ts): each request is still all or nothing on its own counters.
 *
 * Fails fast: no offline queue and a short command timeout, so a Redis outage surfaces as a
 * `LimiterUnavailableError` within `commandTimeoutMs` and the limits stage applies each limit's
 * failure mode, instead of requests hanging on a reconnecting client.
 */
import { Redis, Cluster, type RedisOptions } from 'ioredis'
import { LimiterUnavailableError, type Counter, type Limiter, type ReserveResult, type SettleCounter } from './limiter.ts'
import { RESERVE_LUA, SETTLE_LUA, USAGE_LUA } from './redis-scripts.ts'
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

interface Scripted {
  gatehouseReserve(numberOfKeys: number, ...args: Array<string | number>): Promise<number[]>
  gatehouseSettle(numberOfKeys: number, ...args: Array<string | number>): Promise<number>
  gatehouseUsage(numberOfKeys: number, ...args: string[]): Promise<number[]>
}

type Client = (Redis | Cluster) & Scripted

const RATE_SUFFIXES = [':z', ':w', ':s'] as const
const BUDGET_SUFFIXES = [':b', ':r', ':a'] as const

function keysOf(counter: { kind: 'rate' | 'budget'; key: string }): string[] {
  return (counter.kind === 'rate' ? RATE_SUFFIXES : BUDGET_SUFFIXES).map((suffix) => counter.key + suffix)
}

interface Pending<Result> {
  readonly slotKey: string
  resolve(result: Result): void
  reject(error: unknown): void
}

interface PendingReserve extends Pending<ReserveResult> {
  readonly reservationId: string
  readonly counters: readonly Counter[]
  readonly ttlMs: number
}

interface PendingSettle extends Pending<void> {
  readonly reservationId: string
  readonly counters: readonly SettleCounter[]
}

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
    return new Cluster(options.clusterNodes, {
      enableOfflineQueue: false,
      clusterRetryStrategy: (times) => Math.min(times * 100, 2_000),
      redisOptions: { ...common, username: options.username, password: options.password },
    })
  }
  if (options.sentinels && options.sentinels.length > 0) {
    return new Redis({ ...common, sentinels: options.sentinels, name: options.sentinelName ?? 'mymaster', username: options.username, password: options.password })
  }
  if (!options.url) throw new Error('a Redis limiter needs a URL, sentinels or cluster nodes')
  return new Redis(options.url, common)
}

export class RedisLimiter implements Limiter {
  readonly #client: Client
  readonly #bootWaitMs: number
  #everReady = false
  readonly #reserves = new TickBatch<PendingReserve>((calls) => void this.#reserveBatch(calls))
  readonly #settles = new TickBatch<PendingSettle>((calls) => void this.#settleBatch(calls))

  /** `bootWaitMs`: how long a call made before the first connection waits for it (a gateway serving right after boot). */
  constructor(client: Redis | Cluster, bootWaitMs = 2_000) {
    this.#bootWaitMs = bootWaitMs
    client.once('ready', () => {
      this.#everReady = true
    })
    client.defineCommand('gatehouseReserve', { lua: RESERVE_LUA })
    client.defineCommand('gatehouseSettle', { lua: SETTLE_LUA })
    client.defineCommand('gatehouseUsage', { lua: USAGE_LUA })
    // Errors surface on the calls; an unhandled 'error' event would crash the process.
    client.on('error', () => {})
    this.#client = client as Client
  }

  /** Before the first connection, waits for it (bounded); after, a disconnected client fails fast. */
  async #connected(): Promise<void> {
    if (this.#everReady || this.#client.status === 'ready') return
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
    return new Promise((resolve, reject) => this.#reserves.add({ slotKey: counters[0]!.key, reservationId, counters, ttlMs, resolve, reject }))
  }

  settle(reservationId: string, counters: readonly SettleCounter[]): Promise<void> {
    if (counters.length === 0) return Promise.resolve()
    return new Promise((resolve, reject) => this.#settles.add({ slotKey: counters[0]!.key, reservationId, counters, resolve, reject }))
  }

  async #reserveBatch(calls: readonly PendingReserve[]): Promise<void> {
    const keys: string[] = []
    const args: Array<string | number> = [calls.length]
    for (const call of calls) {
      args.push(call.reservationId, Math.ceil(call.ttlMs), call.counters.length)
      for (const counter of call.counters) {
        keys.push(...keysOf(counter))
        args.push(counter.kind === 'rate' ? 'r' : 'b', counter.kind === 'rate' ? counter.windowMs : 0, counter.limit, Math.ceil(counter.amount), counter.enforce ? 1 : 0)
      }
    }
    let reply: number[]
    try {
      reply = await this.#call(() => this.#client.gatehouseReserve(keys.length, ...keys, ...args))
    } catch (error) {
      for (const call of calls) call.reject(error)
      return
    }
    let at = 0
    for (const call of calls) {
      const admitted = Number(reply[at]) === 1
      const states = call.counters.map((counter, index) => {
        const offset = at + 1 + index * 4
        const used = Number(reply[offset])
        return { key: counter.key, limit: counter.limit, used, remaining: Math.max(0, counter.limit - used), ok: Number(reply[offset + 1]) === 1, retryAfterMs: Number(reply[offset + 2]), resetMs: Number(reply[offset + 3]) }
      })
      at += 1 + call.counters.length * 4
      call.resolve({ admitted, states })
    }
  }

  async #settleBatch(calls: readonly PendingSettle[]): Promise<void> {
    const keys: string[] = []
    const args: Array<string | number> = [calls.length]
    for (const call of calls) {
      args.push(call.reservationId, call.counters.length)
      for (const counter of call.counters) {
        keys.push(...keysOf(counter))
        args.push(counter.kind === 'rate' ? 'r' : 'b', Math.ceil(counter.actual))
      }
    }
    try {
      await this.#call(() => this.#client.gatehouseSettle(keys.length, ...keys, ...args))
    } catch (error) {
      for (const call of calls) call.reject(error)
      return
    }
    for (const call of calls) call.resolve()
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
