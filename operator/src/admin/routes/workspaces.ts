/**
 * Workspaces: /v1/admin/workspaces (also served at /v1/workspaces).
 * Managing workspaces is organisation-level (admin keys, owners, admins); a workspace principal
 * may read its own workspace. Archived workspaces are listed only for organisation admins and owners.
 * DELETE archives (status `archived`); nothing is removed.
 */
import type { FastifyInstance } from 'fastify'
import { z } from 'zod'
import { forbidden, invalid, notFound } from '../../errors.ts'
import { requireCapability } from '../../identity/capabilities.ts'
import { earliestReset, usageLimitsSchema, workspaceRateLimitSchema, type UsageLimits } from '../../identity/limits.ts'
import type { Principal } from '../../identity/principal.ts'
import { normaliseSettings, workspaceSettingsSchema } from '../../identity/settings.ts'
import type { MemberRecord, WorkspaceRecord } from '../../store/index.ts'
import type { AdminContext } from '../context.ts'
import { audit, listEnvelope, pagination, parse, principalOf } from '../http.ts'
import { memberView } from './members.ts'
import { workspaceViewWithUsage } from '../current-usage.ts'

const SLUG = /^[a-z0-9][a-z0-9_-]*$/

const defaultsSchema = z.strictObject({
  metadata: z.record(z.string(), z.string()).optional(),
  input_guardrails: z.array(z.string().min(1).max(255)).max(50).optional(),
  output_guardrails: z.array(z.string().min(1).max(255)).max(50).optional(),
  config_id: z.string().min(1).max(255).nullable().optional(),
  user_api_key_config: z.string().min(1).max(255).nullable().optional(),
})

const createSchema = z.strictObject({
  name: z.string().trim().min(1).max(255),
  slug: z.string().min(1).max(255).regex(SLUG, 'slug may contain lowercase letters, digits, - and _').optional(),
  description: z.string().max(2000).nullable().optional(),
  defaults: defaultsSchema.optional(),
  usage_limits: z.array(usageLimitsSchema).max(10).optional(),
  rate_limits: z.array(workspaceRateLimitSchema).max(10).optional(),
  settings: workspaceSettingsSchema.optional(),
  /** Initial members by user id (as workspace members). */
  users: z.array(z.string().min(1)).max(1000).optional(),
})

const updateSchema = z.strictObject({
  name: z.string().trim().min(1).max(255).optional(),
  description: z.string().max(2000).nullable().optional(),
  status: z.enum(['active', 'archived']).optional(),
  defaults: defaultsSchema.optional(),
  usage_limits: z.array(usageLimitsSchema).max(10).optional(),
  rate_limits: z.array(workspaceRateLimitSchema).max(10).optional(),
  settings: workspaceSettingsSchema.optional(),
  /** Starts a new usage period now. */
  reset_usage: z.boolean().optional(),
})

const listQuery = z.object({
  name: z.string().max(255).optional(),
  exact_name: z.string().max(255).optional(),
  status: z.string().optional(),
}).loose()

export function workspaceView(workspace: WorkspaceRecord, members?: MemberRecord[]): Record<string, unknown> {
  return {
    id: workspace.id,
    slug: workspace.slug,
    name: workspace.name,
    description: workspace.description,
    status: workspace.status,
    defaults: { ...workspace.defaults, object: 'workspace' },
    usage_limits: workspace.usageLimits,
    rate_limits: workspace.rateLimits,
    settings: normaliseSettings(workspace.settings),
    next_usage_reset_at: workspace.nextUsageResetAt,
    last_reset_at: workspace.lastResetAt,
    managed_by: workspace.managedBy,
    created_at: workspace.createdAt,
    last_updated_at: workspace.updatedAt,
    ...(members ? { users: members.map(memberView) } : {}),
    object: 'workspace',
  }
}

function slugFrom(name: string): string {
  const base = name.toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-+|-+$/g, '').slice(0, 200) || 'workspace'
  return `ws-${base}`
}

function parseStatuses(raw: string | undefined): Array<'active' | 'archived'> {
  if (raw === undefined) return ['active']
  const values = raw.split(',').map((s) => s.trim()).filter(Boolean)
  if (values.length === 0) throw invalid('status', 'status must list active and/or archived')
  for (const value of values) if (value !== 'active' && value !== 'archived') throw invalid('status', `unknown status "${value}"; use active, archived`)
  return [...new Set(values)] as Array<'active' | 'archived'>
}

/** Read access: organisation-level via the capability table, or a workspace principal on its own workspace. */
function mayRead(principal: Principal, workspaceId: string, action: 'read' | 'list'): boolean {
  if (principal.isOrganisationLevel) return principal.has(`workspaces.${action}`, null)
  return principal.has(`workspaces.${action}`, workspaceId)
}

export function workspaceRoutes(app: FastifyInstance, ctx: AdminContext): void {
  async function load(principal: Principal, idOrSlug: string): Promise<WorkspaceRecord> {
    const workspace = await ctx.store.workspaces.get(principal.organizationId, idOrSlug)
    const visible = principal.visibleWorkspaceIds()
    if (!workspace || (visible !== null && !visible.includes(workspace.id))) throw notFound('workspace')
    return workspace
  }

  function refuseManaged(workspace: WorkspaceRecord): void {
    if (workspace.managedBy) throw forbidden(`this workspace is managed by ${workspace.managedBy}; change it there`)
  }

  app.post('/', async (request) => {
    const principal = principalOf(request)
    requireCapability(principal, 'workspaces', 'create')
    const body = parse(createSchema, request.body)
    const now = ctx.clock()
    const created = await ctx.store.transaction(async (tx) => {
      const workspace = await tx.workspaces.create({
        organizationId: principal.organizationId,
        slug: body.slug ?? slugFrom(body.name),
        name: body.name,
        description: body.description ?? null,
        defaults: body.defaults ?? {},
        usageLimits: body.usage_limits ?? [],
        rateLimits: body.rate_limits ?? [],
        settings: body.settings ?? {},
        nextUsageResetAt: earliestReset(body.usage_limits ?? [], now),
      })
      for (const [index, userId] of (body.users ?? []).entries()) {
        if (!(await tx.users.get(principal.organizationId, userId))) throw invalid(`users[${index}]`, 'user not found')
        await tx.members.upsert(workspace.id, userId, 'member')
      }
      return workspace
    })
    audit(request, { action: 'workspace.create', resourceType: 'workspace', resourceId: created.id, workspaceId: created.id })
    return workspaceView(created)
  })

  app.get('/', async (request) => {
    const principal = principalOf(request)
    const query = parse(listQuery, request.query)
    const statuses = parseStatuses(query.status)
    // Organisation level = owners, admins and admin keys.
    if (statuses.includes('archived') && !principal.isOrganisationLevel) {
      throw forbidden('only organisation owners and admins may list archived workspaces')
    }
    const visible = principal.visibleWorkspaceIds()
    if (visible === null && !principal.has('workspaces.list', null)) throw forbidden('this credential may not list workspaces')
    const ids = visible === null ? undefined : visible.filter((id) => mayRead(principal, id, 'list'))
    const { page, pageSize } = pagination(request.query)
    const result = await ctx.store.workspaces.list(principal.organizationId, { statuses, nameContains: query.name, exactName: query.exact_name, ids }, page, pageSize)
    return listEnvelope(result.total, await Promise.all(result.data.map((w) => workspaceViewWithUsage(ctx, w, workspaceView(w)))))
  })

  app.get<{ Params: { workspaceId: string } }>('/:workspaceId', async (request) => {
    const principal = principalOf(request)
    const workspace = await load(principal, request.params.workspaceId)
    if (!mayRead(principal, workspace.id, 'read')) throw forbidden('this credential may not read workspaces')
    const members = await ctx.store.members.list(workspace.id, {}, 0, 100)
    return workspaceViewWithUsage(ctx, workspace, workspaceView(workspace, members.data))
  })

  app.put<{ Params: { workspaceId: string } }>('/:workspaceId', async (request) => {
    const principal = principalOf(request)
    requireCapability(principal, 'workspaces', 'update')
    const workspace = await load(principal, request.params.workspaceId)
    refuseManaged(workspace)
    const body = parse(updateSchema, request.body)
    const now = ctx.clock()
    const usageLimits = body.usage_limits
    await ctx.store.workspaces.update(principal.organizationId, workspace.id, {
      name: body.name,
      description: body.description,
      status: body.status,
      defaults: body.defaults === undefined ? undefined : { ...workspace.defaults, ...body.defaults },
      usageLimits,
      rateLimits: body.rate_limits,
      settings: body.settings,
      nextUsageResetAt: usageLimits === undefined && !body.reset_usage ? undefined : earliestReset(usageLimits ?? (workspace.usageLimits as UsageLimits[]), now),
      lastResetAt: body.reset_usage ? now.toISOString() : undefined,
    })
    audit(request, { action: body.status === 'archived' ? 'workspace.archive' : 'workspace.update', resourceType: 'workspace', resourceId: workspace.id, workspaceId: workspace.id })
    return {}
  })

  app.delete<{ Params: { workspaceId: string } }>('/:workspaceId', async (request) => {
    const principal = principalOf(request)
    requireCapability(principal, 'workspaces', 'delete')
    const workspace = await load(principal, request.params.workspaceId)
    refuseManaged(workspace)
    // The spec's workspaces are archived, not removed: keys, logs and analytics keep their
    // workspace, it stays listable with ?status=archived, and the gateway refuses its keys.
    await ctx.store.workspaces.update(principal.organizationId, workspace.id, { status: 'archived' })
    audit(request, { action: 'workspace.delete', resourceType: 'workspace', resourceId: workspace.id, workspaceId: workspace.id, details: { status: 'archived' } })
    return {}
  })
}
