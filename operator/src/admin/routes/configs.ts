/**
 * Configs: /v1/configs. Saved routing configs, validated with the gateway's own config schema
 * (the snapshot contract exports it), so a misspelt field is a 400 naming its path
 * (`config.targets[1].retry.attempts`). Every create or update writes a new version:
 * GET /v1/configs/{slug}/versions lists them, GET /v1/configs/{slug}/versions/{id or number}
 * returns one. Admin keys act in any workspace (`workspace_id`) or organisation-wide; workspace
 * keys in their own. Answers keep the legacy `{success, data}` shape of this resource.
 */
import { configPath, validateConfig } from '@gatehouse/gateway/snapshot'
import type { FastifyInstance } from 'fastify'
import { z } from 'zod'
import { conflict, invalid, notFound } from '../../errors.ts'
import { requireCapability } from '../../identity/capabilities.ts'
import type { Principal } from '../../identity/principal.ts'
import type { ConfigRecord, ConfigVersionRecord } from '../../store/index.ts'
import type { AdminContext } from '../context.ts'
import { audit, pagination, parse, principalOf } from '../http.ts'
import { generatedSlug, listWorkspaces, nameSchema, refuseManaged, scopedListQuery, slugSchema, targetWorkspace, visibleOr404, workspaceFor, workspaceRefSchema } from './resource-access.ts'

/** `is_default` arrives as a boolean or as 0/1 (and as isDefault from older clients). */
const flag = z.union([z.boolean(), z.literal(0), z.literal(1)]).transform((value) => value === true || value === 1)
const configObject = z.record(z.string(), z.unknown())

const createSchema = z.strictObject({
  name: nameSchema,
  slug: slugSchema.optional(),
  config: configObject,
  workspace_id: workspaceRefSchema.optional(),
  is_default: flag.optional(),
  isDefault: flag.optional(),
})

const updateSchema = z.strictObject({
  name: nameSchema.optional(),
  config: configObject.optional(),
  status: z.enum(['active', 'archived']).optional(),
  is_default: flag.optional(),
  isDefault: flag.optional(),
})

/** The gateway's verdict on a routing config, as AB01 naming the offending path. */
function checkConfig(config: Record<string, unknown>): void {
  const result = validateConfig(config)
  if (result.ok) return
  const issue = result.issues[0]!
  const path = configPath(issue.path)
  throw invalid(path, `${path}: ${issue.message}`)
}

export function configView(config: ConfigRecord, withBody: boolean): Record<string, unknown> {
  return {
    id: config.id,
    name: config.name,
    slug: config.slug,
    organisation_id: config.organizationId,
    workspace_id: config.workspaceId,
    is_default: config.isDefault ? 1 : 0,
    status: config.status,
    version: config.version,
    managed_by: config.managedBy,
    created_at: config.createdAt,
    last_updated_at: config.updatedAt,
    ...(withBody ? { config: config.config } : {}),
    object: 'config',
  }
}

function versionView(config: ConfigRecord, version: ConfigVersionRecord): Record<string, unknown> {
  return {
    id: config.id,
    version_id: version.id,
    version: version.version,
    name: version.name,
    slug: config.slug,
    workspace_id: config.workspaceId,
    organisation_id: config.organizationId,
    config: JSON.stringify(version.config),
    format: 'json',
    type: config.workspaceId === null ? 'ORG_CONFIG' : 'WORKSPACE_CONFIG',
    created_at: version.createdAt,
    object: 'config',
  }
}

export function configRoutes(app: FastifyInstance, ctx: AdminContext): void {
  async function load(principal: Principal, idOrSlug: string, workspaceRef: string | undefined): Promise<ConfigRecord> {
    const workspaceId = workspaceRef ? await workspaceFor(ctx, principal, workspaceRef) : principal.isOrganisationLevel ? undefined : principal.workspaceId
    const config = await ctx.store.configs.get(principal.organizationId, idOrSlug, workspaceId)
    return visibleOr404(principal, config, 'config')
  }

  app.post('/', async (request) => {
    const principal = principalOf(request)
    const body = parse(createSchema, request.body)
    const workspaceId = await targetWorkspace(ctx, principal, body.workspace_id)
    requireCapability(principal, 'configs', 'create', workspaceId)
    checkConfig(body.config)
    const slug = body.slug ?? generatedSlug('pc', body.name)
    if (await ctx.store.configs.get(principal.organizationId, slug, workspaceId)) throw conflict(`a config "${slug}" already exists here`, 'slug')
    const config = await ctx.store.configs.upsert({
      organizationId: principal.organizationId,
      workspaceId,
      slug,
      name: body.name,
      config: body.config,
      isDefault: body.is_default ?? body.isDefault ?? false,
    })
    audit(request, { action: 'config.create', resourceType: 'config', resourceId: config.id, workspaceId, details: { version: config.version } })
    return { success: true, data: { id: config.id, slug: config.slug, version_id: config.versionId }, id: config.id, slug: config.slug, version_id: config.versionId, object: 'config' }
  })

  app.get('/', async (request) => {
    const principal = principalOf(request)
    const query = parse(scopedListQuery, request.query)
    const workspaces = await listWorkspaces(ctx, principal, query.workspace_id)
    for (const workspaceId of workspaces ?? [null]) requireCapability(principal, 'configs', 'list', workspaceId)
    const { page, pageSize } = pagination(request.query)
    const all = (await ctx.store.configs.list(principal.organizationId)).filter((c) => workspaces === undefined || (c.workspaceId !== null && workspaces.includes(c.workspaceId)))
    const data = all.slice(page * pageSize, (page + 1) * pageSize).map((c) => configView(c, false))
    return { success: true, object: 'list', total: all.length, data }
  })

  app.get<{ Params: { slug: string } }>('/:slug', async (request) => {
    const principal = principalOf(request)
    const query = parse(scopedListQuery, request.query)
    const config = await load(principal, request.params.slug, query.workspace_id)
    requireCapability(principal, 'configs', 'read', config.workspaceId)
    return { success: true, data: configView(config, true) }
  })

  app.put<{ Params: { slug: string } }>('/:slug', async (request) => {
    const principal = principalOf(request)
    const query = parse(scopedListQuery, request.query)
    const config = await load(principal, request.params.slug, query.workspace_id)
    requireCapability(principal, 'configs', 'update', config.workspaceId)
    refuseManaged(config, 'config', config.slug)
    const body = parse(updateSchema, request.body)
    if (body.config !== undefined) checkConfig(body.config)
    const updated = await ctx.store.configs.upsert({
      organizationId: principal.organizationId,
      workspaceId: config.workspaceId,
      slug: config.slug,
      name: body.name ?? config.name,
      config: body.config ?? config.config,
      isDefault: body.is_default ?? body.isDefault ?? config.isDefault,
      status: body.status ?? config.status,
    })
    audit(request, { action: 'config.update', resourceType: 'config', resourceId: config.id, workspaceId: config.workspaceId, details: { version: updated.version } })
    return { success: true, data: { version_id: updated.versionId, version: updated.version } }
  })

  app.delete<{ Params: { slug: string } }>('/:slug', async (request) => {
    const principal = principalOf(request)
    const query = parse(scopedListQuery, request.query)
    const config = await load(principal, request.params.slug, query.workspace_id)
    requireCapability(principal, 'configs', 'delete', config.workspaceId)
    refuseManaged(config, 'config', config.slug)
    await ctx.store.configs.delete(principal.organizationId, config.id)
    audit(request, { action: 'config.delete', resourceType: 'config', resourceId: config.id, workspaceId: config.workspaceId })
    return {}
  })

  app.get<{ Params: { slug: string } }>('/:slug/versions', async (request) => {
    const principal = principalOf(request)
    const query = parse(scopedListQuery, request.query)
    const config = await load(principal, request.params.slug, query.workspace_id)
    requireCapability(principal, 'configs', 'read', config.workspaceId)
    const versions = await ctx.store.configs.versions(config.id)
    return { object: 'list', total: versions.length, data: versions.map((v) => versionView(config, v)) }
  })

  app.get<{ Params: { slug: string; versionId: string } }>('/:slug/versions/:versionId', async (request) => {
    const principal = principalOf(request)
    const query = parse(scopedListQuery, request.query)
    const config = await load(principal, request.params.slug, query.workspace_id)
    requireCapability(principal, 'configs', 'read', config.workspaceId)
    const version = await ctx.store.configs.version(config.id, request.params.versionId)
    if (!version) throw notFound('config version')
    return { ...versionView(config, version), config: version.config }
  })
}
