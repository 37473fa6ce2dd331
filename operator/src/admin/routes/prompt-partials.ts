/**
 * Prompt partials: /v1/prompts/partials. A partial is a named template piece a prompt includes with
 * `{{>name}}`; it has its own immutable versions (changing `string` writes the next one) and a
 * published version (`makeDefault`) that gateways render. Lists answer bare arrays, as the spec
 * does. Access follows the organisation's prompt settings.
 */
import type { FastifyInstance } from 'fastify'
import { z } from 'zod'
import { conflict, invalid, notFound } from '../../errors.ts'
import type { Principal } from '../../identity/principal.ts'
import type { PromptPartialRecord, PromptPartialVersionRecord } from '../../store/index.ts'
import type { AdminContext } from '../context.ts'
import { audit, parse, principalOf } from '../http.ts'
import { requirePromptAccess } from './prompt-access.ts'
import { checkTemplate, promptWorkspaces, templateSchema } from './prompt-common.ts'
import { descriptionSchema, generatedSlug, nameSchema, slugSchema, targetWorkspace, visibleOr404, workspaceRefSchema } from './resource-access.ts'

/** `{{>name}}` refers to a partial by name: names are Mustache partial names (no spaces or braces). */
const partialNameSchema = nameSchema.regex(/^[^\s{}>]+$/, 'a partial name may not contain spaces, braces or ">" (prompts include it as {{>name}})')

const createSchema = z.strictObject({
  name: partialNameSchema,
  slug: slugSchema.optional(),
  string: templateSchema,
  workspace_id: workspaceRefSchema.optional(),
  collection_id: z.string().min(1).max(255).optional(),
  version_description: descriptionSchema.optional(),
})

const updateSchema = z.strictObject({
  name: partialNameSchema.optional(),
  string: templateSchema.optional(),
  description: descriptionSchema.optional(),
  version_description: descriptionSchema.optional(),
  status: z.enum(['active', 'archived']).optional(),
})

const publishSchema = z.strictObject({ version: z.int().min(1) })
const listQuery = z.object({ workspace_id: workspaceRefSchema.optional(), collection_id: z.string().min(1).max(255).optional() }).loose()

function partialView(partial: PromptPartialRecord, version: PromptPartialVersionRecord): Record<string, unknown> {
  return {
    id: partial.id,
    slug: partial.slug,
    name: partial.name,
    collection_id: partial.collectionId,
    workspace_id: partial.workspaceId,
    string: version.template,
    version: version.version,
    version_description: version.description,
    prompt_partial_version_id: version.id,
    created_at: partial.createdAt,
    last_updated_at: partial.updatedAt,
    status: partial.status,
    object: 'partial',
  }
}

export function promptPartialRoutes(app: FastifyInstance, ctx: AdminContext): void {
  async function load(principal: Principal, idOrSlug: string): Promise<PromptPartialRecord> {
    const workspaceId = principal.isOrganisationLevel ? undefined : principal.workspaceId ?? undefined
    return visibleOr404(principal, await ctx.store.promptPartials.get(principal.organizationId, idOrSlug, workspaceId), 'prompt partial')
  }

  app.post('/', async (request) => {
    const principal = principalOf(request)
    const body = parse(createSchema, request.body)
    const workspaceId = await targetWorkspace(ctx, principal, body.workspace_id)
    if (workspaceId === null) throw invalid('workspace_id', 'workspace_id is required: partials belong to a workspace')
    await requirePromptAccess(ctx, principal, workspaceId, 'create')
    checkTemplate(body.string, 'string')
    let collectionId: string | null = null
    if (body.collection_id) {
      const collection = await ctx.store.promptCollections.get(principal.organizationId, body.collection_id, workspaceId)
      if (!collection) throw invalid('collection_id', 'collection_id: collection not found in this workspace')
      collectionId = collection.id
    }
    const slug = body.slug ?? generatedSlug('pl', body.name)
    for (const reference of [slug, body.name]) {
      const clash = (await ctx.store.promptPartials.list(principal.organizationId, [workspaceId])).find((p) => p.slug === reference || p.name === reference)
      if (clash) throw conflict(`a partial "${reference}" already exists in this workspace`, reference === slug ? 'slug' : 'name')
    }
    const { partial, version } = await ctx.store.transaction((tx) => tx.promptPartials.create(
      { organizationId: principal.organizationId, workspaceId, collectionId, slug, name: body.name }, body.string, body.version_description ?? null))
    audit(request, { action: 'prompt_partial.create', resourceType: 'prompt_partial', resourceId: partial.id, workspaceId })
    return { id: partial.id, slug: partial.slug, version_id: version.id, object: 'partial' }
  })

  app.get('/', async (request) => {
    const principal = principalOf(request)
    const query = parse(listQuery, request.query)
    const workspaces = await promptWorkspaces(ctx, principal, query.workspace_id, 'list')
    const partials = await ctx.store.promptPartials.list(principal.organizationId, workspaces, query.collection_id)
    return partials.map((p) => ({ id: p.id, slug: p.slug, name: p.name, collection_id: p.collectionId, workspace_id: p.workspaceId, created_at: p.createdAt, last_updated_at: p.updatedAt, status: p.status, object: 'partial' }))
  })

  app.get<{ Params: { id: string } }>('/:id', async (request) => {
    const principal = principalOf(request)
    const partial = await load(principal, request.params.id)
    await requirePromptAccess(ctx, principal, partial.workspaceId, 'read')
    const version = partial.defaultVersionId ? await ctx.store.promptPartials.version(partial.id, partial.defaultVersionId) : null
    if (!version) throw notFound('prompt partial version')
    return partialView(partial, version)
  })

  app.put<{ Params: { id: string } }>('/:id', async (request) => {
    const principal = principalOf(request)
    const partial = await load(principal, request.params.id)
    await requirePromptAccess(ctx, principal, partial.workspaceId, 'update')
    const body = parse(updateSchema, request.body)
    if (body.string !== undefined) checkTemplate(body.string, 'string')
    if (body.name !== undefined && body.name !== partial.name) {
      const clash = (await ctx.store.promptPartials.list(principal.organizationId, [partial.workspaceId])).find((p) => p.id !== partial.id && (p.name === body.name || p.slug === body.name))
      if (clash) throw conflict(`a partial "${body.name}" already exists in this workspace`, 'name')
    }
    const version = await ctx.store.transaction(async (tx) => {
      const [latest] = await tx.promptPartials.versions(partial.id)
      const written = body.string !== undefined && body.string !== latest?.template
        ? await tx.promptPartials.addVersion(partial.id, body.string, body.version_description ?? body.description ?? null)
        : latest!
      await tx.promptPartials.update(partial.id, { ...(body.name ? { name: body.name } : {}), ...(body.status ? { status: body.status } : {}) })
      return written
    })
    audit(request, { action: 'prompt_partial.update', resourceType: 'prompt_partial', resourceId: partial.id, workspaceId: partial.workspaceId, details: { version: version.version } })
    return { prompt_partial_version_id: version.id }
  })

  app.delete<{ Params: { id: string } }>('/:id', async (request) => {
    const principal = principalOf(request)
    const partial = await load(principal, request.params.id)
    await requirePromptAccess(ctx, principal, partial.workspaceId, 'delete')
    await ctx.store.promptPartials.delete(principal.organizationId, partial.id)
    audit(request, { action: 'prompt_partial.delete', resourceType: 'prompt_partial', resourceId: partial.id, workspaceId: partial.workspaceId })
    return {}
  })

  app.get<{ Params: { id: string } }>('/:id/versions', async (request) => {
    const principal = principalOf(request)
    const partial = await load(principal, request.params.id)
    await requirePromptAccess(ctx, principal, partial.workspaceId, 'read')
    return (await ctx.store.promptPartials.versions(partial.id)).map((v) => ({
      prompt_partial_id: partial.id, prompt_partial_version_id: v.id, slug: partial.slug, version: v.version, string: v.template, description: v.description,
      created_at: v.createdAt, prompt_version_status: v.id === partial.defaultVersionId ? 'active' : 'archived', object: 'partial',
    }))
  })

  app.put<{ Params: { id: string } }>('/:id/makeDefault', async (request) => {
    const principal = principalOf(request)
    const partial = await load(principal, request.params.id)
    await requirePromptAccess(ctx, principal, partial.workspaceId, 'publish')
    const body = parse(publishSchema, request.body)
    const version = await ctx.store.promptPartials.version(partial.id, String(body.version))
    if (!version) throw invalid('version', `version: partial has no version ${body.version}`)
    await ctx.store.promptPartials.publish(partial.id, version.id)
    audit(request, { action: 'prompt_partial.publish', resourceType: 'prompt_partial', resourceId: partial.id, workspaceId: partial.workspaceId, details: { version: version.version } })
    return {}
  })
}
