/**
 * Guardrails: /v1/guardrails. Stored and validated check lists (see guardrail-checks.ts) with
 * their actions; every change of checks, actions or hooks is a new version. Workspace guardrails
 * need guardrails.* in that workspace; organisation guardrails (no workspace) need
 * organisation_guardrails.* at organisation level. Enforcement is the gateway's.
 */
import type { FastifyInstance } from 'fastify'
import { z } from 'zod'
import { enforcementView } from '../../enforcement.ts'
import { conflict, notFound } from '../../errors.ts'
import type { Principal } from '../../identity/principal.ts'
import type { GuardrailRecord } from '../../store/index.ts'
import type { AdminContext } from '../context.ts'
import { audit, pagination, parse, principalOf } from '../http.ts'
import { actionsSchema, checkSchema, hooksSchema } from './guardrail-checks.ts'
import { generatedSlug, listWorkspaces, nameSchema, refuseManaged, requireScope, slugSchema, targetWorkspace, visibleOr404, workspaceRefSchema } from './resource-access.ts'

const checks = z.array(checkSchema).min(1).max(32)

const createSchema = z.strictObject({
  name: nameSchema,
  slug: slugSchema.optional(),
  workspace_id: workspaceRefSchema.optional(),
  organisation_id: z.string().min(1).max(255).optional(),
  checks,
  actions: actionsSchema.default({ deny: false, async: false, on_success: { feedback: { value: 5, weight: 1, metadata: '' } }, on_fail: { feedback: { value: -5, weight: 1, metadata: '' } } }),
  hooks: hooksSchema.default(['beforeRequestHook']),
})

const updateSchema = z.strictObject({
  name: nameSchema.optional(),
  checks: checks.optional(),
  actions: actionsSchema.optional(),
  hooks: hooksSchema.optional(),
  status: z.enum(['active', 'archived']).optional(),
})

export function guardrailView(guardrail: GuardrailRecord, detail: boolean): Record<string, unknown> {
  return {
    id: guardrail.id,
    name: guardrail.name,
    slug: guardrail.slug,
    organisation_id: guardrail.organizationId,
    workspace_id: guardrail.workspaceId,
    status: guardrail.status,
    version_id: guardrail.versionId,
    version: guardrail.version,
    owner_id: guardrail.createdBy,
    managed_by: guardrail.managedBy,
    created_at: guardrail.createdAt,
    last_updated_at: guardrail.updatedAt,
    ...(detail ? { checks: guardrail.checks, actions: guardrail.actions, hooks: guardrail.hooks } : {}),
    enforcement: enforcementView('Guardrail'),
    object: 'guardrail',
  }
}

function scopeFor(workspaceId: string | null, action: string): string {
  return workspaceId === null ? `organisation_guardrails.${action}` : `guardrails.${action}`
}

export function guardrailRoutes(app: FastifyInstance, ctx: AdminContext): void {
  async function load(principal: Principal, idOrSlug: string): Promise<GuardrailRecord> {
    return visibleOr404(principal, await ctx.store.guardrails.get(principal.organizationId, idOrSlug), 'guardrail')
  }

  app.post('/', async (request) => {
    const principal = principalOf(request)
    const body = parse(createSchema, request.body)
    const workspaceId = await targetWorkspace(ctx, principal, body.workspace_id)
    requireScope(principal, scopeFor(workspaceId, 'create'), workspaceId, 'guardrails')
    const slug = body.slug ?? generatedSlug('pg', body.name)
    if (await ctx.store.guardrails.get(principal.organizationId, slug)) throw conflict(`a guardrail "${slug}" already exists`, 'slug')
    const guardrail = await ctx.store.guardrails.create({
      organizationId: principal.organizationId,
      workspaceId,
      slug,
      name: body.name,
      checks: body.checks,
      actions: body.actions,
      hooks: body.hooks,
      createdBy: principal.actor.id,
    })
    audit(request, { action: 'guardrail.create', resourceType: 'guardrail', resourceId: guardrail.id, workspaceId })
    return { id: guardrail.id, slug: guardrail.slug, version_id: guardrail.versionId }
  })

  app.get('/', async (request) => {
    const principal = principalOf(request)
    const query = parse(z.object({ workspace_id: workspaceRefSchema.optional() }).loose(), request.query)
    const workspaces = await listWorkspaces(ctx, principal, query.workspace_id)
    for (const workspaceId of workspaces ?? [null]) requireScope(principal, scopeFor(workspaceId, 'list'), workspaceId, 'guardrails')
    const { page, pageSize } = pagination(request.query)
    const result = await ctx.store.guardrails.list(principal.organizationId, workspaces, page, pageSize)
    return { object: 'list', total: result.total, data: result.data.map((g) => guardrailView(g, false)) }
  })

  app.get<{ Params: { id: string } }>('/:id', async (request) => {
    const principal = principalOf(request)
    const guardrail = await load(principal, request.params.id)
    requireScope(principal, scopeFor(guardrail.workspaceId, 'read'), guardrail.workspaceId, 'guardrails')
    return guardrailView(guardrail, true)
  })

  app.put<{ Params: { id: string } }>('/:id', async (request) => {
    const principal = principalOf(request)
    const guardrail = await load(principal, request.params.id)
    requireScope(principal, scopeFor(guardrail.workspaceId, 'update'), guardrail.workspaceId, 'guardrails')
    refuseManaged(guardrail, 'guardrail', guardrail.slug)
    const body = parse(updateSchema, request.body)
    const updated = await ctx.store.guardrails.update(principal.organizationId, guardrail.id, body)
    if (!updated) throw notFound('guardrail')
    audit(request, { action: 'guardrail.update', resourceType: 'guardrail', resourceId: guardrail.id, workspaceId: guardrail.workspaceId, details: { version: updated.version } })
    return { id: updated.id, slug: updated.slug, version_id: updated.versionId }
  })

  app.delete<{ Params: { id: string } }>('/:id', async (request) => {
    const principal = principalOf(request)
    const guardrail = await load(principal, request.params.id)
    requireScope(principal, scopeFor(guardrail.workspaceId, 'delete'), guardrail.workspaceId, 'guardrails')
    refuseManaged(guardrail, 'guardrail', guardrail.slug)
    await ctx.store.guardrails.delete(principal.organizationId, guardrail.id)
    audit(request, { action: 'guardrail.delete', resourceType: 'guardrail', resourceId: guardrail.id, workspaceId: guardrail.workspaceId })
    return {}
  })
}
