/**
 * The SCIM 2.0 service (RFC 7644) an identity provider provisions through:
 *
 *   /v1/scim/:organisationId/Users[/:id]     GET (list: filter, startIndex, count), POST, PUT, PATCH, DELETE
 *   /v1/scim/:organisationId/Groups[/:id]    the same for groups with members
 *   /v1/scim/:organisationId/ServiceProviderConfig, /ResourceTypes, /Schemas
 *
 * Authenticated by a SCIM bearer token of that organisation (`Authorization: Bearer ghscim_…`,
 * minted at /v1/admin/scim/tokens), never by admin API credentials. Requests and answers are
 * `application/scim+json` (plain JSON is accepted too); errors use the SCIM error schema.
 *
 * Provisioning effects: a user created here gets the organisation role `member`; `active: false`
 * disables the user (their keys and JWTs are refused by every gateway from the next snapshot, which
 * the change publishes at once; their sessions end), `active: true` restores them with memberships
 * intact; DELETE removes the user and everything they hold. Group membership changes recompute the
 * workspace memberships that group mappings (/v1/scim/workspaces) grant.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { hashApiKey } from '@gatehouse/gateway/snapshot'
import type { AdminContext } from '../context.ts'
import { redact } from '../audit.ts'
import { AdminError } from '../../errors.ts'
import { isStoreOutage } from '../../store/errors.ts'
import type { Repositories, ScimGroupRecord, ScimTokenRecord, UserRecord } from '../../store/index.ts'
import { equalityOn, matches, parseFilter, ScimFilterError, type FilterNode } from '../../scim/filter.ts'
import { displayNameOf, groupResource, memberIds, planGroupPatch, type GroupPlan } from '../../scim/groups.ts'
import { listResponse, paging, ScimError, scimInvalid, scimNotFound, SCIM_MEDIA_TYPE, SCIM_TOKEN_PREFIX } from '../../scim/protocol.ts'
import { discoveryRoutes } from '../../scim/discovery.ts'
import { applyUserPatch, draftFromBody, draftOf, userResource, type UserDraft } from '../../scim/users.ts'

declare module 'fastify' {
  interface FastifyRequest {
    scimToken: ScimTokenRecord | null
  }
}

/** Roles SCIM gives the users it creates (SSO sign-in shares the same default). */
export const SCIM_DEFAULT_ROLE = 'member'

function toScimError(error: unknown): ScimError {
  if (error instanceof ScimError) return error
  if (error instanceof ScimFilterError) return scimInvalid(error.message, 'invalidFilter')
  if (error instanceof AdminError) return new ScimError(error.status, error.message, error.status === 400 ? 'invalidValue' : null, error.headers)
  if (isStoreOutage(error)) return new ScimError(503, 'the admin store is unavailable; retry shortly', null, { 'retry-after': '2' })
  const fastifyError = error as { statusCode?: number; code?: string; message?: string }
  if (fastifyError.code === '23505') return new ScimError(409, 'a resource with the same unique value already exists', 'uniqueness')
  if (typeof fastifyError.statusCode === 'number' && fastifyError.statusCode >= 400 && fastifyError.statusCode < 500) {
    return new ScimError(fastifyError.statusCode, fastifyError.message ?? 'invalid request', 'invalidSyntax')
  }
  return new ScimError(500, 'internal error')
}

function baseUrl(request: FastifyRequest, organisationId: string): string {
  const host = request.headers['x-forwarded-host'] ?? request.headers.host ?? 'localhost'
  const protocol = (request.headers['x-forwarded-proto'] as string | undefined)?.split(',')[0] ?? request.protocol
  return `${protocol}://${String(host).split(',')[0]}/v1/scim/${organisationId}`
}

function filterOf(query: Record<string, unknown>): FilterNode | null {
  const filter = query.filter
  if (filter === undefined || filter === '') return null
  if (typeof filter !== 'string') throw scimInvalid('filter must be a string', 'invalidFilter')
  return parseFilter(filter)
}

/** Filters in memory, then pages: `startIndex` is 1-based. */
function page<T>(items: T[], query: Record<string, unknown>): { total: number; startIndex: number; items: T[] } {
  const { startIndex, count } = paging(query)
  return { total: items.length, startIndex, items: items.slice(startIndex - 1, startIndex - 1 + count) }
}

function excludes(query: Record<string, unknown>, attribute: string): boolean {
  const excluded = query.excludedAttributes
  return typeof excluded === 'string' && excluded.split(',').some((name) => name.trim().toLowerCase() === attribute)
}

export function scimRoutes(app: FastifyInstance, ctx: AdminContext): void {
  // IdPs send a content type on bodiless DELETEs too: an empty body is no body, not a syntax error.
  const strictJson = app.getDefaultJsonParser('error', 'error')
  const scimJson: typeof strictJson = (request, body, done) => (body === '' ? done(null, undefined) : strictJson(request, body, done))
  app.removeContentTypeParser('application/json')
  app.addContentTypeParser(['application/json', SCIM_MEDIA_TYPE], { parseAs: 'string' }, scimJson)
  app.decorateRequest('scimToken', null)

  app.addHook('onRequest', async (request) => {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(request.headers.authorization ?? '')
    if (!match || !match[1]!.startsWith(SCIM_TOKEN_PREFIX)) throw new ScimError(401, 'send the SCIM bearer token: Authorization: Bearer ghscim_…')
    const token = await ctx.store.scim.useToken(hashApiKey(match[1]!, ctx.pepper), ctx.clock())
    const organisationId = (request.params as { organisationId?: string }).organisationId
    // One answer for an unknown token and a token of another organisation: nothing to probe.
    if (!token || token.organizationId !== organisationId) throw new ScimError(401, 'the SCIM token is not valid for this organisation')
    request.scimToken = token
  })

  app.addHook('onSend', async (request, reply, payload) => {
    reply.header('content-type', `${SCIM_MEDIA_TYPE}; charset=utf-8`)
    if (request.scimToken && request.method !== 'GET') {
      try {
        await ctx.store.audit.record({
          organizationId: request.scimToken.organizationId,
          actorType: 'system',
          actorId: `scim_token:${request.scimToken.id}`,
          method: request.method,
          uri: request.routeOptions.url ?? null,
          requestId: request.id,
          action: `scim.${request.method.toLowerCase()}`,
          resourceType: /\/Groups/.test(request.url) ? 'scim_group' : 'scim_user',
          resourceId: (request.params as { id?: string }).id ?? null,
          responseStatusCode: reply.statusCode,
          clientIp: request.ip,
          requestBody: redact(request.body ?? null),
        })
      } catch (error) {
        request.log.error({ err: { message: String((error as Error).message) } }, 'audit write failed')
      }
    }
    return payload
  })

  app.setErrorHandler((error, request, reply) => {
    const scimError = toScimError(error)
    if (scimError.status >= 500) request.log.error({ err: { message: redact(String((error as Error).message)) } }, 'SCIM request failed')
    void reply.status(scimError.status).headers(scimError.headers).send(scimError.toBody())
  })

  const opts = { config: { publicRoute: true } }
  type Params = { organisationId: string; id: string }
  const orgOf = (request: FastifyRequest): string => request.scimToken!.organizationId

  // Users ---------------------------------------------------------------------------------------

  async function userView(request: FastifyRequest, user: UserRecord): Promise<Record<string, unknown>> {
    return userResource(user, await ctx.store.scim.groupsOf(user.id), `${baseUrl(request, user.organizationId)}/Users/${user.id}`)
  }

  async function requireUser(organisationId: string, id: string, store: Repositories = ctx.store): Promise<UserRecord> {
    const user = await store.users.get(organisationId, id)
    if (!user) throw scimNotFound(`User ${id}`)
    return user
  }

  /** Saves a draft over `user`; deactivation also ends the user's sessions. */
  async function save(tx: Repositories, user: UserRecord, draft: UserDraft): Promise<UserRecord> {
    const clash = await tx.users.findByScimUserName(user.organizationId, draft.userName)
    if (clash && clash.id !== user.id) throw new ScimError(409, `userName ${draft.userName} is taken`, 'uniqueness')
    if (draft.email.toLowerCase() !== user.email) {
      const other = await tx.users.findByEmail(user.organizationId, draft.email)
      if (other && other.id !== user.id) throw new ScimError(409, `email ${draft.email} belongs to another user`, 'uniqueness')
    }
    let saved = (await tx.users.update(user.organizationId, user.id, {
      email: draft.email,
      firstName: draft.givenName,
      lastName: draft.familyName,
      scimUserName: draft.userName,
      scimExternalId: draft.externalId,
    }))!
    const wantStatus = draft.active ? 'active' : 'disabled'
    if (saved.status !== wantStatus) {
      if (saved.role === 'owner' && wantStatus === 'disabled') throw new ScimError(400, 'the organisation owner cannot be deactivated through SCIM', 'mutability')
      saved = (await tx.users.setStatus(user.organizationId, user.id, wantStatus))!
      if (wantStatus === 'disabled') await tx.sessions.revokeForUser(user.id, ctx.clock())
    }
    return saved
  }

  app.get<{ Params: Params }>('/Users', opts, async (request) => {
    const query = request.query as Record<string, unknown>
    const filter = filterOf(query)
    const organisationId = orgOf(request)
    const userName = filter ? equalityOn(filter, 'userName') : null
    let users: UserRecord[]
    if (userName !== null) {
      // Okta's lookup before every create: one indexed query instead of a scan.
      const found = await ctx.store.users.findByScimUserName(organisationId, userName) ?? await ctx.store.users.findByEmail(organisationId, userName)
      users = found && (found.scimUserName === null || found.scimUserName.toLowerCase() === userName.toLowerCase()) ? [found] : []
    } else {
      users = await ctx.store.users.listAll(organisationId)
    }
    const views = await Promise.all(users.map((user) => userView(request, user)))
    const selected = filter && userName === null ? views.filter((view) => matches(filter, view)) : views
    const paged = page(selected, query)
    return listResponse(paged.total, paged.startIndex, paged.items)
  })

  app.get<{ Params: Params }>('/Users/:id', opts, async (request) => userView(request, await requireUser(orgOf(request), request.params.id)))

  app.post<{ Params: Params }>('/Users', opts, async (request, reply) => {
    const organisationId = orgOf(request)
    const draft = draftFromBody(request.body, null)
    const user = await ctx.store.transaction(async (tx) => {
      if (await tx.users.findByScimUserName(organisationId, draft.userName)) throw new ScimError(409, `userName ${draft.userName} already exists`, 'uniqueness')
      const existing = await tx.users.findByEmail(organisationId, draft.email)
      if (existing) {
        // A user who arrived by invite or SSO before provisioning is linked, not duplicated.
        if (existing.scimUserName !== null) throw new ScimError(409, `a user with email ${draft.email} already exists`, 'uniqueness')
        return save(tx, existing, draft)
      }
      return tx.users.create({
        organizationId: organisationId,
        email: draft.email,
        role: SCIM_DEFAULT_ROLE,
        firstName: draft.givenName,
        lastName: draft.familyName,
        scimUserName: draft.userName,
        scimExternalId: draft.externalId,
        status: draft.active ? 'active' : 'disabled',
      })
    })
    return reply.status(201).header('location', `${baseUrl(request, organisationId)}/Users/${user.id}`).send(await userView(request, user))
  })

  app.put<{ Params: Params }>('/Users/:id', opts, async (request) => {
    const organisationId = orgOf(request)
    const user = await ctx.store.transaction(async (tx) => {
      const current = await requireUser(organisationId, request.params.id, tx)
      return save(tx, current, draftFromBody(request.body, draftOf(current)))
    })
    return userView(request, user)
  })

  app.patch<{ Params: Params }>('/Users/:id', opts, async (request) => {
    const organisationId = orgOf(request)
    const user = await ctx.store.transaction(async (tx) => {
      const current = await requireUser(organisationId, request.params.id, tx)
      return save(tx, current, applyUserPatch(draftOf(current), request.body))
    })
    return userView(request, user)
  })

  app.delete<{ Params: Params }>('/Users/:id', opts, async (request, reply) => {
    const organisationId = orgOf(request)
    const user = await requireUser(organisationId, request.params.id)
    if (user.role === 'owner') throw new ScimError(400, 'the organisation owner cannot be deleted through SCIM', 'mutability')
    // Cascades: memberships, group memberships, user keys and sessions go with the row.
    await ctx.store.users.delete(organisationId, user.id)
    return reply.status(204).send()
  })

  // Groups --------------------------------------------------------------------------------------

  async function groupView(request: FastifyRequest, group: ScimGroupRecord, members = true): Promise<Record<string, unknown>> {
    const display = new Map<string, string>()
    if (members) {
      for (const id of group.memberIds) {
        const user = await ctx.store.users.get(group.organizationId, id)
        if (user) display.set(id, user.scimUserName ?? user.email)
      }
    }
    return groupResource(group, `${baseUrl(request, group.organizationId)}/Groups/${group.id}`, { members, display })
  }

  async function requireGroup(organisationId: string, id: string, store: Repositories = ctx.store): Promise<ScimGroupRecord> {
    const group = await store.scim.getGroup(organisationId, id)
    if (!group) throw scimNotFound(`Group ${id}`)
    return group
  }

  /** Member ids must name users of the organisation. */
  async function checkMembers(tx: Repositories, organisationId: string, ids: readonly string[]): Promise<void> {
    for (const id of ids) if (!(await tx.users.get(organisationId, id))) throw scimInvalid(`member ${id} is not a user of this organisation`)
  }

  async function applyPlan(tx: Repositories, group: ScimGroupRecord, plan: GroupPlan): Promise<void> {
    if (plan.displayName !== undefined && plan.displayName.toLowerCase() !== group.displayName.toLowerCase()) {
      if (await tx.scim.findGroupByName(group.organizationId, plan.displayName)) throw new ScimError(409, `a group named ${plan.displayName} already exists`, 'uniqueness')
    }
    if (plan.displayName !== undefined || plan.externalId !== undefined) {
      await tx.scim.updateGroup(group.organizationId, group.id, { ...(plan.displayName !== undefined ? { displayName: plan.displayName } : {}), ...(plan.externalId !== undefined ? { externalId: plan.externalId } : {}) })
    }
    let members = new Set(group.memberIds)
    if (plan.replace !== null) members = new Set(plan.replace)
    for (const id of plan.add) members.add(id)
    for (const id of plan.remove) members.delete(id)
    const added = [...members].filter((id) => !group.memberIds.includes(id))
    const removed = group.memberIds.filter((id) => !members.has(id))
    await checkMembers(tx, group.organizationId, added)
    await tx.scim.addMembers(group.id, added)
    await tx.scim.removeMembers(group.id, removed)
    await tx.scim.syncMemberships([...added, ...removed])
  }

  app.get<{ Params: Params }>('/Groups', opts, async (request) => {
    const query = request.query as Record<string, unknown>
    const filter = filterOf(query)
    const withMembers = !excludes(query, 'members')
    const groups = await ctx.store.scim.listGroups(orgOf(request))
    const views = await Promise.all(groups.map((group) => groupView(request, group, withMembers || filter !== null)))
    const selected = filter ? views.filter((view) => matches(filter, view)) : views
    const paged = page(selected, query)
    return listResponse(paged.total, paged.startIndex, withMembers ? paged.items : paged.items.map(({ members: _members, ...rest }) => rest))
  })

  app.get<{ Params: Params }>('/Groups/:id', opts, async (request) => {
    const query = request.query as Record<string, unknown>
    return groupView(request, await requireGroup(orgOf(request), request.params.id), !excludes(query, 'members'))
  })

  app.post<{ Params: Params }>('/Groups', opts, async (request, reply) => {
    const organisationId = orgOf(request)
    const body = request.body as Record<string, unknown> | null
    const displayName = displayNameOf(body?.displayName)
    const members = memberIds(body?.members)
    const group = await ctx.store.transaction(async (tx) => {
      if (await tx.scim.findGroupByName(organisationId, displayName)) throw new ScimError(409, `a group named ${displayName} already exists`, 'uniqueness')
      const created = await tx.scim.createGroup({ organizationId: organisationId, displayName, externalId: typeof body?.externalId === 'string' ? body.externalId : null })
      await applyPlan(tx, created, { replace: members, add: [], remove: [] })
      return (await tx.scim.getGroup(organisationId, created.id))!
    })
    return reply.status(201).header('location', `${baseUrl(request, organisationId)}/Groups/${group.id}`).send(await groupView(request, group))
  })

  app.put<{ Params: Params }>('/Groups/:id', opts, async (request) => {
    const organisationId = orgOf(request)
    const body = request.body as Record<string, unknown> | null
    const plan: GroupPlan = { displayName: displayNameOf(body?.displayName), replace: memberIds(body?.members), add: [], remove: [] }
    if (body && 'externalId' in body) plan.externalId = typeof body.externalId === 'string' ? body.externalId : null
    const group = await ctx.store.transaction(async (tx) => {
      const current = await requireGroup(organisationId, request.params.id, tx)
      await applyPlan(tx, current, plan)
      return (await tx.scim.getGroup(organisationId, current.id))!
    })
    return groupView(request, group)
  })

  app.patch<{ Params: Params }>('/Groups/:id', opts, async (request, reply) => {
    const organisationId = orgOf(request)
    const group = await ctx.store.transaction(async (tx) => {
      const current = await requireGroup(organisationId, request.params.id, tx)
      await applyPlan(tx, current, planGroupPatch(request.body, current))
      return (await tx.scim.getGroup(organisationId, current.id))!
    })
    // Okta and Entra accept 204 for group PATCH; the resource is sent when asked for (RFC 7644 §3.5.2).
    if (typeof (request.query as Record<string, unknown>).attributes === 'string') return groupView(request, group)
    return reply.status(204).send()
  })

  app.delete<{ Params: Params }>('/Groups/:id', opts, async (request, reply) => {
    const organisationId = orgOf(request)
    await ctx.store.transaction(async (tx) => {
      const former = await tx.scim.deleteGroup(organisationId, request.params.id)
      if (former === null) throw scimNotFound(`Group ${request.params.id}`)
      await tx.scim.syncMemberships(former)
    })
    return reply.status(204).send()
  })

  discoveryRoutes(app, opts, (request) => baseUrl(request, orgOf(request)))
}
