/**
 * SSO session upkeep: every hour, delete sign-ins that were never completed and sessions that can
 * no longer be accepted (ended, or older than the organisation's max_session_ttl as set now).
 * Refusal never depends on this worker (every request checks the row); it only keeps the tables small.
 */
import type { Clock } from '../clock.ts'
import { maxSessionTtlSeconds } from '../identity/settings.ts'
import type { Store } from '../store/index.ts'
import { startInterval, type WorkerErrorHandler } from './interval.ts'

const HOUR_MS = 3_600_000

export function createSessionCleanupWorker(options: { store: Store; clock: Clock; onError: WorkerErrorHandler; intervalMs?: number }) {
  const run = async (): Promise<{ logins: number; sessions: number }> => {
    const now = options.clock()
    const logins = await options.store.sessions.purgeLogins(now)
    const organisation = await options.store.organizations.first()
    if (!organisation) return { logins, sessions: 0 }
    const startedBefore = new Date(now.getTime() - maxSessionTtlSeconds(organisation.settings) * 1000)
    return { logins, sessions: await options.store.sessions.purge(organisation.id, startedBefore) }
  }
  return {
    run,
    start: () => {
      void run().catch(options.onError)
      return startInterval(run, options.intervalMs ?? HOUR_MS, options.onError)
    },
  }
}
