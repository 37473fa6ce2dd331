/**
 * API keys: /v1/api-keys. Creation is POST /v1/api-keys/{organisation|workspace}/{service|user};
 * the raw key is in the answer to creation and rotation only. Rules live in identity/api-keys.ts.
 */
import type { FastifyInstance } from 'fastify'
import { z } from 'zod'
import { forbidden, invalid } from '../../errors.ts'
import {
  apiKeyView, createApiKey, createApiKeySchema, deleteApiKey, keyForAction, mayManageKeys, revokeBySecret, revokeBySecretSchema,
  rotateApiKey, rotateApiKeySchema, updateApiKey, updateApiKeySchema, type KeyKind,
} from '../../identity/api-keys.ts'
import type { AdminContext } from '../context.ts'
import { audit, listEnvelope, pagination, parse, principalOf } from '../http.ts'
import { keyViewWithUsage } from '../current-usage.ts'

const TYPE_PATH = { organisation: 'admin', organization: 'admin', workspace: 'workspace' } as const
const KINDS: KeyKind[] = ['admin/service', 'admin/user', 'workspace/service', 'workspace/user']
const listQuery = z.object({ workspace_id: z.string().min(1).optional(), user_id: z.string().min(1).optional() }).loose()

export function apiKeyRoutes(app: FastifyInstance, ctx: AdminContext): void {
  app.post<{ Params: { type: string; subtype: string } }>('/:type/:subtype', async (request) => {
    const principal = principalOf(request)
    const type = TYPE_PATH[request.params.type as keyof typeof TYPE_PATH]
    if (!type) throw invalid('type', 'key type must be organisation or workspace')
    const subtype = request.params.subtype
    if (subtype !== 'service' && subtype !== 'user') throw invalid('sub-type', 'key sub-type must be service or user')
    const body = parse(createApiKeySchema, request.body)
    const { key, rawKey } = await createApiKey(ctx.store, ctx.pepper, principal, type, subtype, body, ctx.clock())
    audit(request, { action: 'api_key.create', resourceType: 'api_key', resourceId: key.id, workspaceId: key.workspaceId, details: { type, subtype, scopes: key.scopes } })
    return { id: key.id, key: rawKey, object: 'api-key' }
  })

  // Leak response: whoever holds a key's secret may revoke it (they could use it anyway), so a
  // secret found in a repository or a log can be killed at once by anyone with admin API access.
  app.post('/revoke', async (request) => {
    principalOf(request)
    const body = parse(revokeBySecretSchema, request.body)
    const key = await revokeBySecret(ctx.store, ctx.pepper, body.key, ctx.clock())
    audit(request, { action: 'api_key.revoke_by_secret', resourceType: 'api_key', resourceId: key?.id ?? null, workspaceId: key?.workspaceId ?? null })
    return { revoked: key !== null, object: 'api-key-revocation' }
  })

  app.get('/', async (request) => {
    const principal = principalOf(request)
    const query = parse(listQuery, request.query)
    const { page, pageSize } = pagination(request.query)
    let workspaceId: string | undefined
    if (query.workspace_id !== undefined) {
      const workspace = await ctx.store.workspaces.get(principal.organizationId, query.workspace_id)
      if (!workspace) throw invalid('workspace_id', 'workspace not found')
      workspaceId = workspace.id
    }
    const visible = principal.visibleWorkspaceIds()
    if (visible !== null) {
      // A workspace-confined principal lists inside its own workspace(s) only.
      if (workspaceId === undefined) {
        if (visible.length !== 1) throw invalid('workspace_id', 'workspace_id is required')
        workspaceId = visible[0]
      } else if (!visible.includes(workspaceId)) {
        throw forbidden('this credential may not list keys of that workspace')
      }
    }
    const kinds = KINDS.filter((kind) => mayManageKeys(principal, kind, 'list', kind.startsWith('admin/') ? null : workspaceId ?? null))
    if (kinds.length === 0) throw forbidden('this credential may not list API keys')
    // A workspace member (no right to list service keys) sees only their own user keys.
    const onlyOwn = principal.authority(workspaceId ?? null) === 'member'
    const result = await ctx.store.apiKeys.list(principal.organizationId, {
      workspaceId,
      userId: onlyOwn ? principal.user?.id ?? '' : query.user_id,
      kinds,
    }, page, pageSize)
    return listEnvelope(result.total, await Promise.all(result.data.map((key) => keyViewWithUsage(ctx, key, apiKeyView(key)))))
  })

  app.get<{ Params: { id: string } }>('/:id', async (request) => {
    const key = await keyForAction(ctx.store, principalOf(request), request.params.id, 'read')
    return keyViewWithUsage(ctx, key, apiKeyView(key))
  })

  app.put<{ Params: { id: string } }>('/:id', async (request) => {
    const principal = principalOf(request)
    const body = parse(updateApiKeySchema, request.body)
    const key = await updateApiKey(ctx.store, principal, request.params.id, body, ctx.clock())
    audit(request, { action: 'api_key.update', resourceType: 'api_key', resourceId: key.id, workspaceId: key.workspaceId })
    return {}
  })

  app.delete<{ Params: { id: string } }>('/:id', async (request) => {
    const key = await deleteApiKey(ctx.store, principalOf(request), request.params.id, ctx.clock())
    audit(request, { action: 'api_key.delete', resourceType: 'api_key', resourceId: key.id, workspaceId: key.workspaceId })
    return {}
  })

  app.post<{ Params: { id: string } }>('/:id/rotate', async (request) => {
    const principal = principalOf(request)
    const body = parse(rotateApiKeySchema, request.body)
    const rotated = await rotateApiKey(ctx.store, ctx.pepper, principal, request.params.id, body.key_transition_period_ms, ctx.clock())
    audit(request, { action: 'api_key.rotate', resourceType: 'api_key', resourceId: rotated.key.id, workspaceId: rotated.key.workspaceId, details: { key_transition_expires_at: rotated.transitionEndsAt } })
    return { id: rotated.key.id, key: rotated.rawKey, key_transition_expires_at: rotated.transitionEndsAt, object: 'api-key' }
  })
}
