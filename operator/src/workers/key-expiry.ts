/**
 * Key expiry worker: marks active keys past `expires_at` as expired and forgets previous secrets
 * whose rotation transition has ended. Both are idempotent UPDATEs, so several control-plane
 * replicas may run it at once. Each change reaches the gateway through the store's change feed;
 * the gateway also refuses a key past its `expiresAt` on its own, so the worker's delay never
 * extends a key's life.
 */
import type { Clock } from '../clock.ts'
import type { Store } from '../store/index.ts'
import { startInterval, type WorkerErrorHandler } from './interval.ts'

export interface KeyExpiryWorkerOptions {
  store: Store
  clock: Clock
  intervalMs?: number
  onError?: WorkerErrorHandler
}

export function createKeyExpiryWorker(options: KeyExpiryWorkerOptions): { runOnce(): Promise<{ expired: string[]; transitionsEnded: string[] }>; start(): () => void } {
  const { store, clock } = options
  async function runOnce(): Promise<{ expired: string[]; transitionsEnded: string[] }> {
    const now = clock()
    return store.transaction(async (tx) => {
      const expired = await tx.apiKeys.expireDue(now)
      const transitionsEnded = await tx.apiKeys.endTransitions(now)
      const organization = expired.length > 0 ? await tx.organizations.first() : null
      for (const id of expired) {
        await tx.audit.record({ organizationId: organization!.id, actorType: 'system', actorId: 'key-expiry-worker', action: 'api_key.expire', resourceType: 'api_key', resourceId: id })
      }
      return { expired, transitionsEnded }
    })
  }
  return { runOnce, start: () => startInterval(runOnce, options.intervalMs ?? 15_000, options.onError) }
}
