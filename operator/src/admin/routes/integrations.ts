/**
 * Integrations: /v1/integrations, with /models and /workspaces. An integration is the account at
 * a model provider (credential, settings, models, workspace access); providers are the handles
 * workspaces use. Organisation integrations need the organisation_integrations scopes, a
 * workspace's own integration the workspace_integrations scopes in that workspace.
 *
 * `create_default_provider` (default true) creates a provider onto the new integration, slug
 * `default_provider_slug` or the integration's slug: organisation-wide for an organisation
 * integration, in the workspace for a workspace one, and in each workspace a bulk update of
 * workspace access enables. Credentials are sealed at rest; answers show `masked_key` only.
 */
import { PROVIDER_KINDS } from '@gatehouse/crds'
import type { FastifyInstance } from 'fastify'
import { z } from 'zod'
import { conflict, invalid, notFound } from '../../errors.ts'
import { usageLimitsSchema, workspaceRateLimitSchema } from '../../identity/limits.ts'
import type { Principal } from '../../identity/principal.ts'
import { splitProviderFields } from '../../compile/credential-fields.ts'
import type { IntegrationModel, IntegrationRecord, Repositories, WorkspaceAccess } from '../../store/index.ts'
import type { AdminContext } from '../context.ts'
import { audit, listEnvelope, pagination, parse, principalOf } from '../http.ts'
import { refuseSelfGrantedPrivateNetwork } from './network-access.ts'
import { configurationsSchema } from './providers.ts'
import {
  descriptionSchema, listWorkspaces, nameSchema, refuseManaged, requireScope, slugSchema, tagFilter, tagsSchema, targetWorkspace,
  visibleOr404, workspaceRefSchema,
} from './resource-access.ts'
import { checkSecretMappings, secretMappingsSchema } from './secret-mappings.ts'
import { workspaceAccessWithUsage } from '../current-usage.ts'

const baseUrlSchema = z.url({ protocol: /^https?$/ }).max(2048)
const limitsFields = {
  // One limit object (the reference's form) or a list of them; stored as a list.
  usage_limits: z.preprocess((value) => (value !== null && typeof value === 'object' && !Array.isArray(value) ? [value] : value), z.array(usageLimitsSchema).max(4)).nullable().optional(),
  rate_limits: z.array(workspaceRateLimitSchema).max(8).nullable().optional(),
}

const createSchema = z.strictObject({
  name: nameSchema,
  ai_provider_id: z.enum(PROVIDER_KINDS),
  slug: slugSchema.optional(),
  key: z.string().min(1).max(16_384).optional(),
  description: descriptionSchema.optional(),
  workspace_id: workspaceRefSchema.optional(),
  configurations: configurationsSchema.optional(),
  base_url: baseUrlSchema.nullable().optional(),
  secret_mappings: secretMappingsSchema.optional(),
  tags: tagsSchema.optional(),
  create_default_provider: z.boolean().default(true),
  default_provider_slug: slugSchema.optional(),
})

const updateSchema = z.strictObject({
  name: nameSchema.optional(),
  key: z.string().min(1).max(16_384).optional(),
  description: descriptionSchema.optional(),
  configurations: configurationsSchema.optional(),
  base_url: baseUrlSchema.nullable().optional(),
  secret_mappings: secretMappingsSchema.optional(),
  tags: tagsSchema.optional(),
  status: z.enum(['active', 'archived']).optional(),
})

const modelSchema = z.strictObject({
  slug: z.string().min(1).max(255),
  enabled: z.boolean(),
  is_custom: z.boolean().optional(),
  is_finetune: z.boolean().optional(),
  base_model_slug: z.string().min(1).max(255).nullable().optional(),
  /** US cents per unit, as the spec's ModelPricingConfig: `{type: "static", pay_as_you_go: {request_token: {price}, ...}}`. */
  pricing_config: z.looseObject({
    type: z.literal('static').optional(),
    pay_as_you_go: z.record(z.string().max(64), z.looseObject({ price: z.number().min(0).max(1e6) })).optional(),
    currency: z.literal('USD').optional(),
  }).nullable().optional(),
})
const modelsUpdateSchema = z.strictObject({ models: z.array(modelSchema).max(1000), allow_all_models: z.boolean().optional() })

const workspacesUpdateSchema = z.strictObject({
  workspaces: z.array(z.strictObject({
    id: workspaceRefSchema,
    enabled: z.boolean(),
    ...limitsFields,
    reset_usage: z.boolean().optional(),
    create_default_provider: z.boolean().optional(),
    default_provider_slug: slugSchema.optional(),
  })).max(1000).default([]),
  global_workspace_access: z.strictObject({ enabled: z.boolean(), ...limitsFields }).optional(),
  override_existing_workspace_access: z.boolean().default(false),
  create_default_provider: z.boolean().default(true),
  default_provider_slug: slugSchema.optional(),
})

const listQuery = z.object({
  workspace_id: workspaceRefSchema.optional(),
  type: z.enum(['workspace', 'organisation', 'organization', 'all']).default('all'),
  ai_provider_id: z.string().max(64).optional(),
}).loose()

export function integrationView(integration: IntegrationRecord, detail: boolean): Record<string, unknown> {
  return {
    id: integration.id,
    organisation_id: integration.organizationId,
    workspace_id: integration.workspaceId,
    ai_provider_id: integration.kind,
    name: integration.name,
    slug: integration.slug,
    description: integration.description,
    status: integration.status,
    tags: integration.tags,
    managed_by: integration.managedBy,
    created_at: integration.createdAt,
    last_updated_at: integration.updatedAt,
    ...(detail ? {
      masked_key: integration.maskedKey,
      has_credentials: integration.hasCredentials,
      base_url: integration.baseUrl,
      configurations: integration.options,
      secret_mappings: integration.secretMappings,
      allow_all_models: integration.allowAllModels,
      global_workspace_access_settings: integration.globalWorkspaceAccess,
      workspace_count: integration.workspaceAccess.filter((access) => access.enabled).length,
    } : {}),
    object: 'integration',
  }
}

/** Organisation integrations: organisation_integrations.*; a workspace's: workspace_integrations.* there. */
function requireIntegrationScope(principal: Principal, action: string, workspaceId: string | null): void {
  requireScope(principal, `${workspaceId === null ? 'organisation' : 'workspace'}_integrations.${action}`, workspaceId, 'integrations')
}

/** Creates the default provider onto `integration` unless a provider with that slug exists there. */
async function ensureDefaultProvider(tx: Repositories, integration: IntegrationRecord, workspaceId: string | null, slug: string): Promise<boolean> {
  if (await tx.providers.getBySlug(integration.organizationId, workspaceId, slug)) return false
  await tx.providers.upsert({
    organizationId: integration.organizationId,
    workspaceId,
    slug,
    name: integration.name,
    kind: integration.kind,
    integrationId: integration.id,
  })
  return true
}

export function integrationRoutes(app: FastifyInstance, ctx: AdminContext): void {
  async function load(principal: Principal, idOrSlug: string): Promise<IntegrationRecord> {
    return visibleOr404(principal, await ctx.store.integrations.get(principal.organizationId, idOrSlug), 'integration')
  }

  app.post('/', async (request) => {
    const principal = principalOf(request)
    const body = parse(createSchema, request.body)
    const workspaceId = await targetWorkspace(ctx, principal, body.workspace_id)
    requireIntegrationScope(principal, 'create', workspaceId)
    refuseSelfGrantedPrivateNetwork(principal, body.configurations)
    const org = principal.organizationId
    const slug = body.slug ?? body.name.toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-+|-+$/g, '').slice(0, 200)
    if (!slug) throw invalid('slug', 'slug: give a slug (the name has no letters or digits to derive one from)')
    if (await ctx.store.integrations.get(org, slug)) throw conflict(`an integration "${slug}" already exists`, 'slug')
    const settings = splitProviderFields({ ...(body.configurations ?? {}), ...(body.key === undefined ? {} : { key: body.key }) })
    const secretMappings = await checkSecretMappings(ctx, org, body.secret_mappings ?? [], workspaceId)
    const integration = await ctx.store.transaction(async (tx) => {
      const created = await tx.integrations.create({
        organizationId: org,
        workspaceId,
        slug,
        name: body.name,
        kind: body.ai_provider_id,
        description: body.description ?? null,
        baseUrl: body.base_url ?? null,
        credentials: settings.credentials,
        options: settings.options,
        secretMappings,
        tags: body.tags ?? {},
      })
      if (body.create_default_provider) {
        const providerSlug = body.default_provider_slug ?? slug
        if (!(await ensureDefaultProvider(tx, created, workspaceId, providerSlug))) {
          throw conflict(`a provider "${providerSlug}" already exists; give default_provider_slug or create_default_provider: false`, 'default_provider_slug')
        }
      }
      return created
    })
    audit(request, { action: 'integration.create', resourceType: 'integration', resourceId: integration.id, workspaceId })
    return { id: integration.id, slug: integration.slug, object: 'integration' }
  })

  app.get('/', async (request) => {
    const principal = principalOf(request)
    const query = parse(listQuery, request.query)
    const { page, pageSize } = pagination(request.query)
    const scoped = await listWorkspaces(ctx, principal, query.workspace_id)
    let workspaces: string[] | null | undefined = scoped
    if (query.type === 'organisation' || query.type === 'organization') {
      if (!principal.isOrganisationLevel) return listEnvelope(0, [])
      workspaces = null
    }
    if (workspaces === null || workspaces === undefined) requireIntegrationScope(principal, 'list', null)
    else for (const workspaceId of workspaces) requireIntegrationScope(principal, 'list', workspaceId)
    const result = await ctx.store.integrations.list(principal.organizationId, {
      workspaceIds: workspaces,
      workspaceScoped: query.type === 'workspace' ? true : undefined,
      tags: tagFilter(request.query),
      kind: query.ai_provider_id,
    }, page, pageSize)
    return listEnvelope(result.total, result.data.map((i) => integrationView(i, false)))
  })

  app.get<{ Params: { slug: string } }>('/:slug', async (request) => {
    const principal = principalOf(request)
    const integration = await load(principal, request.params.slug)
    requireIntegrationScope(principal, 'read', integration.workspaceId)
    return integrationView(integration, true)
  })

  app.put<{ Params: { slug: string } }>('/:slug', async (request) => {
    const principal = principalOf(request)
    const integration = await load(principal, request.params.slug)
    requireIntegrationScope(principal, 'update', integration.workspaceId)
    refuseManaged(integration, 'integration', integration.slug)
    const body = parse(updateSchema, request.body)
    refuseSelfGrantedPrivateNetwork(principal, body.configurations)
    const org = principal.organizationId
    const settings = body.configurations === undefined && body.key === undefined
      ? null
      : splitProviderFields({ ...(body.configurations ?? {}), ...(body.key === undefined ? {} : { key: body.key }) })
    await ctx.store.integrations.update(org, integration.id, {
      name: body.name,
      description: body.description,
      baseUrl: body.base_url,
      // A new key or secret setting replaces that field only; new configurations replace the options.
      credentials: settings && Object.keys(settings.credentials).length > 0
        ? { ...await ctx.store.integrations.decryptedCredentials(org, integration.id), ...settings.credentials }
        : undefined,
      options: body.configurations === undefined ? undefined : settings!.options,
      secretMappings: body.secret_mappings === undefined ? undefined : await checkSecretMappings(ctx, org, body.secret_mappings, integration.workspaceId),
      tags: body.tags,
      status: body.status,
    })
    audit(request, { action: 'integration.update', resourceType: 'integration', resourceId: integration.id, workspaceId: integration.workspaceId })
    return {}
  })

  app.delete<{ Params: { slug: string } }>('/:slug', async (request) => {
    const principal = principalOf(request)
    const integration = await load(principal, request.params.slug)
    requireIntegrationScope(principal, 'delete', integration.workspaceId)
    refuseManaged(integration, 'integration', integration.slug)
    await ctx.store.integrations.delete(principal.organizationId, integration.id)
    audit(request, { action: 'integration.delete', resourceType: 'integration', resourceId: integration.id, workspaceId: integration.workspaceId })
    return {}
  })

  app.get<{ Params: { slug: string } }>('/:slug/models', async (request) => {
    const principal = principalOf(request)
    const integration = await load(principal, request.params.slug)
    requireIntegrationScope(principal, 'read', integration.workspaceId)
    return { total: integration.models.length, allow_all_models: integration.allowAllModels, models: integration.models }
  })

  app.put<{ Params: { slug: string } }>('/:slug/models', async (request) => {
    const principal = principalOf(request)
    const integration = await load(principal, request.params.slug)
    requireIntegrationScope(principal, 'update', integration.workspaceId)
    refuseManaged(integration, 'integration', integration.slug)
    const body = parse(modelsUpdateSchema, request.body)
    const bySlug = new Map<string, IntegrationModel>(integration.models.map((model) => [model.slug, model]))
    for (const model of body.models) bySlug.set(model.slug, { ...bySlug.get(model.slug), ...model })
    await ctx.store.integrations.update(principal.organizationId, integration.id, { models: [...bySlug.values()], allowAllModels: body.allow_all_models })
    audit(request, { action: 'integration.models.update', resourceType: 'integration', resourceId: integration.id, workspaceId: integration.workspaceId })
    return {}
  })

  app.delete<{ Params: { slug: string } }>('/:slug/models', async (request) => {
    const principal = principalOf(request)
    const integration = await load(principal, request.params.slug)
    requireIntegrationScope(principal, 'update', integration.workspaceId)
    refuseManaged(integration, 'integration', integration.slug)
    const query = parse(z.object({ slugs: z.string().min(1).max(64_000) }).loose(), request.query)
    const remove = new Set(query.slugs.split(',').map((s) => s.trim()).filter(Boolean))
    const notCustom = integration.models.find((model) => remove.has(model.slug) && !model.is_custom)
    if (notCustom) throw invalid('slugs', `slugs: ${notCustom.slug} is not a custom model; disable it instead`)
    await ctx.store.integrations.update(principal.organizationId, integration.id, { models: integration.models.filter((model) => !remove.has(model.slug)) })
    audit(request, { action: 'integration.models.delete', resourceType: 'integration', resourceId: integration.id, workspaceId: integration.workspaceId })
    return {}
  })

  app.get<{ Params: { slug: string } }>('/:slug/workspaces', async (request) => {
    const principal = principalOf(request)
    const integration = await load(principal, request.params.slug)
    requireIntegrationScope(principal, 'read', integration.workspaceId)
    return { total: integration.workspaceAccess.length, workspaces: await workspaceAccessWithUsage(ctx, integration), global_workspace_access: integration.globalWorkspaceAccess }
  })

  /** Bulk update of workspace access (organisation integrations only). */
  app.put<{ Params: { slug: string } }>('/:slug/workspaces', async (request) => {
    const principal = principalOf(request)
    const integration = await load(principal, request.params.slug)
    if (integration.workspaceId !== null) throw invalid('workspaces', 'a workspace integration belongs to its workspace; workspace access applies to organisation integrations')
    requireIntegrationScope(principal, 'update', null)
    refuseManaged(integration, 'integration', integration.slug)
    const body = parse(workspacesUpdateSchema, request.body)
    const org = principal.organizationId
    const ids: string[] = []
    for (const [index, entry] of body.workspaces.entries()) {
      const workspace = await ctx.store.workspaces.get(org, entry.id)
      if (!workspace) throw invalid(`workspaces[${index}].id`, `workspaces[${index}].id: workspace not found`)
      ids.push(workspace.id)
    }
    const access = new Map<string, WorkspaceAccess>(body.override_existing_workspace_access ? [] : integration.workspaceAccess.map((a) => [a.id, a]))
    body.workspaces.forEach((entry, index) => {
      const id = ids[index]!
      // reset_usage starts the workspace's usage period now; otherwise the last reset is kept.
      const lastResetAt = entry.reset_usage ? ctx.clock().toISOString() : integration.workspaceAccess.find((a) => a.id === id)?.last_reset_at ?? null
      access.set(id, { id, enabled: entry.enabled, usage_limits: entry.usage_limits ?? null, rate_limits: entry.rate_limits ?? null, last_reset_at: lastResetAt })
    })
    const created: Array<{ workspace_id: string; slug: string }> = []
    await ctx.store.transaction(async (tx) => {
      const updated = await tx.integrations.update(org, integration.id, { workspaceAccess: [...access.values()], globalWorkspaceAccess: body.global_workspace_access })
      if (!updated) throw notFound('integration')
      for (const [index, entry] of body.workspaces.entries()) {
        if (!entry.enabled || !(entry.create_default_provider ?? body.create_default_provider)) continue
        const workspaceId = ids[index]!
        const slug = entry.default_provider_slug ?? body.default_provider_slug ?? integration.slug
        if (await ensureDefaultProvider(tx, updated, workspaceId, slug)) created.push({ workspace_id: workspaceId, slug })
      }
    })
    audit(request, { action: 'integration.workspaces.update', resourceType: 'integration', resourceId: integration.id, details: { workspaces: ids.length } })
    return { created_providers: created }
  })
}
