/**
 * `usage_limits.current_usage` on key, workspace, provider and integration answers, read from the
 * gateways' own budget counters (Redis, or the in-process limiter in embedded mode) rather than
 * from usage records shipped back: the counters are what enforcement compares with, so the admin
 * API shows exactly the number that will refuse the next request, with no lag or second tally.
 *
 * The owner's limits are compiled the same way the snapshot compiles them (compileLimits), and the
 * counter keys are named by the shared `limitCounterKey`, so the two sides cannot drift. Cost is
 * shown in USD (fractional), tokens as counted. Without configured counters, or when they cannot be
 * read, `current_usage` is null: unknown, never a made-up zero.
 */
import { limitCounterKey, type SnapshotLimit } from '@gatehouse/gateway/snapshot'
import { compileLimits, type LimitSources } from '../compile/limits.ts'
import type { ApiKeyRecord, IntegrationRecord, ProviderRecord, WorkspaceRecord } from '../store/index.ts'
import type { AdminContext } from './context.ts'

const NANO_USD_PER_USD = 1_000_000_000

type Sources = Partial<Pick<LimitSources, 'apiKeys' | 'workspaces' | 'providers' | 'integrations'>>

/** Current usage of every usage limit of the given owners, by limit id (null: unknown). */
async function usageByLimit(ctx: AdminContext, organizationId: string, sources: Sources): Promise<Map<string, number | null>> {
  const now = ctx.clock()
  const limits = compileLimits({ policies: [], apiKeys: [], workspaces: [], providers: [], integrations: [], ...sources, now, report: () => undefined })
    .filter((limit) => limit.kind === 'usage')
  const out = new Map<string, number | null>(limits.map((limit) => [limit.id, null]))
  if (!ctx.limitCounters || limits.length === 0) return out
  const keys = limits.map((limit) => limitCounterKey(ctx.limitCounters!.keyPrefix, organizationId, limit, [], now.getTime()))
  try {
    const values = await ctx.limitCounters.usage(keys)
    limits.forEach((limit: SnapshotLimit, index) => {
      const raw = values[index] ?? 0
      out.set(limit.id, limit.type === 'cost' ? raw / NANO_USD_PER_USD : raw)
    })
  } catch {
    // Unreadable counters: usage stays null (unknown); the answer itself is still served.
  }
  return out
}

function withUsage(entry: unknown, usage: number | null | undefined): unknown {
  if (entry === null || typeof entry !== 'object' || Array.isArray(entry)) return entry
  return { ...entry, current_usage: usage ?? null }
}

const typeOf = (entry: unknown): string => ((entry as { type?: unknown } | null)?.type === 'tokens' ? 'tokens' : 'cost')

export async function keyViewWithUsage(ctx: AdminContext, key: ApiKeyRecord, view: Record<string, unknown>): Promise<Record<string, unknown>> {
  if (!key.usageLimits) return view
  const usage = await usageByLimit(ctx, key.organizationId, { apiKeys: [key] })
  return { ...view, usage_limits: withUsage(view.usage_limits, usage.get(`api_key:${key.id}:usage:${typeOf(key.usageLimits)}`)) }
}

export async function workspaceViewWithUsage(ctx: AdminContext, workspace: WorkspaceRecord, view: Record<string, unknown>): Promise<Record<string, unknown>> {
  if (!Array.isArray(workspace.usageLimits) || workspace.usageLimits.length === 0) return view
  const usage = await usageByLimit(ctx, workspace.organizationId, { workspaces: [workspace] })
  const entries = (view.usage_limits as unknown[]).map((entry) => withUsage(entry, usage.get(`workspace:${workspace.id}:usage:${typeOf(entry)}`)))
  return { ...view, usage_limits: entries }
}

export async function providerViewWithUsage(ctx: AdminContext, provider: ProviderRecord, view: Record<string, unknown>): Promise<Record<string, unknown>> {
  if (!provider.usageLimits) return view
  const usage = await usageByLimit(ctx, provider.organizationId, { providers: [provider] })
  return { ...view, usage_limits: withUsage(view.usage_limits, usage.get(`provider:${provider.id}:usage:${typeOf(provider.usageLimits)}`)) }
}

/** Each workspace access entry's usage limits (the providers onto the integration share them). */
export async function workspaceAccessWithUsage(ctx: AdminContext, integration: IntegrationRecord): Promise<unknown[]> {
  const access = integration.workspaceAccess
  if (!access.some((entry) => (entry.usage_limits?.length ?? 0) > 0)) return access
  const providers = (await ctx.store.providers.list(integration.organizationId)).filter((p) => p.integrationId === integration.id)
  const usage = await usageByLimit(ctx, integration.organizationId, { integrations: [integration], providers })
  return access.map((entry) => (Array.isArray(entry.usage_limits)
    ? { ...entry, usage_limits: entry.usage_limits.map((limit) => withUsage(limit, usage.get(`integration:${integration.id}:${entry.id}:usage:${typeOf(limit)}`))) }
    : entry))
}
