/**
 * Periodic usage resets: when a usage limit's period has ended (`periodic_reset` weekly or monthly,
 * `periodic_reset_days`, or a stated `next_usage_reset_at`), writes the new period onto its owner:
 * `last_reset_at` = the start of the period now running and `next_usage_reset_at` = its end, and
 * makes an API key marked `exhausted` active again (the spec's state table: auto-reactivation).
 *
 * The gateway already counts in the new period at the boundary (`limitPeriod` derives it from the
 * time), and names the counter by the period's start, so these writes change what the admin API
 * shows and where later periods are counted from, never what was spent in the running period.
 * The values written are computed from the time alone, so two runs (or replicas) write the same.
 *
 * An owner whose periodic limits disagree on their period (a workspace with a weekly and a monthly
 * budget) is left as it is: one `last_reset_at` cannot mark two periods, and moving it to the
 * shorter period's start would restart the longer period's counter. The gateway still counts each
 * limit in its own period. An integration's limits are advanced per workspace access entry (its
 * `last_reset_at` and the `next_usage_reset_at` its usage limits state); global workspace access
 * keeps no per-workspace fields, so its periods run from the calendar (or the epoch) and nothing is
 * written for it.
 */
import { limitPeriod, type SnapshotLimit } from '@gatehouse/gateway/snapshot'
import { compileLimits, integrationOwnerId, type LimitSources } from '../compile/limits.ts'
import { activePolicies } from '../compile/snapshot.ts'
import type { ApiKeyRecord, Store } from '../store/index.ts'
import type { IntegrationRecord } from '../store/repos/integrations.ts'
import type { ProviderRecord } from '../store/repos/providers.ts'
import type { WorkspaceRecord } from '../store/repos/workspaces.ts'

export interface UsageReset {
  source: 'api_key' | 'workspace' | 'provider' | 'integration' | 'policy'
  /** The owner's id; for an integration `<integration id>:<workspace id>` (its limits' owner id). */
  id: string
  lastResetAt: string
  nextUsageResetAt: string | null
  reactivated: boolean
}

const hasPeriod = (limit: SnapshotLimit): boolean => limit.periodicReset !== null || limit.periodicResetDays !== null || limit.periodEndsAt !== null

/** The period the owner's limits have moved into, when they have moved and agree on it. */
export function duePeriod(limits: readonly SnapshotLimit[], nowMs: number): { startsAtMs: number; endsAtMs: number | null } | null {
  const periodic = limits.filter((limit) => limit.kind === 'usage' && hasPeriod(limit))
  if (periodic.length === 0) return null
  const periods = periodic.map((limit) => ({ anchorMs: limit.periodStartedAt === null ? 0 : Date.parse(limit.periodStartedAt), ...limitPeriod(limit, nowMs) }))
  const first = periods[0]!
  if (periods.some((period) => period.startsAtMs !== first.startsAtMs || period.endsAtMs !== first.endsAtMs)) return null
  if (first.startsAtMs <= first.anchorMs) return null
  return { startsAtMs: first.startsAtMs, endsAtMs: first.endsAtMs }
}

const isoOrNull = (ms: number | null): string | null => (ms === null ? null : new Date(ms).toISOString())

export function emptySources(now: Date): LimitSources {
  return { policies: [], apiKeys: [], workspaces: [], providers: [], integrations: [], now, report: () => undefined }
}

/** A stated `next_usage_reset_at` inside a usage-limits object moves on with the period. */
function withNextReset(usageLimits: Record<string, unknown> | null, next: string | null): Record<string, unknown> | null {
  if (!usageLimits || !('next_usage_reset_at' in usageLimits)) return usageLimits
  return { ...usageLimits, next_usage_reset_at: next }
}

export async function advanceUsageResets(store: Store, organizationId: string, now: Date): Promise<UsageReset[]> {
  const nowMs = now.getTime()
  const out: UsageReset[] = []
  const [keys, workspaces, providers, integrations, policies] = await Promise.all([
    store.apiKeys.inUse(organizationId),
    store.workspaces.listAll(organizationId),
    store.providers.list(organizationId),
    store.integrations.list(organizationId),
    activePolicies(store, organizationId, 'usage_limits'),
  ])
  for (const key of keys) {
    const due = duePeriod(compileLimits({ ...emptySources(now), apiKeys: [key] }), nowMs)
    if (!due) continue
    out.push(await resetKey(store, key, due))
  }
  for (const workspace of workspaces) {
    const due = duePeriod(compileLimits({ ...emptySources(now), workspaces: [workspace] }), nowMs)
    if (!due) continue
    out.push(await resetWorkspace(store, workspace, due))
  }
  for (const provider of providers) {
    const due = duePeriod(compileLimits({ ...emptySources(now), providers: [provider] }), nowMs)
    if (!due) continue
    out.push(await resetProvider(store, provider, due))
  }
  for (const integration of integrations.data) {
    out.push(...(await resetIntegration(store, integration, providers, now)))
  }
  for (const policy of policies) {
    const due = duePeriod(compileLimits({ ...emptySources(now), policies: [policy] }), nowMs)
    if (!due) continue
    const lastResetAt = new Date(due.startsAtMs).toISOString()
    await store.policies.update(organizationId, policy.id, { lastResetAt, nextUsageResetAt: isoOrNull(due.endsAtMs) })
    out.push({ source: 'policy', id: policy.id, lastResetAt, nextUsageResetAt: isoOrNull(due.endsAtMs), reactivated: false })
  }
  return out
}

async function resetKey(store: Store, key: ApiKeyRecord, due: { startsAtMs: number; endsAtMs: number | null }): Promise<UsageReset> {
  const lastResetAt = new Date(due.startsAtMs).toISOString()
  const next = isoOrNull(due.endsAtMs)
  const reactivated = key.status === 'exhausted'
  await store.apiKeys.update(key.organizationId, key.id, {
    lastResetAt, usageLimits: withNextReset(key.usageLimits, next), ...(reactivated ? { status: 'active' as const } : {}),
  })
  return { source: 'api_key', id: key.id, lastResetAt, nextUsageResetAt: next, reactivated }
}

async function resetWorkspace(store: Store, workspace: WorkspaceRecord, due: { startsAtMs: number; endsAtMs: number | null }): Promise<UsageReset> {
  const lastResetAt = new Date(due.startsAtMs).toISOString()
  const next = isoOrNull(due.endsAtMs)
  await store.workspaces.update(workspace.organizationId, workspace.id, { lastResetAt, nextUsageResetAt: next })
  return { source: 'workspace', id: workspace.id, lastResetAt, nextUsageResetAt: next, reactivated: false }
}

async function resetProvider(store: Store, provider: ProviderRecord, due: { startsAtMs: number; endsAtMs: number | null }): Promise<UsageReset> {
  const lastResetAt = new Date(due.startsAtMs).toISOString()
  const next = isoOrNull(due.endsAtMs)
  await store.providers.update(provider.organizationId, provider.id, { lastResetAt, usageLimits: withNextReset(provider.usageLimits, next) })
  return { source: 'provider', id: provider.id, lastResetAt, nextUsageResetAt: next, reactivated: false }
}

/**
 * Each workspace access entry whose period has moved on gets the new `last_reset_at` (and its usage
 * limits' stated `next_usage_reset_at`); the entries are written back in one update.
 */
async function resetIntegration(store: Store, integration: IntegrationRecord, providers: readonly ProviderRecord[], now: Date): Promise<UsageReset[]> {
  const limits = compileLimits({ ...emptySources(now), integrations: [integration], providers })
  if (limits.length === 0) return []
  const resets: UsageReset[] = []
  const access = integration.workspaceAccess.map((entry) => {
    const ownerId = integrationOwnerId(integration.id, entry.id)
    const due = entry.enabled ? duePeriod(limits.filter((limit) => limit.ownerId === ownerId), now.getTime()) : null
    if (!due) return entry
    const lastResetAt = new Date(due.startsAtMs).toISOString()
    const next = isoOrNull(due.endsAtMs)
    resets.push({ source: 'integration', id: ownerId, lastResetAt, nextUsageResetAt: next, reactivated: false })
    const usageLimits = Array.isArray(entry.usage_limits)
      ? entry.usage_limits.map((limit) => (limit !== null && typeof limit === 'object' ? withNextReset(limit as Record<string, unknown>, next) : limit))
      : entry.usage_limits
    return { ...entry, last_reset_at: lastResetAt, usage_limits: usageLimits }
  })
  if (resets.length > 0) await store.integrations.update(integration.organizationId, integration.id, { workspaceAccess: access })
  return resets
}
