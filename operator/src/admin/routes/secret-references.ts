/**
 * Secret references: /v1/secret-references. A reference says where a secret lives — an
 * environment variable of the control plane (`manager_type: environment`, `secret_path` = the
 * variable) or a key of a Kubernetes Secret (`kubernetes`, `secret_path` = `name` or
 * `namespace/name`, `secret_key` = the key) or a key of a HashiCorp Vault KV v2 secret
 * (`hashicorp_vault`, `secret_path` = `<mount>/<path>`, `secret_key` = the key; the Vault server
 * is the operator's, see compile/vault.ts) — never its value. Integrations and providers map
 * credential fields onto references (`secret_mappings`); the snapshot compiler reads the value.
 * Organisation owners and admins only (secret_references scopes, organisation level).
 */
import type { FastifyInstance } from 'fastify'
import { z } from 'zod'
import { conflict, invalid, notFound } from '../../errors.ts'
import type { Principal } from '../../identity/principal.ts'
import { parseVaultPath } from '../../compile/vault.ts'
import type { SecretReferenceRecord } from '../../store/index.ts'
import type { AdminContext } from '../context.ts'
import { audit, listEnvelope, pagination, parse, principalOf } from '../http.ts'
import { descriptionSchema, nameSchema, refuseManaged, requireScope, slugFromName, slugSchema, tagFilter, tagsSchema, workspaceIds, workspaceRefSchema } from './resource-access.ts'

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,254}$/
/** The control plane's own settings (encryption key, pepper, database URL) are never readable this way. */
const RESERVED_ENV = /^(GATEHOUSE_|DATABASE_URL$|REDIS_URL$|PG[A-Z]*$|KUBERNETES_)/
const KUBERNETES_PATH = /^(?:[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?\/)?[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$/
const KUBERNETES_KEY = /^[-._a-zA-Z0-9]{1,253}$/

const fields = {
  name: nameSchema,
  description: descriptionSchema.optional(),
  manager_type: z.enum(['environment', 'kubernetes', 'hashicorp_vault']),
  secret_path: z.string().min(1).max(1024),
  secret_key: z.string().min(1).max(255).nullable().optional(),
  allow_all_workspaces: z.boolean().optional(),
  allowed_workspaces: z.array(workspaceRefSchema).max(1000).optional(),
  tags: tagsSchema.optional(),
}

const createSchema = z.strictObject({ ...fields, slug: slugSchema.optional() })
const updateSchema = z.strictObject(fields).partial()

/** Where the secret lives must be a well-formed location of its manager type. */
function checkLocation(managerType: SecretReferenceRecord['managerType'], path: string, key: string | null | undefined): void {
  if (managerType === 'hashicorp_vault') {
    if (!parseVaultPath(path)) throw invalid('secret_path', 'secret_path: <mount>/<path> of a Vault KV version 2 secret (letters, digits, _, - and .)')
    if (!key) throw invalid('secret_key', 'secret_key: the key inside the Vault secret is required')
    return
  }
  if (managerType === 'environment') {
    if (!ENV_NAME.test(path)) throw invalid('secret_path', 'secret_path: an environment variable name (letters, digits, _)')
    if (RESERVED_ENV.test(path)) throw invalid('secret_path', `secret_path: ${path} is one of the control plane's own settings and cannot be referenced`)
    return
  }
  if (!KUBERNETES_PATH.test(path)) throw invalid('secret_path', 'secret_path: a Secret name, or namespace/name')
  if (!key) throw invalid('secret_key', 'secret_key: the key inside the Kubernetes Secret is required')
  if (!KUBERNETES_KEY.test(key)) throw invalid('secret_key', 'secret_key: a Secret data key (letters, digits, -, _ and .)')
}

/** allow_all_workspaces and allowed_workspaces are alternatives; a list means "only these". */
function access(allowAll: boolean | undefined, allowed: string[] | undefined): { allowAll: boolean | undefined; listed: boolean } {
  if (allowAll === true && allowed !== undefined && allowed.length > 0) throw invalid('allowed_workspaces', 'allowed_workspaces: give either allow_all_workspaces: true or a list of workspaces, not both')
  if (allowed !== undefined && allowed.length > 0) return { allowAll: false, listed: true }
  return { allowAll, listed: false }
}

export function secretReferenceView(reference: SecretReferenceRecord): Record<string, unknown> {
  return {
    id: reference.id,
    organisation_id: reference.organizationId,
    name: reference.name,
    slug: reference.slug,
    description: reference.description,
    manager_type: reference.managerType,
    secret_path: reference.secretPath,
    secret_key: reference.secretKey,
    allow_all_workspaces: reference.allowAllWorkspaces,
    allowed_workspaces: reference.allowedWorkspaceIds,
    tags: reference.tags,
    status: reference.status.toUpperCase(),
    managed_by: reference.managedBy,
    created_by: reference.createdBy,
    created_at: reference.createdAt,
    last_updated_at: reference.updatedAt,
    object: 'secret-reference',
  }
}

function requireSecretScope(principal: Principal, action: string): void {
  requireScope(principal, `secret_references.${action}`, null, 'secret references (organisation owners and admins only)')
}

export function secretReferenceRoutes(app: FastifyInstance, ctx: AdminContext): void {
  async function load(principal: Principal, idOrSlug: string): Promise<SecretReferenceRecord> {
    const reference = await ctx.store.secretReferences.get(principal.organizationId, idOrSlug)
    if (!reference) throw notFound('secret reference')
    return reference
  }

  app.post('/', async (request) => {
    const principal = principalOf(request)
    requireSecretScope(principal, 'create')
    const body = parse(createSchema, request.body)
    checkLocation(body.manager_type, body.secret_path, body.secret_key)
    const scope = access(body.allow_all_workspaces, body.allowed_workspaces)
    const org = principal.organizationId
    const slug = body.slug ?? slugFromName(body.name)
    if (await ctx.store.secretReferences.get(org, slug)) throw conflict(`a secret reference "${slug}" already exists`, 'slug')
    const reference = await ctx.store.secretReferences.create({
      organizationId: org,
      slug,
      name: body.name,
      description: body.description ?? null,
      managerType: body.manager_type,
      secretPath: body.secret_path,
      secretKey: body.secret_key ?? null,
      allowAllWorkspaces: scope.allowAll ?? true,
      allowedWorkspaceIds: scope.listed ? await workspaceIds(ctx, org, body.allowed_workspaces!, 'allowed_workspaces') : [],
      tags: body.tags ?? {},
      createdBy: principal.actor.id,
    })
    audit(request, { action: 'secret_reference.create', resourceType: 'secret_reference', resourceId: reference.id })
    return { id: reference.id, slug: reference.slug, object: 'secret-reference' }
  })

  app.get('/', async (request) => {
    const principal = principalOf(request)
    requireSecretScope(principal, 'list')
    const query = parse(z.object({ manager_type: z.enum(['environment', 'kubernetes', 'hashicorp_vault']).optional(), search: z.string().max(255).optional() }).loose(), request.query)
    const { page, pageSize } = pagination(request.query)
    const result = await ctx.store.secretReferences.list(principal.organizationId, { managerType: query.manager_type, search: query.search, tags: tagFilter(request.query) }, page, pageSize)
    return listEnvelope(result.total, result.data.map(secretReferenceView))
  })

  app.get<{ Params: { id: string } }>('/:id', async (request) => {
    const principal = principalOf(request)
    requireSecretScope(principal, 'read')
    return secretReferenceView(await load(principal, request.params.id))
  })

  app.put<{ Params: { id: string } }>('/:id', async (request) => {
    const principal = principalOf(request)
    requireSecretScope(principal, 'update')
    const reference = await load(principal, request.params.id)
    refuseManaged(reference, 'secret reference', reference.slug)
    const body = parse(updateSchema, request.body)
    const managerType = body.manager_type ?? reference.managerType
    checkLocation(managerType, body.secret_path ?? reference.secretPath, body.secret_key === undefined ? reference.secretKey : body.secret_key)
    const scope = access(body.allow_all_workspaces, body.allowed_workspaces)
    await ctx.store.secretReferences.update(principal.organizationId, reference.id, {
      name: body.name,
      description: body.description,
      managerType: body.manager_type,
      secretPath: body.secret_path,
      secretKey: body.secret_key,
      allowAllWorkspaces: scope.allowAll,
      allowedWorkspaceIds: scope.listed ? await workspaceIds(ctx, principal.organizationId, body.allowed_workspaces!, 'allowed_workspaces') : scope.allowAll ? [] : undefined,
      tags: body.tags,
    })
    audit(request, { action: 'secret_reference.update', resourceType: 'secret_reference', resourceId: reference.id })
    return {}
  })

  app.delete<{ Params: { id: string } }>('/:id', async (request) => {
    const principal = principalOf(request)
    requireSecretScope(principal, 'delete')
    const reference = await load(principal, request.params.id)
    refuseManaged(reference, 'secret reference', reference.slug)
    const usages = await ctx.store.secretReferences.usages(principal.organizationId, reference.id)
    if (usages.length > 0) {
      throw conflict(`secret reference "${reference.slug}" is still used by ${usages.slice(0, 5).map((u) => `${u.type} ${u.slug}`).join(', ')}${usages.length > 5 ? ' and others' : ''}; remove those secret_mappings first`)
    }
    await ctx.store.secretReferences.delete(principal.organizationId, reference.id)
    audit(request, { action: 'secret_reference.delete', resourceType: 'secret_reference', resourceId: reference.id })
    return {}
  })
}
