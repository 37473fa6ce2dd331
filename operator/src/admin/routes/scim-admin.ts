/**
 * Managing SCIM from the admin API ("manage users and permissions", organisation level):
 *
 *   POST   /v1/admin/scim/tokens {name}             → {id, name, token, scim_base_path}   the token is shown once
 *   GET    /v1/admin/scim/tokens                    → list (never the token)
 *   DELETE /v1/admin/scim/tokens/:id                → revokes it at once
 *   GET    /v1/scim/workspaces?workspace_id&scim_group_id&role → {mappings, total_count}
 *   POST   /v1/scim/workspaces {workspace_id, role, scim_group_id | scim_group_name}
 *   DELETE /v1/scim/workspaces/:id                  → archives the mapping, {success: true}
 *   GET    /v1/scim/groups                          → the organisation's SCIM groups and their mappings
 *
 * A mapping makes every member of the group a member of the workspace with the role; a name that
 * no group has yet pre-creates the group, so the IdP's later push of that name fills it.
 */
import { randomBytes } from 'node:crypto'
import type { FastifyInstance } from 'fastify'
import { z } from 'zod'
import { hashApiKey } from '@gatehouse/gateway/snapshot'
import { invalid, notFound } from '../../errors.ts'
import { requireCapability } from '../../identity/capabilities.ts'
import { SCIM_TOKEN_PREFIX } from '../../scim/protocol.ts'
import type { ScimMappingRecord, ScimTokenRecord } from '../../store/index.ts'
import type { AdminContext } from '../context.ts'
import { audit, listEnvelope, parse, principalOf } from '../http.ts'

const role = z.enum(['admin', 'manager', 'member'])
const tokenSchema = z.strictObject({ name: z.string().min(1).max(255) })
const mappingSchema = z.strictObject({
  workspace_id: z.string().min(1).max(255),
  role,
  scim_group_id: z.string().min(1).max(255).optional(),
  scim_group_name: z.string().trim().min(1).max(255).optional(),
}).refine((body) => (body.scim_group_id === undefined) !== (body.scim_group_name === undefined), { message: 'give exactly one of scim_group_id and scim_group_name', path: ['scim_group_id'] })
const mappingQuery = z.object({ workspace_id: z.string().optional(), scim_group_id: z.string().optional(), role: role.optional() }).loose()

function tokenView(token: ScimTokenRecord): Record<string, unknown> {
  return { object: 'scim-token', id: token.id, name: token.name, created_at: token.createdAt, last_used_at: token.lastUsedAt, revoked_at: token.revokedAt, status: token.revokedAt === null ? 'active' : 'revoked' }
}

function mappingView(mapping: ScimMappingRecord): Record<string, unknown> {
  return { id: mapping.id, workspace_id: mapping.workspaceId, scim_group: mapping.groupName, scim_group_id: mapping.groupId, role: mapping.role, status: mapping.status, created_at: mapping.createdAt }
}

export function scimTokenRoutes(app: FastifyInstance, ctx: AdminContext): void {
  app.post('/', async (request) => {
    const principal = principalOf(request)
    requireCapability(principal, 'users', 'create')
    const body = parse(tokenSchema, request.body)
    const raw = SCIM_TOKEN_PREFIX + randomBytes(32).toString('base64url')
    const token = await ctx.store.scim.createToken({ organizationId: principal.organizationId, name: body.name, tokenHash: hashApiKey(raw, ctx.pepper), createdBy: principal.actor.id })
    audit(request, { action: 'scim_token.create', resourceType: 'scim_token', resourceId: token.id })
    // The IdP needs the base URL too: it names the organisation, which callers rarely know by id.
    return { ...tokenView(token), token: raw, scim_base_path: `/v1/scim/${principal.organizationId}` }
  })

  app.get('/', async (request) => {
    const principal = principalOf(request)
    requireCapability(principal, 'users', 'list')
    const tokens = await ctx.store.scim.listTokens(principal.organizationId)
    return listEnvelope(tokens.length, tokens.map(tokenView))
  })

  app.delete<{ Params: { tokenId: string } }>('/:tokenId', async (request) => {
    const principal = principalOf(request)
    requireCapability(principal, 'users', 'delete')
    if (!(await ctx.store.scim.revokeToken(principal.organizationId, request.params.tokenId, ctx.clock()))) throw notFound('SCIM token')
    audit(request, { action: 'scim_token.revoke', resourceType: 'scim_token', resourceId: request.params.tokenId })
    return {}
  })
}

export function scimWorkspaceRoutes(app: FastifyInstance, ctx: AdminContext): void {
  app.get('/', async (request) => {
    const principal = principalOf(request)
    requireCapability(principal, 'users', 'list')
    const query = parse(mappingQuery, request.query)
    const mappings = await ctx.store.scim.listMappings(principal.organizationId, { workspaceId: query.workspace_id, groupId: query.scim_group_id, role: query.role })
    return { mappings: mappings.map(mappingView), total_count: mappings.length }
  })

  app.post('/', async (request) => {
    const principal = principalOf(request)
    requireCapability(principal, 'users', 'update')
    const body = parse(mappingSchema, request.body)
    const organizationId = principal.organizationId
    const mapping = await ctx.store.transaction(async (tx) => {
      const workspace = await tx.workspaces.get(organizationId, body.workspace_id)
      if (!workspace || workspace.status !== 'active') throw invalid('workspace_id', 'no active workspace with this id')
      let group = body.scim_group_id !== undefined ? await tx.scim.getGroup(organizationId, body.scim_group_id) : await tx.scim.findGroupByName(organizationId, body.scim_group_name!)
      if (!group) {
        if (body.scim_group_id !== undefined) throw invalid('scim_group_id', 'no SCIM group with this id')
        group = await tx.scim.createGroup({ organizationId, displayName: body.scim_group_name! })
      }
      if ((await tx.scim.listMappings(organizationId, { workspaceId: workspace.id, groupId: group.id })).length > 0) {
        throw invalid('scim_group_id', 'this group is already mapped to this workspace; delete that mapping first')
      }
      const created = await tx.scim.createMapping({ organizationId, workspaceId: workspace.id, groupId: group.id, role: body.role })
      await tx.scim.syncMemberships(group.memberIds)
      return created
    })
    audit(request, { action: 'scim_mapping.create', resourceType: 'scim_mapping', resourceId: mapping.id, workspaceId: mapping.workspaceId, details: { role: mapping.role, scim_group_id: mapping.groupId } })
    return mappingView(mapping)
  })

  app.delete<{ Params: { mappingId: string } }>('/:mappingId', async (request) => {
    const principal = principalOf(request)
    requireCapability(principal, 'users', 'update')
    const mapping = await ctx.store.transaction(async (tx) => {
      const archived = await tx.scim.archiveMapping(principal.organizationId, request.params.mappingId, ctx.clock())
      if (!archived) throw notFound('SCIM workspace mapping')
      const group = await tx.scim.getGroup(principal.organizationId, archived.groupId)
      await tx.scim.syncMemberships(group?.memberIds ?? [])
      return archived
    })
    audit(request, { action: 'scim_mapping.archive', resourceType: 'scim_mapping', resourceId: mapping.id, workspaceId: mapping.workspaceId })
    return { success: true }
  })
}

/** User-mode group management: the groups an admin can map, with their members and mappings. */
export function scimGroupRoutes(app: FastifyInstance, ctx: AdminContext): void {
  app.get('/', async (request) => {
    const principal = principalOf(request)
    requireCapability(principal, 'users', 'list')
    const [groups, mappings] = await Promise.all([ctx.store.scim.listGroups(principal.organizationId), ctx.store.scim.listMappings(principal.organizationId, {})])
    return listEnvelope(groups.length, groups.map((group) => ({
      object: 'scim-group',
      id: group.id,
      display_name: group.displayName,
      external_id: group.externalId,
      member_ids: group.memberIds,
      workspaces: mappings.filter((m) => m.groupId === group.id).map((m) => ({ mapping_id: m.id, workspace_id: m.workspaceId, role: m.role })),
      created_at: group.createdAt,
      last_updated_at: group.updatedAt,
    })))
  })
}
