/**
 * E-mail notifications and the worker lease (migration 0010).
 *
 * A notification is recorded once per `dedupe_key` (INSERT … ON CONFLICT DO NOTHING): whichever
 * replica or run records it first owns sending it, so nothing is sent twice. Sends that fail are
 * retried with backoff by `due`/`markFailed`. The lease is compare-and-set: it is taken when free or
 * expired, and renewed only by its holder.
 */
import { newId } from '../rows.ts'
import { jsonb, number, table, text, timestamp, type RecordOf } from '../table.ts'
import type { SqlExecutor } from '../sql.ts'

export type NotificationKind = 'usage_threshold' | 'usage_exhausted' | 'key_rotation_upcoming' | 'key_rotation_completed' | 'key_expiry_warning'
export type NotificationStatus = 'pending' | 'sent' | 'failed' | 'not_sent'

/** The `notifications` table: one row per notification, so nothing is sent twice. */
export const notificationTable = table('notifications', {
  id: text().generated(newId),
  organizationId: text().insert(),
  kind: text<NotificationKind>().insert(),
  dedupeKey: text().insert(),
  subjectType: text().insert(),
  subjectId: text().insert(),
  /** For a policy with group_by: the group's values by field (migration 0013); else null. */
  subjectGroup: jsonb<Record<string, string>>().nullable().insert(),
  recipients: jsonb<string[]>().insert(),
  messageSubject: text().insert(),
  messageText: text().insert(),
  status: text<NotificationStatus>(),
  attempts: number(),
  lastError: text().nullable(),
  nextAttemptAt: timestamp().nullable().insert(),
  sentAt: timestamp().nullable(),
  createdAt: timestamp().insert(),
})

export type NotificationRecord = RecordOf<typeof notificationTable.fields>

export interface NewNotification {
  organizationId: string
  kind: NotificationKind
  dedupeKey: string
  subjectType: string
  subjectId: string
  subjectGroup?: Record<string, string> | null
  recipients: string[]
  messageSubject: string
  messageText: string
  now: Date
}

/** Users to tell about a workspace's usage: its admins and managers, and the organisation's owners and admins. */
export interface Recipient {
  email: string
}

export class NotificationRepository {
  readonly #db: SqlExecutor

  constructor(db: SqlExecutor) {
    this.#db = db
  }

  /** Records a notification to send; null when one with the same dedupe key exists already. */
  async record(input: NewNotification): Promise<NotificationRecord | null> {
    const { now, ...fields } = input
    const insert = notificationTable.insert({ ...fields, subjectGroup: fields.subjectGroup ?? null, nextAttemptAt: now.toISOString(), createdAt: now.toISOString() })
    const [row] = await this.#db.query(`${insert.sql} ON CONFLICT (organization_id, dedupe_key) DO NOTHING RETURNING ${notificationTable.columns}`, insert.params)
    return row ? notificationTable.toRecord(row) : null
  }

  /** Pending and failed notifications whose next attempt has come, oldest first. */
  async due(now: Date, limit: number): Promise<NotificationRecord[]> {
    return notificationTable.rows(this.#db, "WHERE status IN ('pending', 'failed') AND next_attempt_at <= $1 ORDER BY next_attempt_at, id LIMIT $2", [now.toISOString(), limit])
  }

  async markSent(id: string, now: Date): Promise<void> {
    await this.#db.query(`UPDATE notifications SET status = 'sent', attempts = attempts + 1, sent_at = $2, next_attempt_at = NULL, last_error = NULL WHERE id = $1`, [id, now.toISOString()])
  }

  /** A failed attempt: retried at `retryAt`, or given up (status failed, no next attempt) when null. */
  async markFailed(id: string, error: string, retryAt: Date | null): Promise<void> {
    await this.#db.query(`UPDATE notifications SET status = 'failed', attempts = attempts + 1, last_error = $2, next_attempt_at = $3 WHERE id = $1`,
      [id, error.slice(0, 1000), retryAt ? retryAt.toISOString() : null])
  }

  /** No SMTP server is configured: kept as a record of what would have been sent. */
  async markNotSent(id: string, reason: string): Promise<void> {
    await this.#db.query(`UPDATE notifications SET status = 'not_sent', last_error = $2, next_attempt_at = NULL WHERE id = $1`, [id, reason])
  }

  async list(organizationId: string, filter: { kind?: NotificationKind } = {}): Promise<NotificationRecord[]> {
    return filter.kind
      ? notificationTable.rows(this.#db, 'WHERE organization_id = $1 AND kind = $2 ORDER BY created_at, id', [organizationId, filter.kind])
      : notificationTable.rows(this.#db, 'WHERE organization_id = $1 ORDER BY created_at, id', [organizationId])
  }

  /** E-mail addresses of a workspace's admins and managers and of the organisation's owners and admins. */
  async usageAlertRecipients(organizationId: string, workspaceId: string | null): Promise<string[]> {
    const rows = await this.#db.query<{ email: string }>(
      `SELECT DISTINCT u.email FROM users u
        WHERE u.organization_id = $1 AND (u.role IN ('owner', 'admin')
          OR ($2::text IS NOT NULL AND EXISTS (SELECT 1 FROM workspace_members m WHERE m.user_id = u.id AND m.workspace_id = $2 AND m.role IN ('admin', 'manager'))))
        ORDER BY u.email`,
      [organizationId, workspaceId],
    )
    return rows.map((row) => row.email)
  }

  /** E-mail of one user (an API key's owner), or null. */
  async userEmail(organizationId: string, userId: string): Promise<string | null> {
    const rows = await this.#db.query<{ email: string }>('SELECT email FROM users WHERE organization_id = $1 AND id = $2', [organizationId, userId])
    return rows[0]?.email ?? null
  }

  /**
   * Takes or renews the named lease for `holder` until `now + ttlMs`: true when `holder` holds it
   * afterwards. A lease held by another replica is taken only once it has expired.
   */
  async acquireLease(name: string, holder: string, now: Date, ttlMs: number): Promise<boolean> {
    const rows = await this.#db.query<{ holder: string }>(
      `INSERT INTO worker_leases (name, holder, expires_at) VALUES ($1, $2, $3)
       ON CONFLICT (name) DO UPDATE SET holder = EXCLUDED.holder, expires_at = EXCLUDED.expires_at
         WHERE worker_leases.holder = EXCLUDED.holder OR worker_leases.expires_at <= $4
       RETURNING holder`,
      [name, holder, new Date(now.getTime() + ttlMs).toISOString(), now.toISOString()],
    )
    return rows[0]?.holder === holder
  }

  async releaseLease(name: string, holder: string): Promise<void> {
    await this.#db.query('DELETE FROM worker_leases WHERE name = $1 AND holder = $2', [name, holder])
  }
}
