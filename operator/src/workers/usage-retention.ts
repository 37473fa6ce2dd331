/**
 * Log retention: every hour, drop the usage-log partitions of days past the logs window and
 * delete rollups past theirs (defaults: 90 days of logs, 365 of hourly rollups, 7 of minute ones;
 * GATEHOUSE_LOG_RETENTION_DAYS and GATEHOUSE_METRICS_RETENTION_DAYS override the first two).
 */
import type { Clock } from '../clock.ts'
import { DEFAULT_RETENTION, type RetentionPolicy, type Store } from '../store/index.ts'
import { startInterval, type WorkerErrorHandler } from './interval.ts'

const HOUR_MS = 3_600_000

export function retentionFromEnv(env: NodeJS.ProcessEnv): RetentionPolicy {
  const days = (name: string, fallback: number): number => {
    const raw = env[name]
    if (raw === undefined || raw === '') return fallback
    const value = Number(raw)
    if (!Number.isInteger(value) || value < 1 || value > 3650) throw new Error(`${name} must be a whole number of days from 1 to 3650`)
    return value
  }
  return { ...DEFAULT_RETENTION, logsDays: days('GATEHOUSE_LOG_RETENTION_DAYS', DEFAULT_RETENTION.logsDays), rollupDays: days('GATEHOUSE_METRICS_RETENTION_DAYS', DEFAULT_RETENTION.rollupDays) }
}

export function createUsageRetentionWorker(options: { store: Store; clock: Clock; policy: RetentionPolicy; onError: WorkerErrorHandler; intervalMs?: number }) {
  const run = () => options.store.usageLogs.applyRetention(options.clock(), options.policy)
  return {
    run,
    start: () => {
      void run().catch(options.onError)
      return startInterval(run, options.intervalMs ?? HOUR_MS, options.onError)
    },
  }
}
