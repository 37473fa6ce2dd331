/**
 * Usage-limit and rate-limit policies: /v1/policies/usage-limits and /v1/policies/rate-limits.
 * A policy applies to the requests matching all its `conditions` and counts usage per distinct
 * `group_by` combination (both at least one item). Creation answers `{id, object:
 * "policy_usage_limits"}` exactly, as the spec shows. `…/{id}/entities` lists the API keys,
 * workspaces and users a policy is tied to through its conditions, with tracked usage; a usage
 * policy's entity usage can be reset. Workspace policies need policies.* in that workspace,
 * organisation-wide ones an organisation-level principal. Enforcement lives in the gateway.
 */
import type { FastifyInstance } from 'fastify'
import { z } from 'zod'
import { enforcementView } from '../../enforcement.ts'
import { invalid, notFound } from '../../errors.ts'
import { nextUsageResetAt, PERIODIC_RESET_DAYS_MAX, PERIODIC_RESET_DAYS_MIN } from '../../identity/limits.ts'
import type { Principal } from '../../identity/principal.ts'
import type { PolicyKind, PolicyRecord } from '../../store/index.ts'
import type { AdminContext } from '../context.ts'
import { audit, listEnvelope, pagination, parse, principalOf } from '../http.ts'
import { canSee, listWorkspaces, nameSchema, refuseManaged, requireScope, targetWorkspace, workspaceRefSchema } from './resource-access.ts'

const MAX_VALUE = 1_000_000_000_000
const conditionKey = z.string().min(1).max(255).regex(/^(api_key|workspace_id|organisation_id|organization_id|endpoint_type|model|provider|user|metadata\.[A-Za-z0-9_.-]{1,200})$/,
  'key is api_key, workspace_id, organisation_id, endpoint_type, model, provider, user or metadata.<key>')
const conditions = z.array(z.strictObject({ key: conditionKey, value: z.string().min(1).max(255) })).min(1).max(16)
const groupBy = z.array(z.strictObject({ key: conditionKey })).min(1).max(8)
const rateUnit = z.enum(['rpm', 'rph', 'rpd', 'rpw'])
const rateValue = z.number().int().min(0).max(MAX_VALUE)
const credit = z.number().min(0).max(MAX_VALUE)
const periodicReset = z.enum(['weekly', 'monthly']).nullable()
const periodicResetDays = z.int().min(PERIODIC_RESET_DAYS_MIN).max(PERIODIC_RESET_DAYS_MAX).nullable()
/** Spec: identify the tenant when not authenticated by API key; the key's own organisation wins. */
/** Shadow mode (evaluate and report, never refuse) and the answer when the gateway's counters are unreachable. */
const modeFields = { shadow: z.boolean().optional(), failure_mode: z.enum(['open', 'closed']).nullable().optional() }
const tenantFields = { workspace_id: workspaceRefSchema.optional(), organisation_id: z.string().min(1).max(255).optional(), organization_id: z.string().min(1).max(255).optional() }

const rateCreate = z.strictObject({ name: nameSchema.optional(), conditions, group_by: groupBy, type: z.enum(['requests', 'tokens']), unit: rateUnit, value: rateValue, ...modeFields, ...tenantFields })
const rateUpdate = z.strictObject({ name: nameSchema.optional(), conditions: conditions.optional(), group_by: groupBy.optional(), unit: rateUnit.optional(), value: rateValue.optional(), type: z.enum(['requests', 'tokens']).optional(), ...modeFields })

function usageRules<T extends { credit_limit?: number; alert_threshold?: number | null; periodic_reset?: string | null; periodic_reset_days?: number | null }>(value: T, context: z.RefinementCtx): void {
  if (value.periodic_reset != null && value.periodic_reset_days != null) context.addIssue({ code: 'custom', path: ['periodic_reset_days'], message: 'periodic_reset and periodic_reset_days are mutually exclusive' })
  if (value.alert_threshold != null && value.credit_limit !== undefined && value.alert_threshold >= value.credit_limit) {
    context.addIssue({ code: 'custom', path: ['alert_threshold'], message: 'alert_threshold must be below credit_limit' })
  }
}
const usageCreate = z.strictObject({
  name: nameSchema.optional(), conditions, group_by: groupBy, type: z.enum(['cost', 'tokens']), credit_limit: credit, alert_threshold: credit.nullable().optional(),
  periodic_reset: periodicReset.optional(), periodic_reset_days: periodicResetDays.optional(), ...modeFields, ...tenantFields,
}).superRefine(usageRules)
const usageUpdate = z.strictObject({
  name: nameSchema.optional(), conditions: conditions.optional(), group_by: groupBy.optional(), credit_limit: credit.optional(), alert_threshold: credit.nullable().optional(),
  periodic_reset: periodicReset.optional(), periodic_reset_days: periodicResetDays.optional(), ...modeFields,
  /** Starts the named value key's usage afresh. */
  reset_usage_for_value: z.string().min(1).max(1024).optional(),
}).superRefine(usageRules)

const listQuery = z.object({
  workspace_id: workspaceRefSchema.optional(),
  status: z.enum(['active', 'archived']).optional(),
  type: z.enum(['requests', 'tokens', 'cost']).optional(),
  unit: rateUnit.optional(),
}).loose()

export function policyView(policy: PolicyRecord): Record<string, unknown> {
  const common = {
    id: policy.id,
    name: policy.name,
    conditions: policy.conditions,
    group_by: policy.groupBy,
    type: policy.type,
    status: policy.status,
    shadow: policy.shadow,
    failure_mode: policy.failureMode,
    workspace_id: policy.workspaceId,
    organisation_id: policy.organizationId,
    managed_by: policy.managedBy,
    created_at: policy.createdAt,
    last_updated_at: policy.updatedAt,
    enforcement: enforcementView(policy.kind === 'rate_limits' ? 'RateLimitPolicy' : 'UsageLimitPolicy'),
  }
  if (policy.kind === 'rate_limits') return { ...common, unit: policy.unit, value: policy.value, object: 'policy_rate_limits' }
  return {
    ...common,
    credit_limit: policy.creditLimit,
    alert_threshold: policy.alertThreshold,
    periodic_reset: policy.periodicReset,
    periodic_reset_days: policy.periodicResetDays,
    next_usage_reset_at: policy.nextUsageResetAt,
    last_reset_at: policy.lastResetAt,
    object: 'policy_usage_limits',
  }
}

export function policyRoutes(kind: PolicyKind) {
  const what = kind === 'rate_limits' ? 'rate limit policy' : 'usage limit policy'
  return (app: FastifyInstance, ctx: AdminContext): void => {
    async function load(principal: Principal, id: string): Promise<PolicyRecord> {
      const policy = await ctx.store.policies.get(principal.organizationId, kind, id)
      if (!policy || !canSee(principal, policy.workspaceId)) throw notFound(what)
      return policy
    }

    function checkTenant(principal: Principal, body: { workspace_id?: string; organisation_id?: string; organization_id?: string }): void {
      const given = body.organisation_id ?? body.organization_id
      // The spec: rate-limit policies name their workspace and organisation when the caller is not
      // an API key (a JWT names neither the way a workspace or admin key does).
      if (kind === 'rate_limits' && principal.via !== 'api_key') {
        if (given === undefined) throw invalid('organization_id', 'organization_id is required when not authenticating with an API key')
        if (body.workspace_id === undefined) throw invalid('workspace_id', 'workspace_id is required when not authenticating with an API key')
      }
      if (given !== undefined && given !== principal.organizationId) throw invalid('organisation_id', 'organisation_id: not this credential\'s organisation')
    }

    app.post('/', async (request) => {
      const principal = principalOf(request)
      const org = principal.organizationId
      let created: PolicyRecord
      if (kind === 'rate_limits') {
        const body = parse(rateCreate, request.body)
        checkTenant(principal, body)
        const workspaceId = await targetWorkspace(ctx, principal, body.workspace_id)
        requireScope(principal, 'policies.create', workspaceId, 'policies')
        created = await ctx.store.policies.create({ organizationId: org, workspaceId, kind, name: body.name ?? null, conditions: body.conditions, groupBy: body.group_by, type: body.type, unit: body.unit, value: body.value, shadow: body.shadow, failureMode: body.failure_mode })
      } else {
        const body = parse(usageCreate, request.body)
        checkTenant(principal, body)
        const workspaceId = await targetWorkspace(ctx, principal, body.workspace_id)
        requireScope(principal, 'policies.create', workspaceId, 'policies')
        const nextReset = nextUsageResetAt({ credit_limit: body.credit_limit, type: body.type, periodic_reset: body.periodic_reset, periodic_reset_days: body.periodic_reset_days }, ctx.clock())
        created = await ctx.store.policies.create({
          organizationId: org, workspaceId, kind, name: body.name ?? null, conditions: body.conditions, groupBy: body.group_by, type: body.type,
          creditLimit: body.credit_limit, alertThreshold: body.alert_threshold ?? null, periodicReset: body.periodic_reset ?? null,
          periodicResetDays: body.periodic_reset_days ?? null, nextUsageResetAt: nextReset, shadow: body.shadow, failureMode: body.failure_mode,
        })
      }
      audit(request, { action: `policy.${kind}.create`, resourceType: `policy_${kind}`, resourceId: created.id, workspaceId: created.workspaceId })
      // Exactly what the spec shows for the created policy (both kinds).
      return { id: created.id, object: 'policy_usage_limits' }
    })

    app.get('/', async (request) => {
      const principal = principalOf(request)
      const query = parse(listQuery, request.query)
      const workspaces = await listWorkspaces(ctx, principal, query.workspace_id)
      for (const workspaceId of workspaces ?? [null]) requireScope(principal, 'policies.list', workspaceId, 'policies')
      const { page, pageSize } = pagination(request.query)
      const result = await ctx.store.policies.list(principal.organizationId, kind, { workspaceIds: workspaces, status: query.status ?? 'active', type: query.type, unit: query.unit }, page, pageSize)
      return { ...listEnvelope(result.total, result.data.map(policyView)), object: 'list' }
    })

    app.get<{ Params: { id: string } }>('/:id', async (request) => {
      const principal = principalOf(request)
      const policy = await load(principal, request.params.id)
      requireScope(principal, 'policies.read', policy.workspaceId, 'policies')
      return policyView(policy)
    })

    app.put<{ Params: { id: string } }>('/:id', async (request) => {
      const principal = principalOf(request)
      const policy = await load(principal, request.params.id)
      requireScope(principal, 'policies.update', policy.workspaceId, 'policies')
      refuseManaged(policy, what, policy.name ?? policy.id)
      const org = principal.organizationId
      if (kind === 'rate_limits') {
        const body = parse(rateUpdate, request.body)
        await ctx.store.policies.update(org, policy.id, { name: body.name, conditions: body.conditions, groupBy: body.group_by, unit: body.unit, value: body.value, type: body.type, shadow: body.shadow, failureMode: body.failure_mode })
      } else {
        const body = parse(usageUpdate, request.body)
        const creditLimit = body.credit_limit ?? policy.creditLimit!
        const threshold = body.alert_threshold === undefined ? policy.alertThreshold : body.alert_threshold
        if (threshold !== null && threshold >= creditLimit) throw invalid('alert_threshold', 'alert_threshold: must be below credit_limit')
        const resetChanged = body.periodic_reset !== undefined || body.periodic_reset_days !== undefined
        const periodic = body.periodic_reset === undefined ? policy.periodicReset : body.periodic_reset
        const periodicDays = body.periodic_reset_days === undefined ? policy.periodicResetDays : body.periodic_reset_days
        if (periodic !== null && periodicDays !== null) throw invalid('periodic_reset_days', 'periodic_reset_days: periodic_reset and periodic_reset_days are mutually exclusive')
        await ctx.store.transaction(async (tx) => {
          await tx.policies.update(org, policy.id, {
            name: body.name, conditions: body.conditions, groupBy: body.group_by, creditLimit: body.credit_limit, alertThreshold: body.alert_threshold,
            periodicReset: body.periodic_reset, periodicResetDays: body.periodic_reset_days, shadow: body.shadow, failureMode: body.failure_mode,
            nextUsageResetAt: resetChanged ? nextUsageResetAt({ credit_limit: creditLimit, type: 'cost', periodic_reset: periodic, periodic_reset_days: periodicDays }, ctx.clock()) : undefined,
          })
          if (body.reset_usage_for_value !== undefined) await tx.policies.resetUsage(policy.id, body.reset_usage_for_value)
        })
      }
      audit(request, { action: `policy.${kind}.update`, resourceType: `policy_${kind}`, resourceId: policy.id, workspaceId: policy.workspaceId })
      return {}
    })

    app.delete<{ Params: { id: string } }>('/:id', async (request) => {
      const principal = principalOf(request)
      const policy = await load(principal, request.params.id)
      requireScope(principal, 'policies.delete', policy.workspaceId, 'policies')
      refuseManaged(policy, what, policy.name ?? policy.id)
      // Usage policies are archived (their usage history stays); rate-limit policies are removed.
      if (kind === 'usage_limits') await ctx.store.policies.update(principal.organizationId, policy.id, { status: 'archived' })
      else await ctx.store.policies.delete(principal.organizationId, policy.id)
      audit(request, { action: `policy.${kind}.delete`, resourceType: `policy_${kind}`, resourceId: policy.id, workspaceId: policy.workspaceId })
      return {}
    })

    /** API keys, workspaces and users the policy is tied to by its conditions, with tracked usage. */
    app.get<{ Params: { id: string } }>('/:id/entities', async (request) => {
      const principal = principalOf(request)
      const policy = await load(principal, request.params.id)
      requireScope(principal, 'policies.read', policy.workspaceId, 'policies')
      const { page, pageSize } = pagination(request.query)
      const org = principal.organizationId
      const usage = new Map((await ctx.store.policies.usage(policy.id)).map((u) => [u.valueKey, u]))
      const entities: Array<Record<string, unknown>> = []
      const seen = new Set<string>()
      const add = (entity: Record<string, unknown> & { id: string; entity_type: string }): void => {
        const key = `${entity.entity_type}:${entity.id}`
        if (seen.has(key)) return
        seen.add(key)
        const tracked = usage.get(entity.id)
        entities.push({ ...entity, value_key: entity.id, current_usage: tracked?.currentUsage ?? 0, usage_status: tracked?.status ?? 'active' })
      }
      for (const condition of policy.conditions) {
        if (condition.key === 'api_key' && condition.value !== '*') {
          const key = await ctx.store.apiKeys.get(org, condition.value)
          if (!key) continue
          add({ id: key.id, entity_type: 'api_key', name: key.name, workspace_id: key.workspaceId })
          if (key.userId) {
            const user = await ctx.store.users.get(org, key.userId)
            if (user) add({ id: user.id, entity_type: 'user', name: user.email, workspace_id: key.workspaceId })
          }
        } else if (condition.key === 'workspace_id' && condition.value !== '*') {
          const workspace = await ctx.store.workspaces.get(org, condition.value)
          if (workspace) add({ id: workspace.id, entity_type: 'workspace', name: workspace.name, workspace_id: workspace.id })
        }
      }
      // Value keys tracked by accounting that no condition names (group_by combinations).
      for (const tracked of usage.values()) if (!seen.has(`api_key:${tracked.valueKey}`) && !seen.has(`workspace:${tracked.valueKey}`) && !seen.has(`user:${tracked.valueKey}`)) {
        add({ id: tracked.valueKey, entity_type: 'value_key', name: tracked.valueKey, workspace_id: policy.workspaceId })
      }
      return { object: 'list', total: entities.length, data: entities.slice(page * pageSize, (page + 1) * pageSize) }
    })

    if (kind === 'usage_limits') {
      app.put<{ Params: { id: string; entityId: string } }>('/:id/entities/:entityId/reset', async (request) => {
        const principal = principalOf(request)
        const policy = await load(principal, request.params.id)
        requireScope(principal, 'policies.update', policy.workspaceId, 'policies')
        if (!(await ctx.store.policies.resetUsage(policy.id, request.params.entityId))) throw notFound('tracked usage for that entity')
        audit(request, { action: 'policy.usage_limits.reset', resourceType: 'policy_usage_limits', resourceId: policy.id, workspaceId: policy.workspaceId, details: { entity: request.params.entityId } })
        return {}
      })
    }
  }
}
