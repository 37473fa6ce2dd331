/**
 * Compiles every place a limit is declared into the snapshot's one enforceable form
 * (`snapshot.limits`, schema `snapshotLimit`): rate-limit and usage-limit policies, and the
 * `rate_limits`/`usage_limits` fields of API keys, workspaces, providers and integrations' workspace
 * access. The gateway then matches and counts them all the same way.
 *
 * A limit's id is stable across edits of its value (source, owner, kind, type and unit), because the
 * gateway keys its counters by id: raising a credit limit keeps what was spent; a reset (a new
 * `last_reset_at`) starts a new period instead. Archived policies are left out; a malformed limits
 * field is reported and skipped rather than failing the whole snapshot.
 */
import type { SnapshotLimit } from '@gatehouse/gateway/snapshot'
import { keyRateLimitSchema, nextUsageResetAt, usageLimitsSchema, type UsageLimits } from '../identity/limits.ts'
import type { ApiKeyRecord, IntegrationRecord, PolicyRecord, ProviderRecord, WorkspaceRecord } from '../store/index.ts'

type Limit = Omit<SnapshotLimit, 'id'> & { id: string }
type Condition = SnapshotLimit['conditions'][number]
type Report = (path: string, message: string) => void

export interface LimitSources {
  policies: readonly PolicyRecord[]
  apiKeys: readonly ApiKeyRecord[]
  workspaces: readonly WorkspaceRecord[]
  providers: readonly ProviderRecord[]
  integrations: readonly IntegrationRecord[]
  now: Date
  report: Report
}

/** Conditions stored as `{key, value}` pairs: several pairs with one key admit any of their values. */
function groupConditions(pairs: ReadonlyArray<{ key: string; value: string }>): Condition[] {
  const byKey = new Map<string, string[]>()
  for (const { key, value } of pairs) {
    const normalised = key === 'organization_id' ? 'organisation_id' : key
    byKey.set(normalised, [...(byKey.get(normalised) ?? []), value])
  }
  return [...byKey].map(([key, values]) => ({ key, values: [...new Set(values)] }))
}

function fromPolicy(policy: PolicyRecord): Limit {
  const rate = policy.kind === 'rate_limits'
  return {
    id: `policy:${policy.id}`,
    source: 'policy',
    ownerId: policy.id,
    name: policy.name ?? policy.id,
    kind: rate ? 'rate' : 'usage',
    workspaceId: policy.workspaceId,
    conditions: groupConditions(policy.conditions),
    groupBy: policy.groupBy.map((entry) => (entry.key === 'organization_id' ? 'organisation_id' : entry.key)),
    type: policy.type,
    unit: rate ? policy.unit : null,
    value: rate ? policy.value : null,
    creditLimit: rate ? null : policy.creditLimit,
    alertThreshold: rate ? null : policy.alertThreshold,
    periodicReset: policy.periodicReset,
    periodicResetDays: policy.periodicResetDays,
    periodStartedAt: policy.lastResetAt,
    periodEndsAt: policy.nextUsageResetAt,
    shadow: policy.shadow,
    failureMode: policy.failureMode,
  }
}

interface Owner {
  source: Exclude<SnapshotLimit['source'], 'policy'>
  ownerId: string
  name: string
  workspaceId: string | null
  conditions: Condition[]
  /** Start of the current usage period: the last reset, else the owner's creation. */
  periodStartedAt: string | null
  periodEndsAt: string | null
  path: string
}

function rateLimits(owner: Owner, raw: unknown, report: Report): Limit[] {
  if (raw === null || raw === undefined) return []
  const entries = Array.isArray(raw) ? raw : [raw]
  const out: Limit[] = []
  entries.forEach((entry, index) => {
    const parsed = keyRateLimitSchema.safeParse(entry)
    if (!parsed.success) {
      report(`${owner.path}.rate_limits.${index}`, 'not a valid rate limit; skipped')
      return
    }
    const { type, unit, value } = parsed.data
    out.push({
      id: `${owner.source}:${owner.ownerId}:rate:${type}:${unit}`,
      source: owner.source,
      ownerId: owner.ownerId,
      name: owner.name,
      kind: 'rate',
      workspaceId: owner.workspaceId,
      conditions: owner.conditions,
      groupBy: [],
      type,
      unit,
      value,
      creditLimit: null,
      alertThreshold: null,
      periodicReset: null,
      periodicResetDays: null,
      periodStartedAt: null,
      periodEndsAt: null,
      shadow: false,
      failureMode: null,
    })
  })
  return out
}

function usageLimits(owner: Owner, raw: unknown, report: Report): Limit[] {
  if (raw === null || raw === undefined) return []
  const entries = Array.isArray(raw) ? raw : [raw]
  const out: Limit[] = []
  entries.forEach((entry, index) => {
    const parsed = usageLimitsSchema.safeParse(entry)
    if (!parsed.success) {
      report(`${owner.path}.usage_limits.${index}`, 'not a valid usage limit; skipped')
      return
    }
    const limits: UsageLimits = parsed.data
    // Without an anchor (integration access entries) only a stated next reset is an end: one
    // computed from the compile time would move with every snapshot and hold the period open.
    const periodEndsAt = owner.periodEndsAt ?? (owner.periodStartedAt ? nextUsageResetAt(limits, new Date(owner.periodStartedAt)) : (limits.next_usage_reset_at ?? null))
    out.push({
      id: `${owner.source}:${owner.ownerId}:usage:${limits.type}`,
      source: owner.source,
      ownerId: owner.ownerId,
      name: owner.name,
      kind: 'usage',
      workspaceId: owner.workspaceId,
      conditions: owner.conditions,
      groupBy: [],
      type: limits.type,
      unit: null,
      value: null,
      creditLimit: limits.credit_limit,
      alertThreshold: limits.alert_threshold ?? null,
      periodicReset: limits.periodic_reset ?? null,
      periodicResetDays: limits.periodic_reset_days ?? null,
      periodStartedAt: owner.periodStartedAt,
      periodEndsAt,
      shadow: false,
      failureMode: null,
    })
  })
  return out
}

function ownerLimits(owner: Owner, rate: unknown, usage: unknown, sources: LimitSources): Limit[] {
  return [...rateLimits(owner, rate, sources.report), ...usageLimits(owner, usage, sources.report)]
}

/** The owner id of an integration's limits in one workspace (the usage alerts' subject, the reset worker's match). */
export function integrationOwnerId(integrationId: string, workspaceId: string): string {
  return `${integrationId}:${workspaceId}`
}

/** An integration's per-workspace limits apply to the providers onto it, in that workspace. */
function integrationLimits(integration: IntegrationRecord, providers: readonly ProviderRecord[], workspaces: readonly WorkspaceRecord[], sources: LimitSources): Limit[] {
  const onto = providers.filter((p) => p.integrationId === integration.id).map((p) => p.id)
  if (onto.length === 0 || integration.status !== 'active') return []
  // A workspace's own access entry carries its period anchor (`last_reset_at`: reset_usage, or the
  // reset worker's write); global access has none, so its periods run from the calendar or epoch.
  const owner = (workspaceId: string, path: string, periodStartedAt: string | null = null): Owner => ({
    source: 'integration',
    ownerId: integrationOwnerId(integration.id, workspaceId),
    name: integration.slug,
    workspaceId,
    conditions: [{ key: 'workspace_id', values: [workspaceId] }, { key: 'provider', values: onto }],
    periodStartedAt,
    periodEndsAt: null,
    path,
  })
  const out: Limit[] = []
  const listed = new Set<string>()
  integration.workspaceAccess.forEach((access, index) => {
    listed.add(access.id)
    if (!access.enabled) return
    out.push(...ownerLimits(owner(access.id, `integrations.${integration.slug}.workspace_access.${index}`, access.last_reset_at ?? null), access.rate_limits, access.usage_limits, sources))
  })
  // Global access: its limits hold for each workspace that has no entry of its own.
  const global = integration.globalWorkspaceAccess
  if (global.enabled && ((global.rate_limits?.length ?? 0) > 0 || (global.usage_limits?.length ?? 0) > 0)) {
    for (const workspace of workspaces) {
      if (listed.has(workspace.id)) continue
      out.push(...ownerLimits(owner(workspace.id, `integrations.${integration.slug}.global_workspace_access`), global.rate_limits, global.usage_limits, sources))
    }
  }
  return out
}

export function compileLimits(sources: LimitSources): SnapshotLimit[] {
  const out: Limit[] = []
  for (const policy of sources.policies) if (policy.status === 'active') out.push(fromPolicy(policy))
  for (const key of sources.apiKeys) {
    if (key.status === 'revoked') continue
    out.push(...ownerLimits({
      source: 'api_key', ownerId: key.id, name: key.name, workspaceId: key.workspaceId, conditions: [{ key: 'api_key', values: [key.id] }],
      periodStartedAt: key.lastResetAt ?? key.createdAt, periodEndsAt: null, path: `apiKeys.${key.id}`,
    }, key.rateLimits, key.usageLimits, sources))
  }
  for (const workspace of sources.workspaces) {
    out.push(...ownerLimits({
      source: 'workspace', ownerId: workspace.id, name: workspace.slug, workspaceId: workspace.id, conditions: [{ key: 'workspace_id', values: [workspace.id] }],
      periodStartedAt: workspace.lastResetAt ?? workspace.createdAt, periodEndsAt: workspace.nextUsageResetAt, path: `workspaces.${workspace.slug}`,
    }, workspace.rateLimits, workspace.usageLimits, sources))
  }
  for (const provider of sources.providers) {
    out.push(...ownerLimits({
      source: 'provider', ownerId: provider.id, name: provider.slug, workspaceId: provider.workspaceId, conditions: [{ key: 'provider', values: [provider.id] }],
      periodStartedAt: provider.lastResetAt ?? provider.createdAt, periodEndsAt: null, path: `providers.${provider.slug}`,
    }, provider.rateLimits, provider.usageLimits, sources))
  }
  for (const integration of sources.integrations) out.push(...integrationLimits(integration, sources.providers, sources.workspaces, sources))
  return out as SnapshotLimit[]
}
