/**
 * RateLimitPolicy and UsageLimitPolicy resources: one table, told apart by kind. Policies have no
 * slug: a declared policy is identified by its kind, workspace and name.
 */
import type { RateLimitPolicy, UsageLimitPolicy } from '@gatehouse/crds'
import { nextUsageResetAt } from '../../identity/limits.ts'
import type { PolicyKind, PolicyRecord, Repositories } from '../../store/index.ts'
import { assertOwnable, changedFields, objectLabel, referencedWorkspaceId, ResourceError, workspaceIdFor, type ApplyContext, type ResourceHandler, type SourcedResource } from '../resource.ts'

type PolicyResource = RateLimitPolicy | UsageLimitPolicy

const policyKindOf = (resource: PolicyResource): PolicyKind => (resource.kind === 'RateLimitPolicy' ? 'rate_limits' : 'usage_limits')

const policyName = (resource: PolicyResource): string => resource.spec.name ?? resource.metadata.name

async function findPolicy(tx: Repositories, context: ApplyContext, resource: PolicyResource, workspaceId: string | null): Promise<PolicyRecord | null> {
  const { data } = await tx.policies.list(context.organizationId, policyKindOf(resource), { workspaceIds: workspaceId === null ? null : [workspaceId] }, 0, 10_000)
  const named = data.filter((policy) => policy.name === policyName(resource))
  return named.find((policy) => policy.managedBy === context.managedBy) ?? named[0] ?? null
}

/** The policy columns a resource sets; the other kind's columns are null. */
function policyFields(resource: PolicyResource): Omit<PolicyRecord, 'id' | 'organizationId' | 'workspaceId' | 'kind' | 'nextUsageResetAt' | 'lastResetAt' | 'managedBy' | 'createdAt' | 'updatedAt'> {
  const { shadowMode, failureMode } = resource.spec
  const common = {
    name: policyName(resource), conditions: resource.spec.conditions, groupBy: resource.spec.groupBy, status: 'active' as const,
    shadow: shadowMode ?? false, failureMode: failureMode === undefined ? null : failureMode === 'FailOpen' ? 'open' as const : 'closed' as const,
  }
  if (resource.kind === 'RateLimitPolicy') {
    const { spec } = resource
    return { ...common, type: spec.type, unit: spec.unit, value: spec.value, creditLimit: null, alertThreshold: null, periodicReset: null, periodicResetDays: null }
  }
  const { spec } = resource
  return {
    ...common, type: spec.type, unit: null, value: null, creditLimit: spec.creditLimit, alertThreshold: spec.alertThreshold ?? null,
    periodicReset: spec.periodicReset ?? null, periodicResetDays: spec.periodicResetDays ?? null,
  }
}

function policyHandler<Kind extends PolicyResource['kind']>(kind: PolicyKind): ResourceHandler<Kind> {
  return {
    async apply(tx, context, declared, item) {
      const resource: PolicyResource = item.resource
      const organizationId = context.organizationId
      const workspaceId = await workspaceIdFor(tx, context, declared.workspaces, resource.spec.workspace, item)
      const existing = await findPolicy(tx, context, resource, workspaceId)
      assertOwnable(context, item, existing)
      const fields = { ...policyFields(resource), managedBy: context.managedBy }
      const nextReset = (): string | null => (fields.creditLimit === null ? null : nextUsageResetAt({
        credit_limit: fields.creditLimit, type: 'cost', periodic_reset: fields.periodicReset, periodic_reset_days: fields.periodicResetDays,
      }, new Date()))
      if (!existing) {
        return (await tx.policies.create({ organizationId, workspaceId, kind, ...fields, nextUsageResetAt: nextReset() })).id
      }
      const patch = changedFields(existing, fields)
      if (Object.keys(patch).length === 0) return existing.id
      // The next reset moves only when the reset schedule does (as on an admin API update).
      const resetChanged = 'periodicReset' in patch || 'periodicResetDays' in patch
      await tx.policies.update(organizationId, existing.id, { ...patch, ...(resetChanged ? { nextUsageResetAt: nextReset() } : {}) })
      return existing.id
    },
    async find(tx, context, item, workspaces, adminId) {
      if (adminId !== null) return tx.policies.get(context.organizationId, kind, adminId)
      const resource: PolicyResource = item.resource
      const workspaceId = await referencedWorkspaceId(tx, context.organizationId, workspaces, resource.spec.workspace)
      return workspaceId === undefined ? null : findPolicy(tx, context, resource, workspaceId)
    },
    delete: (tx, organizationId, id) => tx.policies.delete(organizationId, id),
    exists: async (store, organizationId, adminId) => (await store.policies.get(organizationId, kind, adminId)) !== null,
  }
}

export const rateLimitPolicyHandler = policyHandler<'RateLimitPolicy'>('rate_limits')
export const usageLimitPolicyHandler = policyHandler<'UsageLimitPolicy'>('usage_limits')

/** Two policies with one identity (kind, workspace, name) would overwrite each other on every apply. */
export function duplicatePolicies(items: readonly SourcedResource[]): ResourceError[] {
  const seen = new Map<string, SourcedResource>()
  const problems: ResourceError[] = []
  for (const item of items) {
    if (item.resource.kind !== 'RateLimitPolicy' && item.resource.kind !== 'UsageLimitPolicy') continue
    const key = JSON.stringify([item.resource.kind, item.resource.spec.workspace ?? null, policyName(item.resource)])
    const first = seen.get(key)
    if (first) {
      problems.push(new ResourceError(item.source, objectLabel(item.resource), 'spec.name',
        `${objectLabel(first.resource)} (${first.source}) has the same name in the same workspace; a policy is identified by its name, so give each its own`))
    } else {
      seen.set(key, item)
    }
  }
  return problems
}
