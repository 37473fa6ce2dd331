/**
 * Deployments: /v1/deployments. A deployment is a gateway deployment the control plane feeds:
 * production or non-production (`non_production` is accepted and answered `non-production`), a
 * slug gateways name to receive their own snapshot, the config it serves, and which workspaces it
 * serves (`allow_all_workspaces`, or `allowed_workspaces`). Deployments have their own
 * permissions, deployments:create|read|update|delete|list (`deployments.create` is accepted):
 * organisation-level principals holding them manage deployments; a workspace principal holding
 * deployments:read/list sees the deployments that serve its workspace.
 */
import type { FastifyInstance } from 'fastify'
import { z } from 'zod'
import { conflict, forbidden, invalid, notFound } from '../../errors.ts'
import type { Principal } from '../../identity/principal.ts'
import type { DeploymentRecord, DeploymentType } from '../../store/index.ts'
import type { AdminContext } from '../context.ts'
import { audit, listEnvelope, pagination, parse, principalOf } from '../http.ts'
import { descriptionSchema, nameSchema, refuseManaged, slugFromName, slugSchema, workspaceFor, workspaceIds, workspaceRefSchema } from './resource-access.ts'

const typeSchema = z.enum(['production', 'non-production', 'non_production']).transform((type): DeploymentType => (type === 'production' ? 'production' : 'non-production'))

const url = z.url({ protocol: /^https?$/ }).max(2048)
/**
 * The reference's auth_settings. workspaces_allowed is the deployment's workspace restriction
 * (the same list as allowed_workspaces); the other fields are stored and answered for the
 * deployment's own tooling, not interpreted by the control plane.
 */
const authSettingsSchema = z.strictObject({
  gateway_base_url: url.nullable().optional(),
  mcp_gateway_base_url: url.nullable().optional(),
  private_link_endpoint: z.string().max(2048).nullable().optional(),
  use_private_link_proxy: z.boolean().optional(),
  is_dataservice_hosted: z.boolean().optional(),
  is_playground_proxy_allowed: z.boolean().optional(),
  disable_portkey_gateway: z.boolean().optional(),
  jwt_sub_workspace_mapping: z.record(z.string().min(1).max(255), workspaceRefSchema).refine((m) => Object.keys(m).length <= 1000, 'at most 1000 mappings').optional(),
  jwt_subs_allowed: z.array(z.string().min(1).max(255)).max(1000).optional(),
  workspaces_allowed: z.array(workspaceRefSchema).max(1000).optional(),
})
/** Free-form deployment settings (the reference leaves its shape open); bounded in size. */
const deploymentConfigSchema = z.record(z.string().min(1).max(255), z.unknown())
  .refine((config) => JSON.stringify(config).length <= 64 * 1024, 'deployment_config must be at most 64 KiB of JSON')

const fields = {
  name: nameSchema,
  description: descriptionSchema.optional(),
  type: typeSchema.optional(),
  /** The config it serves (id or slug); null clears it. */
  config: z.string().min(1).max(255).nullable().optional(),
  config_id: z.string().min(1).max(255).nullable().optional(),
  allow_all_workspaces: z.boolean().optional(),
  allowed_workspaces: z.array(workspaceRefSchema).max(1000).optional(),
  workspaces_allowed: z.array(workspaceRefSchema).max(1000).optional(),
  deployment_config: deploymentConfigSchema.optional(),
  auth_settings: authSettingsSchema.optional(),
}

const createSchema = z.strictObject({ ...fields, slug: slugSchema.optional() })
const updateSchema = z.strictObject({ ...fields, status: z.enum(['active', 'archived']).optional() }).partial()

const listQuery = z.object({
  type: typeSchema.optional(),
  status: z.enum(['active', 'archived']).optional(),
  workspace_id: workspaceRefSchema.optional(),
  workspace_slug: workspaceRefSchema.optional(),
  search: z.string().max(255).optional(),
}).loose()

export function deploymentView(deployment: DeploymentRecord, configSlug: string | null): Record<string, unknown> {
  return {
    id: deployment.id,
    organisation_id: deployment.organizationId,
    name: deployment.name,
    slug: deployment.slug,
    description: deployment.description,
    type: deployment.type,
    config_id: deployment.configId,
    config: configSlug,
    allow_all_workspaces: deployment.allowAllWorkspaces,
    allowed_workspaces: deployment.allowedWorkspaceIds,
    deployment_config: deployment.deploymentConfig,
    auth_settings: { ...deployment.authSettings, workspaces_allowed: deployment.allowedWorkspaceIds },
    status: deployment.status,
    managed_by: deployment.managedBy,
    created_at: deployment.createdAt,
    last_updated_at: deployment.updatedAt,
    object: 'deployment',
  }
}

type Action = 'create' | 'read' | 'update' | 'delete' | 'list'

/** Organisation-level with deployments:<action>; reads also for a workspace principal in a served workspace. */
function mayDeployments(principal: Principal, action: Action, deployment?: DeploymentRecord): boolean {
  if (principal.isOrganisationLevel) return principal.has(`deployments:${action}`, null)
  if (action !== 'read' && action !== 'list') return false
  const visible = principal.visibleWorkspaceIds() ?? []
  return visible.some((workspaceId) => principal.has(`deployments:${action}`, workspaceId)
    && (deployment === undefined || deployment.allowAllWorkspaces || deployment.allowedWorkspaceIds.includes(workspaceId)))
}

function requireDeployments(principal: Principal, action: Action, deployment?: DeploymentRecord): void {
  if (!mayDeployments(principal, action, deployment)) throw forbidden(`this credential may not ${action} deployments (needs deployments:${action})`)
}

export function deploymentRoutes(app: FastifyInstance, ctx: AdminContext): void {
  async function load(principal: Principal, idOrSlug: string): Promise<DeploymentRecord> {
    const deployment = await ctx.store.deployments.get(principal.organizationId, idOrSlug)
    if (!deployment) throw notFound('deployment')
    return deployment
  }

  async function configSlug(organizationId: string, configId: string | null): Promise<string | null> {
    return configId ? (await ctx.store.configs.get(organizationId, configId))?.slug ?? null : null
  }

  /** Resolves `config` / `config_id` (id or slug) to an id; undefined = not given, null = none. */
  async function configIdOf(organizationId: string, body: { config?: string | null; config_id?: string | null }): Promise<string | null | undefined> {
    const reference = body.config_id !== undefined ? body.config_id : body.config
    const param = body.config_id !== undefined ? 'config_id' : 'config'
    if (reference === undefined || reference === null) return reference
    const config = await ctx.store.configs.get(organizationId, reference)
    if (!config) throw invalid(param, `${param}: config not found`)
    return config.id
  }

  /** allow_all_workspaces and a workspace list are alternatives. */
  async function workspacesOf(organizationId: string, body: z.infer<typeof updateSchema>): Promise<{ allowAll?: boolean; ids?: string[] }> {
    const list = body.allowed_workspaces ?? body.workspaces_allowed ?? body.auth_settings?.workspaces_allowed
    const param = body.allowed_workspaces !== undefined ? 'allowed_workspaces' : body.workspaces_allowed !== undefined ? 'workspaces_allowed' : 'auth_settings.workspaces_allowed'
    if (list !== undefined && list.length > 0 && body.allow_all_workspaces === true) {
      throw invalid(param, `${param}: give either allow_all_workspaces: true or a list of workspaces, not both`)
    }
    if (list !== undefined && list.length > 0) return { allowAll: false, ids: await workspaceIds(ctx, organizationId, list, param) }
    if (body.allow_all_workspaces === true) return { allowAll: true, ids: [] }
    return { allowAll: body.allow_all_workspaces, ids: list }
  }

  /** auth_settings as stored: workspace restriction kept in its own column, mapped workspaces checked. */
  async function authSettingsOf(organizationId: string, settings: z.infer<typeof authSettingsSchema> | undefined): Promise<Record<string, unknown> | undefined> {
    if (settings === undefined) return undefined
    const { workspaces_allowed: _restriction, ...stored } = settings
    const mapping = stored.jwt_sub_workspace_mapping
    if (mapping) {
      const subjects = Object.keys(mapping)
      const ids = await Promise.all(subjects.map((subject) => workspaceIds(ctx, organizationId, [mapping[subject]!], `auth_settings.jwt_sub_workspace_mapping.${subject}`)))
      stored.jwt_sub_workspace_mapping = Object.fromEntries(subjects.map((subject, index) => [subject, ids[index]![0]!]))
    }
    return stored
  }

  app.post('/', async (request) => {
    const principal = principalOf(request)
    requireDeployments(principal, 'create')
    const body = parse(createSchema, request.body)
    const org = principal.organizationId
    const slug = body.slug ?? slugFromName(body.name)
    if (await ctx.store.deployments.get(org, slug)) throw conflict(`a deployment "${slug}" already exists`, 'slug')
    const scope = await workspacesOf(org, body)
    const deployment = await ctx.store.deployments.create({
      organizationId: org,
      slug,
      name: body.name,
      description: body.description ?? null,
      type: body.type ?? 'non-production',
      configId: (await configIdOf(org, body)) ?? null,
      allowAllWorkspaces: scope.allowAll ?? true,
      allowedWorkspaceIds: scope.ids ?? [],
      deploymentConfig: body.deployment_config ?? {},
      authSettings: await authSettingsOf(org, body.auth_settings) ?? {},
    })
    audit(request, { action: 'deployment.create', resourceType: 'deployment', resourceId: deployment.id })
    return deploymentView(deployment, await configSlug(org, deployment.configId))
  })

  app.get('/', async (request) => {
    const principal = principalOf(request)
    requireDeployments(principal, 'list')
    const query = parse(listQuery, request.query)
    const { page, pageSize } = pagination(request.query)
    const workspaceRef = query.workspace_id ?? query.workspace_slug
    let workspaceId = workspaceRef ? await workspaceFor(ctx, principal, workspaceRef) : undefined
    if (!principal.isOrganisationLevel && workspaceId === undefined) {
      // A workspace principal sees the deployments serving the workspace it may list them in.
      workspaceId = (principal.visibleWorkspaceIds() ?? []).find((id) => principal.has('deployments:list', id))
    }
    const result = await ctx.store.deployments.list(principal.organizationId, { type: query.type, status: query.status, workspaceId, search: query.search }, page, pageSize)
    const data = await Promise.all(result.data.map(async (d) => deploymentView(d, await configSlug(principal.organizationId, d.configId))))
    return listEnvelope(result.total, data)
  })

  app.get<{ Params: { id: string } }>('/:id', async (request) => {
    const principal = principalOf(request)
    const deployment = await load(principal, request.params.id)
    if (!mayDeployments(principal, 'read', deployment)) {
      if (!principal.isOrganisationLevel && mayDeployments(principal, 'read')) throw notFound('deployment')
      requireDeployments(principal, 'read', deployment)
    }
    return deploymentView(deployment, await configSlug(principal.organizationId, deployment.configId))
  })

  app.put<{ Params: { id: string } }>('/:id', async (request) => {
    const principal = principalOf(request)
    requireDeployments(principal, 'update')
    const deployment = await load(principal, request.params.id)
    refuseManaged(deployment, 'deployment', deployment.slug)
    const body = parse(updateSchema, request.body)
    const org = principal.organizationId
    const scope = await workspacesOf(org, body)
    const updated = await ctx.store.deployments.update(org, deployment.id, {
      name: body.name,
      description: body.description,
      type: body.type,
      configId: await configIdOf(org, body),
      allowAllWorkspaces: scope.allowAll,
      allowedWorkspaceIds: scope.ids,
      deploymentConfig: body.deployment_config,
      authSettings: await authSettingsOf(org, body.auth_settings),
      status: body.status,
    })
    if (!updated) throw notFound('deployment')
    audit(request, { action: 'deployment.update', resourceType: 'deployment', resourceId: deployment.id })
    return deploymentView(updated, await configSlug(org, updated.configId))
  })

  app.delete<{ Params: { id: string } }>('/:id', async (request) => {
    const principal = principalOf(request)
    requireDeployments(principal, 'delete')
    const deployment = await load(principal, request.params.id)
    refuseManaged(deployment, 'deployment', deployment.slug)
    await ctx.store.deployments.delete(principal.organizationId, deployment.id)
    audit(request, { action: 'deployment.delete', resourceType: 'deployment', resourceId: deployment.id })
    return {}
  })
}
