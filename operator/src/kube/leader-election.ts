/**
 * Leader election on a coordination.k8s.io/v1 Lease, so that of several operator replicas exactly
 * one reconciles and writes (the others keep serving the admin API and the snapshot stream).
 *
 * Every `retryPeriodMs` each candidate reads the Lease and, with the resourceVersion it read
 * (optimistic concurrency: a concurrent writer gets 409 and loses the round):
 * - takes it when it is free, released, or expired (renewTime + leaseDurationSeconds passed);
 * - renews it when it already holds it.
 * A leader that cannot renew within `renewDeadlineMs` steps down on its own, before the lease can
 * expire and someone else takes over, so two leaders never overlap. `stop()` releases the lease
 * (holder cleared) so a successor takes over at once instead of waiting for expiry.
 */
import { isStatus, type KubeClient, type Lease } from './client.ts'

export interface LeaderElectionOptions {
  client: KubeClient
  namespace: string
  leaseName: string
  identity: string
  leaseDurationMs?: number
  renewDeadlineMs?: number
  retryPeriodMs?: number
  now?: () => number
  onStartedLeading(): void
  onStoppedLeading(): void
  onError?(error: unknown): void
}

/** Kubernetes MicroTime: RFC 3339 with exactly six fractional digits (the API server insists). */
export function microTime(ms: number): string {
  return new Date(ms).toISOString().replace(/\.(\d{3})Z$/, '.$1000Z')
}

function leaseExpired(lease: Lease, nowMs: number): boolean {
  const renew = lease.spec.renewTime ?? lease.spec.acquireTime
  if (!renew) return true
  return Date.parse(renew) + (lease.spec.leaseDurationSeconds ?? 0) * 1000 <= nowMs
}

export class LeaderElector {
  readonly #options: Required<Omit<LeaderElectionOptions, 'onError'>> & Pick<LeaderElectionOptions, 'onError'>
  #leading = false
  #lastRenewMs = 0
  #timer: NodeJS.Timeout | null = null
  /** Campaigning on a timer (start() called, stop() not yet). */
  #running = false
  /** stop() was called: never lead again. */
  #stopped = false
  #round: Promise<void> = Promise.resolve()

  constructor(options: LeaderElectionOptions) {
    this.#options = {
      leaseDurationMs: 15_000,
      renewDeadlineMs: 10_000,
      retryPeriodMs: 2_000,
      now: Date.now,
      ...options,
    }
    if (this.#options.renewDeadlineMs >= this.#options.leaseDurationMs) throw new Error('renewDeadlineMs must be below leaseDurationMs')
  }

  get isLeader(): boolean {
    return this.#leading
  }

  start(): void {
    if (this.#running || this.#stopped) return
    this.#running = true
    this.#schedule(0)
  }

  #schedule(delayMs: number): void {
    if (!this.#running) return
    this.#timer = setTimeout(() => {
      this.#round = this.tryAcquireOrRenew().then(() => this.#schedule(this.#options.retryPeriodMs))
    }, delayMs)
  }

  /** One election round (exposed for tests, which drive rounds without timers). */
  async tryAcquireOrRenew(): Promise<void> {
    const { client, namespace, leaseName, identity, now } = this.#options
    const nowMs = now()
    try {
      const current = await client.getLease(namespace, leaseName)
      const durationSeconds = Math.ceil(this.#options.leaseDurationMs / 1000)
      if (current === null) {
        await client.createLease({
          metadata: { name: leaseName, namespace },
          spec: { holderIdentity: identity, leaseDurationSeconds: durationSeconds, acquireTime: microTime(nowMs), renewTime: microTime(nowMs), leaseTransitions: 0 },
        })
        this.#renewed(nowMs)
        return
      }
      const holder = current.spec.holderIdentity ?? ''
      const mine = holder === identity
      if (!mine && holder !== '' && !leaseExpired(current, nowMs)) {
        this.#checkDeadline(nowMs)
        return
      }
      const transitions = current.spec.leaseTransitions ?? 0
      await client.replaceLease({
        ...current,
        spec: {
          holderIdentity: identity,
          leaseDurationSeconds: durationSeconds,
          acquireTime: mine ? (current.spec.acquireTime ?? microTime(nowMs)) : microTime(nowMs),
          renewTime: microTime(nowMs),
          leaseTransitions: mine ? transitions : transitions + 1,
        },
      })
      this.#renewed(nowMs)
    } catch (error) {
      // 409: another candidate wrote first this round; not worth reporting.
      if (!isStatus(error, 409)) this.#options.onError?.(error)
      this.#checkDeadline(nowMs)
    }
  }

  #renewed(nowMs: number): void {
    this.#lastRenewMs = nowMs
    if (this.#leading || this.#stopped) return
    this.#leading = true
    this.#options.onStartedLeading()
  }

  /** A leader that has not renewed within the deadline stops acting as one. */
  #checkDeadline(nowMs: number): void {
    if (!this.#leading) return
    if (nowMs - this.#lastRenewMs < this.#options.renewDeadlineMs) return
    this.#leading = false
    this.#options.onStoppedLeading()
  }

  /** Stops campaigning; a leader steps down and releases the lease for an immediate takeover. */
  async stop(): Promise<void> {
    if (this.#stopped) return
    this.#stopped = true
    this.#running = false
    if (this.#timer) clearTimeout(this.#timer)
    await this.#round
    if (!this.#leading) return
    this.#leading = false
    this.#options.onStoppedLeading()
    const { client, namespace, leaseName, identity, now } = this.#options
    try {
      const current = await client.getLease(namespace, leaseName)
      if (current?.spec.holderIdentity !== identity) return
      await client.replaceLease({
        ...current,
        spec: { ...current.spec, holderIdentity: null, leaseDurationSeconds: 1, renewTime: microTime(now()) },
      })
    } catch (error) {
      // The lease then expires on its own; the successor only waits longer.
      this.#options.onError?.(error)
    }
  }
}
