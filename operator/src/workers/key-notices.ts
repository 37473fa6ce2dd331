/**
 * API key notices by e-mail (the spec's Events: upcoming rotations, completed rotations and expiry
 * warnings): records a notification for each active key whose scheduled rotation or expiry is
 * within the notice window (7 days by default), and for each key rotated within the last day
 * (scheduled or manual). Each is keyed by the key and the date concerned, so it is sent once, and a
 * re-scheduled rotation or extended expiry is announced again.
 *
 * Recipients: the key's `alert_emails` and, for a user key, its user; a key with neither goes to
 * the usage-alert recipients of its workspace (admins, managers, organisation admins).
 */
import { renderNotification } from '../notifications/templates.ts'
import type { ApiKeyRecord, NotificationKind, Store } from '../store/index.ts'

const DAY_MS = 86_400_000
export const DEFAULT_NOTICE_WINDOW_MS = 7 * DAY_MS
const COMPLETED_WITHIN_MS = DAY_MS

async function keyRecipients(store: Store, key: ApiKeyRecord): Promise<string[]> {
  const out = new Set(key.alertEmails)
  if (key.userId) {
    const email = await store.notifications.userEmail(key.organizationId, key.userId)
    if (email) out.add(email)
  }
  if (out.size === 0) for (const email of await store.notifications.usageAlertRecipients(key.organizationId, key.workspaceId)) out.add(email)
  return [...out].sort()
}

interface Notice {
  kind: Extract<NotificationKind, 'key_rotation_upcoming' | 'key_rotation_completed' | 'key_expiry_warning'>
  /** The date the notice is about: part of its dedupe key. */
  at: string
  view: Record<string, unknown>
}

function noticesFor(key: ApiKeyRecord, nowMs: number, windowMs: number): Notice[] {
  const out: Notice[] = []
  const base = { keyName: key.name, keyHint: key.keyHint }
  const within = (at: string | null): at is string => at !== null && Date.parse(at) > nowMs && Date.parse(at) - nowMs <= windowMs
  if (within(key.nextRotationAt)) {
    const transitionMinutes = Math.round((key.rotationPolicy?.key_transition_period_ms ?? 0) / 60_000)
    out.push({ kind: 'key_rotation_upcoming', at: key.nextRotationAt, view: { ...base, rotatesAt: key.nextRotationAt, transitionMinutes } })
  }
  if (key.lastRotatedAt !== null && nowMs - Date.parse(key.lastRotatedAt) <= COMPLETED_WITHIN_MS) {
    out.push({ kind: 'key_rotation_completed', at: key.lastRotatedAt, view: { ...base, rotatedAt: key.lastRotatedAt, previousValidUntil: key.previousKeyExpiresAt ?? '' } })
  }
  if (within(key.expiresAt)) out.push({ kind: 'key_expiry_warning', at: key.expiresAt, view: { ...base, expiresAt: key.expiresAt } })
  return out
}

export async function recordKeyNotices(store: Store, organizationId: string, now: Date, windowMs = DEFAULT_NOTICE_WINDOW_MS): Promise<Array<{ kind: Notice['kind']; keyId: string }>> {
  const recorded: Array<{ kind: Notice['kind']; keyId: string }> = []
  for (const key of await store.apiKeys.inUse(organizationId)) {
    if (key.status !== 'active') continue
    const notices = noticesFor(key, now.getTime(), windowMs)
    if (notices.length === 0) continue
    const recipients = await keyRecipients(store, key)
    for (const notice of notices) {
      const message = renderNotification(notice.kind, notice.view)
      const record = await store.notifications.record({
        organizationId, kind: notice.kind, dedupeKey: `${notice.kind}:${key.id}:${notice.at}`, subjectType: 'api_key', subjectId: key.id, recipients,
        messageSubject: message.subject, messageText: message.text, now,
      })
      if (record) recorded.push({ kind: notice.kind, keyId: key.id })
    }
  }
  return recorded
}
