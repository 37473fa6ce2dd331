/**
 * Invites: /v1/admin/users/invites. An invite is accepted when the invited person first signs in
 * with a JWT carrying the invited email (identity/jwt.ts); Gatehouse has no e-mail sender, so
 * there is no invite link to follow.
 */
import type { FastifyInstance } from 'fastify'
import { z } from 'zod'
import { conflict, invalid, notFound } from '../../errors.ts'
import { requireCapability } from '../../identity/capabilities.ts'
import type { InviteRecord } from '../../store/index.ts'
import type { AdminContext } from '../context.ts'
import { audit, listEnvelope, pagination, parse, principalOf } from '../http.ts'

const INVITE_TTL_MS = 7 * 86_400_000

const createSchema = z.strictObject({
  email: z.email().max(320),
  role: z.enum(['admin', 'member']),
  workspaces: z.array(z.strictObject({ id: z.string().min(1), role: z.enum(['admin', 'manager', 'member']) })).max(1000).default([]),
})
const listQuery = z.object({
  role: z.enum(['admin', 'member']).optional(),
  email: z.string().max(320).optional(),
  status: z.enum(['pending', 'cancelled', 'accepted', 'expired']).optional(),
}).loose()

function inviteView(invite: InviteRecord, now: Date): Record<string, unknown> {
  const status = invite.status === 'pending' && new Date(invite.expiresAt) <= now ? 'expired' : invite.status
  return {
    object: 'invite',
    id: invite.id,
    email: invite.email,
    role: invite.role,
    status,
    invited_by: invite.invitedBy,
    workspaces: invite.workspaces,
    created_at: invite.createdAt,
    expires_at: invite.expiresAt,
    accepted_at: invite.acceptedAt,
  }
}

export function inviteRoutes(app: FastifyInstance, ctx: AdminContext): void {
  app.post('/', async (request) => {
    const principal = principalOf(request)
    requireCapability(principal, 'users', 'create')
    const body = parse(createSchema, request.body)
    if (await ctx.store.users.findByEmail(principal.organizationId, body.email)) throw conflict('a user with this email already exists', 'email')
    const workspaces = []
    for (const [index, grant] of body.workspaces.entries()) {
      const workspace = await ctx.store.workspaces.get(principal.organizationId, grant.id)
      if (!workspace) throw invalid(`workspaces[${index}].id`, 'workspace not found')
      workspaces.push({ workspace_id: workspace.id, role: grant.role })
    }
    const now = ctx.clock()
    const invite = await ctx.store.invites.create({
      organizationId: principal.organizationId,
      email: body.email,
      role: body.role,
      workspaces,
      invitedBy: principal.actor.id,
      expiresAt: new Date(now.getTime() + INVITE_TTL_MS).toISOString(),
    })
    audit(request, { action: 'invite.create', resourceType: 'invite', resourceId: invite.id })
    return inviteView(invite, now)
  })

  app.get('/', async (request) => {
    const principal = principalOf(request)
    requireCapability(principal, 'users', 'list')
    const query = parse(listQuery, request.query)
    const { page, pageSize } = pagination(request.query)
    const result = await ctx.store.invites.list(principal.organizationId, query, page, pageSize)
    const now = ctx.clock()
    return listEnvelope(result.total, result.data.map((invite) => inviteView(invite, now)))
  })

  app.get<{ Params: { inviteId: string } }>('/:inviteId', async (request) => {
    const principal = principalOf(request)
    requireCapability(principal, 'users', 'read')
    const invite = await ctx.store.invites.get(principal.organizationId, request.params.inviteId)
    if (!invite) throw notFound('invite')
    return inviteView(invite, ctx.clock())
  })

  app.delete<{ Params: { inviteId: string } }>('/:inviteId', async (request) => {
    const principal = principalOf(request)
    requireCapability(principal, 'users', 'delete')
    const invite = await ctx.store.invites.setStatus(principal.organizationId, request.params.inviteId, 'cancelled')
    if (!invite) throw notFound('invite')
    audit(request, { action: 'invite.cancel', resourceType: 'invite', resourceId: invite.id })
    return {}
  })

  app.post<{ Params: { inviteId: string } }>('/:inviteId/resend', async (request) => {
    const principal = principalOf(request)
    requireCapability(principal, 'users', 'create')
    const existing = await ctx.store.invites.get(principal.organizationId, request.params.inviteId)
    if (!existing) throw notFound('invite')
    if (existing.status !== 'pending') throw conflict(`the invite is ${existing.status}`)
    const now = ctx.clock()
    const invite = await ctx.store.invites.setStatus(principal.organizationId, existing.id, 'pending', new Date(now.getTime() + INVITE_TTL_MS).toISOString())
    audit(request, { action: 'invite.resend', resourceType: 'invite', resourceId: existing.id })
    return inviteView(invite!, now)
  })
}
