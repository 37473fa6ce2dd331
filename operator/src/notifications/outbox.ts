/**
 * Sends recorded notifications that are due, one message per notification to all its recipients.
 * A failed send is retried with exponential backoff (30 s, 1 min, 2 min, … capped at one hour) up
 * to `MAX_ATTEMPTS`; then it stays `failed` with its last error. Without a mailer, due
 * notifications are marked `not_sent` and one warning per run names how many, so an alert is
 * never dropped silently.
 */
import type { Logger } from 'pino'
import type { Store } from '../store/index.ts'
import type { Mailer } from './mailer.ts'

export const MAX_ATTEMPTS = 6
const FIRST_RETRY_MS = 30_000
const MAX_RETRY_MS = 3_600_000
const BATCH_SIZE = 100

export function retryDelayMs(attemptsSoFar: number): number {
  return Math.min(MAX_RETRY_MS, FIRST_RETRY_MS * 2 ** Math.max(0, attemptsSoFar - 1))
}

export interface DeliveryResult {
  sent: number
  failed: number
  notSent: number
}

export async function deliverDueNotifications(store: Store, mailer: Mailer | null, now: Date, logger: Pick<Logger, 'warn' | 'error'>): Promise<DeliveryResult> {
  const result: DeliveryResult = { sent: 0, failed: 0, notSent: 0 }
  for (const notification of await store.notifications.due(now, BATCH_SIZE)) {
    if (notification.recipients.length === 0) {
      await store.notifications.markNotSent(notification.id, 'no recipients: nobody to tell about this subject')
      result.notSent++
      continue
    }
    if (!mailer) {
      await store.notifications.markNotSent(notification.id, 'no SMTP server configured (GATEHOUSE_SMTP_URL or GATEHOUSE_SMTP_HOST)')
      result.notSent++
      continue
    }
    try {
      await mailer.send({ to: notification.recipients, subject: notification.messageSubject, text: notification.messageText })
      await store.notifications.markSent(notification.id, now)
      result.sent++
    } catch (error) {
      const attempts = notification.attempts + 1
      const retryAt = attempts < MAX_ATTEMPTS ? new Date(now.getTime() + retryDelayMs(attempts)) : null
      const message = error instanceof Error ? error.message : String(error)
      await store.notifications.markFailed(notification.id, message, retryAt)
      result.failed++
      logger.warn({ notificationId: notification.id, kind: notification.kind, attempts, retryAt: retryAt?.toISOString() ?? null, err: message },
        retryAt ? 'sending a notification e-mail failed; it will be retried' : 'sending a notification e-mail failed for the last time; giving up')
    }
  }
  if (result.notSent > 0 && !mailer) {
    logger.warn({ notifications: result.notSent }, 'notification e-mails recorded as not sent: no SMTP server is configured (set GATEHOUSE_SMTP_URL or GATEHOUSE_SMTP_HOST)')
  }
  return result
}
