/**
 * Background workers of the control plane: key expiry, scheduled key rotation, usage-log retention,
 * MCP server sync, SSO session upkeep, and the lease-held reset and alert worker (periodic usage resets, alert and key notice e-mails).
 *
 *   const stop = startWorkers({ store, pepper, logger, clock? })
 *
 * Scheduled rotation mints keys, so it needs the pepper; without one it is not started (and says
 * so in the log).
 */
import type { Logger } from 'pino'
import { type Clock, systemClock } from '../clock.ts'
import type { LimitCounters } from '../admin/context.ts'
import type { RotatedKey } from '../identity/api-keys.ts'
import { mailerFromEnv, type Mailer } from '../notifications/mailer.ts'
import type { Store } from '../store/index.ts'
import { createKeyExpiryWorker } from './key-expiry.ts'
import { createKeyRotationWorker } from './key-rotation.ts'
import { createMcpSyncWorker, mcpSyncIntervalFromEnv } from './mcp-sync.ts'
import { createSessionCleanupWorker } from './session-cleanup.ts'
import { createResetsAndAlertsWorker } from './resets-and-alerts.ts'
import { createUsageRetentionWorker, retentionFromEnv } from './usage-retention.ts'

export interface WorkerOptions {
  store: Store
  pepper?: string
  logger: Pick<Logger, 'error' | 'warn' | 'info'>
  clock?: Clock
  onRotated?: (rotated: RotatedKey) => void | Promise<void>
  /** Environment for the retention windows (GATEHOUSE_LOG_RETENTION_DAYS, GATEHOUSE_METRICS_RETENTION_DAYS). */
  env?: NodeJS.ProcessEnv
  /** The gateways' budget counters, for usage-limit alerts. */
  limitCounters?: LimitCounters
  /** Where notification e-mails go (default: from GATEHOUSE_SMTP_* in `env`; null: recorded as not sent). */
  mailer?: Mailer | null
}

export function startWorkers(options: WorkerOptions): () => void {
  const clock = options.clock ?? systemClock
  const onError = (worker: string) => (error: unknown) => options.logger.error({ err: error, worker }, 'background worker run failed')
  const stops = [
    createKeyExpiryWorker({ store: options.store, clock, onError: onError('key-expiry') }).start(),
    createUsageRetentionWorker({ store: options.store, clock, policy: retentionFromEnv(options.env ?? {}), onError: onError('usage-retention') }).start(),
    createMcpSyncWorker({ store: options.store, clock, syncIntervalMs: mcpSyncIntervalFromEnv(options.env ?? {}), onError: onError('mcp-sync') }).start(),
    createSessionCleanupWorker({ store: options.store, clock, onError: onError('session-cleanup') }).start(),
  ]
  const mailer = options.mailer !== undefined ? options.mailer : mailerFromEnv(options.env ?? {})
  if (!mailer) options.logger.warn('notification e-mails are off: no SMTP server configured (GATEHOUSE_SMTP_URL or GATEHOUSE_SMTP_HOST); alerts are recorded as not sent')
  stops.push(createResetsAndAlertsWorker({
    store: options.store, clock, mailer, logger: options.logger, onError: onError('resets-and-alerts'),
    ...(options.limitCounters ? { counters: options.limitCounters } : {}),
  }).start())
  if (mailer && options.mailer === undefined) stops.push(() => mailer.close())
  if (options.pepper) {
    const onRotated = options.onRotated ?? ((rotated: RotatedKey) => {
      options.logger.info({ keyId: rotated.key.id, transitionEndsAt: rotated.transitionEndsAt }, 'API key rotated on schedule')
    })
    stops.push(createKeyRotationWorker({ store: options.store, pepper: options.pepper, clock, onRotated, onError: onError('key-rotation') }).start())
  } else {
    options.logger.warn('scheduled API key rotation is off: startWorkers was given no pepper')
  }
  return () => {
    for (const stop of stops) stop()
  }
}

export { createKeyExpiryWorker } from './key-expiry.ts'
export { createKeyRotationWorker } from './key-rotation.ts'
export { createResetsAndAlertsWorker } from './resets-and-alerts.ts'
