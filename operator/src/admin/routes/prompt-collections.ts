/**
 * Prompt collections: /v1/collections. Folders of prompts and partials inside a workspace, which
 * may nest (`parent_collection_id`). Every workspace has a default collection (created on first
 * use); it cannot be deleted (404, as the spec says). Access follows the prompt settings.
 */
import type { FastifyInstance } from 'fastify'
import { z } from 'zod'
import { conflict, invalid, notFound } from '../../errors.ts'
import type { Principal } from '../../identity/principal.ts'
import type { PromptCollectionRecord } from '../../store/index.ts'
import type { AdminContext } from '../context.ts'
import { audit, pagination, parse, principalOf } from '../http.ts'
import { requirePromptAccess } from './prompt-access.ts'
import { promptWorkspaces } from './prompt-common.ts'
import { generatedSlug, nameSchema, targetWorkspace, visibleOr404, workspaceRefSchema } from './resource-access.ts'

const createSchema = z.strictObject({ name: nameSchema, workspace_id: workspaceRefSchema.optional(), parent_collection_id: z.string().min(1).max(255).optional() })
const updateSchema = z.strictObject({ name: nameSchema })
const listQuery = z.object({ workspace_id: workspaceRefSchema.optional(), search: z.string().max(255).optional() }).loose()

function collectionView(collection: PromptCollectionRecord): Record<string, unknown> {
  return {
    id: collection.id, name: collection.name, slug: collection.slug, workspace_id: collection.workspaceId,
    parent_collection_id: collection.parentCollectionId, is_default: collection.isDefault, status: collection.status,
    created_at: collection.createdAt, last_updated_at: collection.updatedAt, collection_details: {},
  }
}

export function promptCollectionRoutes(app: FastifyInstance, ctx: AdminContext): void {
  async function load(principal: Principal, idOrSlug: string): Promise<PromptCollectionRecord> {
    return visibleOr404(principal, await ctx.store.promptCollections.get(principal.organizationId, idOrSlug), 'collection')
  }

  app.post('/', async (request) => {
    const principal = principalOf(request)
    const body = parse(createSchema, request.body)
    const workspaceId = await targetWorkspace(ctx, principal, body.workspace_id)
    if (workspaceId === null) throw invalid('workspace_id', 'workspace_id is required: collections belong to a workspace')
    await requirePromptAccess(ctx, principal, workspaceId, 'create')
    let parent: PromptCollectionRecord | null = null
    if (body.parent_collection_id) {
      parent = await ctx.store.promptCollections.get(principal.organizationId, body.parent_collection_id, workspaceId)
      if (!parent) throw invalid('parent_collection_id', 'parent_collection_id: collection not found in this workspace')
    }
    await ctx.store.promptCollections.ensureDefault(principal.organizationId, workspaceId)
    const collection = await ctx.store.promptCollections.create({ organizationId: principal.organizationId, workspaceId, slug: generatedSlug('pc', body.name), name: body.name, parentCollectionId: parent?.id ?? null })
    audit(request, { action: 'prompt_collection.create', resourceType: 'prompt_collection', resourceId: collection.id, workspaceId })
    return { id: collection.id, slug: collection.slug }
  })

  app.get('/', async (request) => {
    const principal = principalOf(request)
    const query = parse(listQuery, request.query)
    const workspaces = await promptWorkspaces(ctx, principal, query.workspace_id, 'list')
    // Each listed workspace shows its default collection, created on first use.
    for (const workspaceId of workspaces ?? []) await ctx.store.promptCollections.ensureDefault(principal.organizationId, workspaceId)
    const { page, pageSize } = pagination(request.query)
    const all = await ctx.store.promptCollections.list(principal.organizationId, workspaces, query.search)
    return { object: 'list', total: all.length, data: all.slice(page * pageSize, (page + 1) * pageSize).map(collectionView) }
  })

  app.get<{ Params: { id: string } }>('/:id', async (request) => {
    const principal = principalOf(request)
    const collection = await load(principal, request.params.id)
    await requirePromptAccess(ctx, principal, collection.workspaceId, 'read')
    const children = await ctx.store.promptCollections.children(collection.id)
    return { ...collectionView(collection), child_collections: children.map((c) => ({ id: c.id, name: c.name, last_updated_at: c.updatedAt, collection_details: {} })) }
  })

  app.put<{ Params: { id: string } }>('/:id', async (request) => {
    const principal = principalOf(request)
    const collection = await load(principal, request.params.id)
    await requirePromptAccess(ctx, principal, collection.workspaceId, 'update')
    const body = parse(updateSchema, request.body)
    await ctx.store.promptCollections.rename(collection.id, body.name)
    audit(request, { action: 'prompt_collection.update', resourceType: 'prompt_collection', resourceId: collection.id, workspaceId: collection.workspaceId })
    return {}
  })

  app.delete<{ Params: { id: string } }>('/:id', async (request) => {
    const principal = principalOf(request)
    const collection = await load(principal, request.params.id)
    await requirePromptAccess(ctx, principal, collection.workspaceId, 'delete')
    if (collection.isDefault) throw notFound('collection (the default collection cannot be deleted)')
    if ((await ctx.store.prompts.list(principal.organizationId, { workspaceIds: [collection.workspaceId], collectionId: collection.id })).length > 0) {
      throw conflict('the collection still holds prompts; move or delete them first')
    }
    await ctx.store.promptCollections.delete(collection.id)
    audit(request, { action: 'prompt_collection.delete', resourceType: 'prompt_collection', resourceId: collection.id, workspaceId: collection.workspaceId })
    return {}
  })
}
