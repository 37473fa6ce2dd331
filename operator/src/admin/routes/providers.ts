/**
 * Providers: /v1/providers, and the same rows under their older name at /v1/virtual-keys.
 * A provider is what clients address as `@slug`: either a handle onto an integration
 * (`integration_id`, the credential stays with the integration) or, in the virtual-key form, a
 * provider kind with its own credential (`provider` + `key`). Credentials are sealed at rest and
 * never answered: responses carry `has_credentials` only. Tags filter lists: `?tags[team]=search`.
 */
import { PROVIDER_KINDS } from '@gatehouse/crds'
import type { FastifyInstance } from 'fastify'
import { z } from 'zod'
import { invalid, notFound } from '../../errors.ts'
import { requireCapability } from '../../identity/capabilities.ts'
import { usageLimitsSchema, workspaceRateLimitSchema } from '../../identity/limits.ts'
import type { Principal } from '../../identity/principal.ts'
import { splitProviderFields } from '../../compile/credential-fields.ts'
import type { ProviderRecord } from '../../store/index.ts'
import type { AdminContext } from '../context.ts'
import { audit, listEnvelope, pagination, parse, principalOf } from '../http.ts'
import {
  descriptionSchema, listWorkspaces, nameSchema, refuseManaged, scopedListQuery, slugFromName, slugSchema, tagFilter, tagsSchema,
  targetWorkspace, visibleOr404, workspaceFor, workspaceRefSchema,
} from './resource-access.ts'
import { refuseSelfGrantedPrivateNetwork } from './network-access.ts'
import { checkSecretMappings, secretMappingsSchema } from './secret-mappings.ts'
import { providerViewWithUsage } from '../current-usage.ts'

const KEY_MAX_CHARS = 16_384
/** One limit object (the provider form) or a list of them (the virtual-key form). */
const rateLimits = z.preprocess((value) => (value !== null && typeof value === 'object' && !Array.isArray(value) ? [value] : value), z.array(workspaceRateLimitSchema).max(8))
/** Non-secret and secret settings under their wire names (see compile/credential-fields.ts). */
export const configurationsSchema = z.record(
  z.string().min(1).max(128),
  z.union([z.string().max(KEY_MAX_CHARS), z.number(), z.boolean(), z.array(z.unknown()).max(64), z.record(z.string(), z.unknown())]),
).refine((value) => Object.keys(value).length <= 64, 'at most 64 configuration fields')
const baseUrlSchema = z.url({ protocol: /^https?$/ }).max(2048)

const commonFields = {
  note: descriptionSchema.optional(),
  usage_limits: usageLimitsSchema.nullable().optional(),
  rate_limits: rateLimits.nullable().optional(),
  expires_at: z.iso.datetime({ offset: true }).nullable().optional(),
  secret_mappings: secretMappingsSchema.optional(),
  tags: tagsSchema.optional(),
  models: z.array(z.string().min(1).max(255)).max(1000).optional(),
  key: z.string().min(1).max(KEY_MAX_CHARS).optional(),
  configurations: configurationsSchema.optional(),
  base_url: baseUrlSchema.nullable().optional(),
  custom_host: baseUrlSchema.nullable().optional(),
  // Legacy virtual-key spellings of Azure settings.
  apiVersion: z.string().min(1).max(64).optional(),
  resourceName: z.string().min(1).max(255).optional(),
  deploymentName: z.string().min(1).max(255).optional(),
  deploymentConfig: z.array(z.record(z.string(), z.unknown())).max(64).optional(),
}

const createSchema = z.strictObject({
  name: nameSchema,
  slug: slugSchema.optional(),
  workspace_id: workspaceRefSchema.optional(),
  integration_id: z.string().min(1).max(255).optional(),
  provider: z.enum(PROVIDER_KINDS).optional(),
  ...commonFields,
}).superRefine((body, context) => {
  if ((body.integration_id === undefined) === (body.provider === undefined)) {
    context.addIssue({ code: 'custom', path: ['integration_id'], message: 'give integration_id (a provider onto an integration) or provider (a provider kind with its own key), not both' })
  }
  if (body.integration_id !== undefined && (body.key !== undefined || body.configurations !== undefined)) {
    context.addIssue({ code: 'custom', path: [body.key !== undefined ? 'key' : 'configurations'], message: 'a provider onto an integration uses the integration credential; update the integration instead' })
  }
})

const updateSchema = z.strictObject({
  name: nameSchema.optional(),
  status: z.enum(['active', 'disabled']).optional(),
  /** Starts a new usage period now (`last_reset_at`). */
  reset_usage: z.boolean().optional(),
  ...commonFields,
})

type CommonFields = z.infer<z.ZodObject<typeof commonFields>>

/** Wire settings of a body -> sealed credentials and plain options (gateway names). */
function settingsOf(body: CommonFields): { credentials: Record<string, string>; options: Record<string, string> } | null {
  const fields: Record<string, unknown> = { ...(body.configurations ?? {}) }
  if (body.key !== undefined) fields.key = body.key
  if (body.apiVersion !== undefined) fields.azure_api_version = body.apiVersion
  if (body.resourceName !== undefined) fields.azure_resource_name = body.resourceName
  if (body.deploymentName !== undefined) fields.azure_deployment_name = body.deploymentName
  if (body.deploymentConfig !== undefined) fields.azure_deployment_config = body.deploymentConfig
  return Object.keys(fields).length === 0 ? null : splitProviderFields(fields)
}

export function providerView(provider: ProviderRecord, object: 'provider' | 'virtual-key', integrationSlug: string | null, now: Date): Record<string, unknown> {
  return {
    id: provider.id,
    name: provider.name,
    slug: provider.slug,
    workspace_id: provider.workspaceId,
    integration_id: integrationSlug,
    provider: provider.kind,
    note: provider.note,
    status: provider.status === 'active' && provider.expiresAt !== null && new Date(provider.expiresAt) <= now ? 'expired' : provider.status,
    base_url: provider.baseUrl,
    configurations: provider.options,
    has_credentials: provider.hasCredentials,
    secret_mappings: provider.secretMappings,
    usage_limits: provider.usageLimits,
    last_reset_at: provider.lastResetAt,
    rate_limits: provider.rateLimits,
    expires_at: provider.expiresAt,
    tags: provider.tags,
    models: provider.models,
    allow_all_workspaces: provider.allowAllWorkspaces,
    allowed_workspaces: provider.allowedWorkspaceIds,
    managed_by: provider.managedBy,
    created_at: provider.createdAt,
    last_updated_at: provider.updatedAt,
    object,
  }
}

export function providerRoutes(object: 'provider' | 'virtual-key') {
  return (app: FastifyInstance, ctx: AdminContext): void => {
    async function integrationSlug(organizationId: string, id: string | null): Promise<string | null> {
      return id ? (await ctx.store.integrations.get(organizationId, id))?.slug ?? null : null
    }

    /** By id, or by slug in the named workspace / the principal's own, then organisation-wide. */
    async function load(principal: Principal, idOrSlug: string, workspaceRef: string | undefined): Promise<ProviderRecord> {
      const org = principal.organizationId
      const byId = await ctx.store.providers.get(org, idOrSlug)
      if (byId) return visibleOr404(principal, byId, object)
      const workspaceId = workspaceRef ? await workspaceFor(ctx, principal, workspaceRef) : principal.workspaceId
      const found = (workspaceId ? await ctx.store.providers.getBySlug(org, workspaceId, idOrSlug) : null)
        ?? await ctx.store.providers.getBySlug(org, null, idOrSlug)
      if (!found && principal.isOrganisationLevel && !workspaceRef) {
        // An organisation-level caller without workspace_id: a slug unique across workspaces is enough.
        const matches = (await ctx.store.providers.list(org)).filter((p) => p.slug === idOrSlug)
        if (matches.length === 1) return matches[0]!
        if (matches.length > 1) throw invalid('workspace_id', `several workspaces have a ${object} "${idOrSlug}"; give workspace_id`)
      }
      return visibleOr404(principal, found, object)
    }

    app.post('/', async (request) => {
      const principal = principalOf(request)
      const body = parse(createSchema, request.body)
      const workspaceId = await targetWorkspace(ctx, principal, body.workspace_id)
      requireCapability(principal, 'providers', 'create', workspaceId)
      refuseSelfGrantedPrivateNetwork(principal, body.configurations)
      const org = principal.organizationId
      let kind = body.provider as string | undefined
      let integrationId: string | null = null
      if (body.integration_id !== undefined) {
        const integration = await ctx.store.integrations.get(org, body.integration_id)
        if (!integration || (integration.workspaceId !== null && integration.workspaceId !== workspaceId)) throw invalid('integration_id', 'integration_id: integration not found')
        kind = integration.kind
        integrationId = integration.id
      }
      const slug = body.slug ?? slugFromName(body.name)
      if (await ctx.store.providers.getBySlug(org, workspaceId, slug)) throw invalid('slug', `slug: a ${object} "${slug}" already exists here`)
      const settings = settingsOf(body)
      const provider = await ctx.store.providers.upsert({
        organizationId: org,
        workspaceId,
        slug,
        name: body.name,
        kind: kind!,
        baseUrl: body.base_url ?? body.custom_host ?? null,
        ...(settings && Object.keys(settings.credentials).length > 0 ? { credentials: settings.credentials } : {}),
        options: settings?.options ?? {},
        tags: body.tags ?? {},
        models: body.models ?? [],
        integrationId,
        note: body.note ?? null,
        secretMappings: await checkSecretMappings(ctx, org, body.secret_mappings ?? [], workspaceId),
        usageLimits: body.usage_limits ?? null,
        rateLimits: body.rate_limits ?? [],
        expiresAt: body.expires_at ?? null,
      })
      audit(request, { action: `${object}.create`, resourceType: object, resourceId: provider.id, workspaceId })
      return object === 'virtual-key'
        ? { id: provider.id, slug: provider.slug, object, success: true, data: { slug: provider.slug } }
        : { id: provider.id, slug: provider.slug, object }
    })

    app.get('/', async (request) => {
      const principal = principalOf(request)
      const query = parse(scopedListQuery.extend({ integration_id: z.string().min(1).max(255).optional() }), request.query)
      const workspaces = await listWorkspaces(ctx, principal, query.workspace_id)
      for (const workspaceId of workspaces ?? [null]) requireCapability(principal, 'providers', 'list', workspaceId)
      const { page, pageSize } = pagination(request.query)
      let integrationId: string | undefined
      if (query.integration_id !== undefined) {
        integrationId = (await ctx.store.integrations.get(principal.organizationId, query.integration_id))?.id
        if (!integrationId) return listEnvelope(0, [])
      }
      const result = await ctx.store.providers.search(principal.organizationId, { workspaceIds: workspaces, tags: tagFilter(request.query), integrationId }, page, pageSize)
      const slugs = new Map<string, string | null>()
      for (const provider of result.data) {
        if (provider.integrationId && !slugs.has(provider.integrationId)) slugs.set(provider.integrationId, await integrationSlug(principal.organizationId, provider.integrationId))
      }
      return listEnvelope(result.total, await Promise.all(result.data.map((p) => providerViewWithUsage(ctx, p, providerView(p, object, p.integrationId ? slugs.get(p.integrationId) ?? null : null, ctx.clock())))))
    })

    app.get<{ Params: { slug: string } }>('/:slug', async (request) => {
      const principal = principalOf(request)
      const query = parse(scopedListQuery, request.query)
      const provider = await load(principal, request.params.slug, query.workspace_id)
      requireCapability(principal, 'providers', 'read', provider.workspaceId)
      return providerViewWithUsage(ctx, provider, providerView(provider, object, await integrationSlug(principal.organizationId, provider.integrationId), ctx.clock()))
    })

    app.put<{ Params: { slug: string } }>('/:slug', async (request) => {
      const principal = principalOf(request)
      const query = parse(scopedListQuery, request.query)
      const provider = await load(principal, request.params.slug, query.workspace_id)
      requireCapability(principal, 'providers', 'update', provider.workspaceId)
      refuseManaged(provider, object, provider.slug)
      const body = parse(updateSchema, request.body)
      refuseSelfGrantedPrivateNetwork(principal, body.configurations)
      if (provider.integrationId && (body.key !== undefined || body.configurations !== undefined)) {
        throw invalid(body.key !== undefined ? 'key' : 'configurations', 'this provider uses its integration\'s credential; update the integration instead')
      }
      const settings = settingsOf(body)
      const updated = await ctx.store.providers.update(principal.organizationId, provider.id, {
        name: body.name,
        status: body.status,
        note: body.note,
        baseUrl: body.base_url ?? body.custom_host,
        // A new key or secret setting replaces that field only; new configurations replace the options.
        ...(settings && Object.keys(settings.credentials).length > 0
          ? { credentials: { ...await ctx.store.providers.decryptedCredentials(principal.organizationId, provider.id), ...settings.credentials } }
          : {}),
        ...(settings && Object.keys(settings.options).length > 0 ? { options: settings.options } : {}),
        tags: body.tags,
        models: body.models,
        secretMappings: body.secret_mappings === undefined ? undefined : await checkSecretMappings(ctx, principal.organizationId, body.secret_mappings, provider.workspaceId),
        usageLimits: body.usage_limits,
        rateLimits: body.rate_limits === null ? [] : body.rate_limits,
        expiresAt: body.expires_at,
        lastResetAt: body.reset_usage ? ctx.clock().toISOString() : undefined,
      })
      if (!updated) throw notFound(object)
      audit(request, { action: `${object}.update`, resourceType: object, resourceId: provider.id, workspaceId: provider.workspaceId })
      return object === 'provider' ? { id: provider.id, slug: provider.slug } : {}
    })

    app.delete<{ Params: { slug: string } }>('/:slug', async (request) => {
      const principal = principalOf(request)
      const query = parse(scopedListQuery, request.query)
      const provider = await load(principal, request.params.slug, query.workspace_id)
      requireCapability(principal, 'providers', 'delete', provider.workspaceId)
      refuseManaged(provider, object, provider.slug)
      await ctx.store.providers.delete(principal.organizationId, provider.id)
      audit(request, { action: `${object}.delete`, resourceType: object, resourceId: provider.id, workspaceId: provider.workspaceId })
      return {}
    })
  }
}
