/**
 * The reset and alert worker: on every control-plane replica a loop runs each `intervalMs`, but
 * only the holder of the `usage-resets-and-alerts` lease (a compare-and-set row in the store,
 * renewed each run, taken over by another replica once it lapses) does the work:
 *
 *   1. advance periodic usage resets (usage-resets.ts), reactivating exhausted keys;
 *   2. record usage-limit alerts from the budget counters (usage-alerts.ts), when counters are set;
 *   3. record API key rotation and expiry notices (key-notices.ts);
 *   4. send what is due by SMTP, with retries (notifications/outbox.ts).
 *
 * Every notification is recorded under a dedupe key before it is sent, so a lease changing hands
 * mid-run cannot send one twice (a send that was in flight when its replica died is retried by
 * the next holder: at least once, and once in the normal case).
 */
import { randomUUID } from 'node:crypto'
import type { Logger } from 'pino'
import type { LimitCounters } from '../admin/context.ts'
import type { Clock } from '../clock.ts'
import type { Mailer } from '../notifications/mailer.ts'
import { deliverDueNotifications, type DeliveryResult } from '../notifications/outbox.ts'
import type { Store } from '../store/index.ts'
import { startInterval, type WorkerErrorHandler } from './interval.ts'
import { recordKeyNotices } from './key-notices.ts'
import { recordUsageAlerts } from './usage-alerts.ts'
import { advanceUsageResets, type UsageReset } from './usage-resets.ts'

export const LEASE_NAME = 'usage-resets-and-alerts'
const DEFAULT_INTERVAL_MS = 30_000

export interface ResetsAndAlertsOptions {
  store: Store
  clock: Clock
  mailer: Mailer | null
  /** The gateways' budget counters; without them no usage alert can be measured. */
  counters?: LimitCounters
  logger: Pick<Logger, 'warn' | 'error' | 'info'>
  intervalMs?: number
  /** This replica's lease holder name (default: a random id per process). */
  holder?: string
  onError?: WorkerErrorHandler
}

export interface ResetsAndAlertsRun {
  leader: boolean
  resets: UsageReset[]
  alerts: number
  keyNotices: number
  delivery: DeliveryResult
}

export function createResetsAndAlertsWorker(options: ResetsAndAlertsOptions): { runOnce(): Promise<ResetsAndAlertsRun>; start(): () => void } {
  const intervalMs = options.intervalMs ?? DEFAULT_INTERVAL_MS
  const holder = options.holder ?? `${process.pid}-${randomUUID()}`
  const { store, logger } = options
  let warnedNoCounters = false

  async function runOnce(): Promise<ResetsAndAlertsRun> {
    const now = options.clock()
    const idle: ResetsAndAlertsRun = { leader: false, resets: [], alerts: 0, keyNotices: 0, delivery: { sent: 0, failed: 0, notSent: 0 } }
    // Three missed runs before another replica may take over.
    if (!(await store.notifications.acquireLease(LEASE_NAME, holder, now, intervalMs * 3))) return idle
    const organization = await store.organizations.first()
    if (!organization) return { ...idle, leader: true }
    const resets = await advanceUsageResets(store, organization.id, now)
    for (const reset of resets) logger.info({ source: reset.source, id: reset.id, lastResetAt: reset.lastResetAt, reactivated: reset.reactivated }, 'usage limit period reset')
    let alerts = 0
    if (options.counters) {
      const result = await recordUsageAlerts(store, options.counters, organization.id, now)
      alerts = result.recorded.length
      for (const keyId of result.reactivated) logger.info({ keyId }, 'exhausted API key reactivated: its usage limits have room again')
    } else if (!warnedNoCounters) {
      warnedNoCounters = true
      logger.warn('usage-limit alerts are off: the control plane has no budget counters (set GATEHOUSE_REDIS_URL to the gateways\' Redis)')
    }
    const keyNotices = (await recordKeyNotices(store, organization.id, now)).length
    const delivery = await deliverDueNotifications(store, options.mailer, now, logger)
    return { leader: true, resets, alerts, keyNotices, delivery }
  }

  return {
    runOnce,
    start: () => {
      const stop = startInterval(runOnce, intervalMs, options.onError)
      return () => {
        stop()
        void store.notifications.releaseLease(LEASE_NAME, holder).catch(() => undefined)
      }
    },
  }
}
