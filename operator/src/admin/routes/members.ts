/**
 * Workspace members: /v1/admin/workspaces/:workspaceId/users. Managing members is "manage users
 * and permissions" (organisation level). Nobody changes their own membership role.
 */
import type { FastifyInstance } from 'fastify'
import { z } from 'zod'
import { forbidden, invalid, notFound } from '../../errors.ts'
import { requireCapability } from '../../identity/capabilities.ts'
import type { Principal } from '../../identity/principal.ts'
import type { MemberRecord } from '../../store/index.ts'
import type { AdminContext } from '../context.ts'
import { audit, listEnvelope, pagination, parse, principalOf } from '../http.ts'

const role = z.enum(['admin', 'manager', 'member'])
const addSchema = z.strictObject({ users: z.array(z.strictObject({ id: z.string().min(1), role })).min(1).max(1000) })
const updateSchema = z.strictObject({ role })
const listQuery = z.object({ role: role.optional(), email: z.string().max(320).optional() }).loose()

export function memberView(member: MemberRecord): Record<string, unknown> {
  return {
    object: 'workspace-user',
    id: member.userId,
    first_name: member.firstName,
    last_name: member.lastName,
    email: member.email,
    org_role: member.orgRole,
    role: member.role,
    status: 'active',
    workspace_id: member.workspaceId,
    created_at: member.createdAt,
    last_updated_at: member.updatedAt,
  }
}

function refuseSelf(principal: Principal, userId: string): void {
  if (principal.user?.id === userId) throw forbidden('you cannot change your own workspace role')
}

export function memberRoutes(app: FastifyInstance, ctx: AdminContext): void {
  async function workspaceId(principal: Principal, idOrSlug: string): Promise<string> {
    const workspace = await ctx.store.workspaces.get(principal.organizationId, idOrSlug)
    if (!workspace) throw notFound('workspace')
    return workspace.id
  }

  app.post<{ Params: { workspaceId: string } }>('/', async (request) => {
    const principal = principalOf(request)
    requireCapability(principal, 'users', 'update')
    const wsId = await workspaceId(principal, request.params.workspaceId)
    const body = parse(addSchema, request.body)
    await ctx.store.transaction(async (tx) => {
      for (const [index, entry] of body.users.entries()) {
        if (!(await tx.users.get(principal.organizationId, entry.id))) throw invalid(`users[${index}].id`, 'user not found')
        refuseSelf(principal, entry.id)
        await tx.members.upsert(wsId, entry.id, entry.role)
      }
    })
    audit(request, { action: 'workspace_member.add', resourceType: 'workspace_member', resourceId: body.users.map((u) => u.id).join(','), workspaceId: wsId })
    return {}
  })

  app.get<{ Params: { workspaceId: string } }>('/', async (request) => {
    const principal = principalOf(request)
    requireCapability(principal, 'users', 'list')
    const wsId = await workspaceId(principal, request.params.workspaceId)
    const query = parse(listQuery, request.query)
    const { page, pageSize } = pagination(request.query)
    const result = await ctx.store.members.list(wsId, { role: query.role, email: query.email }, page, pageSize)
    return listEnvelope(result.total, result.data.map(memberView))
  })

  app.get<{ Params: { workspaceId: string; userId: string } }>('/:userId', async (request) => {
    const principal = principalOf(request)
    requireCapability(principal, 'users', 'read')
    const member = await ctx.store.members.get(await workspaceId(principal, request.params.workspaceId), request.params.userId)
    if (!member) throw notFound('workspace member')
    return memberView(member)
  })

  app.put<{ Params: { workspaceId: string; userId: string } }>('/:userId', async (request) => {
    const principal = principalOf(request)
    requireCapability(principal, 'users', 'update')
    const wsId = await workspaceId(principal, request.params.workspaceId)
    const body = parse(updateSchema, request.body)
    refuseSelf(principal, request.params.userId)
    if (!(await ctx.store.members.get(wsId, request.params.userId))) throw notFound('workspace member')
    await ctx.store.members.upsert(wsId, request.params.userId, body.role)
    audit(request, { action: 'workspace_member.update', resourceType: 'workspace_member', resourceId: request.params.userId, workspaceId: wsId, details: { role: body.role } })
    return {}
  })

  app.delete<{ Params: { workspaceId: string; userId: string } }>('/:userId', async (request) => {
    const principal = principalOf(request)
    requireCapability(principal, 'users', 'delete')
    const wsId = await workspaceId(principal, request.params.workspaceId)
    if (!(await ctx.store.members.delete(wsId, request.params.userId))) throw notFound('workspace member')
    audit(request, { action: 'workspace_member.remove', resourceType: 'workspace_member', resourceId: request.params.userId, workspaceId: wsId })
    return {}
  })
}
