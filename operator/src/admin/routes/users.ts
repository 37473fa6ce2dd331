/**
 * Organisation users: /v1/admin/users. Users normally arrive by invite (accepted on their first
 * JWT sign-in) or are created here. Field-level rules: nobody changes their own role or deletes
 * themselves, the owner role is never granted or taken through the API.
 */
import type { FastifyInstance } from 'fastify'
import { z } from 'zod'
import { forbidden, invalid, notFound } from '../../errors.ts'
import { requireCapability } from '../../identity/capabilities.ts'
import type { UserRecord } from '../../store/index.ts'
import type { AdminContext } from '../context.ts'
import { audit, listEnvelope, pagination, parse, principalOf } from '../http.ts'

const orgRole = z.enum(['admin', 'member'])
const workspaceGrant = z.strictObject({ id: z.string().min(1), role: z.enum(['admin', 'manager', 'member']) })

const createSchema = z.strictObject({
  email: z.email().max(320),
  role: orgRole,
  first_name: z.string().max(255).nullable().optional(),
  last_name: z.string().max(255).nullable().optional(),
  workspaces: z.array(workspaceGrant).max(1000).optional(),
})
const updateSchema = z.strictObject({
  role: orgRole.optional(),
  first_name: z.string().max(255).nullable().optional(),
  last_name: z.string().max(255).nullable().optional(),
})
const listQuery = z.object({ role: z.enum(['owner', 'admin', 'member']).optional(), email: z.string().max(320).optional() }).loose()

export function userView(user: UserRecord, workspaceIds: string[]): Record<string, unknown> {
  return {
    object: 'user',
    id: user.id,
    first_name: user.firstName,
    last_name: user.lastName,
    email: user.email,
    role: user.role,
    status: user.status,
    workspace_ids: workspaceIds,
    created_at: user.createdAt,
    last_updated_at: user.updatedAt,
  }
}

export function userRoutes(app: FastifyInstance, ctx: AdminContext): void {
  async function view(user: UserRecord): Promise<Record<string, unknown>> {
    return userView(user, (await ctx.store.members.workspacesOf(user.id)).map((m) => m.workspaceId))
  }

  app.post('/', async (request) => {
    const principal = principalOf(request)
    requireCapability(principal, 'users', 'create')
    const body = parse(createSchema, request.body)
    const user = await ctx.store.transaction(async (tx) => {
      const created = await tx.users.create({ organizationId: principal.organizationId, email: body.email, role: body.role, firstName: body.first_name ?? null, lastName: body.last_name ?? null })
      for (const [index, grant] of (body.workspaces ?? []).entries()) {
        const workspace = await tx.workspaces.get(principal.organizationId, grant.id)
        if (!workspace) throw invalid(`workspaces[${index}].id`, 'workspace not found')
        await tx.members.upsert(workspace.id, created.id, grant.role)
      }
      return created
    })
    audit(request, { action: 'user.create', resourceType: 'user', resourceId: user.id, details: { role: user.role } })
    return view(user)
  })

  app.get('/', async (request) => {
    const principal = principalOf(request)
    requireCapability(principal, 'users', 'list')
    const query = parse(listQuery, request.query)
    const { page, pageSize } = pagination(request.query)
    const result = await ctx.store.users.list(principal.organizationId, { role: query.role, email: query.email }, page, pageSize)
    return listEnvelope(result.total, await Promise.all(result.data.map(view)))
  })

  app.get<{ Params: { userId: string } }>('/:userId', async (request) => {
    const principal = principalOf(request)
    requireCapability(principal, 'users', 'read')
    const user = await ctx.store.users.get(principal.organizationId, request.params.userId)
    if (!user) throw notFound('user')
    return view(user)
  })

  app.put<{ Params: { userId: string } }>('/:userId', async (request) => {
    const principal = principalOf(request)
    requireCapability(principal, 'users', 'update')
    const body = parse(updateSchema, request.body)
    const user = await ctx.store.users.get(principal.organizationId, request.params.userId)
    if (!user) throw notFound('user')
    if (body.role !== undefined && body.role !== user.role) {
      if (principal.user?.id === user.id) throw forbidden('you cannot change your own role')
      if (user.role === 'owner') throw forbidden('the owner\'s role cannot be changed through the API')
    }
    await ctx.store.users.update(principal.organizationId, user.id, {
      role: body.role,
      ...(body.first_name !== undefined ? { firstName: body.first_name } : {}),
      ...(body.last_name !== undefined ? { lastName: body.last_name } : {}),
    })
    audit(request, { action: 'user.update', resourceType: 'user', resourceId: user.id, details: body.role ? { role: body.role } : {} })
    return {}
  })

  app.delete<{ Params: { userId: string } }>('/:userId', async (request) => {
    const principal = principalOf(request)
    requireCapability(principal, 'users', 'delete')
    const user = await ctx.store.users.get(principal.organizationId, request.params.userId)
    if (!user) throw notFound('user')
    if (principal.user?.id === user.id) throw forbidden('you cannot delete yourself')
    if (user.role === 'owner') throw forbidden('the owner cannot be deleted through the API')
    await ctx.store.users.delete(principal.organizationId, user.id)
    audit(request, { action: 'user.delete', resourceType: 'user', resourceId: user.id })
    return {}
  })
}
