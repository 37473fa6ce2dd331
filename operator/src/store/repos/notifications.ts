/**
 * E-mail notifications and the worker lease (migration 0010).
 *
 * A notification is recorded once per `dedupe_key` (INSERT … ON CONFLICT DO NOTHING): whichever
 * replica or run records it first owns sending it, so nothing is sent twice. Sends that fail are
 * retried with backoff by `due`/`markFailed`. The lease is compare-and-set: it is taken when free or
 * expired, and renewed only by its holder.
 */
import { iso, isoRequired, json, newId } from '../rows.ts'
import type { SqlExecutor } from '../sql.ts'

export type NotificationKind = 'usage_threshold' | 'usage_exhausted' | 'key_rotation_upcoming' | 'key_rotation_completed' | 'key_expiry_warning'
export type NotificationStatus = 'pending' | 'sent' | 'failed' | 'not_sent'

export interface NotificationRecord {
  id: string
  organizationId: string
  kind: NotificationKind
  dedupeKey: string
  subjectType: string
  subjectId: string
  /** For a policy with group_by: the group's values by field (migration 0014); else null. */
  subjectGroup: Record<string, string> | null
  recipients: string[]
  messageSubject: string
  messageText: string
  status: NotificationStatus
  attempts: number
  lastError: string | null
  nextAttemptAt: string | null
  sentAt: string | null
  createdAt: string
}

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

interface Row {
  id: string
  organization_id: string
  kind: NotificationKind
  dedupe_key: string
  subject_type: string
  subject_id: string
  subject_group: Record<string, string> | null
  recipients: string[]
  message_subject: string
  message_text: string
  status: NotificationStatus
  attempts: number
  last_error: string | null
  next_attempt_at: Date | null
  sent_at: Date | null
  created_at: Date
}

const toRecord = (row: Row): NotificationRecord => ({
  id: row.id, organizationId: row.organization_id, kind: row.kind, dedupeKey: row.dedupe_key, subjectType: row.subject_type, subjectId: row.subject_id, subjectGroup: row.subject_group,
  recipients: row.recipients, messageSubject: row.message_subject, messageText: row.message_text, status: row.status, attempts: row.attempts,
  lastError: row.last_error, nextAttemptAt: iso(row.next_attempt_at), sentAt: iso(row.sent_at), createdAt: isoRequired(row.created_at),
})

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
    const rows = await this.#db.query<Row>(
      `INSERT INTO notifications (id, organization_id, kind, dedupe_key, subject_type, subject_id, subject_group, recipients, message_subject, message_text, next_attempt_at, created_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7::jsonb, $8::jsonb, $9, $10, $11, $11)
       ON CONFLICT (organization_id, dedupe_key) DO NOTHING RETURNING *`,
      [newId(), input.organizationId, input.kind, input.dedupeKey, input.subjectType, input.subjectId, input.subjectGroup ? json(input.subjectGroup) : null,
        json(input.recipients), input.messageSubject, input.messageText, input.now.toISOString()],
    )
    return rows[0] ? toRecord(rows[0]) : null
  }

  /** Pending and failed notifications whose next attempt has come, oldest first. */
  async due(now: Date, limit: number): Promise<NotificationRecord[]> {
    const rows = await this.#db.query<Row>(
      `SELECT * FROM notifications WHERE status IN ('pending', 'failed') AND next_attempt_at <= $1 ORDER BY next_attempt_at, id LIMIT $2`,
      [now.toISOString(), limit],
    )
    return rows.map(toRecord)
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
    const rows = filter.kind
      ? await this.#db.query<Row>('SELECT * FROM notifications WHERE organization_id = $1 AND kind = $2 ORDER BY created_at, id', [organizationId, filter.kind])
      : await this.#db.query<Row>('SELECT * FROM notifications WHERE organization_id = $1 ORDER BY created_at, id', [organizationId])
    return rows.map(toRecord)
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
