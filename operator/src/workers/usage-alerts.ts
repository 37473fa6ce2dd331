/**
 * Usage-limit alerts: reads every usage limit's counter (the gateways' own budget counters, the
 * numbers enforcement compares with) and records a `usage_threshold` notification when usage has
 * reached `alert_threshold`, a `usage_exhausted` one when it has reached `credit_limit`. Recipients:
 * the workspace's admins and managers and the organisation's owners and admins (plus an API key's
 * `alert_emails`).
 *
 * Alert state is the notification's dedupe key: the limit, its period, and the values it was
 * measured against. So, as the spec's state table says, a new period re-arms both alerts, raising
 * the credit limit re-arms both, and raising (or clearing) the threshold re-arms the threshold
 * alert; otherwise an alert is recorded once. An API key marked `exhausted` whose limits all have
 * room again (credit limit raised) is made active.
 *
 * Policies with `group_by` count one counter per group (the counter key holds only a digest of the
 * group's values). The groups are read from the usage records of the last `GROUP_LOOKBACK_MS`
 * (within the period): a group's usage only grows with requests, and each request leaves a record,
 * so a group crossing a threshold is seen by the runs after its record arrives. Each group is
 * alerted on its own (the dedupe key and `subject_group` name it); recipients are the policy's
 * workspace's, as for the policy. A group that crossed while no control plane ran for longer than
 * the look-back, and has had no request since, is not alerted on.
 */
import { createHash } from 'node:crypto'
import { limitCounterKey, limitPeriod, matchLimits, type LimitSubject, type SnapshotLimit } from '@gatehouse/gateway/snapshot'
import type { LimitCounters } from '../admin/context.ts'
import { compileLimits } from '../compile/limits.ts'
import { activePolicies } from '../compile/snapshot.ts'
import { renderNotification } from '../notifications/templates.ts'
import type { ApiKeyRecord, NotificationKind, Store } from '../store/index.ts'
import { emptySources } from './usage-resets.ts'

const NANO_USD_PER_USD = 1_000_000_000
/** How far back usage records are read for the groups of a group_by policy (see above). */
export const GROUP_LOOKBACK_MS = 3_600_000

const SOURCE_NAMES: Record<SnapshotLimit['source'], string> = {
  api_key: 'API key', workspace: 'workspace', provider: 'provider', integration: 'integration', policy: 'usage limit policy',
}

export interface UsageAlert {
  kind: Extract<NotificationKind, 'usage_threshold' | 'usage_exhausted'>
  limitId: string
  usage: number
  /** A group_by policy's group: its values by field. */
  group?: Record<string, string>
}

function alertsFor(limit: SnapshotLimit, usage: number): UsageAlert[] {
  const out: UsageAlert[] = []
  if (limit.creditLimit !== null && usage >= limit.creditLimit) out.push({ kind: 'usage_exhausted', limitId: limit.id, usage })
  if (limit.alertThreshold !== null && usage >= limit.alertThreshold) out.push({ kind: 'usage_threshold', limitId: limit.id, usage })
  return out
}

const rounded = (value: number): string => String(Number(value.toFixed(6)))

export async function recordUsageAlerts(store: Store, counters: LimitCounters, organizationId: string, now: Date): Promise<{ recorded: UsageAlert[]; reactivated: string[] }> {
  const [keys, workspaces, providers, integrations, policies] = await Promise.all([
    store.apiKeys.inUse(organizationId),
    store.workspaces.listAll(organizationId),
    store.providers.list(organizationId),
    store.integrations.list(organizationId),
    activePolicies(store, organizationId, 'usage_limits'),
  ])
  const limits = compileLimits({
    ...emptySources(now), apiKeys: keys, workspaces, providers, integrations: integrations.data, policies: policies.filter((p) => p.groupBy.length === 0),
  }).filter((limit) => limit.kind === 'usage' && limit.creditLimit !== null)
  const grouped = await recordGroupAlerts(store, counters, organizationId, policies.filter((p) => p.groupBy.length > 0), workspaces, now)
  if (limits.length === 0) return { recorded: grouped, reactivated: [] }
  const nowMs = now.getTime()
  const raw = await counters.usage(limits.map((limit) => limitCounterKey(counters.keyPrefix, organizationId, limit, [], nowMs)))
  const keysById = new Map(keys.map((key) => [key.id, key]))
  const recorded: UsageAlert[] = [...grouped]
  const keysWithRoom = new Map<string, boolean>()
  for (const [index, limit] of limits.entries()) {
    const usage = limit.type === 'cost' ? (raw[index] ?? 0) / NANO_USD_PER_USD : (raw[index] ?? 0)
    const alerts = alertsFor(limit, usage)
    if (limit.source === 'api_key') keysWithRoom.set(limit.ownerId, (keysWithRoom.get(limit.ownerId) ?? true) && !alerts.some((a) => a.kind === 'usage_exhausted'))
    for (const alert of alerts) {
      if (await recordAlert(store, organizationId, limit, alert, keysById.get(limit.ownerId), now)) recorded.push(alert)
    }
  }
  const reactivated: string[] = []
  for (const [keyId, hasRoom] of keysWithRoom) {
    if (!hasRoom || keysById.get(keyId)?.status !== 'exhausted') continue
    await store.apiKeys.update(organizationId, keyId, { status: 'active' })
    reactivated.push(keyId)
  }
  return { recorded, reactivated }
}

/** One alert per group of each group_by policy whose counter crossed a threshold (see the module comment). */
async function recordGroupAlerts(
  store: Store, counters: LimitCounters, organizationId: string, policies: Parameters<typeof compileLimits>[0]['policies'],
  workspaces: ReadonlyArray<{ id: string; slug: string }>, now: Date,
): Promise<UsageAlert[]> {
  const limits = compileLimits({ ...emptySources(now), policies }).filter((limit) => limit.kind === 'usage' && limit.creditLimit !== null)
  const slugs = new Map(workspaces.map((workspace) => [workspace.id, workspace.slug]))
  const nowMs = now.getTime()
  const recorded: UsageAlert[] = []
  for (const limit of limits) {
    const since = new Date(Math.max(limitPeriod(limit, nowMs).startsAtMs, nowMs - GROUP_LOOKBACK_MS))
    const metadataKeys = [...limit.groupBy, ...limit.conditions.map((condition) => condition.key)].filter((field) => field.startsWith('metadata.')).map((field) => field.slice('metadata.'.length))
    const groups = new Map<string, readonly string[]>()
    for (const row of await store.usageLogs.limitSubjects(organizationId, since, limit.workspaceId, metadataKeys)) {
      // The same match the gateway made: conditions, and the group's values in group_by order.
      const subject: LimitSubject = { ...row, organizationId, apiKeyId: row.apiKeyId ?? '', workspaceSlug: row.workspaceId === null ? null : (slugs.get(row.workspaceId) ?? null) }
      const [match] = matchLimits([limit], subject)
      if (match) groups.set(JSON.stringify(match.group), match.group)
    }
    if (groups.size === 0) continue
    const values = [...groups.values()]
    const raw = await counters.usage(values.map((group) => limitCounterKey(counters.keyPrefix, organizationId, limit, group, nowMs)))
    for (const [index, group] of values.entries()) {
      const usage = limit.type === 'cost' ? (raw[index] ?? 0) / NANO_USD_PER_USD : (raw[index] ?? 0)
      const named = Object.fromEntries(limit.groupBy.map((field, i) => [field, group[i] ?? '']))
      for (const alert of alertsFor(limit, usage)) {
        const grouped = { ...alert, group: named }
        if (await recordAlert(store, organizationId, limit, grouped, undefined, now)) recorded.push(grouped)
      }
    }
  }
  return recorded
}

const groupDigest = (group: Record<string, string>): string => createHash('sha256').update(JSON.stringify(Object.values(group))).digest('base64url').slice(0, 22)

async function recordAlert(store: Store, organizationId: string, limit: SnapshotLimit, alert: UsageAlert, key: ApiKeyRecord | undefined, now: Date): Promise<boolean> {
  const period = limitPeriod(limit, now.getTime())
  const measuredAgainst = alert.kind === 'usage_exhausted' ? `${limit.creditLimit}` : `${limit.alertThreshold}/${limit.creditLimit}`
  const group = alert.group ? `:g${groupDigest(alert.group)}` : ''
  const dedupeKey = `${alert.kind}:${limit.id}${group}:${period.label}:${measuredAgainst}`
  const recipients = new Set(await store.notifications.usageAlertRecipients(organizationId, limit.workspaceId))
  for (const email of key?.alertEmails ?? []) recipients.add(email)
  const unit = limit.type === 'cost' ? 'USD' : 'tokens'
  const message = renderNotification(alert.kind, {
    owner: `${SOURCE_NAMES[limit.source]} ${limit.name}${alert.group ? ` for ${Object.entries(alert.group).map(([field, value]) => `${field}=${value}`).join(', ')}` : ''}`, usage: rounded(alert.usage), unit, creditLimit: rounded(limit.creditLimit ?? 0),
    threshold: limit.alertThreshold === null ? '' : rounded(limit.alertThreshold), resetsAt: period.endsAtMs === null ? '' : new Date(period.endsAtMs).toISOString(),
  })
  const record = await store.notifications.record({
    organizationId, kind: alert.kind, dedupeKey, subjectType: limit.source, subjectId: limit.ownerId, subjectGroup: alert.group ?? null, recipients: [...recipients].sort(),
    messageSubject: message.subject, messageText: message.text, now,
  })
  return record !== null
}
