/**
 * Scheduled rotation worker: rotates active keys whose `next_rotation_at` has come. The old secret
 * stays valid for the policy's transition window. The new raw key exists only in memory here and
 * is handed to `onRotated` (delivery to the key's owner — e-mail, webhook, secret manager — plugs
 * in there); it is never logged or stored. Rotation is compare-and-set on the current hash, so
 * racing replicas rotate a key once.
 */
import type { Clock } from '../clock.ts'
import { rotateKeyRecord, type RotatedKey } from '../identity/api-keys.ts'
import type { Store } from '../store/index.ts'
import { startInterval, type WorkerErrorHandler } from './interval.ts'

const BATCH_SIZE = 100

export interface KeyRotationWorkerOptions {
  store: Store
  pepper: string
  clock: Clock
  intervalMs?: number
  onRotated?: (rotated: RotatedKey) => void | Promise<void>
  onError?: WorkerErrorHandler
}

export function createKeyRotationWorker(options: KeyRotationWorkerOptions): { runOnce(): Promise<string[]>; start(): () => void } {
  const { store, pepper, clock } = options
  async function runOnce(): Promise<string[]> {
    const now = clock()
    const rotatedIds: string[] = []
    for (const key of await store.apiKeys.dueForRotation(now, BATCH_SIZE)) {
      const rotated = await rotateKeyRecord(store, pepper, key, undefined, now)
      if (!rotated) continue
      rotatedIds.push(key.id)
      await store.audit.record({
        organizationId: key.organizationId, actorType: 'system', actorId: 'key-rotation-worker', action: 'api_key.rotate', resourceType: 'api_key',
        resourceId: key.id, workspaceId: key.workspaceId, details: { scheduled: true, key_transition_expires_at: rotated.transitionEndsAt },
      })
      await options.onRotated?.(rotated)
    }
    return rotatedIds
  }
  return { runOnce, start: () => startInterval(runOnce, options.intervalMs ?? 60_000, options.onError) }
}
